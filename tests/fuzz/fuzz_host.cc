// libFuzzer: the host's receive path (host/incarnation.c through libcapsa,
// ipc/uv_channel.c, the channel core, ipc/handle.c, the broker, the
// budgets), fed by a renderer's side of a real channel.
//
// The host is the real one, started once: a forked zygote forks a renderer
// per input, in capability mode, and that renderer is this file's
// FuzzRenderer (forked ahead as the kind's spare). Once the host has
// written the input to a MAP_SHARED page the zygote inherited and named the
// renderer's pid as its target, the renderer reads it and sends it, record by
// record, as raw channel messages with the descriptors each record asks for
// (memfds of chosen sizes and seals, pipes, socketpairs) attached as
// SCM_RIGHTS; then it exits. The host drains what was sent and ends the
// renderer; the input is done at CAPSA_EV_CLOSED. Input format:
// tests/fuzz/fuzz_host.h.
//
// The host is set up as an embedder with everything a renderer may reach:
// the broker's fonts (DejaVu, where installed), a resource directory for
// "file:" (a file, an empty one, a hard-linked one, a directory, a FIFO),
// "dns:", a short heartbeat, and the harness's own actions as an embedder
// (kFuzzHostEmbedder: requests, sends, replies, shutdown, kill, bad message,
// navigation). Flag bits of the input make the renderer listen to the host
// (and attach what it received), linger, or crash at the end.
//
// What must hold whatever arrives: no crash (ASan), no hang (each input is
// bounded: the renderer exits after its last record, or after lingering
// kFuzzHostLingerMs), every renderer handle CLOSED, and no descriptor of the
// host leaked.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>

static_assert(sizeof(std::atomic<int>) == sizeof(int) &&
                  std::atomic<int>::is_always_lock_free,
              "the futex word is the atomic's int");

#include "host/capsa_host.h"
#include "ipc/codec.h"
#include "ipc/handle.h"
#include "ipc/interface.h"
#include "ipc/loop.h"
#include "ipc/shm.h"
#include "sandbox/memfd.h"
#include "tests/fuzz/fuzz_host.h"
#include "tests/host/interfaces/replies.capsa.h"
#include "tests/ipc/interfaces/carrier.capsa.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"

namespace {

// The input as the renderer reads it: shared with every process the
// zygote forks, written by the host before each spawn.
struct SharedInput {
  // The renderer this input is for (0: none yet): a spare forked ahead
  // waits for its pid here, on a futex, before it reads anything.
  std::atomic<int> target;
  size_t len;
  uint8_t data[1 << 20];
};
SharedInput *g_in;

// Thumbnail (host requests, renderer events), carrier (handles both
// ways) and replies (renderer requests the embedder answers).
const capsa_interface_t *const kIfaces[] = {&capsa_test_thumbnail_interface,
                                            &capsa_test_carrier_interface,
                                            &capsa_test_replies_interface};
const unsigned kNifaces = 3;
const char kKind[] = "fuzz_host";

// --- the renderer (runs in the forked renderer, in capability mode)

// Descriptors the host sent this renderer (kFuzzHostListen), kept for
// kFuzzHostReceived handles; the renderer's own memory.
int g_received[3] = {-1, -1, -1};
unsigned g_nreceived;

// Reads what the host sent, for up to `wait_ms` (0: only what is queued);
// keeps the first three descriptors, closes the rest. False once the
// channel is closed.
bool Drain(int chan, int wait_ms) {
  static uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
  for (;;) {
    struct pollfd pfd = {chan, POLLIN, 0};
    int n = poll(&pfd, 1, wait_ms);
    if (n <= 0) return true;
    union {
      char b[CMSG_SPACE(sizeof(int) * CAPSA_IPC_MAX_HANDLES)];
      struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, sizeof buf};
    struct msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof ctl.b;
    ssize_t got = recvmsg(chan, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got <= 0) return got < 0 && (errno == EAGAIN || errno == EINTR);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
         cm = CMSG_NXTHDR(&mh, cm)) {
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
      size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < nfd; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
        if (g_nreceived < 3)
          g_received[g_nreceived++] = fd;
        else
          close(fd);
      }
    }
    // What arrived since is read without waiting again.
    wait_ms = 0;
  }
}

