// The two-process harness of capsa bench ipc (bench_ipc.c) and its raw
// baselines (bench_ipc_raw.c): one side echoes in a forked child, the other
// measures here, each pinned to its CPU.
#ifndef CAPSA_HOST_CLI_BENCH_IPC_PAIR_H_
#define CAPSA_HOST_CLI_BENCH_IPC_PAIR_H_

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/cli/bench_util.h"

enum { kMsg = 64, kTimeoutMs = 5000, kRawSpin = 20000 };

typedef struct opts {
  int iterations;    // round trips per measurement
  int cpu_a, cpu_b;  // -1: no pinning
} opts_t;

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void pin(int cpu) {
  capsa_bench_pin(cpu);
}

// Runs `echo` in a child pinned to cpu_b, then `ping` here pinned to cpu_a;
// the child is killed afterwards whatever it is doing. Returns ping's value.
typedef int (*side_fn)(void *ctx, const opts_t *o, uint64_t *samples);
static inline int run_pair(const opts_t *o, void *ctx, side_fn echo,
                           side_fn ping, uint64_t *samples) {
  pid_t pid = fork();
  if (pid < 0) return -errno;
  if (pid == 0) {
    pin(o->cpu_b);
    _exit(echo(ctx, o, NULL) < 0 ? 1 : 0);
  }
  pin(o->cpu_a);
  int r = ping(ctx, o, samples);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return r;
}

// The raw baselines (bench_ipc_raw.c): a SEQPACKET socketpair, and one
// shared slot with futexes (spinning `spin` rounds before sleeping).
typedef struct sock_ctx {
  int sv[2];
} sock_ctx_t;
int capsa__bench_sock_echo(void *c, const opts_t *o, uint64_t *s);
int capsa__bench_sock_ping(void *c, const opts_t *o, uint64_t *s);
int capsa__bench_sock_stream(void *c, const opts_t *o, uint64_t *s);

typedef struct mailbox {
  _Atomic uint32_t req, resp;
  _Atomic uint32_t req_sleeping, resp_sleeping;
  char a[kMsg], b[kMsg];
} mailbox_t;
typedef struct mb_ctx {
  mailbox_t *m;
  unsigned spin;
} mb_ctx_t;
int capsa__bench_mb_echo(void *c, const opts_t *o, uint64_t *s);
int capsa__bench_mb_ping(void *c, const opts_t *o, uint64_t *s);

#endif  // CAPSA_HOST_CLI_BENCH_IPC_PAIR_H_
