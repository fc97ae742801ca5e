// capsa bench capmode: what capability mode costs.
//  - per-syscall overhead: the same calls timed in one forked child before
//    and after it enters capability mode (ratio after/before);
//  - entering: compiling the policy (libseccomp -> BPF, Landlock ruleset) in
//    the parent against loading the precompiled policy in a fresh child, and
//    capsa_cap_enter() (both in the child);
//  - rights: the same calls with 0, 1, 10, 50 and the most number-keyed
//    rights filters the kernel accepts (its 32768-instruction cap on the
//    stacked filters of a process), and FreeBSD-style dup/close of a
//    limited descriptor (capsa_rights_dup / capsa_rights_close) against
//    dup/close of an unlimited one.
// Figures are medians of several rounds; only ratios from this run mean
// anything (2 shared vCPUs under KVM).
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/cli/commands.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/errors.h"
#include "sandbox/rights/rights.h"

static const char kUsage[] = "[--json] [--iterations N]";

#define ROUNDS 7
#define ENTER_ROUNDS 25

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(*v), cmp_double);
  return v[n / 2];
}

// --- per-syscall ---

struct ctx {
  int pipe_rd, pipe_wr;
};

static void op_getppid(struct ctx *c) {
  syscall(SYS_getppid);
}
static void op_pipe_rw(struct ctx *c) {
  char b = 'x';
  if (write(c->pipe_wr, &b, 1) == 1 && read(c->pipe_rd, &b, 1) != 1) abort();
}
static void op_fstat(struct ctx *c) {
  struct stat st;
  fstat(c->pipe_rd, &st);
}
static void op_clock(struct ctx *c) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no syscall at all
}
static void op_mmap_munmap(struct ctx *c) {
  // Argument check on PROT_EXEC: the filter's conditional path.
  void *p = (void *)syscall(SYS_mmap, NULL, 4096, 3 /* RW */,
                            0x22 /* PRIVATE|ANON */, -1, 0);
  syscall(SYS_munmap, p, 4096);
}

static const struct {
  const char *name;
  void (*fn)(struct ctx *);
} kOps[] = {
    {"getppid", op_getppid},
    {"pipe write+read 1 B", op_pipe_rw},
    {"fstat", op_fstat},
    {"mmap+munmap (arg check)", op_mmap_munmap},
    {"clock_gettime (vDSO)", op_clock},
};
#define NOPS (sizeof(kOps) / sizeof(kOps[0]))

static double time_op(size_t op, struct ctx *c, long iters) {
  double rounds[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    uint64_t t0 = now_ns();
    for (long i = 0; i < iters; i++) kOps[op].fn(c);
    rounds[r] = (double)(now_ns() - t0) / (double)iters;
  }
  return median(rounds, ROUNDS);
}

struct syscall_result {
  int enter_err;
  double before[NOPS], after[NOPS];
};

static void syscall_child(int wfd, long iters) {
  struct syscall_result res;
  memset(&res, 0, sizeof(res));
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) _exit(2);
  struct ctx c = {p[0], p[1]};
  for (size_t i = 0; i < NOPS; i++) res.before[i] = time_op(i, &c, iters);
  res.enter_err = capsa_cap_enter();
  if (res.enter_err == 0)
    for (size_t i = 0; i < NOPS; i++) res.after[i] = time_op(i, &c, iters);
  ssize_t w = write(wfd, &res, sizeof(res));
  _exit(w == (ssize_t)sizeof(res) ? 0 : 1);
}

// Runs fn(wfd, arg) in a child; reads `size` bytes of results back.
static int in_child(void (*fn)(int, long), long arg, void *out, size_t size) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -errno;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -errno;
  if (pid == 0) {
    close(p[0]);
    fn(p[1], arg);
    _exit(1);
  }
  close(p[1]);
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(p[0], (char *)out + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(p[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return got == size ? 0 : -ECHILD;
}

// --- rights filters ---

#define RIGHTS_STEPS 5
#define DUP_ROUNDS 20
static const int kFilterSteps[RIGHTS_STEPS - 1] = {0, 1, 10, 50};

struct rights_result {
  int err;
  int filters[RIGHTS_STEPS];  // limited descriptors at each step
  double ns[RIGHTS_STEPS][NOPS];
  double dup_close_limited_us, dup_close_plain_us;
};

// Limits fresh pipe read ends (kept open) until `want` are limited or the
// kernel refuses (-ENOMEM at its cap); returns how many are limited.
static int add_filters(int have, int want, int *err) {
  capsa_rights_t r;
  capsa_rights_init(&r, CAPSA_CAP_READ, CAPSA_CAP_FSTAT);
  while (want < 0 || have < want) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
      *err = -errno;
      break;
    }
    close(p[1]);
    int rc = capsa_rights_limit(p[0], &r);
    if (rc < 0) {
      close(p[0]);
      *err = rc;
      break;
    }
    have++;
  }
  return have;
}