int MakeHandle(uint8_t kind, uint8_t size, int *keep) {
  *keep = -1;
  size_t bytes = (size_t)size * 256;
  int sv[2];
  switch (kind % kFuzzHostHandleKinds) {
    case kFuzzHostReceived:
      if (g_nreceived == 0) return -1;
      return fcntl(g_received[size % g_nreceived], F_DUPFD_CLOEXEC, 0);
    case kFuzzHostMemfdRaw:
    case kFuzzHostMemfdUnsealable: {
      unsigned fl = MFD_CLOEXEC;
      if (kind % kFuzzHostHandleKinds == kFuzzHostMemfdRaw)
        fl |= MFD_ALLOW_SEALING;
      int fd = (int)syscall(SYS_memfd_create, "fuzz", fl);
      if (fd < 0) return -1;
      // Sealed as a read-only region is, but executable (no
      // MFD_NOEXEC_SEAL): only the mode is wrong.
      if (ftruncate(fd, (off_t)bytes) < 0 ||
          ((fl & MFD_ALLOW_SEALING) &&
           fcntl(fd, F_ADD_SEALS,
                 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
                     F_SEAL_SEAL) < 0)) {
        close(fd);
        return -1;
      }
      return fd;
    }
    case kFuzzHostUnixSocket:
      return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    case kFuzzHostStdio:
      // What the zygote left at 0-2 (/dev/null, the stderr pipe): a
      // character device or a pipe where a region or channel is declared.
      return fcntl(size % 3, F_DUPFD_CLOEXEC, 0);
    case kFuzzHostShmReadOnly:
    case kFuzzHostShmShared:
    case kFuzzHostShmUnsealed:
    case kFuzzHostShmFrozen: {
      int fd = capsa_memfd_create("fuzz", bytes);
      if (fd < 0) return -1;
      int r = 0;
      if (kind % kFuzzHostHandleKinds == kFuzzHostShmFrozen)
        r = fcntl(fd, F_ADD_SEALS,
                  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
      else if (kind % kFuzzHostHandleKinds == kFuzzHostShmReadOnly)
        r = capsa_memfd_seal_readonly(fd);
      else if (kind % kFuzzHostHandleKinds == kFuzzHostShmShared)
        r = capsa_memfd_seal_shared(fd);
      if (r < 0) {
        close(fd);
        return -1;
      }
      return fd;
    }
    case kFuzzHostPipeRead:
    case kFuzzHostPipeWrite: {
      if (pipe2(sv, O_CLOEXEC) < 0) return -1;
      bool rd = kind % kFuzzHostHandleKinds == kFuzzHostPipeRead;
      *keep = rd ? sv[1] : sv[0];
      return rd ? sv[0] : sv[1];
    }
    default: {
      int type = kind % kFuzzHostHandleKinds == kFuzzHostChannel
                     ? SOCK_SEQPACKET
                     : SOCK_STREAM;
      if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0) return -1;
      *keep = sv[1];
      return sv[0];
    }
  }
}

