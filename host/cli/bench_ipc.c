// capsa bench ipc: what capsa's IPC costs next to the raw mechanisms it is
// built on, all measured in the same run (ratios, not absolute claims).
//
// Round trips of 64-byte messages between two processes, pinned to the same
// CPU and then to two CPUs (waking the other vCPU costs ~25 us each way on
// this kind of machine, so both are shown):
//   raw socketpair       SOCK_SEQPACKET send/recv, the socket-path floor
//   raw shm mailbox      one shared slot + futex, spinning (cross-CPU only):
//                        the shared-memory floor
//   capsa ring           ipc/ring.h: bounds-checked records, adaptive spin
//   ring hook + codec    ipc/ring_fastpath.h hook + codec (PING/PONG), no
//                        channel state machine
//   capsa channel fast   ipc/loop.h request/response (capsa_rloop_call) on
//                        both ends, with the ring fast path installed
//   capsa channel sock   the same over the socket only
//   interface fast/sock  the same with an embedder interface's 64-byte
//                        request and response (host/cli/bench_echo.fbs:
//                        encoded and checked through the generated
//                        descriptor on both ends) instead of PING/PONG
// Messages/s of one-way 64-byte streams; bulk bytes through a shared region
// (copy in, hand over, copy out: what a hostile-content reader must do)
// against memcpy in one process.
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/cli/bench_echo.capsa.h"
#include "host/cli/bench_ipc_pair.h"
#include "host/cli/bench_util.h"
#include "host/cli/commands.h"
#include "ipc/codec.h"
#include "ipc/loop.h"
#include "ipc/message.h"
#include "ipc/ring.h"
#include "ipc/ring_fastpath.h"
#include "ipc/shm.h"

static const char kUsage[] = "[--json] [--iterations N] [--no-adaptive]";

static int g_fixed_spin;  // --no-adaptive

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct rt {
  double min_us, med_us;
  int ok;
} rt_t;

static rt_t summarize(uint64_t *s, int n) {
  rt_t r = {0, 0, n > 0};
  if (n <= 0) return r;
  qsort(s, (size_t)n, sizeof *s, cmp_u64);
  r.min_us = (double)s[0] / 1000.0;
  r.med_us = (double)s[n / 2] / 1000.0;
  return r;
}

// ---- capsa ring ----------------------------------------------------------

typedef struct ring_ctx {
  capsa_ring_fastpath_t host;
  capsa_ring_fastpath_fds_t fds;
  int same_cpu;
} ring_ctx_t;

static void ring_tune(ring_ctx_t *x, capsa_ring_t *r) {
  // capsa's rings run with their default adaptive spinning (which must find
  // out by itself that spinning cannot help a peer on our own CPU); only
  // --no-adaptive pins the spin budget like the raw baseline's.
  if (x->same_cpu && g_fixed_spin) capsa_ring_set_spin(r, 0, 0);
}

static int ring_echo(void *c, const opts_t *o, uint64_t *s) {
  ring_ctx_t *x = c;
  capsa_ring_fastpath_t peer;
  if (capsa_ring_fastpath_attach(&peer, 65536, &x->fds) != 0) return -1;
  ring_tune(x, &peer.rx);
  uint8_t buf[CAPSA_RING_MAX_MESSAGE];
  for (;;) {
    uint32_t kind;
    int n = capsa_ring_read(&peer.rx, buf, sizeof buf, &kind, -1);
    if (n < 0) return -1;
    if (kind == 'S') continue;
    if (capsa_ring_write(&peer.tx, kind, buf, (size_t)n, kTimeoutMs) != 0)
      return -1;
  }
}

