// capsa fuzz: replaying a reproducer's records in order (fuzz_replay.h).
#include "host/fuzz/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/codec.h"
#include "ipc/ipc_dump.h"
#include "ipc/scm.h"
#include "sandbox/memfd.h"

struct rp_rec {
  uint32_t ch, off;
  uint16_t len;
  uint8_t nh, kind[3], size[3];
};

struct capsa__fz_replay {
  _Atomic int turn;  // futex word: the record whose turn it is
  _Atomic int next_channel;
  _Atomic int dead[CAPSA__FZ_MAX_CHANNELS];
  _Atomic int pid[CAPSA__FZ_MAX_CHANNELS];
  uint8_t flags[CAPSA__FZ_MAX_CHANNELS];
  unsigned nch, nrec;
  capsa__fz_seen_t seen;  // the host side's, for its sink
  size_t map_len;
  char kind[64];
  char names[CAPSA_IFACE_MAX_PER_CHANNEL * (CAPSA_IFACE_MAX_NAME + 1)];
  uint64_t ifaces_hash;
  struct rp_rec rec[CAPSA__FZ_MAX_RECORDS];
  uint8_t data[];
};

static void wake(_Atomic int *w) {
  syscall(SYS_futex, (int *)w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void wait_change(_Atomic int *w, int was, int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  syscall(SYS_futex, (int *)w, FUTEX_WAIT, was, &ts, NULL, 0);
}

// The host's side: a record of a replaying renderer arrived (its HELLO
// excepted), so the next one may go.
static void replay_sink(void *arg, uint64_t serial, const uint8_t *head,
                        size_t hl, const uint8_t *buf, size_t len) {
  (void)head, (void)hl, (void)buf, (void)len;
  capsa__fz_replay_t *rp = arg;
  if (capsa__fz_first_sight(&rp->seen, serial)) return;
  atomic_fetch_add(&rp->turn, 1);
  wake(&rp->turn);
}

capsa__fz_replay_t *capsa__fz_replay_new(const capsa__fz_repro_t *r) {
  size_t bytes = 0;
  if (r->nrec > CAPSA__FZ_MAX_RECORDS || r->nch > CAPSA__FZ_MAX_CHANNELS)
    return NULL;
  for (size_t i = 0; i < r->nrec; i++) bytes += r->rec[i].len;
  size_t len = sizeof(capsa__fz_replay_t) + bytes;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  if (m == MAP_FAILED) return NULL;
  capsa__fz_replay_t *rp = m;
  rp->map_len = len;
  rp->nch = r->nch;
  rp->nrec = (unsigned)r->nrec;
  memcpy(rp->flags, r->flags, sizeof rp->flags);
  size_t off = 0;
  for (size_t i = 0; i < r->nrec; i++) {
    const capsa__fz_rec_t *x = &r->rec[i];
    struct rp_rec *y = &rp->rec[i];
    y->ch = x->channel;
    y->off = (uint32_t)off;
    y->len = x->len;
    y->nh = x->nh;
    memcpy(y->kind, x->kind, 3);
    memcpy(y->size, x->size, 3);
    memcpy(rp->data + off, x->data, x->len);
    off += x->len;
  }
  capsa__dump_set_sink(replay_sink, rp);
  return rp;
}

unsigned capsa__fz_replay_channels(const capsa__fz_replay_t *rp) {
  return rp->nch;
}

void capsa__fz_replay_set_hello(capsa__fz_replay_t *rp, const char *kind_name,
                                const capsa_interface_t *const *ifaces,
                                unsigned nifaces) {
  snprintf(rp->kind, sizeof rp->kind, "%s", kind_name);
  if (capsa_iface_list_names(ifaces, nifaces, rp->names, sizeof rp->names) < 0)
    rp->names[0] = 0;
  rp->ifaces_hash = capsa_iface_list_hash(ifaces, nifaces);
}

void capsa__fz_replay_closed(capsa__fz_replay_t *rp, pid_t pid) {
  for (unsigned c = 0; c < rp->nch; c++)
    if (rp->pid[c] == pid) {
      rp->dead[c] = 1;
      wake(&rp->turn);
    }
}

// A descriptor of a recorded kind, made as a hostile renderer would (the
// same kinds as fuzz_host's). *keep: the other end to close after sending.
static int make_handle(uint8_t kind, size_t bytes, int *keep) {
  *keep = -1;
  int sv[2];
  switch (kind % CAPSA__DUMP_KINDS) {
    case CAPSA__DUMP_SHM_READONLY:
    case CAPSA__DUMP_SHM_SHARED:
    case CAPSA__DUMP_SHM_UNSEALED:
    case CAPSA__DUMP_SHM_FROZEN: {
      int fd = capsa_memfd_create("fuzz", bytes);
      if (fd < 0) return -1;
      int r = 0;
      if (kind == CAPSA__DUMP_SHM_FROZEN)
        r = fcntl(fd, F_ADD_SEALS,
                  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
      else if (kind == CAPSA__DUMP_SHM_READONLY)
        r = capsa_memfd_seal_readonly(fd);
      else if (kind == CAPSA__DUMP_SHM_SHARED)
        r = capsa_memfd_seal_shared(fd);
      if (r < 0) {
        close(fd);
        return -1;
      }
      return fd;
    }
    case CAPSA__DUMP_PIPE_READ:
    case CAPSA__DUMP_PIPE_WRITE:
      if (pipe2(sv, O_CLOEXEC) < 0) return -1;
      *keep = kind == CAPSA__DUMP_PIPE_READ ? sv[1] : sv[0];
      return kind == CAPSA__DUMP_PIPE_READ ? sv[0] : sv[1];
    default:
      if (socketpair(
              AF_UNIX,
              (kind == CAPSA__DUMP_CHANNEL ? SOCK_SEQPACKET : SOCK_STREAM) |
                  SOCK_CLOEXEC,
              0, sv) < 0)
        return -1;
      *keep = sv[1];
      return sv[0];
  }
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

enum { kStallMs = 2000 };

// Regions a replay makes at their declared size (sparse), up to this.
#define kMaxReplayRegion \
  ((uint64_t)64 << 20)  // a turn nobody takes is skipped after this

// Waits until record i may go: true; false when its turn was skipped.
static bool wait_turn(capsa__fz_replay_t *rp, int i) {
  long since = now_ms();
  int seen = -1;
  for (;;) {
    int t = rp->turn;
    if (t == i) return true;
    if (t > i) return false;
    if (t != seen) {
      seen = t;
      since = now_ms();
    }
    if (rp->dead[rp->rec[t].ch] || now_ms() - since > kStallMs) {
      // A renderer the host ended (or one that never came): skip its turn.
      if (atomic_compare_exchange_strong(&rp->turn, &t, t + 1)) wake(&rp->turn);
      continue;
    }
    wait_change(&rp->turn, t, 20);
  }
}

// Waits until the host has received record i (the sink moved the turn on).
static void wait_received(capsa__fz_replay_t *rp, int i, unsigned ch) {
  long since = now_ms();
  while (rp->turn <= i && !rp->dead[ch] && now_ms() - since < kStallMs)
    wait_change(&rp->turn, i, 20);
}

int capsa__fz_replay_renderer_main(int ch, const capsa_sandbox_report_t *sb,
                                   void *arg) {
  capsa__fz_replay_t *rp = arg;
  int c = atomic_fetch_add(&rp->next_channel, 1);
  if (c < 0 || (unsigned)c >= rp->nch) return 0;
  rp->pid[c] = getpid();
  static uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
  bool first = true;
  for (unsigned i = 0; i < rp->nrec; i++) {
    const struct rp_rec *x = &rp->rec[i];
    if (x->ch != (unsigned)c) continue;
    if (!wait_turn(rp, (int)i)) continue;
    bool auto_hello = rp->flags[c] & CAPSA__DUMP_AUTO_HELLO;
    if (first && auto_hello) {
      capsa_msg_t hello;
      capsa_msg_init(&hello, CAPSA_MSG_HELLO);
      hello.seq = 1;
      hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
      hello.u.hello.pid = getpid();
      hello.u.hello.renderer_kind = rp->kind;
      hello.u.hello.interfaces = rp->names;
      hello.u.hello.interfaces_hash = rp->ifaces_hash;
      if (sb) hello.u.hello.sandbox = *sb;
      hello.u.hello.sandbox.detail = NULL;
      int n = capsa_msg_encode(&hello, buf, sizeof buf);
      if (n < 0 ||
          capsa_scm_send(ch, buf, (size_t)n, NULL, 0, MSG_NOSIGNAL) < 0)
        break;
    }
    // The size each handle was declared with, when the record's envelope
    // still decodes (the dump keeps sizes in 256-byte steps only, and the
    // host compares a region's size with its declaration exactly).
    capsa_msg_t env;
    bool declared =
        capsa_msg_decode(rp->data + x->off, x->len, &env, NULL, 0) == 0 &&
        env.handle_count == x->nh;
    int fds[3], keep[3];
    int made = 0;
    for (unsigned k = 0; k < x->nh; k++) {
      size_t bytes = (size_t)x->size[k] * 256;
      if (declared && env.handles[k].size > 0 &&
          env.handles[k].size <= kMaxReplayRegion)
        bytes = (size_t)env.handles[k].size;
      int fd = make_handle(x->kind[k], bytes, &keep[made]);
      if (fd >= 0) fds[made++] = fd;
    }
    ssize_t sent =
        capsa_scm_send(ch, rp->data + x->off, x->len, fds, made, MSG_NOSIGNAL);
    for (int k = 0; k < made; k++) {
      close(fds[k]);
      if (keep[k] >= 0) close(keep[k]);
    }
    bool was_first = first;
    first = false;
    if (sent < 0) {
      rp->dead[c] = 1;  // the host hung up: the rest cannot arrive
      wake(&rp->turn);
      break;
    }
    if (was_first && !auto_hello) {
      // The host takes this record for the HELLO: its sink does not count
      // it, so this side moves the turn on.
      int t = (int)i;
      if (atomic_compare_exchange_strong(&rp->turn, &t, t + 1)) wake(&rp->turn);
      continue;
    }
    wait_received(rp, (int)i, (unsigned)c);
  }
  // Exiting closes the channel: the host serves what it has, then ends this
  // renderer.
  return 0;
}
