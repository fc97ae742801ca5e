// capsa bench oneshot: a tool run once per input (the way desktop
// thumbnailers run), measured as the user's shell sees it: the whole
// process, from fork to its exit, with the CPU of every process it made.
// Three ways of compressing the same 4 KB file, interleaved in one run:
//
//   fork+exec   gzip -c FILE (/usr/bin/gzip, no sandbox): the floor
//   bwrap       bubblewrap running gzip -c FILE with new namespaces
//               (--unshare-all), /usr read-only and FILE read-only,
//               --new-session, --die-with-parent; skipped (with a
//               message) when /usr/bin/bwrap is not installed
//   capsa       capsa gzip -c FILE (this binary): host start, spawn of a
//               gzip renderer, one request, close
//   --also PATH the same with another capsa binary (an older build), as a
//               fourth row in the same rounds: before / after in one run
//
// Wall: fork to the reap of the process started. CPU: user + system of
// that process and of every descendant (this process is their subreaper,
// so an orphaned zygote or renderer is reaped and counted too), from
// RUSAGE_CHILDREN. Ratios capsa / bwrap and capsa / fork+exec of the
// medians. Each output is checked (a gzip stream of a sane size).
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/cli/bench_util.h"
#include "host/cli/commands.h"

extern char **environ;

#define ONESHOT_MAX_RUNS 500
#define ONESHOT_INPUT 4096

enum { FE, BW, CA, AL, NROWS };

struct row {
  const char *name;
  double wall[ONESHOT_MAX_RUNS], cpu[ONESHOT_MAX_RUNS];
  int n;
  int error;  // -errno (or -EIO: wrong output / exit status) when it failed
  bool skipped;
  double wall_med, cpu_med, wall_min, cpu_min;
};

static double tv_us(struct timeval tv) {
  return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec;
}

static double children_cpu_us(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru) < 0) return 0;
  return tv_us(ru.ru_utime) + tv_us(ru.ru_stime);
}

// Reaps every remaining descendant (orphans come to this subreaper), for
// at most 5 s. Returns how many there were.
static int reap_orphans(void) {
  int n = 0;
  double deadline = capsa_bench_now_us() + 5e6;
  for (;;) {
    pid_t p = waitpid(-1, NULL, WNOHANG);
    if (p > 0) {
      n++;
      continue;
    }
    if (p < 0 && errno == EINTR) continue;
    if (p < 0) return n;  // ECHILD: none left
    if (capsa_bench_now_us() > deadline) return n;
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
  }
}

// Runs argv with stdin /dev/null, stdout `out_fd` (truncated first) and
// stderr `err_fd`; wall and CPU as the file's header says.
static int run_one(char *const argv[], int out_fd, int err_fd, double *wall,
                   double *cpu) {
  if (ftruncate(out_fd, 0) < 0 || lseek(out_fd, 0, SEEK_SET) < 0 ||
      ftruncate(err_fd, 0) < 0 || lseek(err_fd, 0, SEEK_SET) < 0)
    return -errno;
  double c0 = children_cpu_us();
  double t0 = capsa_bench_now_us();
  pid_t pid = fork();
  if (pid < 0) return -errno;
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
      _exit(126);
    execve(argv[0], argv, environ);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -errno;
  }
  *wall = capsa_bench_now_us() - t0;
  reap_orphans();
  *cpu = children_cpu_us() - c0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -EIO;
  // A gzip stream: the magic, and at least a header and a trailer.
  unsigned char magic[2];
  struct stat st;
  if (pread(out_fd, magic, 2, 0) != 2 || magic[0] != 0x1f || magic[1] != 0x8b ||
      fstat(out_fd, &st) < 0 || st.st_size < 20 ||
      st.st_size > 2 * ONESHOT_INPUT)
    return -EIO;
  return 0;
}