static int ring_ping(void *c, const opts_t *o, uint64_t *s) {
  ring_ctx_t *x = c;
  ring_tune(x, &x->host.rx);
  uint8_t buf[kMsg] = {'P'};
  for (int i = -100; i < o->iterations; i++) {
    uint64_t t = now_ns();
    uint32_t kind;
    if (capsa_ring_write(&x->host.tx, 'P', buf, kMsg, kTimeoutMs) != 0 ||
        capsa_ring_read(&x->host.rx, buf, sizeof buf, &kind, kTimeoutMs) !=
            kMsg)
      return -1;
    if (i >= 0) s[i] = now_ns() - t;
  }
  return o->iterations;
}

static int ring_stream(void *c, const opts_t *o, uint64_t *s) {
  ring_ctx_t *x = c;
  uint8_t buf[kMsg] = {'S'};
  int n = o->iterations * 4;
  uint64_t t = now_ns();
  for (int i = 0; i < n; i++)
    if (capsa_ring_write(&x->host.tx, 'S', buf, kMsg, kTimeoutMs) != 0)
      return -1;
  uint32_t kind;
  if (capsa_ring_write(&x->host.tx, 'E', buf, 1, kTimeoutMs) != 0 ||
      capsa_ring_read(&x->host.rx, buf, sizeof buf, &kind, kTimeoutMs) != 1)
    return -1;
  s[0] = now_ns() - t;
  return n;
}

// ---- capsa fast path hook + codec ---------------------------------------

static int fp_exchange(capsa_fastpath_t *h, capsa_msg_type_t type, uint64_t seq,
                       const uint8_t *payload) {
  capsa_msg_t m;
  capsa_msg_init(&m, type);
  m.seq = seq;
  m.request_id = seq;
  m.flags = type == CAPSA_MSG_PING ? CAPSA_MSG_F_REQUEST : CAPSA_MSG_F_RESPONSE;
  m.u.ping.seq = seq;
  m.u.ping.payload.data = payload;
  m.u.ping.payload.len = kMsg;
  uint8_t buf[1024];
  int len = capsa_msg_encode(&m, buf, sizeof buf);
  if (len < 0) return len;
  return h->send(h->ctx, buf, (size_t)len);
}

static int fp_receive(capsa_fastpath_t *h, capsa_msg_type_t want) {
  static uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
  for (;;) {
    ssize_t n = h->recv(h->ctx, buf, sizeof buf);
    if (n < 0) return (int)n;
    if (n > 0) {
      capsa_msg_t m;
      int err = capsa_msg_decode(buf, (size_t)n, &m, NULL, 0);
      if (err < 0) return err;
      return m.type == want && m.u.ping.payload.len == kMsg ? 0 : -EBADMSG;
    }
    int w = h->wait(h->ctx, -1, kTimeoutMs);
    if (w <= 0) return w < 0 ? w : -ETIMEDOUT;
  }
}

static int fp_echo(void *c, const opts_t *o, uint64_t *s) {
  ring_ctx_t *x = c;
  capsa_ring_fastpath_t peer;
  if (capsa_ring_fastpath_attach(&peer, 65536, &x->fds) != 0) return -1;
  ring_tune(x, &peer.rx);
  capsa_fastpath_t h;
  capsa_ring_fastpath_hook(&peer, &h);
  uint8_t payload[kMsg] = {0};
  for (uint64_t seq = 1;; seq++) {
    if (fp_receive(&h, CAPSA_MSG_PING) != 0) return -1;
    if (fp_exchange(&h, CAPSA_MSG_PONG, seq, payload) != 0) return -1;
  }
}

static int fp_ping(void *c, const opts_t *o, uint64_t *s) {
  ring_ctx_t *x = c;
  ring_tune(x, &x->host.rx);
  capsa_fastpath_t h;
  capsa_ring_fastpath_hook(&x->host, &h);
  uint8_t payload[kMsg] = {1};
  uint64_t seq = 1;
  for (int i = -100; i < o->iterations; i++, seq++) {
    uint64_t t = now_ns();
    if (fp_exchange(&h, CAPSA_MSG_PING, seq, payload) != 0 ||
        fp_receive(&h, CAPSA_MSG_PONG) != 0)
      return -1;
    if (i >= 0) s[i] = now_ns() - t;
  }
  return o->iterations;
}