void SendRecord(int chan, const uint8_t *p, size_t len, const int *fds,
                size_t nfds) {
  struct iovec iov = {const_cast<uint8_t *>(p), len};
  union {
    char buf[CMSG_SPACE(sizeof(int) * 3)];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (nfds > 0) {
    mh.msg_control = ctl.buf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
  }
  // Blocking: the host reads as it serves; a refused send (the host ended
  // the channel) ends the input.
  sendmsg(chan, &mh, MSG_NOSIGNAL);
}

void SendHello(int chan, const capsa_sandbox_report_t *sandbox) {
  static char names[CAPSA_IFACE_MAX_PER_CHANNEL * (CAPSA_IFACE_MAX_NAME + 1)];
  if (capsa_iface_list_names(kIfaces, kNifaces, names, sizeof names) < 0)
    return;
  capsa_msg_t hello;
  capsa_msg_init(&hello, CAPSA_MSG_HELLO);
  hello.seq = 1;
  hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
  hello.u.hello.pid = getpid();
  hello.u.hello.renderer_kind = kKind;
  hello.u.hello.sandbox = *sandbox;
  hello.u.hello.interfaces = names;
  hello.u.hello.interfaces_hash = capsa_iface_list_hash(kIfaces, kNifaces);
  static uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
  int n = capsa_msg_encode(&hello, buf, sizeof buf);
  if (n > 0) SendRecord(chan, buf, (size_t)n, nullptr, 0);
}

// Waits (at most 60 s) until the host names this process as the input's.
bool WaitForInput() {
  pid_t self = getpid();
  for (int i = 0; i < 600; i++) {
    int t = g_in->target.load();
    if (t == self) return true;
    struct timespec ts = {0, 100 * 1000 * 1000};
    syscall(SYS_futex, reinterpret_cast<int *>(&g_in->target), FUTEX_WAIT, t,
            &ts, nullptr, 0);
  }
  return false;
}

// kFuzzHostLoop: the renderer loop's handler, as a renderer's would be.
int OnLoopMessage(capsa_rloop_t *l, capsa_msg_t *m) {
  if (m->type == CAPSA_MSG_SHUTDOWN) return 1;
  if (m->type == CAPSA_MSG_PING) {
    capsa_msg_t pong;
    capsa_msg_init(&pong, CAPSA_MSG_PONG);
    pong.u.ping = m->u.ping;
    capsa_rloop_reply(l, m, &pong);
    return 0;
  }
  if (m->type == CAPSA_MSG_INTERFACE &&
      m->u.iface.iface == &capsa_test_thumbnail_interface &&
      m->u.iface.id == CAPSA_TEST_THUMBNAIL_DECODE) {
    // The host's request (kFuzzHostActRequest), answered as a thumbnailer
    // would.
    capsa_test_thumbnail_decode_result_t res;
    capsa_test_thumbnail_decode_result_init(&res);
    res.width = 1;
    res.height = 1;
    capsa_msg_t reply;
    capsa_msg_init_iface(&reply, &capsa_test_thumbnail_interface,
                         CAPSA_TEST_THUMBNAIL_DECODE_RESULT, &res);
    capsa_rloop_reply(l, m, &reply);
    return 0;
  }
  if (m->flags & CAPSA_MSG_F_REQUEST) {
    capsa_msg_t err;
    capsa_msg_init(&err, CAPSA_MSG_ERROR);
    err.u.error.code = -ENOSYS;
    err.u.error.message = "fuzz renderer";
    capsa_rloop_reply(l, m, &err);
  }
  return 0;
}

// kFuzzHostLoop: the records as a well-behaved renderer sends them.
int LoopRenderer(int chan, const capsa_sandbox_report_t *sandbox,
                 const uint8_t *p, size_t n) {
  capsa_rloop_options_t lo;
  memset(&lo, 0, sizeof lo);
  lo.peer = CAPSA_PEER_HOST;
  lo.send_timeout_ms = 200;
  lo.interfaces = kIfaces;
  lo.ninterfaces = kNifaces;
  capsa_rloop_t l;
  if (capsa_rloop_init(&l, chan, OnLoopMessage, &lo) < 0) return 0;
  static char names[CAPSA_IFACE_MAX_PER_CHANNEL * (CAPSA_IFACE_MAX_NAME + 1)];
  capsa_msg_t hello;
  capsa_msg_init(&hello, CAPSA_MSG_HELLO);
  hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
  hello.u.hello.pid = getpid();
  hello.u.hello.renderer_kind = kKind;
  hello.u.hello.sandbox = *sandbox;
  if (capsa_iface_list_names(kIfaces, kNifaces, names, sizeof names) >= 0)
    hello.u.hello.interfaces = names;
  hello.u.hello.interfaces_hash = capsa_iface_list_hash(kIfaces, kNifaces);
  int stop = capsa_rloop_send(&l, &hello);
  static uint8_t rec[CAPSA_IPC_MAX_MESSAGE];
  for (int i = 0; stop >= 0 && stop != 1 && i < kFuzzHostMaxRecords && n >= 1;
       i++) {
    size_t nh = p[0] & 3u;
    p++;
    n--;
    int fds[3], keep[3];
    size_t made = 0;
    for (size_t h = 0; h < nh && n >= 2; h++) {
      int fd = MakeHandle(p[0], p[1], &keep[made]);
      p += 2;
      n -= 2;
      if (fd >= 0) fds[made++] = fd;
    }
    size_t len = 0;
    if (n >= 2) {
      len = (size_t)p[0] | ((size_t)p[1] << 8);
      p += 2;
      n -= 2;
    }
    if (len > n) len = n;
    memcpy(rec, p, len);
    p += len;
    n -= len;
    capsa_msg_t m;
    bool owned = false;  // the loop took the descriptors
    if (capsa_msg_decode(rec, len, &m, nullptr, 0) == 0 &&
        m.type != CAPSA_MSG_HELLO) {
      // The channel numbers and binds what it sends: the record's own
      // sequence and request id are the loop's to set.
      for (uint32_t h = 0; h < m.handle_count; h++)
        m.handles[h].fd = h < made ? fds[h] : -1;
      bool complete = m.handle_count <= made;
      if (complete && m.type == CAPSA_MSG_INTERFACE) m.u.iface.value = nullptr;
      if (complete && (m.flags & CAPSA_MSG_F_REQUEST)) {
        m.flags &= ~CAPSA_MSG_F_REQUEST;
        capsa_msg_t reply;
        int err = capsa_rloop_call(&l, &m, 20, &reply);
        owned =
            err == 0 || err == -ETIMEDOUT || err == -EBADMSG || err == -ENOBUFS;
        if (err == 0)
          for (uint32_t h = 0; h < reply.handle_count; h++)
            if (reply.handles[h].fd >= 0) {
              if (g_nreceived < 3)
                g_received[g_nreceived++] = reply.handles[h].fd;
              else
                close(reply.handles[h].fd);
            }
        if (err == -EPIPE) stop = -1;
      } else if (complete) {
        int err = capsa_rloop_send(&l, &m);
        owned = err == 0;
        if (err == -EPIPE) stop = -1;
      }
      if (owned)
        for (uint32_t h = 0; h < m.handle_count && h < made; h++) fds[h] = -1;
    }
    for (size_t h = 0; h < made; h++) {
      if (fds[h] >= 0) close(fds[h]);
      if (keep[h] >= 0) close(keep[h]);
    }
    if (stop >= 0 && stop != 1) {
      int r = capsa_rloop_run_once(&l, 0);
      if (r == 1 || r == -EPIPE || r == -EBADMSG) stop = 1;
    }
  }
  // Served until the host ends it or the linger is over.
  for (int i = 0; stop >= 0 && stop != 1 && i < kFuzzHostLingerMs / 5; i++) {
    int r = capsa_rloop_run_once(&l, 5);
    if (r == 1 || r == -EPIPE || r == -EBADMSG) break;
  }
  capsa_rloop_close(&l);
  return 0;
}

int FuzzRenderer(int chan, const capsa_sandbox_report_t *sandbox, void *) {
  if (!WaitForInput()) return 0;
  const uint8_t *p = g_in->data;
  size_t n = g_in->len;
  if (n == 0) return 0;
  uint8_t flags = *p++;
  n--;
  if ((flags & kFuzzHostEmbedder) && n > 0) {
    p++;  // the host's actions (kFuzzHostAct*), not the renderer's
    n--;
  }
  if (flags & (kFuzzHostFork | kFuzzHostForkStay)) {
    pid_t child = fork();
    if (child == 0) {
      bool leave = (flags & kFuzzHostFork) != 0;
      if (leave) setsid();
      struct timespec nap = {0, (leave ? 2 : 50) * 1000 * 1000};
      nanosleep(&nap, nullptr);
      _exit(0);
    }
  }
  if (flags & kFuzzHostLoop) return LoopRenderer(chan, sandbox, p, n);
  bool listen = (flags & kFuzzHostListen) != 0;
  if (flags & kFuzzHostAutoHello) SendHello(chan, sandbox);
  for (int rec = 0; rec < kFuzzHostMaxRecords && n >= 1; rec++) {
    size_t nh = p[0] & 3u;
    p++;
    n--;
    int fds[3], keep[3];
    size_t made = 0;
    for (size_t i = 0; i < nh && n >= 2; i++) {
      // The broker's answer to an earlier record may still be on its way.
      if (listen && p[0] % kFuzzHostHandleKinds == kFuzzHostReceived &&
          g_nreceived == 0)
        Drain(chan, 20);
      int fd = MakeHandle(p[0], p[1], &keep[made]);
      p += 2;
      n -= 2;
      if (fd >= 0) fds[made++] = fd;
    }
    size_t len = 0;
    if (n >= 2) {
      len = (size_t)p[0] | ((size_t)p[1] << 8);
      p += 2;
      n -= 2;
    }
    if (len > n) len = n;
    SendRecord(chan, p, len, fds, made);
    p += len;
    n -= len;
    for (size_t i = 0; i < made; i++) {
      close(fds[i]);
      if (keep[i] >= 0) close(keep[i]);
    }
    if (listen && !Drain(chan, 0)) break;
  }
  if (listen) {
    // Until the host ends this renderer (a shutdown, a kill, a missed
    // heartbeat) or the linger is over.
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      long ms =
          (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
      if (ms >= kFuzzHostLingerMs ||
          !Drain(chan, (int)(kFuzzHostLingerMs - ms)))
        break;
    }
  }
  if (flags & (kFuzzHostCrash | kFuzzHostAbort)) {
    if (flags & kFuzzHostCrash) {
      // A fault the crash handler reports (not a null pointer: UBSan would
      // call that first).
      *reinterpret_cast<volatile int *>(uintptr_t{64}) = 1;
    }
    abort();
  }
  // Exiting closes the channel: the host serves what is queued, then ends
  // this renderer (EXITED, no restart, CLOSED).
  return 0;
}

// --- the host (this process)

uv_loop_t g_loop;
capsa_host_t g_host;
capsa_renderer_t *g_current;
bool g_closed;

bool g_verbose;  // FUZZ_HOST_VERBOSE=1: each event on stderr (to replay)
int g_kind;
uint8_t g_acts;      // this input's kFuzzHostAct* (kFuzzHostEmbedder)
bool g_acted_first;  // the first-message actions are done
char g_resources[64];

void OnReply(capsa_renderer_t *, int status, capsa_msg_t *reply, void *) {
  if (g_verbose)
    fprintf(stderr, "fuzz_host: request answered %d (%s)\n", status,
            reply ? capsa_msg_type_name(reply->type) : "no reply");
}

// A sealed region of `size` bytes with a dup of its descriptor attached to
// `m` (kind SHM, read-only or writable as asked); its index, or -1.
int AttachRegion(capsa_msg_t *m, size_t size, bool writable) {
  capsa_shm_region_t reg;
  if (capsa_shm_create(
          size, "fuzz_host",
          writable ? CAPSA_SHM_BOTH_WRITE : CAPSA_SHM_CREATOR_WRITES, &reg) < 0)
    return -1;
  int fd = fcntl(reg.fd, F_DUPFD_CLOEXEC, 0);
  uint64_t rsize = reg.size;
  capsa_shm_close(&reg);
  if (fd < 0) return -1;
  // The schemas' rights (thumbnail's png and frame, carrier's region and
  // frame are within these).
  capsa_rights_t rights;
  rights.cr_rights[0] =
      CAPSA_CAP_READ | CAPSA_CAP_SEEK | CAPSA_CAP_FSTAT | CAPSA_CAP_MMAP_R;
  rights.cr_rights[1] = 1ULL << 58;
  if (writable) rights.cr_rights[0] |= CAPSA_CAP_WRITE | CAPSA_CAP_MMAP_W;
  int idx =
      capsa_msg_add_handle(m, fd, CAPSA_HANDLE_SHM, &rights, rsize, writable);
  if (idx < 0) close(fd);
  return idx;
}

// What an embedder does to a READY renderer (kFuzzHostAct*).
void ActAtReady(capsa_renderer_t *r) {
  if (g_acts & kFuzzHostActRequest) {
    capsa_test_thumbnail_decode_t d;
    capsa_test_thumbnail_decode_init(&d);
    capsa_msg_t m;
    capsa_msg_init_iface(&m, &capsa_test_thumbnail_interface,
                         CAPSA_TEST_THUMBNAIL_DECODE, &d);
    d.png = AttachRegion(&m, 4096, false);
    d.frame = AttachRegion(&m, 4096, true);
    d.name = "fuzz";
    int err = capsa_renderer_request(r, &m, 50, OnReply, nullptr);
    if (err < 0) {
      if (g_verbose)
        fprintf(stderr, "fuzz_host: request: %s (%s)\n", strerror(-err),
                capsa_renderer_send_error(r));
      for (uint32_t i = 0; i < m.handle_count; i++) close(m.handles[i].fd);
    }
  }
  if (g_acts & kFuzzHostActSend) {
    capsa_test_carrier_deliver_t d;
    capsa_test_carrier_deliver_init(&d);
    static const uint8_t kData[] = "delivered";
    d.data = {kData, sizeof kData};
    capsa_msg_t m;
    capsa_msg_init_iface(&m, &capsa_test_carrier_interface,
                         CAPSA_TEST_CARRIER_DELIVER, &d);
    d.region = AttachRegion(&m, 8192, false);
    d.frame = AttachRegion(&m, 4096, true);
    if (capsa_renderer_send(r, &m) < 0) {
      if (g_verbose)
        fprintf(stderr, "fuzz_host: send: %s\n", capsa_renderer_send_error(r));
      for (uint32_t i = 0; i < m.handle_count; i++) close(m.handles[i].fd);
    }
  }
  if (g_acts & kFuzzHostActShutdown) capsa_renderer_shutdown(r, 10);
}

// At the renderer's first message (a navigation cuts it off: its next
// incarnation takes the input again, without actions).
void ActAtFirstMessage(capsa_renderer_t *r) {
  if (g_acted_first) return;
  g_acted_first = true;
  if (g_acts & kFuzzHostActNavigate) {
    capsa_renderer_navigate(r);
  } else if (g_acts & kFuzzHostActKill) {
    capsa_renderer_kill(r);
  } else if (g_acts & kFuzzHostActBadMessage) {
    capsa_renderer_report_bad_message(r, "the embedder's own check");
  }
}

// An embedder's view of a renderer, as a task manager shows it.
void Info(const capsa_host_event_t *ev) {
  char line[512];
  capsa_host_limits_summary(&g_host, line, sizeof line);
  capsa_host_sandbox_summary(&g_host, line, sizeof line);
  if (ev->renderer) {
    (void)capsa_renderer_kind(ev->renderer);
    (void)capsa_renderer_restarts(ev->renderer);
    (void)capsa_renderer_navigations(ev->renderer);
    (void)capsa_renderer_send_error(ev->renderer);
  }
}

void OnEvent(capsa_host_t *, const capsa_host_event_t *ev) {
  // The embedder logs every event by name.
  const char *name = capsa_host_event_name(ev->type);
  if (g_verbose)
    fprintf(stderr, "fuzz_host: %s %d %s\n", name, ev->status,
            ev->text ? ev->text : "");
  if (ev->type == CAPSA_EV_CLOSED && ev->renderer == g_current) g_closed = true;
  if (g_acts & kFuzzHostActInfo) Info(ev);
  if (ev->renderer == g_current && ev->renderer != nullptr) {
    if (ev->type == CAPSA_EV_RESTARTED) {
      // A navigation's next incarnation (a spare) takes the same input;
      // the actions are done, so it only sends its records and exits.
      g_in->target.store((int)capsa_renderer_pid(ev->renderer));
      syscall(SYS_futex, reinterpret_cast<int *>(&g_in->target), FUTEX_WAKE,
              INT32_MAX, nullptr, nullptr, 0);
    }
    if (ev->type == CAPSA_EV_READY) ActAtReady(ev->renderer);
    if (ev->type == CAPSA_EV_MESSAGE || ev->type == CAPSA_EV_LOG)
      ActAtFirstMessage(ev->renderer);
  }
  if (ev->type == CAPSA_EV_MESSAGE && (g_acts & kFuzzHostActReply) &&
      (ev->msg->flags & CAPSA_MSG_F_REQUEST)) {
    // The replies interface's Ask gets its typed Answer, any other request
    // an ERROR.
    capsa_msg_t reply;
    capsa_test_replies_answer_t a;
    capsa_test_replies_answer_init(&a);
    a.data = "answered";
    if (ev->msg->type == CAPSA_MSG_INTERFACE &&
        ev->msg->u.iface.iface == &capsa_test_replies_interface) {
      capsa_msg_init_iface(&reply, &capsa_test_replies_interface,
                           CAPSA_TEST_REPLIES_ANSWER, &a);
    } else {
      capsa_msg_init(&reply, CAPSA_MSG_ERROR);
      reply.u.error.code = -ENOSYS;
      reply.u.error.message = "not served here";
    }
    int err = capsa_renderer_reply(ev->renderer, ev->msg, &reply);
    if (g_verbose) fprintf(stderr, "fuzz_host: reply: %d\n", err);
  }
  if (ev->type == CAPSA_EV_MESSAGE) {
    // The embedder's view: touch what was accepted (strings terminated,
    // bytes in bounds, handles as declared) the way a handler would.
    volatile size_t sum = 0;
    const capsa_msg_t *m = ev->msg;
    if (m->type == CAPSA_MSG_PING)
      for (size_t i = 0; i < m->u.ping.payload.len; i++)
        sum += m->u.ping.payload.data[i];
    (void)sum;
  }
}

int LowestFree() {
  int fd = dup(0);
  if (fd >= 0) close(fd);
  return fd;
}

bool g_host_closed;

void OnHostClosed(capsa_host_t *) {
  g_host_closed = true;
}

// At exit (libFuzzer's, after -max_total_time or the last input): the host
// closes as an embedder's does (its spare and zygote ended, the loop's
// handles closed), within 20 s.
void Teardown() {
  capsa_host_close(&g_host, OnHostClosed);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!g_host_closed) {
    uv_run(&g_loop, UV_RUN_NOWAIT);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 20) {
      fprintf(stderr, "fuzz_host: the host did not close within 20 s\n");
      abort();
    }
    struct timespec nap = {0, 1000 * 1000};
    nanosleep(&nap, nullptr);
  }
}

