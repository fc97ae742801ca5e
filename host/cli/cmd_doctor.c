// capsa doctor: what this kernel offers, what a process in capability mode
// gets here (per layer), and a self-test that tries escapes in a forked
// child. Exit 0 only when capability mode is fully provided; 1 otherwise;
// 2 for a wrong command line.
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "host/cli/commands.h"
#include "host/cli/doctor_container.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/cgroup.h"
#include "sandbox/errors.h"
#include "sandbox/features.h"
#include "sandbox/launcher/namespaces.h"
#include "sandbox/selftest.h"

static const char kUsage[] = "[--json]";

static const char *errno_label(int e) {
  if (e == 0) return "success";
  const char *n = capsa_errno_name(e);
  return n ? n : "unknown errno";
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      printf("\\u%04x", *s);
    else
      putchar(*s);
  }
  putchar('"');
}

// The namespaces a launcher could give renderers here, as the launcher's
// report line without its per-spawn part (root, fds, uid), and the names of
// those missing ("user,pid" or "").
struct ns_view {
  struct capsa_ns_report rep;
  char line[256];
  char missing[64];
  struct capsa_doctor_container box;
};

static void ns_view_get(struct ns_view *v) {
  memset(v, 0, sizeof *v);
  capsa_ns_available_report(&v->rep);
  capsa_ns_report_format(&v->rep, v->line, sizeof v->line);
  char *cut = strstr(v->line, " root=");
  if (cut) *cut = 0;
  for (unsigned i = 0; i < CAPSA_NAMESPACE_COUNT; i++) {
    unsigned bit = 1u << i;
    if (v->rep.applied & bit) continue;
    if (v->missing[0])
      strncat(v->missing, ",", sizeof v->missing - strlen(v->missing) - 1);
    strncat(v->missing, capsa_namespace_name(bit),
            sizeof v->missing - strlen(v->missing) - 1);
  }
  capsa_doctor_container_get(&v->rep, &v->box);
}

static const char *check_verdict(const struct capsa_selftest_result *r) {
  if (r->skipped) return "skipped";
  if (r->passed) return r->expected_errno ? "refused" : "works";
  if (r->expected_errno && r->got_errno == 0) return "ESCAPED";
  return "WRONG-ERRNO";
}