static void rights_child(int wfd, long iters) {
  struct rights_result res;
  memset(&res, 0, sizeof(res));
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) _exit(2);
  struct ctx c = {p[0], p[1]};
  int have = 0;
  for (int s = 0; s < RIGHTS_STEPS && res.err == 0; s++) {
    int err = 0;
    if (s == RIGHTS_STEPS - 1) {
      // dup+close of a limited descriptor (each dup is a filter of its
      // own), then filters up to the kernel's cap.
      int lim[2];
      if (pipe2(lim, O_CLOEXEC) < 0) _exit(2);
      capsa_rights_t r;
      capsa_rights_init(&r, CAPSA_CAP_READ, CAPSA_CAP_FSTAT);
      res.err = capsa_rights_limit(lim[0], &r);
      double v[DUP_ROUNDS];
      for (int i = 0; i < DUP_ROUNDS && res.err == 0; i++) {
        uint64_t t0 = now_ns();
        int d = capsa_rights_dup(lim[0]);
        if (d < 0) res.err = d;
        if (d >= 0) capsa_rights_close(d);
        v[i] = (double)(now_ns() - t0) / 1000.0;
      }
      if (res.err == 0) res.dup_close_limited_us = median(v, DUP_ROUNDS);
      for (int i = 0; i < DUP_ROUNDS && res.err == 0; i++) {
        uint64_t t0 = now_ns();
        for (int j = 0; j < 100; j++) close(dup(p[0]));
        v[i] = (double)(now_ns() - t0) / 100000.0;
      }
      if (res.err == 0) res.dup_close_plain_us = median(v, DUP_ROUNDS);
      have += 1 + DUP_ROUNDS;
      if (res.err == 0) have = add_filters(have, -1, &err);
      if (res.err == 0 && err != -ENOMEM) res.err = err;
    } else {
      have = add_filters(have, kFilterSteps[s], &err);
      if (err < 0) res.err = err;
    }
    res.filters[s] = have;
    for (size_t i = 0; i < NOPS && res.err == 0; i++)
      res.ns[s][i] = time_op(i, &c, iters / 10);
  }
  ssize_t w = write(wfd, &res, sizeof(res));
  _exit(w == (ssize_t)sizeof(res) ? 0 : 1);
}

// --- entering ---

static capsa_capmode_policy *g_policy;  // precompiled, shared with children

static void enter_precompiled_child(int wfd, long unused) {
  uint64_t t0 = now_ns();
  int rc = capsa_capmode_policy_enter(g_policy);
  double us = rc == 0 ? (double)(now_ns() - t0) / 1000.0 : -1;
  ssize_t w = write(wfd, &us, sizeof(us));
  _exit(w == (ssize_t)sizeof(us) ? 0 : 1);
}

static void cap_enter_child(int wfd, long unused) {
  uint64_t t0 = now_ns();
  int rc = capsa_cap_enter();
  double us = rc == 0 ? (double)(now_ns() - t0) / 1000.0 : -1;
  ssize_t w = write(wfd, &us, sizeof(us));
  _exit(w == (ssize_t)sizeof(us) ? 0 : 1);
}

static int measure_children(void (*fn)(int, long), double *med) {
  double v[ENTER_ROUNDS];
  for (int i = 0; i < ENTER_ROUNDS; i++) {
    int rc = in_child(fn, 0, &v[i], sizeof(v[i]));
    if (rc < 0) return rc;
    if (v[i] < 0) return -EPERM;
  }
  *med = median(v, ENTER_ROUNDS);
  return 0;
}