// ---- capsa channel (renderer loop on both ends), socket or fast path -----

typedef struct chan_ctx {
  int sv[2];
  ring_ctx_t *ring;  // NULL: socket path only
  int iface;         // 1: Echo/Echoed of bench_echo.fbs, not PING/PONG
} chan_ctx_t;

static const capsa_interface_t *const kEchoIface[] = {&capsa_bench_interface};

static int chan_on_msg(capsa_rloop_t *l, capsa_msg_t *m) {
  if (m->type == CAPSA_MSG_INTERFACE && m->u.iface.id == CAPSA_BENCH_ECHO) {
    const capsa_bench_echo_t *e = m->u.iface.value;
    capsa_bench_echoed_t a;
    capsa_bench_echoed_init(&a);
    a.seq = e->seq;
    a.payload = e->payload;
    capsa_msg_t r;
    capsa_msg_init_iface(&r, &capsa_bench_interface, CAPSA_BENCH_ECHOED, &a);
    return capsa_rloop_reply(l, m, &r);
  }
  if (m->type != CAPSA_MSG_PING) return 0;
  capsa_msg_t pong;
  capsa_msg_init(&pong, CAPSA_MSG_PONG);
  pong.u.ping = m->u.ping;
  return capsa_rloop_reply(l, m, &pong);
}

// The host's end (it answers pings); with a ring it uses the host side.
static int chan_echo(void *c, const opts_t *o, uint64_t *s) {
  chan_ctx_t *x = c;
  capsa_rloop_t l;
  capsa_rloop_options_t op = {.peer = CAPSA_PEER_RENDERER,
                              .send_timeout_ms = kTimeoutMs,
                              .interfaces = kEchoIface,
                              .ninterfaces = 1};
  if (capsa_rloop_init(&l, x->sv[1], chan_on_msg, &op) != 0) return -1;
  if (x->ring) {
    capsa_fastpath_t h;
    ring_tune(x->ring, &x->ring->host.rx);
    capsa_ring_fastpath_hook(&x->ring->host, &h);
    if (capsa_rloop_set_fastpath(&l, &h) != 0) return -1;
  }
  return capsa_rloop_run(&l);
}

// The renderer's end: hello, then ping requests.
static int chan_ping(void *c, const opts_t *o, uint64_t *s) {
  chan_ctx_t *x = c;
  capsa_rloop_t l;
  capsa_rloop_options_t op = {.peer = CAPSA_PEER_HOST,
                              .send_timeout_ms = kTimeoutMs,
                              .interfaces = kEchoIface,
                              .ninterfaces = 1};
  capsa_ring_fastpath_t peer;
  if (x->ring && capsa_ring_fastpath_attach(&peer, 65536, &x->ring->fds) != 0)
    return -1;
  if (x->ring) {
    for (int i = 0; i < CAPSA_RFP_NFDS; i++) x->ring->fds.fd[i] = -1;
    ring_tune(x->ring, &peer.rx);
  }
  if (capsa_rloop_init(&l, x->sv[0], NULL, &op) != 0) return -1;
  x->sv[0] = -1;  // the loop owns it
  int r = 0;
  if (x->ring) {
    capsa_fastpath_t h;
    capsa_ring_fastpath_hook(&peer, &h);
    r = capsa_rloop_set_fastpath(&l, &h);
  }
  capsa_msg_t hello;
  capsa_msg_init(&hello, CAPSA_MSG_HELLO);
  hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
  hello.u.hello.pid = getpid();
  if (r == 0) r = capsa_rloop_send(&l, &hello);
  uint8_t payload[kMsg] = {2};
  for (int i = -100; r == 0 && i < o->iterations; i++) {
    capsa_msg_t ping, pong;
    capsa_bench_echo_t echo;
    capsa_bench_echo_init(&echo);
    echo.seq = (uint64_t)(i + 100);
    echo.payload = (capsa_bytes_t){payload, kMsg};
    uint64_t t = now_ns();
    if (x->iface) {
      capsa_msg_init_iface(&ping, &capsa_bench_interface, CAPSA_BENCH_ECHO,
                           &echo);
    } else {
      capsa_msg_init(&ping, CAPSA_MSG_PING);
      ping.u.ping.payload.data = payload;
      ping.u.ping.payload.len = kMsg;
    }
    r = capsa_rloop_call(&l, &ping, kTimeoutMs, &pong);
    if (r == 0 && x->iface &&
        (pong.type != CAPSA_MSG_INTERFACE ||
         ((const capsa_bench_echoed_t *)pong.u.iface.value)->payload.len !=
             kMsg))
      r = -EPROTO;
    if (r == 0 && i >= 0) s[i] = now_ns() - t;
  }
  capsa_rloop_close(&l);
  if (x->ring) capsa_ring_fastpath_close(&peer);
  return r == 0 ? o->iterations : -1;
}

