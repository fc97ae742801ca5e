// capsa bench ipc's raw baselines (bench_ipc_pair.h): the socket-path
// floor and the shared-memory floor the channel's rows are compared with.
#include <linux/futex.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "host/cli/bench_ipc_pair.h"

// ---- raw socketpair ------------------------------------------------------

int capsa__bench_sock_echo(void *c, const opts_t *o, uint64_t *s) {
  sock_ctx_t *x = c;
  char buf[kMsg];
  for (;;) {
    ssize_t n = recv(x->sv[1], buf, sizeof buf, 0);
    if (n <= 0) return -1;
    if (buf[0] == 'S') continue;  // stream message: count nothing, no reply
    if (buf[0] == 'E') n = 1;     // end of stream: acknowledge
    if (send(x->sv[1], buf, (size_t)n, MSG_NOSIGNAL) != n) return -1;
  }
}

int capsa__bench_sock_ping(void *c, const opts_t *o, uint64_t *s) {
  sock_ctx_t *x = c;
  char buf[kMsg] = {'P'};
  for (int i = -100; i < o->iterations; i++) {
    uint64_t t = now_ns();
    if (send(x->sv[0], buf, kMsg, MSG_NOSIGNAL) != kMsg) return -1;
    if (recv(x->sv[0], buf, sizeof buf, 0) != kMsg) return -1;
    if (i >= 0) s[i] = now_ns() - t;
  }
  return o->iterations;
}

int capsa__bench_sock_stream(void *c, const opts_t *o, uint64_t *s) {
  sock_ctx_t *x = c;
  char buf[kMsg] = {'S'};
  int n = o->iterations * 4;
  uint64_t t = now_ns();
  for (int i = 0; i < n; i++)
    if (send(x->sv[0], buf, kMsg, MSG_NOSIGNAL) != kMsg) return -1;
  buf[0] = 'E';
  if (send(x->sv[0], buf, kMsg, MSG_NOSIGNAL) != kMsg) return -1;
  if (recv(x->sv[0], buf, sizeof buf, 0) != 1) return -1;
  s[0] = now_ns() - t;
  return n;
}

// ---- raw shared-memory mailbox ------------------------------------------

static void mb_wait(_Atomic uint32_t *w, _Atomic uint32_t *sleeping,
                    uint32_t old, unsigned spin) {
  for (unsigned i = 0; i < spin; i++) {
    if (atomic_load_explicit(w, memory_order_acquire) != old) return;
    __builtin_ia32_pause();
  }
  while (atomic_load(w) == old) {
    atomic_store(sleeping, 1);
    if (atomic_load(w) == old)
      syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, old, NULL, NULL, 0);
    atomic_store(sleeping, 0);
  }
}

static void mb_post(_Atomic uint32_t *w, _Atomic uint32_t *sleeping) {
  atomic_fetch_add(w, 1);
  if (atomic_load(sleeping))
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int capsa__bench_mb_echo(void *c, const opts_t *o, uint64_t *s) {
  mb_ctx_t *x = c;
  uint32_t seen = 0;
  for (;;) {
    mb_wait(&x->m->req, &x->m->req_sleeping, seen, x->spin);
    seen++;
    memcpy(x->m->b, x->m->a, kMsg);
    mb_post(&x->m->resp, &x->m->resp_sleeping);
  }
  return 0;  // not reached: the child is killed
}

int capsa__bench_mb_ping(void *c, const opts_t *o, uint64_t *s) {
  mb_ctx_t *x = c;
  char buf[kMsg] = {'P'};
  uint32_t seen = atomic_load(&x->m->resp);
  for (int i = -100; i < o->iterations; i++) {
    uint64_t t = now_ns();
    memcpy(x->m->a, buf, kMsg);
    mb_post(&x->m->req, &x->m->req_sleeping);
    mb_wait(&x->m->resp, &x->m->resp_sleeping, seen, x->spin);
    seen++;
    memcpy(buf, x->m->b, kMsg);
    if (i >= 0) s[i] = now_ns() - t;
  }
  return o->iterations;
}
