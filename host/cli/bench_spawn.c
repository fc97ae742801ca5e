// capsa bench spawn: spawn-to-ready of sandboxed renderers next to plain
// process creation, measured side by side in one run and printed as ratios
// against fork+exec of a tiny static program (capsa_spawn_probe).
//
//   fork+exec     fork, exec the probe, until it writes one byte back
//   posix_spawn   the same through posix_spawn (vfork-like)
//   zygote        ask the zygote for a renderer (fork with its own pid
//                 namespace, rlimits, capability mode with the policy
//                 compiled once: only the final step when the zygote is
//                 staged, the whole policy with --no-stage), until the
//                 renderer writes one byte
//   host          capsa_host_spawn to the READY event, on a host of its
//                 own: the above plus the HELLO message and the host's
//                 outside check; "spare" with the kind's keep_spare (a
//                 renderer pre-forked by the zygote is handed over);
//                 "renew N" with zygote_renew_after N (a fresh exec of the
//                 zygote after every N renderers, so that at most N share
//                 a canary and layout: the replacement's cost is spread
//                 over N spawns; 1 is an exec per renderer)
//   bwrap         bubblewrap --unshare-all running the probe, if installed
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/capsa_host.h"
#include "host/cli/bench_util.h"
#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "host/zygote/zygote.h"
#include "renderer/runtime.h"
#include "sandbox/features.h"

extern char **environ;

#define MAX_RUNS 2000

struct result {
  const char *name;
  double min, median;
  double mean;  // the renew rows' cost is every Nth spawn: the mean shows it
  int runs;
  int error;  // -errno when it could not run
};

static void summarize(struct result *r, double *t, int n) {
  r->runs = n;
  if (n == 0) return;
  qsort(t, (size_t)n, sizeof *t, capsa_bench_cmp_double);
  r->min = t[0];
  r->median = t[n / 2];
  double sum = 0;
  for (int i = 0; i < n; i++) sum += t[i];
  r->mean = sum / n;
}

static int read_byte(int fd) {
  char c;
  ssize_t n;
  do {
    n = read(fd, &c, 1);
  } while (n < 0 && errno == EINTR);
  return n == 1 ? 0 : -EPIPE;
}

// --- baselines ----------------------------------------------------------

// fork, execve(argv) with stdout on a pipe (stderr to /dev/null when
// `quiet`), until one byte comes back.
static int fork_exec_until_byte(char *const argv[], bool quiet, double *us) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -errno;
  double t0 = capsa_bench_now_us();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    int devnull = quiet ? open("/dev/null", O_WRONLY) : -1;
    if (devnull >= 0) dup2(devnull, 2);
    execve(argv[0], argv, environ);
    _exit(127);
  }
  close(p[1]);
  int err = pid < 0 ? -errno : read_byte(p[0]);
  *us = capsa_bench_now_us() - t0;
  close(p[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  return err;
}

static int one_fork_exec(const char *probe, double *us) {
  char *argv[] = {(char *)probe, NULL};
  return fork_exec_until_byte(argv, false, us);
}

static int one_posix_spawn(const char *probe, double *us) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -errno;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  char *argv[] = {(char *)probe, NULL};
  double t0 = capsa_bench_now_us();
  pid_t pid;
  int rc = posix_spawn(&pid, probe, &fa, NULL, argv, environ);
  close(p[1]);
  int err = rc ? -rc : read_byte(p[0]);
  *us = capsa_bench_now_us() - t0;
  close(p[0]);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0) waitpid(pid, NULL, 0);
  return err;
}

static int one_bwrap(const char *bwrap, const char *probe, double *us) {
  char *argv[] = {(char *)bwrap,   "--unshare-all", "--die-with-parent",
                  "--ro-bind",     (char *)probe,   "/probe",
                  "--new-session", "/probe",        NULL};
  return fork_exec_until_byte(argv, true, us);  // quiet: bwrap's warnings
}

// --- capsa --------------------------------------------------------------

// The bench renderer: ready as soon as it runs (it is in capability mode
// by then), says so with one byte, then lives on as a renderer does until
// the bench hangs up. Exiting at once would bill its own teardown (unmapping
// the zygote's copy of the address space, ~150 us) to the byte whenever it
// shares a CPU with the bench: the woken bench waits for the exit to end.
static int probe_renderer(int fd, const capsa_sandbox_report_t *sb, void *arg) {
  char c = 'r';
  if (write(fd, &c, 1) != 1) return 1;
  while (read(fd, &c, 1) > 0) {
  }
  return 0;
}