// ---- bulk ----------------------------------------------------------------

enum { kSlot = 1 << 20, kSlots = 4 };

typedef struct bulk_ctx {
  ring_ctx_t ring;
  capsa_shm_region_t region;  // kSlots * kSlot, both map it
  int chunks;
} bulk_ctx_t;

static int bulk_reader(void *c, const opts_t *o, uint64_t *s) {
  bulk_ctx_t *x = c;
  capsa_ring_fastpath_t peer;
  if (capsa_ring_fastpath_attach(&peer, 65536, &x->ring.fds) != 0) return -1;
  uint8_t *dst = malloc(kSlot);
  if (!dst) return -1;
  for (;;) {
    uint32_t slot, kind;
    if (capsa_ring_read(&peer.rx, &slot, sizeof slot, &kind, -1) != sizeof slot)
      return -1;
    // Hostile-content discipline: check the index, copy out, then use.
    if (slot >= kSlots ||
        capsa_shm_read(&x->region, (size_t)slot * kSlot, dst, kSlot) != 0)
      return -1;
    if (capsa_ring_write(&peer.tx, 0, &slot, sizeof slot, kTimeoutMs) != 0)
      return -1;
  }
}

static int bulk_writer(void *c, const opts_t *o, uint64_t *s) {
  bulk_ctx_t *x = c;
  uint8_t *src = malloc(kSlot);
  if (!src) return -1;
  memset(src, 0xab, kSlot);
  int in_flight = 0;
  uint64_t t = now_ns();
  for (int i = 0; i < x->chunks; i++) {
    uint32_t slot = (uint32_t)(i % kSlots), kind, done;
    if (in_flight == kSlots) {
      if (capsa_ring_read(&x->ring.host.rx, &done, sizeof done, &kind,
                          kTimeoutMs) != sizeof done)
        return -1;
      in_flight--;
    }
    if (capsa_shm_write(&x->region, (size_t)slot * kSlot, src, kSlot) != 0 ||
        capsa_ring_write(&x->ring.host.tx, 0, &slot, sizeof slot, kTimeoutMs) !=
            0)
      return -1;
    in_flight++;
  }
  while (in_flight-- > 0) {
    uint32_t done, kind;
    if (capsa_ring_read(&x->ring.host.rx, &done, sizeof done, &kind,
                        kTimeoutMs) != sizeof done)
      return -1;
  }
  s[0] = now_ns() - t;
  free(src);
  return 0;
}

static double memcpy_gbps(int chunks) {
  uint8_t *src = malloc(kSlot), *dst = malloc((size_t)kSlots * kSlot);
  if (!src || !dst) return 0;
  memset(src, 0xab, kSlot);
  memset(dst, 0, (size_t)kSlots * kSlot);
  uint64_t t = now_ns();
  for (int i = 0; i < chunks; i++) {
    memcpy(dst + (size_t)(i % kSlots) * kSlot, src, kSlot);
    __asm__ volatile("" : : "r"(dst) : "memory");
  }
  double secs = (double)(now_ns() - t) / 1e9;
  free(src);
  free(dst);
  return (double)chunks * kSlot / secs / 1e9;
}

