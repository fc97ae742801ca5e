// libFuzzer: the host's receive path (host/host.c through libcapsa,
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
// What must hold whatever arrives: no crash (ASan), no hang (each input is
// bounded: the renderer exits after its last record), every
// renderer handle CLOSED, and no descriptor of the host leaked.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>

static_assert(sizeof(std::atomic<int>) == sizeof(int) &&
                  std::atomic<int>::is_always_lock_free,
              "the futex word is the atomic's int");

#include "host/capsa_host.h"
#include "ipc/codec.h"
#include "ipc/interface.h"
#include "sandbox/memfd.h"
#include "tests/fuzz/fuzz_host.h"
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

const capsa_interface_t *const kIfaces[] = {&capsa_test_thumbnail_interface,
                                            &capsa_test_carrier_interface};
const unsigned kNifaces = 2;
const char kKind[] = "fuzz_host";

// --- the renderer (runs in the forked renderer, in capability mode)

int MakeHandle(uint8_t kind, uint8_t size, int *keep) {
  *keep = -1;
  size_t bytes = (size_t)size * 256;
  int sv[2];
  switch (kind % kFuzzHostHandleKinds) {
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

int FuzzRenderer(int chan, const capsa_sandbox_report_t *sandbox, void *) {
  if (!WaitForInput()) return 0;
  const uint8_t *p = g_in->data;
  size_t n = g_in->len;
  if (n == 0) return 0;
  uint8_t flags = *p++;
  n--;
  if (flags & kFuzzHostAutoHello) SendHello(chan, sandbox);
  for (int rec = 0; rec < kFuzzHostMaxRecords && n >= 1; rec++) {
    size_t nh = p[0] & 3u;
    p++;
    n--;
    int fds[3], keep[3];
    size_t made = 0;
    for (size_t i = 0; i < nh && n >= 2; i++) {
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

void OnEvent(capsa_host_t *, const capsa_host_event_t *ev) {
  if (g_verbose)
    fprintf(stderr, "fuzz_host: %s %d %s\n", capsa_host_event_name(ev->type),
            ev->status, ev->text ? ev->text : "");
  if (ev->type == CAPSA_EV_CLOSED && ev->renderer == g_current) g_closed = true;
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
  if (capsa_host_init(&g_loop, &g_host, &o, OnEvent) < 0) abort();
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, kKind, FuzzRenderer, nullptr);
  k.interfaces = kIfaces;
  k.ninterfaces = kNifaces;
  k.allow_fonts = true;  // broker requests reach the font table
  k.max_restarts = 0;    // one renderer per input
  k.host_share_percent = 100;
  // No pid namespace per renderer: its clone costs a third of a spawn,
  // and nothing of the receive path depends on it; and the renderer knows
  // its input by its pid, which is then the host's view of it.
  k.pid_namespace = false;
  // The next renderer is forked (and enters capability mode) while this
  // input runs; it waits for its pid in g_in->target before reading.
  k.keep_spare = true;
  // RLIMIT_AS and ASan's shadow do not mix; the limit is not under test.
  k.limit_memory = CAPSA_LIMIT_NONE;
  if (capsa_host_define_kind(&g_host, &k) < 0) abort();
  int err = capsa_host_start(&g_host);
  if (err < 0) {
    fprintf(stderr, "fuzz_host: capsa_host_start: %s (%s)\n", strerror(-err),
            capsa_host_start_error(&g_host));
    abort();
  }
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
  int err = capsa_host_spawn(&g_host, 0, nullptr, &g_current);
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