static int one_zygote(capsa__zygote *z, unsigned kind, double *us) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -errno;
  double t0 = capsa_bench_now_us();
  struct capsa_ns_child c = {-1, 0};
  int chan = -1, errfd = -1;
  int err = capsa__zygote_fork(z, kind, sv[1], &c, &chan, &errfd);
  close(sv[1]);
  if (errfd >= 0) close(errfd);  // its stderr: not read in this bench
  if (chan >= 0) {               // a spare: its own channel
    close(sv[0]);
    sv[0] = chan;
  }
  if (err == 0) err = read_byte(sv[0]);
  *us = capsa_bench_now_us() - t0;
  close(sv[0]);  // the renderer exits on EOF
  if (c.pidfd >= 0 && err == 0) {
    siginfo_t si;
    waitid((idtype_t)P_PIDFD, (id_t)c.pidfd, &si, WEXITED);
    close(c.pidfd);
  }
  return err;
}

struct host_bench {
  uv_loop_t loop;
  capsa_host_t host;
  int ready, closed, failed;
  double ready_us;  // when READY was delivered (before the bench's kill)
  double start_us;  // capsa_host_start: the zygote up and ready
  int error;        // the host could not start
  // Idle USS of each READY renderer (kB), when /proc lets us read it.
  double uss_kb[MAX_RUNS];
  int nuss;
};

// Unique set size of a process: the pages only it maps (smaps_rollup's
// Private_Clean + Private_Dirty + Private_Hugetlb), in kB; -errno when the
// kernel does not say (no smaps_rollup before 4.14, or not ptrace-readable).
static long uss_kb(pid_t pid) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  int e = errno;
  close(fd);
  if (n <= 0) return n < 0 ? -e : -ENODATA;
  buf[n] = 0;
  long total = 0;
  for (char *line = buf; line && *line; line = strchr(line, '\n')) {
    if (*line == '\n') line++;
    long v;
    if (sscanf(line, "Private_Clean: %ld kB", &v) == 1 ||
        sscanf(line, "Private_Dirty: %ld kB", &v) == 1 ||
        sscanf(line, "Private_Hugetlb: %ld kB", &v) == 1)
      total += v;
  }
  return total;
}

static void host_bench_event(capsa_host_t *h, const capsa_host_event_t *ev) {
  struct host_bench *b = h->data;
  if (ev->type == CAPSA_EV_READY) {
    b->ready_us = capsa_bench_now_us();
    b->ready++;
    long uss = uss_kb(capsa_renderer_pid(ev->renderer));
    if (uss >= 0 && b->nuss < MAX_RUNS) b->uss_kb[b->nuss++] = (double)uss;
    capsa_renderer_kill(ev->renderer);
  } else if (ev->type == CAPSA_EV_CLOSED) {
    b->closed++;
  } else if (ev->type == CAPSA_EV_SANDBOX_REFUSED ||
             ev->type == CAPSA_EV_BAD_MESSAGE) {
    b->failed++;
  }
}

static const capsa_renderer_handlers_t kIdle = {.kind = "bench"};

// Registered by name: the host rows' zygote is a fresh exec of this binary.
// The "forked" rows use a name that is not registered, with the same entry:
// the zygote is then forked from the bench process (the old image), to
// compare in the same run.
CAPSA_RENDERER_KIND(bench, "bench", capsa_renderer_main, &kIdle)

// A host on its own loop with one kind, as an embedder would have it.
static void host_bench_open(struct host_bench *b, bool spare, bool forked,
                            unsigned renew) {
  memset(b, 0, sizeof *b);
  uv_loop_init(&b->loop);
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  o.allow_forked_zygote = forked;  // the "forked" rows: the old image
  o.zygote_renew_after = renew;    // the "renew" rows
  int err = capsa_host_init(&b->loop, &b->host, &o, host_bench_event);
  b->host.data = b;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, forked ? "bench-forked" : "bench",
                          capsa_renderer_main, (void *)&kIdle);
  k.heartbeat_ms = 0;
  k.keep_spare = spare;
  if (err == 0) err = capsa_host_define_kind(&b->host, &k);
  double t0 = capsa_bench_now_us();
  if (err >= 0) err = capsa_host_start(&b->host);
  b->start_us = capsa_bench_now_us() - t0;
  if (err == 0 && strcmp(capsa_host_image(&b->host), "exec") != forked)
    err = -EPROTO;  // not the image this row is about
  b->error = err < 0 ? err : 0;
}

