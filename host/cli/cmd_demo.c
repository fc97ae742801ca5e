// capsa demo: the three demo workloads on the bundled samples, each in its
// own sandboxed renderer, and a short report: renderer, sandbox layers (as
// checked from outside), outcome, time, and where the PNG went.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/cli/cli_host.h"
#include "host/cli/commands.h"
#include "renderer/kinds.h"

static void exe_dir(char *buf, size_t len) {
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  buf[n > 0 ? n : 0] = 0;
  char *slash = strrchr(buf, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(buf, len, ".");
}

// renderer/samples next to the source tree the binary was built in
// (out/<dir>/capsa), else relative to the current directory.
static int find_sample(const char *exe, const char *name, char *buf,
                       size_t len) {
  snprintf(buf, len, "%s/../../renderer/samples/%s", exe, name);
  if (access(buf, R_OK) == 0) return 0;
  snprintf(buf, len, "renderer/samples/%s", name);
  return access(buf, R_OK) == 0 ? 0 : -ENOENT;
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

static void row(const struct capsa_cli_job *job, const char *outcome) {
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
  char exe[PATH_MAX], dir[PATH_MAX], md[PATH_MAX], txt[PATH_MAX],
      png[PATH_MAX + 16];
  exe_dir(exe, sizeof exe);
  snprintf(dir, sizeof dir, "%s", out_dir ? out_dir : exe);
  if (!out_dir) strncat(dir, "/demo", sizeof dir - strlen(dir) - 1);
  mkdir(dir, 0755);
  snprintf(png, sizeof png, "%s/page.png", dir);
  if (find_sample(exe, "page.md", md, sizeof md) < 0 ||
      find_sample(exe, "sample.txt", txt, sizeof txt) < 0) {
    fprintf(stderr, "capsa demo: renderer/samples not found\n");
    return 1;
  }
  struct capsa_cli_host h;
  int err = capsa_cli_host_open(&h);
  if (err < 0) {
    fprintf(stderr, "capsa demo: cannot start the host: %s%s%s\n",
            strerror(-err), h.start_error[0] ? ": " : "", h.start_error);
    return 1;
  }
  char line[256];
  capsa_host_sandbox_summary(&h.host, line, sizeof line);
  printf(
      "capsa demo: three renderers, each in capability mode before its "
      "first byte of input\n");
  printf("launcher:  %s\n", line);
  printf("image:     %s\n", capsa_host_image(&h.host));
  if (capsa_host_limits_summary(&h.host, line, sizeof line) > 0)
    printf("%-10s %s\n", "limits:", line + strlen("limits: "));
  struct capsa_capmode_report cr;
  if (capsa_host_kind_report(&h.host, h.kind_page, &cr) == 0 &&
      capsa_capmode_report_format(&cr, false, line, sizeof line) > 0)
    printf("capmode:   %s\n", line);
  printf("\n  %-8s %-62s %-52s %10s\n", "renderer",
         "sandbox (checked from outside)", "outcome", "time");
  int failures = 0;

  // 1. Page: Markdown -> pixels in shared memory -> PNG by the host.
  // Initialised here: capsa_cli_render() is not called when a file cannot
  // be opened, and the row is printed either way.
  struct capsa_cli_job job = {.kind = "page"};
  int mdfd = open(md, O_RDONLY | O_CLOEXEC);
  int pngfd = open(png, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  err = mdfd < 0 || pngfd < 0 ? -errno
                              : capsa_cli_render(&h, mdfd, 800, pngfd, &job);
  if (mdfd >= 0) close(mdfd);
  if (pngfd >= 0) close(pngfd);
  char outcome[256];
  if (err == 0)
    snprintf(outcome, sizeof outcome, "ok: %dx%d page.png", job.frame_w,
             job.frame_h);
  else
    snprintf(outcome, sizeof outcome, "FAILED: %s",
             job.outcome[0] ? job.outcome : strerror(-err));
  failures += err != 0;
  row(&job, outcome);
  capsa_cli_job_free(&job);

  // 2. gzip round trip on the sample text.
  int tfd = open(txt, O_RDONLY | O_CLOEXEC);
  struct stat st;
  uint8_t *plain = NULL, *gz = NULL, *back = NULL;
  size_t plain_len = 0, gz_len = 0, back_len = 0;
  if (tfd >= 0 && fstat(tfd, &st) == 0) {
    plain = malloc((size_t)st.st_size + 1);
    if (plain && read(tfd, plain, (size_t)st.st_size) == st.st_size)
      plain_len = (size_t)st.st_size;
  }
  if (tfd >= 0) close(tfd);
  struct capsa_cli_job j2;
  double ms = 0;
  err = capsa_cli_gzip(&h, CAPSA_GZIP_OP_COMPRESS, 6, plain, plain_len, &gz,
                       &gz_len, &job);
  ms = job.ms;
  if (err == 0) {
    err = capsa_cli_gzip(&h, CAPSA_GZIP_OP_GUNZIP, 0, gz, gz_len, &back,
                         &back_len, &j2);
    ms += j2.ms;
    if (err == 0 && (back_len != plain_len || memcmp(back, plain, plain_len)))
      err = -EILSEQ;
  }
  if (err == 0)
    snprintf(outcome, sizeof outcome, "ok: %zu -> %zu -> %zu bytes, equal",
             plain_len, gz_len, back_len);
  else
    snprintf(outcome, sizeof outcome, "FAILED: %s",
             err == -EILSEQ   ? "round trip differs"
             : job.outcome[0] ? job.outcome
                              : strerror(-err));
  failures += err != 0;
  job.ms = ms;
  row(&job, outcome);
  capsa_cli_job_free(&job);
  free(plain);
  free(gz);
  free(back);

  // 3. The hostile renderer.
  err = capsa_cli_hostile(&h, &job);
  int attacks = 0;
  const char *summary = "";
  for (size_t i = 0; i < job.nlogs; i++) {
    if (strncmp(job.logs[i], "hostile summary:", 16) == 0)
      summary = job.logs[i] + 17;
    else
      attacks++;
  }
  // Attacks whose target this kernel lacks (the i386 entry) are said so.
  int absent = 0;
  const char *a = strstr(summary, " absent in this kernel");
  if (a) {
    while (a > summary && a[-1] >= '0' && a[-1] <= '9') a--;
    absent = atoi(a);
  }
  char absent_text[64] = "";
  if (absent > 0)
    snprintf(absent_text, sizeof absent_text, " (%d absent in this kernel)",
             absent);
  if (err == 0)
    snprintf(outcome, sizeof outcome,
             "%d attacks, none escaped%s; killed for bad message", attacks,
             absent_text);
  else
    snprintf(outcome, sizeof outcome, "FAILED: %s | %s", summary, job.outcome);
  failures += err != 0;
  row(&job, outcome);
  if (verbose || err != 0) {
    printf("\nhostile renderer's attempts (from inside its sandbox):\n");
    for (size_t i = 0; i < job.nlogs; i++) printf("    %s\n", job.logs[i]);
  }
  capsa_cli_job_free(&job);
  capsa_cli_host_close(&h);
  char abs[PATH_MAX];
  printf("\nPNG: %s\n", realpath(png, abs) ? abs : png);
  printf("%s\n", failures ? "demo: FAILED"
                          : "demo: all renderers behaved as "
                            "the sandbox requires");
  return failures ? 1 : 0;
}