int capsa_bench_capmode(int argc, char **argv) {
  bool json = false;
  long iters = 100000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      char *end;
      errno = 0;
      iters = strtol(argv[++i], &end, 10);
      if (errno || *end || iters < 100 || iters > 100000000)
        return capsa_cli_usage_error("bench capmode", kUsage,
                                     "bad --iterations", argv[i]);
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa bench capmode %s\n", kUsage);
      return 0;
    } else {
      return capsa_cli_usage_error("bench capmode", kUsage, "unknown argument",
                                   argv[i]);
    }
  }
  struct syscall_result sr;
  int rc = in_child(syscall_child, iters, &sr, sizeof(sr));
  if (rc == 0 && sr.enter_err < 0) rc = sr.enter_err;
  if (rc < 0) {
    fprintf(stderr, "capsa bench capmode: %s\n", capsa_strerror(rc));
    return 1;
  }
  // Compile in the parent (what a launcher does once).
  double compile[ENTER_ROUNDS];
  for (int i = 0; i < ENTER_ROUNDS; i++) {
    uint64_t t0 = now_ns();
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    rc = p ? capsa_capmode_policy_compile(p) : -ENOMEM;
    compile[i] = (double)(now_ns() - t0) / 1000.0;
    if (rc < 0) {
      fprintf(stderr, "capsa bench capmode: compile: %s\n", capsa_strerror(rc));
      capsa_capmode_policy_free(p);
      return 1;
    }
    if (i < ENTER_ROUNDS - 1)
      capsa_capmode_policy_free(p);
    else
      g_policy = p;
  }
  double compile_us = median(compile, ENTER_ROUNDS);
  double load_us = 0, cap_enter_us = 0;
  rc = measure_children(enter_precompiled_child, &load_us);
  if (rc == 0) rc = measure_children(cap_enter_child, &cap_enter_us);
  struct capsa_capmode_report rep;
  capsa_capmode_policy_report(g_policy, &rep);
  capsa_capmode_policy_free(g_policy);
  if (rc < 0) {
    fprintf(stderr, "capsa bench capmode: enter: %s\n", capsa_strerror(rc));
    return 1;
  }
  struct rights_result rr;
  rc = in_child(rights_child, iters, &rr, sizeof(rr));
  if (rc == 0 && rr.err < 0) rc = rr.err;
  if (rc < 0) {
    fprintf(stderr, "capsa bench capmode: rights: %s\n", capsa_strerror(rc));
    return 1;
  }
  if (json) {
    printf("{\"iterations\":%ld,\"syscalls\":[", iters);
    for (size_t i = 0; i < NOPS; i++)
      printf(
          "%s{\"name\":\"%s\",\"baseline_ns\":%.1f,\"capmode_ns\":%.1f,"
          "\"ratio\":%.3f}",
          i ? "," : "", kOps[i].name, sr.before[i], sr.after[i],
          sr.after[i] / sr.before[i]);
    printf(
        "],\"enter\":{\"compile_in_parent_us\":%.1f,"
        "\"load_precompiled_us\":%.1f,\"cap_enter_us\":%.1f,"
        "\"compile_over_load\":%.2f,\"cap_enter_over_load\":%.2f,"
        "\"bpf_insns\":%u,\"landlock_abi\":%d},",
        compile_us, load_us, cap_enter_us, compile_us / load_us,
        cap_enter_us / load_us, rep.seccomp_bpf_len, rep.landlock_abi);
    printf(
        "\"rights\":{\"max_filters\":%d,\"dup_close_limited_us\":%.1f,"
        "\"dup_close_plain_us\":%.2f,\"steps\":[",
        rr.filters[RIGHTS_STEPS - 1], rr.dup_close_limited_us,
        rr.dup_close_plain_us);
    for (int s = 0; s < RIGHTS_STEPS; s++) {
      printf("%s{\"filters\":%d", s ? "," : "", rr.filters[s]);
      for (size_t i = 0; i < NOPS; i++)
        printf(",\"%s\":%.1f", kOps[i].name, rr.ns[s][i]);
      printf("}");
    }
    printf("]}}\n");
    return 0;
  }
  printf(
      "capability mode: per-syscall cost (median of %d rounds x %ld "
      "calls, same child before/after cap_enter)\n",
      ROUNDS, iters);
  printf("  %-26s %12s %12s %8s\n", "call", "baseline ns", "capmode ns",
         "ratio");
  for (size_t i = 0; i < NOPS; i++)
    printf("  %-26s %12.1f %12.1f %8.2f\n", kOps[i].name, sr.before[i],
           sr.after[i], sr.after[i] / sr.before[i]);
  printf("\nentering (median of %d; BPF %u instructions, Landlock ABI %d)\n",
         ENTER_ROUNDS, rep.seccomp_bpf_len, rep.landlock_abi);
  printf("  %-40s %9.1f us\n", "compile policy in the parent", compile_us);
  printf("  %-40s %9.1f us  (1.00)\n", "load precompiled policy in a child",
         load_us);
  printf("  %-40s %9.1f us  (%.2f x load)\n",
         "capsa_cap_enter() (compile + load)", cap_enter_us,
         cap_enter_us / load_us);
  printf("  compile / load = %.2f\n", compile_us / load_us);
  printf(
      "\nrights filters (one per limited number, CAP_READ|CAP_FSTAT; the "
      "kernel accepted %d in this process)\n",
      rr.filters[RIGHTS_STEPS - 1]);
  printf("  %-26s", "call (ns, ratio to 0)");
  for (int s = 0; s < RIGHTS_STEPS; s++) printf(" %10d", rr.filters[s]);
  printf("\n");
  for (size_t i = 0; i < NOPS; i++) {
    printf("  %-26s", kOps[i].name);
    for (int s = 0; s < RIGHTS_STEPS; s++)
      printf(" %5.0f %4.1fx", rr.ns[s][i], rr.ns[s][i] / rr.ns[0][i]);
    printf("\n");
  }
  printf(
      "  dup+close: limited (capsa_rights_dup/close) %.1f us, unlimited "
      "%.2f us (%.0fx)\n",
      rr.dup_close_limited_us, rr.dup_close_plain_us,
      rr.dup_close_limited_us / rr.dup_close_plain_us);
  return 0;
}