static void print_human(const struct capsa_features *f,
                        const struct capsa_capmode_report *rep, int rep_err,
                        const struct capsa_selftest_result *res, size_t n,
                        int st, bool ok, const struct ns_view *ns) {
  printf("capsa doctor\n\nkernel\n");
  printf("  %-28s %s%s%s\n", "seccomp filters",
         f->seccomp_filter ? "yes" : "NO", f->seccomp_tsync ? " (tsync" : "",
         f->seccomp_tsync ? (f->seccomp_trap ? ", trap)" : ")") : "");
  printf("  %-28s %d%s\n", "Landlock ABI", f->landlock_abi,
         f->landlock_abi == 0 ? " (absent or disabled at boot)" : "");
  printf("  %-28s %s%s%s%s\n", "unprivileged user namespaces",
         f->userns_unprivileged ? "allowed" : "not allowed",
         !f->userns_unprivileged && ns->rep.user_why[0] ? " (" : "",
         f->userns_unprivileged ? "" : ns->rep.user_why,
         !f->userns_unprivileged && ns->rep.user_why[0] ? ")" : "");
  // What a launcher started by this process gets (root may make the others
  // without a user namespace; an unprivileged process may not).
  printf("  %-28s %s\n", "namespaces for renderers", ns->line);
  printf("  %-28s %s\n", "pidfd", f->pidfd ? "yes" : "no");
  printf("  %-28s %s\n", "clone3", f->clone3 ? "yes" : "no");
  printf("  %-28s %s (MFD_NOEXEC_SEAL %s)\n", "memfd seals",
         f->memfd_seals ? "yes" : "no", f->memfd_noexec_seal ? "yes" : "no");
  // Wherever it is mounted (hybrid systems: /sys/fs/cgroup/unified).
  const capsa_cgroup_probe_t *cg = capsa_cgroup_probe();
  printf("  %-28s %s%s%s\n", "cgroup v2", cg->mounted ? "yes (" : "no",
         cg->mounted ? cg->mount : "", cg->mounted ? ")" : "");
  // What a host would limit renderers with here (host/capsa_host.h).
  char cg_why[320];
  if (capsa_cgroup_probe_check(cg, CAPSA_CGROUP_MEMORY | CAPSA_CGROUP_PIDS,
                               cg_why, sizeof cg_why) == 0)
    printf("  %-28s cgroup v2 (%s: memory, pids)\n", "renderer limits",
           cg->dir);
  else
    printf("  %-28s rlimits (cgroup v2: %s)\n", "renderer limits", cg_why);
  printf("  %-28s %s\n", "x32 syscall ABI",
         f->x32_abi ? "yes (filtered)" : "no");
  printf("  %-28s %s%s\n", "i386 entry (int 0x80)", f->i386_detail,
         f->i386_entry ? " (filtered)" : "");
  printf("\ncapability mode here\n");
  if (rep_err < 0) {
    printf("  cannot be prepared: %s\n", capsa_strerror(rep_err));
  } else {
    printf("  %-28s %s\n", "no_new_privs", capsa_layer_state_name(rep->nnp));
    printf("  %-28s %s", "Landlock", capsa_layer_state_name(rep->landlock));
    if (rep->landlock == CAPSA_LAYER_ENFORCED)
      printf(" (ABI %d: filesystem beneath held dirs%s%s%s%s)",
             rep->landlock_abi, rep->landlock_fs_truncate ? ", truncate" : "",
             rep->landlock_fs_ioctl_dev ? ", device ioctls" : "",
             rep->landlock_net_tcp ? ", TCP bind/connect" : "",
             rep->landlock_scope_signal ? ", abstract-unix and signal scopes"
                                        : "");
    printf("\n  %-28s %s", "seccomp", capsa_layer_state_name(rep->seccomp));
    if (rep->seccomp == CAPSA_LAYER_ENFORCED)
      printf(" (%u policy rows, %u BPF instructions, default ECAPMODE)",
             rep->seccomp_rows, rep->seccomp_bpf_len);
    printf("\n  %-28s %s\n", "=>",
           rep->complete ? "complete" : "INCOMPLETE (see the layers above)");
  }
  printf("\nself-test (escapes tried in a forked child)\n");
  if (st < 0) printf("  could not run: %s\n", capsa_strerror(st));
  for (size_t i = 0; i < n; i++)
    printf("  [%-11s] %-46s %s%s%s%s\n", check_verdict(&res[i]), res[i].name,
           res[i].skipped ? "" : errno_label(res[i].got_errno),
           res[i].skipped ? res[i].skip_reason : "",
           res[i].expected_errno ? " via " : "",
           res[i].expected_errno ? res[i].layer : "");
  capsa_doctor_container_print(&ns->rep, &ns->box);
  printf("\nresult: %s", ok ? "capability mode is fully provided"
                            : "capability mode is NOT fully provided");
  // A kernel that provides every layer is no use where no host can start:
  // said so, and not claimed as provided.
  if (!capsa_doctor_container_host_can_start(&ns->box))
    printf(" (a host cannot start here: %s)", ns->box.proc_why);
  // Namespaces are defence in depth around capability mode, not part of it:
  // missing ones are said, and do not change the exit status.
  if (ns->missing[0])
    printf(" (namespaces missing: %s; capability mode does not need them)",
           ns->missing);
  printf("\n");
}