// capsa_host_spawn to the READY event; then the renderer is killed and its
// CLOSED awaited, off the clock.
static int one_host(struct host_bench *b, double *us) {
  if (b->error) return b->error;
  capsa_renderer_t *rd;
  int ready = b->ready, closed = b->closed;
  uv_run(&b->loop, UV_RUN_NOWAIT);
  double t0 = capsa_bench_now_us();
  int err = capsa_host_spawn(&b->host, 0, NULL, &rd);
  if (err < 0) return err;
  while (b->ready == ready && !b->failed) uv_run(&b->loop, UV_RUN_ONCE);
  *us = b->ready_us - t0;
  while (b->closed == closed) uv_run(&b->loop, UV_RUN_ONCE);
  return b->failed ? -EPERM : 0;
}

// Appends b's USS samples to dst (bounded by MAX_RUNS).
static void keep_uss(double *dst, int *n, const struct host_bench *b) {
  for (int i = 0; i < b->nuss && *n < MAX_RUNS; i++) dst[(*n)++] = b->uss_kb[i];
}

static void host_bench_close(struct host_bench *b) {
  if (!b->error) capsa_host_close(&b->host, NULL);
  uv_run(&b->loop, UV_RUN_DEFAULT);
  uv_loop_close(&b->loop);
}

// --- driver -------------------------------------------------------------

typedef int (*one_fn)(void *ctx, double *us);
struct ctx_probe {
  const char *probe;
  const char *bwrap;
  capsa__zygote *z;
  struct host_bench *cold, *spare, *fcold, *fspare, *renew8, *renew1;
};
static int fe(void *c, double *us) {
  return one_fork_exec(((struct ctx_probe *)c)->probe, us);
}
static int ps(void *c, double *us) {
  return one_posix_spawn(((struct ctx_probe *)c)->probe, us);
}
static int bw(void *c, double *us) {
  struct ctx_probe *p = c;
  return one_bwrap(p->bwrap, p->probe, us);
}
static int zy(void *c, double *us) {
  return one_zygote(((struct ctx_probe *)c)->z, 0, us);
}
static int zs(void *c, double *us) {
  return one_zygote(((struct ctx_probe *)c)->z, 1, us);
}
static int ho(void *c, double *us) {
  return one_host(((struct ctx_probe *)c)->cold, us);
}
static int hs(void *c, double *us) {
  return one_host(((struct ctx_probe *)c)->spare, us);
}
static int hr8(void *c, double *us) {
  return one_host(((struct ctx_probe *)c)->renew8, us);
}
static int hr1(void *c, double *us) {
  return one_host(((struct ctx_probe *)c)->renew1, us);
}
static int hf(void *c, double *us) {
  return one_host(((struct ctx_probe *)c)->fcold, us);
}
static int hfs(void *c, double *us) {
  return one_host(((struct ctx_probe *)c)->fspare, us);
}

static int probe_path(char *buf, size_t len) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -errno;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash) return -ENOENT;
  *slash = 0;
  int w = snprintf(buf, len, "%.*s/capsa_spawn_probe", PATH_MAX - 32, self);
  if (w < 0 || (size_t)w >= len) return -ENAMETOOLONG;
  return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