// ---- driver --------------------------------------------------------------

enum {
  kRtRawSock,
  kRtRawShm,
  kRtRing,
  kRtFast,
  kRtChanFast,
  kRtChan,
  kRtIfaceFast,
  kRtIface,
  kRtCount
};
static const char *const kRtName[kRtCount] = {
    "raw socketpair",    "raw shm mailbox",    "capsa ring",
    "ring hook + codec", "capsa channel fast", "capsa channel sock",
    "interface fast",    "interface sock"};

typedef struct placement {
  const char *name;
  rt_t rt[kRtCount];
  double mps_sock, mps_ring;
} placement_t;

static int fresh_ring(ring_ctx_t *x, int same_cpu) {
  x->same_cpu = same_cpu;
  return capsa_ring_fastpath_create(&x->host, 65536, &x->fds);
}

static void drop_ring(ring_ctx_t *x) {
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) close(x->fds.fd[i]);
  capsa_ring_fastpath_close(&x->host);
}

static int measure(placement_t *p, opts_t o, int same_cpu, uint64_t *s) {
  // Raw socketpair: round trip and stream.
  for (int k = 0; k < 2; k++) {
    sock_ctx_t sc;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sc.sv) < 0)
      return -errno;
    int n = run_pair(&o, &sc, capsa__bench_sock_echo,
                     k ? capsa__bench_sock_stream : capsa__bench_sock_ping, s);
    if (k == 0) p->rt[kRtRawSock] = n > 0 ? summarize(s, n) : (rt_t){0};
    if (k == 1 && n > 0) p->mps_sock = n / ((double)s[0] / 1e9);
    close(sc.sv[0]);
    close(sc.sv[1]);
  }
  // Raw mailbox: spinning only pays across CPUs.
  mb_ctx_t mc = {mmap(NULL, sizeof(mailbox_t), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0),
                 same_cpu ? 0 : kRawSpin};
  if (mc.m == MAP_FAILED) return -errno;
  int n = run_pair(&o, &mc, capsa__bench_mb_echo, capsa__bench_mb_ping, s);
  p->rt[kRtRawShm] = n > 0 ? summarize(s, n) : (rt_t){0};
  munmap(mc.m, sizeof(mailbox_t));
  // capsa ring: round trip and stream; the fast path hook + codec.
  side_fn rs[3][2] = {
      {ring_echo, ring_ping}, {ring_echo, ring_stream}, {fp_echo, fp_ping}};
  for (int k = 0; k < 3; k++) {
    ring_ctx_t rc;
    if (fresh_ring(&rc, same_cpu) < 0) return -ENOMEM;
    n = run_pair(&o, &rc, rs[k][0], rs[k][1], s);
    if (k == 0) p->rt[kRtRing] = n > 0 ? summarize(s, n) : (rt_t){0};
    if (k == 1 && n > 0) p->mps_ring = n / ((double)s[0] / 1e9);
    if (k == 2) p->rt[kRtFast] = n > 0 ? summarize(s, n) : (rt_t){0};
    drop_ring(&rc);
  }
  // capsa channel: socket path, then with the ring fast path; PING/PONG,
  // then an embedder interface's request (k >= 2), interleaved so that a
  // drift of the machine during the run does not favour either.
  static const int kRow[4] = {kRtChan, kRtChanFast, kRtIface, kRtIfaceFast};
  for (int k = 0; k < 4; k++) {
    chan_ctx_t cc = {{-1, -1}, NULL, k >= 2};
    ring_ctx_t rc;
    int fast = k % 2;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cc.sv) < 0)
      return -errno;
    if (fast) {
      if (fresh_ring(&rc, same_cpu) < 0) return -ENOMEM;
      cc.ring = &rc;
    }
    n = run_pair(&o, &cc, chan_echo, chan_ping, s);
    p->rt[kRow[k]] = n > 0 ? summarize(s, n) : (rt_t){0};
    if (cc.sv[0] >= 0) close(cc.sv[0]);
    close(cc.sv[1]);
    if (fast) drop_ring(&rc);
  }
  return 0;
}