// The same cgroup facts as the text: where v2 is mounted, its controllers,
// and what a host would limit renderers with here (and why).
static void print_json_cgroup(void) {
  const capsa_cgroup_probe_t *cg = capsa_cgroup_probe();
  char why[320];
  bool usable =
      capsa_cgroup_probe_check(cg, CAPSA_CGROUP_MEMORY | CAPSA_CGROUP_PIDS, why,
                               sizeof why) == 0;
  printf("\"cgroup\":{\"v2_mounted\":%s,\"mount\":",
         cg->mounted ? "true" : "false");
  json_string(cg->mount);
  printf(",\"dir\":");
  json_string(cg->dir);
  printf(",\"controllers\":{\"memory\":%s,\"pids\":%s,\"cpu\":%s}",
         (cg->available & CAPSA_CGROUP_MEMORY) ? "true" : "false",
         (cg->available & CAPSA_CGROUP_PIDS) ? "true" : "false",
         (cg->available & CAPSA_CGROUP_CPU) ? "true" : "false");
  printf(",\"renderer_limits\":\"%s\",\"why\":",
         usable ? "cgroup v2" : "rlimits");
  json_string(usable ? "" : why);
  printf("}");
}

static void print_json(const struct capsa_features *f,
                       const struct capsa_capmode_report *rep, int rep_err,
                       const struct capsa_selftest_result *res, size_t n,
                       int st, bool ok, const struct ns_view *ns) {
  char buf[1024];
  capsa_features_format(f, true, buf, sizeof(buf));
  printf("{\"ok\":%s,\"kernel\":%s,\"namespaces\":{\"available\":",
         ok ? "true" : "false", buf);
  json_string(ns->line);
  printf(",\"missing\":");
  json_string(ns->missing);
  printf(",\"user_why\":");
  json_string(ns->rep.user_why);
  printf("},");
  capsa_doctor_container_json(&ns->rep, &ns->box, json_string);
  printf(",");
  print_json_cgroup();
  printf(",\"capmode\":");
  if (rep_err < 0) {
    printf("{\"error\":");
    json_string(capsa_strerror(rep_err));
    printf("}");
  } else {
    capsa_capmode_report_format(rep, true, buf, sizeof(buf));
    printf("%s", buf);
  }
  printf(",\"selftest\":{");
  if (st < 0) {
    printf("\"error\":");
    json_string(capsa_strerror(st));
    printf(",");
  }
  printf("\"checks\":[");
  for (size_t i = 0; i < n; i++) {
    printf("%s{\"name\":", i ? "," : "");
    json_string(res[i].name);
    printf(",\"layer\":");
    json_string(res[i].layer);
    printf(",\"expected\":\"%s\",\"got\":\"%s\",\"result\":\"%s\"",
           errno_label(res[i].expected_errno), errno_label(res[i].got_errno),
           check_verdict(&res[i]));
    if (res[i].skipped) {
      printf(",\"skip_reason\":");
      json_string(res[i].skip_reason);
    }
    printf("}");
  }
  printf("]}}\n");
}

int capsa_cmd_doctor(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf(
          "usage: capsa doctor %s\n\n"
          "Reports the kernel features capability mode builds on, what a\n"
          "process in capability mode gets on this machine (per layer), and\n"
          "tries a list of escapes in a forked child. Exit status: 0 when\n"
          "capability mode is fully provided and a host can start here\n"
          "(not where /proc is of another pid namespace), 1 when not, 2 for a\n"
          "wrong command line. Missing namespaces are reported with their\n"
          "reason but do not change the exit status: capability mode does\n"
          "not depend on them.\n",
          kUsage);
      return 0;
    } else {
      return capsa_cli_usage_error("doctor", kUsage, "unknown argument",
                                   argv[i]);
    }
  }
  const struct capsa_features *f = capsa_features_get();
  struct capsa_capmode_report rep;
  memset(&rep, 0, sizeof(rep));
  int rep_err = capsa_capmode_default_report(&rep);
  struct capsa_selftest_result res[CAPSA_SELFTEST_MAX];
  size_t n = 0;
  fflush(stdout);
  int st = capsa_capmode_selftest(res, CAPSA_SELFTEST_MAX, &n);
  struct ns_view ns;
  ns_view_get(&ns);
  bool ok = rep_err == 0 && rep.complete && st == 0 &&
            capsa_doctor_container_host_can_start(&ns.box);
  if (json)
    print_json(f, &rep, rep_err, res, n, st, ok, &ns);
  else
    print_human(f, &rep, rep_err, res, n, st, ok, &ns);
  return ok ? 0 : 1;
}