int capsa_bench_spawn(int argc, char **argv) {
  // --no-capmode / --no-pidns leave a step out of the zygote renderer, to
  // see what each costs (the host row always has both).
  // --no-stage: each renderer enters its whole policy (the zygote stays
  // outside capability mode), to compare with the staged entry.
  const char *usage =
      "[--runs N] [--json] [--no-capmode] [--no-pidns] [--no-stage]";
  int runs = 200;
  bool json = false, no_capmode = false, no_pidns = false, no_stage = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--no-capmode") == 0) {
      no_capmode = true;
    } else if (strcmp(argv[i], "--no-pidns") == 0) {
      no_pidns = true;
    } else if (strcmp(argv[i], "--no-stage") == 0) {
      no_stage = true;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      if (runs < 1 || runs > MAX_RUNS)
        return capsa_cli_usage_error("bench spawn", usage, "bad --runs",
                                     argv[i]);
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa bench spawn %s\n", usage);
      return 0;
    } else {
      return capsa_cli_usage_error("bench spawn", usage, "unknown option",
                                   argv[i]);
    }
  }
  char probe[PATH_MAX];
  if (probe_path(probe, sizeof probe) < 0) {
    fprintf(stderr,
            "capsa bench spawn: capsa_spawn_probe not found next to "
            "the capsa binary\n");
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);
  // The zygote first, while this process has no other threads.
  static capsa__zygote z;
  struct capsa__zygote_kind kind[2];
  memset(kind, 0, sizeof kind);
  kind[0].name = "bench";
  kind[0].main = probe_renderer;
  kind[0].capmode = no_capmode ? NULL : capsa_capmode_policy_new();
  kind[0].no_stage = no_stage;
  kind[0].pid_namespace =
      !no_pidns && (capsa_ns_available() & CAPSA_NAMESPACE_PID) != 0;
  kind[1] = kind[0];
  kind[1].capmode = no_capmode ? NULL : capsa_capmode_policy_new();
  kind[1].keep_spare = true;
  capsa_features_get();
  int zerr = capsa__zygote_start(&z, kind, 2, CAPSA_NAMESPACE_ALL, 0, true, -1,
                                 RLIM_INFINITY);
  // The embedder's view: a host per row, each with its own zygote, open
  // only during its rows of each round (a process holding hosts forks more
  // slowly: the baseline is measured without them).
  static struct host_bench cold, spare, fcold, fspare, renew8, renew1;
  struct ctx_probe ctx = {probe,  NULL,    &z,      &cold,  &spare,
                          &fcold, &fspare, &renew8, &renew1};
  double start_exec[8], start_fork[8];
  int nstart = 0;
  static double uss_exec[MAX_RUNS], uss_fork[MAX_RUNS];
  int nuss_exec = 0, nuss_fork = 0;
  if (access("/usr/bin/bwrap", X_OK) == 0) ctx.bwrap = "/usr/bin/bwrap";

  enum { FE, PS, ZY, ZS, HO, HS, HR8, HR1, HF, HFS, BW, N };
  struct result res[N];
  memset(res, 0, sizeof res);
  res[FE].name = "fork+exec (static probe)";
  res[PS].name = "posix_spawn (static probe)";
  res[ZY].name = no_capmode ? "zygote renderer, NO capmode"
                 : no_pidns ? "zygote renderer, no pid ns"
                            : "zygote renderer, capmode";
  res[ZS].name = "zygote, pre-forked spare";
  res[HO].name = "host spawn -> READY";
  res[HS].name = "host spawn -> READY, spare";
  res[HR8].name = "host spawn, renew 8";
  res[HR1].name = "host spawn, renew 1";
  res[HF].name = "same, forked zygote";
  res[HFS].name = "same, forked zygote, spare";
  res[BW].name = "bwrap --unshare-all";
  // Interleave rounds so that drift (other load on the machine) hits every
  // method alike.
  int rounds = 4, per = runs / rounds > 0 ? runs / rounds : 1;
  static double all[N][MAX_RUNS];
  int alln[N] = {0};
  for (int round = 0; round < rounds; round++) {
    struct result tmp;
    one_fn fns[N] = {fe, ps, zy, zs, ho, hs, hr8, hr1, hf, hfs, bw};
    for (int m = 0; m < N; m++) {
      if (m == HO) {
        host_bench_open(&cold, false, false, 0);
        host_bench_open(&spare, true, false, 0);
        host_bench_open(&renew8, false, false, 8);
        host_bench_open(&renew1, false, false, 1);
        start_exec[nstart] = cold.start_us;
      }
      if (m == HF) {
        keep_uss(uss_exec, &nuss_exec, &cold);
        host_bench_close(&cold);
        host_bench_close(&spare);
        host_bench_close(&renew8);
        host_bench_close(&renew1);
        host_bench_open(&fcold, false, true, 0);
        host_bench_open(&fspare, true, true, 0);
        start_fork[nstart++] = fcold.start_us;
      }
      if (m == BW) {
        keep_uss(uss_fork, &nuss_fork, &fcold);
        host_bench_close(&fcold);
        host_bench_close(&fspare);
      }
      if ((m == ZY || m == ZS) && zerr < 0) {
        res[m].error = zerr;
        continue;
      }
      if (m == BW && !ctx.bwrap) {
        res[m].error = -ENOENT;
        continue;
      }
      memset(&tmp, 0, sizeof tmp);
      int n = m == BW ? (per / 4 > 0 ? per / 4 : 1) : per;
      static double t[MAX_RUNS];
      int k = 0;
      double us;
      tmp.error = fns[m](&ctx, &us);  // warm-up
      for (int i = 0; tmp.error == 0 && i < n; i++) {
        // Spawns one at a time with an idle gap, as an application makes
        // them (and so a spare has time to get ready, as it would); the
        // same gap for every method.
        struct timespec gap = {0, 2 * 1000 * 1000};
        nanosleep(&gap, NULL);
        tmp.error = fns[m](&ctx, &us);
        if (tmp.error == 0) t[k++] = us;
      }
      if (tmp.error) res[m].error = tmp.error;
      for (int i = 0; i < k && alln[m] < MAX_RUNS; i++)
        all[m][alln[m]++] = t[i];
    }
  }
  for (int m = 0; m < N; m++)
    if (!res[m].error) summarize(&res[m], all[m], alln[m]);
  bool z_staged = z.staged;
  capsa__zygote_stop(&z);
  capsa_capmode_policy_free(kind[0].capmode);
  capsa_capmode_policy_free(kind[1].capmode);

  double base = res[FE].median;
  if (json) {
    printf("{\"bench\":\"spawn\",\"unit\":\"us\",\"results\":[");
    for (int m = 0; m < N; m++)
      printf(
          "%s{\"name\":\"%s\",\"runs\":%d,\"min\":%.1f,\"median\":%.1f,"
          "\"ratio\":%.2f,\"error\":%d}",
          m ? "," : "", res[m].name, res[m].runs, res[m].min, res[m].median,
          base > 0 ? res[m].median / base : 0.0, res[m].error);
    printf("]}\n");
    return res[FE].error || res[ZY].error || res[HO].error ? 1 : 0;
  }
  printf(
      "spawn-to-ready, interleaved in one run (µs; ratio = median / "
      "fork+exec median)\n");
  printf("  %-28s %6s %9s %9s %7s\n", "method", "runs", "min", "median",
         "ratio");
  for (int m = 0; m < N; m++) {
    if (res[m].error) {
      printf("  %-28s %s\n", res[m].name,
             res[m].error == -ENOENT && m == BW
                 ? "not installed (apt-get install bubblewrap)"
                 : strerror(-res[m].error));
      continue;
    }
    printf("  %-28s %6d %9.1f %9.1f %6.2fx\n", res[m].name, res[m].runs,
           res[m].min, res[m].median, base > 0 ? res[m].median / base : 0);
  }
  printf("zygote capability mode: %s\n",
         zerr < 0     ? "zygote did not start"
         : z_staged   ? "staged (renderers take only the final step)"
         : no_capmode ? "off"
                      : "full entry per renderer");
  if (nstart > 0) {
    qsort(start_exec, (size_t)nstart, sizeof start_exec[0],
          capsa_bench_cmp_double);
    qsort(start_fork, (size_t)nstart, sizeof start_fork[0],
          capsa_bench_cmp_double);
    printf(
        "capsa_host_start (zygote ready), median of %d: exec'd zygote %.2f "
        "ms, forked zygote %.2f ms\n",
        nstart, start_exec[nstart / 2] / 1e3, start_fork[nstart / 2] / 1e3);
  }
  if (!res[HO].error && !res[HF].error && res[HF].median > 0)
    printf(
        "exec'd / forked zygote: cold %.2fx, spare %.2fx (host spawn -> "
        "READY medians)\n",
        res[HO].median / res[HF].median,
        res[HFS].median > 0 ? res[HS].median / res[HFS].median : 0.0);
  if (nuss_exec > 0 && nuss_fork > 0) {
    qsort(uss_exec, (size_t)nuss_exec, sizeof *uss_exec,
          capsa_bench_cmp_double);
    qsort(uss_fork, (size_t)nuss_fork, sizeof *uss_fork,
          capsa_bench_cmp_double);
    printf(
        "idle USS of a READY renderer (smaps_rollup Private_*, median): "
        "exec'd zygote %.0f kB, forked zygote %.0f kB (goal <= 300 kB)\n",
        uss_exec[nuss_exec / 2], uss_fork[nuss_fork / 2]);
  } else {
    printf("idle USS of a READY renderer: not readable here\n");
  }
  if (!res[HO].error && !res[HR8].error && !res[HR1].error && res[HO].mean > 0)
    printf(
        "zygote_renew_after (at most N renderers share a canary and layout) / "
        "one zygote, host spawn -> READY means: N=8 %.2fx, N=1 %.2fx "
        "(%.1f, %.1f, %.1f us)\n",
        res[HR8].mean / res[HO].mean, res[HR1].mean / res[HO].mean,
        res[HO].mean, res[HR8].mean, res[HR1].mean);
  if (!res[HO].error && !res[HS].error && base > 0)
    printf(
        "host spawn -> READY / fork+exec = %.2fx cold, %.2fx with keep_spare "
        "(target <= 1.5x); the zygote's fork alone %.2fx\n",
        res[HO].median / base, res[HS].median / base,
        res[ZY].error ? 0.0 : res[ZY].median / base);
  return res[FE].error || res[ZY].error || res[HO].error ? 1 : 0;
}
