// capsa demo: every demo kind (demos/demos.h: page, gzip, hostile) on its
// bundled sample, each in its own sandboxed renderer, and a short report:
// renderer, sandbox layers (as checked from outside), outcome, time, and
// what the kinds add after the table (where the PNG went).
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demos/demos.h"
#include "host/cli/cli_host.h"
#include "host/cli/commands.h"

static void exe_dir(char *buf, size_t len) {
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  buf[n > 0 ? n : 0] = 0;
  char *slash = strrchr(buf, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(buf, len, ".");
}

// A kind's sample (demos/<kind>/samples/...) in the source tree the binary
// was built in (out/<dir>/capsa), else relative to the current directory.
static int find_sample(const char *exe, const char *name, char *buf,
                       size_t len) {
  int n = snprintf(buf, len, "%s/../../demos/%s", exe, name);
  if (n > 0 && (size_t)n < len && access(buf, R_OK) == 0) return 0;
  n = snprintf(buf, len, "demos/%s", name);
  return n > 0 && (size_t)n < len && access(buf, R_OK) == 0 ? 0 : -ENOENT;
}

static void sandbox_cell(const struct capsa_cli_job *job, char *buf,
                         size_t len) {
  if (!job->ready) {
    snprintf(buf, len, "%s", job->check.why[0] ? job->check.why : "-");
    return;
  }
  char ns[64] = "";
  static const char *const names[] = {"user", "pid", "ipc", "mnt", "net"};
  for (unsigned i = 0; i < 5; i++)
    if (job->check.ns_differ & (1u << i)) {
      if (ns[0]) strncat(ns, ",", sizeof ns - strlen(ns) - 1);
      strncat(ns, names[i], sizeof ns - strlen(ns) - 1);
    }
  // filters: the renderer's seccomp filters (its own on top of the
  // zygote's), when the kernel reports the count.
  char filters[24] = "";
  if (job->check.seccomp_filters >= 0)
    snprintf(filters, sizeof filters, " filters=%d",
             job->check.seccomp_filters);
  snprintf(buf, len, "seccomp=%d%s nnp=%d landlock=%d ns=%s",
           job->check.seccomp_mode, filters, job->check.no_new_privs,
           (int)job->sandbox.landlock_abi, ns[0] ? ns : "none");
}

void capsa_cli_demo_row(const struct capsa_cli_job *job, const char *outcome) {
  char sb[128];
  sandbox_cell(job, sb, sizeof sb);
  printf("  %-8s %-62s %-52s %7.1f ms\n", job->kind, sb, outcome, job->ms);
}

int capsa_cmd_demo(int argc, char **argv) {
  const char *out_dir = NULL;
  bool verbose = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (strcmp(argv[i], "-v") == 0) {
      verbose = true;
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa demo [--out DIR] [-v]\n");
      return 0;
    } else {
      return capsa_cli_usage_error("demo", "[--out DIR] [-v]", "unknown option",
                                   argv[i]);
    }
  }
  char exe[PATH_MAX], dir[PATH_MAX];
  exe_dir(exe, sizeof exe);
  snprintf(dir, sizeof dir, "%s", out_dir ? out_dir : exe);
  if (!out_dir) strncat(dir, "/demo", sizeof dir - strlen(dir) - 1);
  mkdir(dir, 0755);
  unsigned n = capsa__ndemo_kinds;
  static char samples[CAPSA_CLI_MAX_KINDS][PATH_MAX];
  if (n > CAPSA_CLI_MAX_KINDS) n = CAPSA_CLI_MAX_KINDS;
  for (unsigned i = 0; i < n; i++) {
    const char *s = capsa__demo_kinds[i]->sample;
    if (s && find_sample(exe, s, samples[i], sizeof samples[i]) < 0) {
      fprintf(stderr, "capsa demo: demos/%s not found\n", s);
      return 1;
    }
  }
  struct capsa_cli_host h;
  int err = capsa_cli_host_open(&h, capsa__demo_kinds, n, true);
  if (err < 0) {
    fprintf(stderr, "capsa demo: cannot start the host: %s%s%s\n",
            strerror(-err), h.start_error[0] ? ": " : "", h.start_error);
    return 1;
  }
  static const char *const kCount[] = {"no",   "one",  "two", "three",
                                       "four", "five", "six", "seven"};
  char count[16];
  if (n < sizeof kCount / sizeof kCount[0])
    snprintf(count, sizeof count, "%s", kCount[n]);
  else
    snprintf(count, sizeof count, "%u", n);
  char line[256];
  capsa_host_sandbox_summary(&h.host, line, sizeof line);
  printf(
      "capsa demo: %s renderers, each in capability mode before its "
      "first byte of input\n",
      count);
  printf("launcher:  %s\n", line);
  printf("image:     %s\n", capsa_host_image(&h.host));
  if (capsa_host_limits_summary(&h.host, line, sizeof line) > 0)
    printf("%-10s %s\n", "limits:", line + strlen("limits: "));
  struct capsa_capmode_report cr;
  if (n > 0 && capsa_host_kind_report(&h.host, h.kinds[0].id, &cr) == 0 &&
      capsa_capmode_report_format(&cr, false, line, sizeof line) > 0)
    printf("capmode:   %s\n", line);
  printf("\n  %-8s %-62s %-52s %10s\n", "renderer",
         "sandbox (checked from outside)", "outcome", "time");
  int failures = 0;
  struct capsa_cli_demo d = {.out_dir = dir, .verbose = verbose};
  for (unsigned i = 0; i < n; i++) {
    d.sample = capsa__demo_kinds[i]->sample ? samples[i] : NULL;
    if (capsa__demo_kinds[i]->demo)
      failures += capsa__demo_kinds[i]->demo(&h, &d) != 0;
  }
  capsa_cli_host_close(&h);
  if (d.footer[0]) printf("\n%s", d.footer);
  printf("%s\n", failures ? "demo: FAILED"
                          : "demo: all renderers behaved as "
                            "the sandbox requires");
  return failures ? 1 : 0;
}