static double ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

// The median ratios a placement is judged by, in print order: channel sock /
// raw socketpair, ring / raw shm, channel fast / raw shm, channel fast / raw
// socketpair, channel sock / channel fast, interface / built-in message
// (socket, fast path).
enum { kRatioCount = 7 };
static void placement_ratios(const placement_t *p, double r[kRatioCount]) {
  r[0] = ratio(p->rt[kRtChan].med_us, p->rt[kRtRawSock].med_us);
  r[1] = ratio(p->rt[kRtRing].med_us, p->rt[kRtRawShm].med_us);
  r[2] = ratio(p->rt[kRtChanFast].med_us, p->rt[kRtRawShm].med_us);
  r[3] = ratio(p->rt[kRtChanFast].med_us, p->rt[kRtRawSock].med_us);
  r[4] = ratio(p->rt[kRtChan].med_us, p->rt[kRtChanFast].med_us);
  r[5] = ratio(p->rt[kRtIface].med_us, p->rt[kRtChan].med_us);
  r[6] = ratio(p->rt[kRtIfaceFast].med_us, p->rt[kRtChanFast].med_us);
}

int capsa_bench_ipc(int argc, char **argv) {
  int json = 0;
  opts_t o = {10000, 0, 0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 10000000)
        return capsa_cli_usage_error("bench ipc", kUsage, "bad --iterations",
                                     argv[i]);
      o.iterations = (int)v;
    } else if (strcmp(argv[i], "--no-adaptive") == 0) {
      g_fixed_spin = 1;
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa bench ipc %s\n", kUsage);
      return 0;
    } else {
      return capsa_cli_usage_error("bench ipc", kUsage, "unknown argument",
                                   argv[i]);
    }
  }
  uint64_t *s = calloc((size_t)o.iterations + 1, sizeof *s);
  if (!s) return 1;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  placement_t pl[2] = {{.name = "same-cpu"}, {.name = "cross-cpu"}};
  int nplace = ncpu >= 2 ? 2 : 1;
  for (int k = 0; k < nplace; k++) {
    opts_t po = o;
    po.cpu_a = 0;
    po.cpu_b = k;
    if (measure(&pl[k], po, k == 0, s) < 0) {
      fprintf(stderr, "capsa bench ipc: set-up failed\n");
      free(s);
      return 1;
    }
  }
  pin(-1);
  // Bulk: 256 MiB through a 4 MiB region vs memcpy.
  bulk_ctx_t bc = {.chunks = 256};
  double shm_gbps = 0, cpy_gbps = memcpy_gbps(bc.chunks);
  if (capsa_shm_create((size_t)kSlots * kSlot, "bench-bulk",
                       CAPSA_SHM_BOTH_WRITE, &bc.region) == 0 &&
      fresh_ring(&bc.ring, 0) == 0) {
    opts_t bo = o;
    bo.cpu_a = 0;
    bo.cpu_b = ncpu >= 2 ? 1 : 0;
    if (run_pair(&bo, &bc, bulk_reader, bulk_writer, s) == 0)
      shm_gbps = (double)bc.chunks * kSlot / ((double)s[0] / 1e9) / 1e9;
    drop_ring(&bc.ring);
    capsa_shm_close(&bc.region);
  }
  // The same bytes through a data pipe, written and read in place.
  double pipe_gbps =
      capsa__bench_data_pipe_gbps(bc.chunks, 0, ncpu >= 2 ? 1 : 0);
  free(s);

  if (json) {
    printf("{\"iterations\":%d,\"message_bytes\":%d,\"placements\":[",
           o.iterations, kMsg);
    for (int k = 0; k < nplace; k++) {
      placement_t *p = &pl[k];
      printf("%s{\"name\":\"%s\",\"round_trip_us\":{", k ? "," : "", p->name);
      for (int t = 0; t < kRtCount; t++)
        printf("%s\"%s\":{\"min\":%.3f,\"median\":%.3f,\"ok\":%s}",
               t ? "," : "", kRtName[t], p->rt[t].min_us, p->rt[t].med_us,
               p->rt[t].ok ? "true" : "false");
      printf(
          "},\"messages_per_s\":{\"raw socketpair\":%.0f,"
          "\"capsa ring\":%.0f},",
          p->mps_sock, p->mps_ring);
      double r[kRatioCount];
      placement_ratios(p, r);
      printf(
          "\"ratios\":{\"channel_sock_vs_raw_socketpair\":%.3f,"
          "\"ring_vs_raw_shm\":%.3f,\"channel_fast_vs_raw_shm\":%.3f,"
          "\"channel_fast_vs_raw_socketpair\":%.3f,"
          "\"channel_sock_vs_channel_fast\":%.3f,"
          "\"interface_vs_builtin_sock\":%.3f,"
          "\"interface_vs_builtin_fast\":%.3f}}",
          r[0], r[1], r[2], r[3], r[4], r[5], r[6]);
    }
    printf(
        "],\"bulk_gb_per_s\":{\"shm_region\":%.2f,\"memcpy\":%.2f,"
        "\"ratio\":%.3f,\"data_pipe\":%.2f,\"data_pipe_ratio\":%.3f}}\n",
        shm_gbps, cpy_gbps, ratio(shm_gbps, cpy_gbps), pipe_gbps,
        ratio(pipe_gbps, cpy_gbps));
    return 0;
  }
  printf("capsa bench ipc: %d round trips of %d-byte messages per line\n",
         o.iterations, kMsg);
  for (int k = 0; k < nplace; k++) {
    placement_t *p = &pl[k];
    printf("\n%s (round trip, us)      min     median\n", p->name);
    for (int t = 0; t < kRtCount; t++) {
      if (!p->rt[t].ok) {
        printf("  %-20s   failed\n", kRtName[t]);
        continue;
      }
      printf("  %-20s %8.2f %10.2f\n", kRtName[t], p->rt[t].min_us,
             p->rt[t].med_us);
    }
    double r[kRatioCount];
    placement_ratios(p, r);
    printf(
        "  ratios (median): channel sock / raw socketpair %.2fx, "
        "capsa ring / raw shm %.2fx,\n"
        "    channel fast / raw shm %.2fx, channel fast / raw socketpair "
        "%.2fx,\n    channel sock / channel fast %.1fx (fast path speed-up),\n"
        "    interface / built-in message: socket %.2fx, fast path %.2fx\n",
        r[0], r[1], r[2], r[3], r[4], r[5], r[6]);
    printf(
        "  one-way stream: raw socketpair %.0f msg/s, capsa ring %.0f "
        "msg/s (%.1fx)\n",
        p->mps_sock, p->mps_ring, ratio(p->mps_ring, p->mps_sock));
  }
  printf(
      "\nbulk, %d MiB in 1 MiB chunks: shared region (copy in + copy out, "
      "2 processes) %.2f GB/s, memcpy %.2f GB/s (%.2fx)\n",
      bc.chunks, shm_gbps, cpy_gbps, ratio(shm_gbps, cpy_gbps));
  printf(
      "bulk, %d MiB: data pipe (4 MiB, written and read in place, 2 "
      "processes) %.2f GB/s (%.2fx memcpy; goal >= 0.9x)\n",
      bc.chunks, pipe_gbps, ratio(pipe_gbps, cpy_gbps));
  return 0;
}
