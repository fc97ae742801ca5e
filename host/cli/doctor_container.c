// See doctor_container.h.
#include "host/cli/doctor_container.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/proc_view.h"

// One "Name:\tvalue" line of /proc/self/status, or "" (owned by the caller).
static void status_field(const char *name, char *out, size_t len) {
  out[0] = 0;
  FILE *f = fopen("/proc/self/status", "re");
  if (!f) return;
  char line[512];
  size_t n = strlen(name);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, name, n) == 0 && line[n] == ':') {
      const char *v = line + n + 1;
      while (*v == ' ' || *v == '\t') v++;
      snprintf(out, len, "%s", v);
      out[strcspn(out, "\n")] = 0;
      break;
    }
  }
  fclose(f);
}

// What an errno of a namespace the launcher could not make means: refused
// here (a seccomp profile, a capability, a sysctl) or absent from the kernel.
static const char *ns_cause(int err, const struct capsa_doctor_container *c) {
  switch (-err) {
    case 0:
      return "";
    case EPERM:
      return c->seccomp_mode == 2
                 ? "refused: EPERM with a seccomp filter installed before "
                   "capsa (a container runtime's profile refuses unshare "
                   "and clone of namespaces without CAP_SYS_ADMIN), or a "
                   "missing capability"
                 : "refused: EPERM (no capability for it and no user "
                   "namespace to make it in)";
    case ENOSPC:
      return "refused: ENOSPC, the namespace count limit "
             "(/proc/sys/user/max_*_namespaces) is reached or 0";
    case EUSERS:
      return "refused: EUSERS, user namespaces nested too deep";
    case EINVAL:
      return "absent: EINVAL, this kernel was built without it";
    case ENOSYS:
      return "absent or filtered: ENOSYS";
    default:
      return "refused";
  }
}

void capsa_doctor_container_get(const struct capsa_ns_report *ns,
                                struct capsa_doctor_container *c) {
  memset(c, 0, sizeof *c);
  c->pid = getpid();
  c->inherits_orphans = capsa_proc_inherits_orphans();
  c->proc_err = capsa_proc_view_check(c->proc_why, sizeof c->proc_why);
  // /proc/self is this process even when /proc is of an outer namespace:
  // there it is this process's outer pid.
  char v[256];
  status_field("NSpid", v, sizeof v);
  for (char *p = strtok(v, " \t"); p; p = strtok(NULL, " \t")) c->pidns_depth++;
  status_field("Seccomp", v, sizeof v);
  c->seccomp_mode = atoi(v);
  status_field("Seccomp_filters", v, sizeof v);
  c->seccomp_filters = v[0] ? atoi(v) : -1;
  status_field("NoNewPrivs", v, sizeof v);
  c->nnp_preset = atoi(v) == 1;
  status_field("CapEff", v, sizeof v);
  c->cap_eff = strtoull(v, NULL, 16);
  c->cap_sys_admin = (c->cap_eff >> 21) & 1;   // CAP_SYS_ADMIN = 21
  c->cap_sys_ptrace = (c->cap_eff >> 19) & 1;  // CAP_SYS_PTRACE = 19
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    c->ns_cause[i] = ns_cause(ns->ns_error[i], c);
}

bool capsa_doctor_container_host_can_start(
    const struct capsa_doctor_container *c) {
  return c->proc_err == 0;
}

void capsa_doctor_container_print(const struct capsa_ns_report *ns,
                                  const struct capsa_doctor_container *c) {
  printf("\nthis process's surroundings\n");
  // NSpid lists the pids from /proc's namespace down: a remounted /proc
  // shows one, so pid 1 is what tells a container's entrypoint.
  printf("  %-28s %d%s\n", "pid", (int)c->pid,
         c->pid == 1          ? " (pid 1 of its pid namespace: a container's "
                                "entrypoint)"
         : c->pidns_depth > 1 ? " (in a nested pid namespace)"
                              : "");
  if (c->inherits_orphans)
    printf(
        "  %-28s yes (%s): a host here reaps the zombies adopted from "
        "other sessions (its renderers' and zygote's leftovers), never a "
        "child of this process's own session\n",
        "orphans land here", c->pid == 1 ? "pid 1" : "child subreaper");
  printf("  %-28s %s\n", "/proc",
         c->proc_err == 0 ? "this pid namespace's" : c->proc_why);
  if (c->seccomp_filters >= 0)
    printf("  %-28s %s (%d filter%s installed before capsa)\n",
           "seccomp on entry", c->seccomp_mode == 2 ? "filtered" : "none",
           c->seccomp_filters, c->seccomp_filters == 1 ? "" : "s");
  else
    printf("  %-28s %s\n", "seccomp on entry",
           c->seccomp_mode == 2 ? "filtered" : "none");
  printf("  %-28s %s\n", "no_new_privs on entry",
         c->nnp_preset ? "set (as allowPrivilegeEscalation: false does)"
                       : "not set");
  printf("  %-28s %016llx (CAP_SYS_ADMIN %s)\n", "effective capabilities",
         c->cap_eff, c->cap_sys_admin ? "held" : "not held");
  // A root host reads /proc/PID/ns of its renderers; one whose credentials
  // changed without an exec (a forked zygote's) is non-dumpable, and only
  // CAP_SYS_PTRACE lets root read it.
  if (geteuid() == 0 && !c->cap_sys_ptrace)
    printf(
        "  %-28s not held: renderers of a forked zygote "
        "(allow_forked_zygote) are refused here; capsa_main's exec'd "
        "zygote is not affected\n",
        "CAP_SYS_PTRACE");
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++) {
    if (!ns->ns_error[i]) continue;
    printf("  %-28s %s\n", capsa_namespace_name(1u << i), c->ns_cause[i]);
  }
}

void capsa_doctor_container_json(const struct capsa_ns_report *ns,
                                 const struct capsa_doctor_container *c,
                                 void (*json_string)(const char *)) {
  printf(
      "\"container\":{\"pid\":%d,\"pidns_depth\":%d,"
      "\"inherits_orphans\":%s,\"proc_ok\":%s,\"proc_why\":",
      (int)c->pid, c->pidns_depth, c->inherits_orphans ? "true" : "false",
      c->proc_err == 0 ? "true" : "false");
  json_string(c->proc_why);
  printf(
      ",\"seccomp_mode\":%d,\"seccomp_filters\":%d,\"nnp_preset\":%s,"
      "\"cap_eff\":\"%016llx\",\"cap_sys_admin\":%s,\"cap_sys_ptrace\":%s,"
      "\"namespaces\":{",
      c->seccomp_mode, c->seccomp_filters, c->nnp_preset ? "true" : "false",
      c->cap_eff, c->cap_sys_admin ? "true" : "false",
      c->cap_sys_ptrace ? "true" : "false");
  bool first = true;
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++) {
    if (!ns->ns_error[i]) continue;
    printf("%s\"%s\":", first ? "" : ",", capsa_namespace_name(1u << i));
    json_string(c->ns_cause[i]);
    first = false;
  }
  printf("}}");
}