// The first lines of what a failed run wrote to stderr, for the report.
static void show_stderr(const char *name, int err_fd) {
  char buf[512];
  ssize_t n = pread(err_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return;
  buf[n] = 0;
  fprintf(stderr, "capsa bench oneshot: %s: %s%s", name, buf,
          buf[n - 1] == '\n' ? "" : "\n");
}

static void summarize(struct row *r) {
  if (r->n == 0) return;
  qsort(r->wall, (size_t)r->n, sizeof *r->wall, capsa_bench_cmp_double);
  qsort(r->cpu, (size_t)r->n, sizeof *r->cpu, capsa_bench_cmp_double);
  r->wall_min = r->wall[0];
  r->cpu_min = r->cpu[0];
  r->wall_med = r->wall[r->n / 2];
  r->cpu_med = r->cpu[r->n / 2];
}

static int make_input(char *path, size_t len) {
  // Text-like and compressible, as a small file a tool meets.
  snprintf(path, len, "/tmp/capsa-bench-oneshot-XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) return -errno;
  char buf[ONESHOT_INPUT];
  unsigned x = 12345;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + (x >> 16) % 16);
  }
  int err = write(fd, buf, sizeof buf) == (ssize_t)sizeof buf ? 0 : -EIO;
  close(fd);
  if (err < 0) unlink(path);
  return err;
}

static int scratch_fd(void) {
  int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  return fd < 0 ? -errno : fd;
}