void RemoveResources() {
  static const char *const kNames[] = {"a", "empty", "linked", "linked2",
                                       "fifo"};
  char path[128];
  for (const char *n : kNames) {
    snprintf(path, sizeof path, "%s/%s", g_resources, n);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/dir", g_resources);
  rmdir(path);
  rmdir(g_resources);
}

// The kind's resource_dir for "file:": a file of 100 bytes ("a"), an empty
// one, one with a second link ("linked", "linked2": refused), a directory
// and a FIFO (refused: not regular files). Removed at exit.
int ResourceDir() {
  snprintf(g_resources, sizeof g_resources, "/tmp/fuzz_host.XXXXXX");
  if (!mkdtemp(g_resources)) return -1;
  chmod(g_resources, 0755);
  atexit(RemoveResources);
  char path[128];
  snprintf(path, sizeof path, "%s/a", g_resources);
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char b[100];
    memset(b, 'a', sizeof b);
    if (write(fd, b, sizeof b) != (ssize_t)sizeof b) abort();
    close(fd);
  }
  snprintf(path, sizeof path, "%s/empty", g_resources);
  fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  snprintf(path, sizeof path, "%s/linked", g_resources);
  fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  char second[128];
  snprintf(second, sizeof second, "%s/linked2", g_resources);
  if (link(path, second) < 0) second[0] = 0;
  snprintf(path, sizeof path, "%s/dir", g_resources);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/fifo", g_resources);
  mkfifo(path, 0644);
  // Held for the host's life (borrowed by the kind).
  return open(g_resources, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

void Setup() {
  g_verbose = getenv("FUZZ_HOST_VERBOSE") != nullptr;
  void *m = mmap(nullptr, sizeof(SharedInput), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) abort();
  g_in = static_cast<SharedInput *>(m);
  if (uv_loop_init(&g_loop) != 0) abort();
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  // The renderer is this binary's function, and the input reaches it
  // through memory the zygote inherits: a forked zygote, on purpose.
  o.allow_forked_zygote = true;
  // The broker's fonts, where the build's font package put them.
  static const char *const kFonts[3] = {
      "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
      "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
      "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"};
  const char **fonts[3] = {&o.font_regular, &o.font_bold, &o.font_mono};
  for (int i = 0; i < 3; i++)
    if (access(kFonts[i], R_OK) == 0) *fonts[i] = kFonts[i];
  if (capsa_host_init(&g_loop, &g_host, &o, OnEvent) < 0) abort();
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, kKind, FuzzRenderer, nullptr);
  k.interfaces = kIfaces;
  k.ninterfaces = kNifaces;
  k.allow_fonts = true;  // broker requests reach the font table
  k.allow_dns = true;    // "dns:" (localhost resolves from /etc/hosts)
  k.resource_dir_fd = ResourceDir();
  // A heartbeat within an input's life: a lingering renderer that answers
  // no PING is judged HUNG; the tree's CPU is counted on each beat.
  k.heartbeat_ms = 5;
  k.heartbeat_timeout_ms = 20;
  k.max_restarts = 0;  // one renderer per input
  k.host_share_percent = 100;
  // No pid namespace per renderer: its clone costs a third of a spawn,
  // and nothing of the receive path depends on it; and the renderer knows
  // its input by its pid, which is then the host's view of it.
  k.pid_namespace = false;
  // The next renderer is forked (and enters capability mode) while this
  // input runs; it waits for its pid in g_in->target before reading.
  k.keep_spare = true;
  // Default limits: under ASan the host applies no RLIMIT_AS by itself
  // (host/sanitizer_limits.h).
  g_kind = capsa_host_define_kind(&g_host, &k);
  if (g_kind < 0) abort();
  // Orphans land here, as on a container's entrypoint: the host reaps
  // the ones it adopts (host/orphans.c; kFuzzHostFork).
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  int err = capsa_host_start(&g_host);
  if (err < 0) {
    fprintf(stderr, "fuzz_host: capsa_host_start: %s (%s)\n", strerror(-err),
            capsa_host_start_error(&g_host));
    abort();
  }
  atexit(Teardown);
  // What an embedder reports once started.
  char line[512];
  capsa_host_sandbox_summary(&g_host, line, sizeof line);
  if (g_verbose) fprintf(stderr, "fuzz_host: %s\n", line);
  capsa_host_limits_summary(&g_host, line, sizeof line);
  if (g_verbose) fprintf(stderr, "fuzz_host: %s\n", line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready = (Setup(), true);
  (void)ready;
  int before = LowestFree();
  g_in->len = size < sizeof g_in->data ? size : sizeof g_in->data;
  memcpy(g_in->data, data, g_in->len);
  g_closed = false;
  g_current = nullptr;
  g_acts = size >= 2 && (data[0] & kFuzzHostEmbedder) ? data[1] : 0;
  g_acted_first = false;
  int err = capsa_host_spawn(&g_host, g_kind, nullptr, &g_current);
  if (err < 0) {
    fprintf(stderr, "fuzz_host: capsa_host_spawn: %s\n", strerror(-err));
    abort();
  }
  g_in->target.store((int)capsa_renderer_pid(g_current));
  syscall(SYS_futex, reinterpret_cast<int *>(&g_in->target), FUTEX_WAKE,
          INT32_MAX, nullptr, nullptr, 0);
  while (!g_closed) uv_run(&g_loop, UV_RUN_ONCE);
  // No stale pid: a later spare given the same number must not take it.
  g_in->target.store(0);
  if (LowestFree() != before) {
    fprintf(stderr, "fuzz_host: a descriptor leaked (%d, was %d)\n",
            LowestFree(), before);
    abort();
  }
  return 0;
}