int capsa_bench_oneshot(int argc, char **argv) {
  const char *usage = "[--runs N] [--json] [--also CAPSA_BINARY]";
  int runs = 20;
  bool json = false;
  const char *also = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--also") == 0 && i + 1 < argc) {
      also = argv[++i];
      if (access(also, X_OK) < 0)
        return capsa_cli_usage_error("bench oneshot", usage,
                                     "--also: not an executable", also);
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      if (runs < 1 || runs > ONESHOT_MAX_RUNS)
        return capsa_cli_usage_error("bench oneshot", usage,
                                     "bad --runs (1..500)", argv[i]);
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa bench oneshot %s\n", usage);
      return 0;
    } else {
      return capsa_cli_usage_error("bench oneshot", usage, "unknown option",
                                   argv[i]);
    }
  }
  char self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl <= 0) {
    fprintf(stderr, "capsa bench oneshot: /proc/self/exe: %s\n",
            strerror(errno));
    return 1;
  }
  self[sl] = 0;
  const char *gzip = "/usr/bin/gzip";
  if (access(gzip, X_OK) < 0) {
    fprintf(stderr, "capsa bench oneshot: %s: %s (apt-get install gzip)\n",
            gzip, strerror(errno));
    return 1;
  }
  const char *bwrap = "/usr/bin/bwrap";
  bool have_bwrap = access(bwrap, X_OK) == 0;
  char input[64];
  int err = make_input(input, sizeof input);
  if (err < 0) {
    fprintf(stderr, "capsa bench oneshot: input file in /tmp: %s\n",
            strerror(-err));
    return 1;
  }
  int out_fd = scratch_fd(), err_fd = scratch_fd();
  if (out_fd < 0 || err_fd < 0) {
    fprintf(stderr, "capsa bench oneshot: O_TMPFILE in /tmp: %s\n",
            strerror(-(out_fd < 0 ? out_fd : err_fd)));
    unlink(input);
    return 1;
  }
  // Orphans of the runs (a zygote outliving its host) come here to be
  // reaped and counted.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signal(SIGPIPE, SIG_IGN);

  char *fe_argv[] = {(char *)gzip, "-c", input, NULL};
  char *bw_argv[] = {(char *)bwrap,
                     "--unshare-all",
                     "--die-with-parent",
                     "--new-session",
                     "--ro-bind",
                     "/usr",
                     "/usr",
                     "--symlink",
                     "usr/lib",
                     "/lib",
                     "--symlink",
                     "usr/lib64",
                     "/lib64",
                     "--symlink",
                     "usr/bin",
                     "/bin",
                     "--ro-bind",
                     input,
                     input,
                     (char *)gzip,
                     "-c",
                     input,
                     NULL};
  char *ca_argv[] = {self, "gzip", "-c", input, NULL};
  char *al_argv[] = {(char *)also, "gzip", "-c", input, NULL};
  char *const *argvs[NROWS] = {fe_argv, bw_argv, ca_argv, al_argv};
  static struct row rows[NROWS];
  memset(rows, 0, sizeof rows);
  rows[FE].name = "fork+exec gzip -c";
  rows[BW].name = "bwrap gzip -c";
  rows[CA].name = "capsa gzip -c";
  rows[AL].name = "--also gzip -c";
  rows[BW].skipped = !have_bwrap;
  rows[AL].skipped = !also;
  // One warm-up each (page cache, dynamic loader caches), then paired
  // rounds whose order rotates so that drift and ordering hit every row
  // alike.
  for (int round = -1; round < runs; round++) {
    for (int j = 0; j < NROWS; j++) {
      int m = (round + 1 + j) % NROWS;
      struct row *r = &rows[m];
      if (r->skipped || r->error) continue;
      double wall = 0, cpu = 0;
      int e = run_one(argvs[m], out_fd, err_fd, &wall, &cpu);
      if (e < 0) {
        r->error = e;
        show_stderr(r->name, err_fd);
        continue;
      }
      if (round < 0) continue;
      r->wall[r->n] = wall;
      r->cpu[r->n] = cpu;
      r->n++;
    }
  }
  unlink(input);
  close(out_fd);
  close(err_fd);
  for (int m = 0; m < NROWS; m++) summarize(&rows[m]);

  const struct row *b = &rows[BW], *c = &rows[CA], *f = &rows[FE];
  bool have_b = !b->skipped && !b->error && b->n > 0;
  bool have_c = !c->error && c->n > 0;
  double wr = have_b && have_c ? c->wall_med / b->wall_med : 0;
  double cr = have_b && have_c && b->cpu_med > 0 ? c->cpu_med / b->cpu_med : 0;
  if (json) {
    printf("{\"bench\":\"oneshot\",\"unit\":\"us\",\"results\":[");
    for (int m = 0; m < NROWS; m++)
      printf(
          "%s{\"name\":\"%s\",\"runs\":%d,\"wall_median\":%.1f,"
          "\"cpu_median\":%.1f,\"wall_min\":%.1f,\"cpu_min\":%.1f,"
          "\"skipped\":%s,\"error\":%d}",
          m ? "," : "", rows[m].name, rows[m].n, rows[m].wall_med,
          rows[m].cpu_med, rows[m].wall_min, rows[m].cpu_min,
          rows[m].skipped ? "true" : "false", rows[m].error);
    printf("],\"capsa_over_bwrap_wall\":%.2f,\"capsa_over_bwrap_cpu\":%.2f}\n",
           wr, cr);
    return have_c ? 0 : 1;
  }
  printf(
      "one-shot: compress a 4 KB file, whole process (fork to reap, CPU of "
      "it and every descendant), %d paired runs (ms)\n",
      runs);
  printf("  %-20s %5s %9s %9s %9s %9s\n", "method", "runs", "wall med",
         "wall min", "CPU med", "CPU min");
  for (int m = 0; m < NROWS; m++) {
    const struct row *r = &rows[m];
    if (r->skipped && m == AL) continue;
    if (r->skipped) {
      printf(
          "  %-20s skipped: %s not installed (apt-get install "
          "bubblewrap)\n",
          r->name, bwrap);
      continue;
    }
    if (r->error) {
      printf("  %-20s failed: %s\n", r->name,
             r->error == -EIO ? "exit status or output wrong"
                              : strerror(-r->error));
      continue;
    }
    printf("  %-20s %5d %9.2f %9.2f %9.2f %9.2f\n", r->name, r->n,
           r->wall_med / 1e3, r->wall_min / 1e3, r->cpu_med / 1e3,
           r->cpu_min / 1e3);
  }
  if (have_b && have_c)
    printf(
        "capsa / bwrap (medians): wall %.2fx (goal <= 1.5x), CPU %.2fx "
        "(goal <= 2x)\n",
        wr, cr);
  const struct row *a = &rows[AL];
  if (also && !a->error && a->n > 0 && have_c) {
    printf("  (--also: %s)\n", also);
    if (have_b)
      printf(
          "--also / bwrap (medians): wall %.2fx, CPU %.2fx; capsa / --also: "
          "wall %.2fx, CPU %.2fx\n",
          a->wall_med / b->wall_med,
          b->cpu_med > 0 ? a->cpu_med / b->cpu_med : 0.0,
          c->wall_med / a->wall_med,
          a->cpu_med > 0 ? c->cpu_med / a->cpu_med : 0.0);
  }
  if (have_c && !f->error && f->n > 0 && f->wall_med > 0 && f->cpu_med > 0)
    printf("capsa / fork+exec (medians): wall %.2fx, CPU %.2fx\n",
           c->wall_med / f->wall_med, c->cpu_med / f->cpu_med);
  return have_c ? 0 : 1;
}
