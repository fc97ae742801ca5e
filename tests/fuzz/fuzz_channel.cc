// libFuzzer: the receiving side of a channel. Each input is a series of
// records sent over a SEQPACKET socketpair with descriptors attached (see
// fuzz_channel.h), received by a renderer-side loop checking a renderer as
// its peer (the host's view: hello first, handle checks, state machine).
// Whatever arrives: no crash, no hang (every wait is 0 ms), and no
// descriptor leaked - everything received and not delivered is closed.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "ipc/loop.h"
#include "sandbox/memfd.h"
#include "tests/fuzz/fuzz_channel.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"

namespace {

int g_fds[kFuzzFdCount];
std::string g_dir;

void Cleanup() {
  if (!g_dir.empty()) {
    unlink((g_dir + "/fifo").c_str());
    unlink((g_dir + "/file").c_str());
    rmdir(g_dir.c_str());
  }
}

int Region(bool writable) {
  int fd = capsa_memfd_create("fuzz", 4096);
  if (fd < 0) abort();
  if ((writable ? capsa_memfd_seal_shared(fd) : capsa_memfd_seal_readonly(fd)) <
      0)
    abort();
  return fd;
}

void Setup() {
  char tmpl[] = "/tmp/capsa-fuzz-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) abort();
  g_dir = tmpl;
  atexit(Cleanup);
  g_fds[kFuzzShmReadOnly] = Region(false);
  g_fds[kFuzzShmWritable] = Region(true);
  std::string file = g_dir + "/file";
  int f = open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (f < 0 || ftruncate(f, 100) < 0) abort();
  g_fds[kFuzzFileReadWrite] = f;
  g_fds[kFuzzFileReadOnly] = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  std::string fifo = g_dir + "/fifo";
  if (mkfifo(fifo.c_str(), 0600) < 0) abort();
  g_fds[kFuzzFifo] = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  g_fds[kFuzzDirectory] =
      open(g_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) abort();
  g_fds[kFuzzSocketPair] = sp[0];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) abort();
  g_fds[kFuzzStreamSocket] = sp[0];
  for (int fd : g_fds)
    if (fd < 0) abort();
}

// The lowest free descriptor number: grows if anything leaked.
int LowestFree() {
  int fd = dup(0);
  if (fd >= 0) close(fd);
  return fd;
}

void Send(int sock, const uint8_t *p, size_t len, uint8_t mask) {
  int fds[kFuzzFdCount];
  size_t n = 0;
  for (int i = 0; i < kFuzzFdCount; i++)
    if (mask & (1u << i)) fds[n++] = g_fds[i];
  struct iovec iov = {const_cast<uint8_t *>(p), len};
  union {
    char buf[CMSG_SPACE(sizeof(int) * kFuzzFdCount)];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (n > 0) {
    mh.msg_control = ctl.buf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
  }
  sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

int OnMessage(capsa_rloop_t *, capsa_msg_t *m) {
  // Touch what was delivered: strings must be terminated, bytes in bounds.
  volatile size_t sum = 0;
  if (m->type == CAPSA_MSG_LOG && m->u.log.text) sum += strlen(m->u.log.text);
  if (m->type == CAPSA_MSG_PING || m->type == CAPSA_MSG_PONG)
    for (size_t i = 0; i < m->u.ping.payload.len; i++)
      sum += m->u.ping.payload.data[i];
  (void)sum;
  return 0;  // untaken descriptors are closed by the loop
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready = (Setup(), true);
  (void)ready;
  int before = LowestFree();
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) abort();
  int sz = 1 << 20;
  setsockopt(sp[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  size_t records = 0;
  while (size >= 3 && records < 64) {
    uint8_t mask = data[0];
    size_t len = (size_t)data[1] | ((size_t)data[2] << 8);
    data += 3;
    size -= 3;
    if (len > size) len = size;
    Send(sp[1], data, len, mask);
    data += len;
    size -= len;
    records++;
  }
  close(sp[1]);  // the loop ends at end of stream
  capsa_rloop_t l;
  capsa_rloop_options_t o = {};
  o.peer = CAPSA_PEER_RENDERER;
  o.send_timeout_ms = 1000;
  // An interface too, so its checks (ipc/channel_iface.c) meet the input.
  static const capsa_interface_t *const kIfaces[] = {
      &capsa_test_thumbnail_interface};
  o.interfaces = kIfaces;
  o.ninterfaces = 1;
  if (capsa_rloop_init(&l, sp[0], OnMessage, &o) < 0) abort();
  for (size_t i = 0; i <= records; i++) {
    int r = capsa_rloop_run_once(&l, 0);
    if (r == -EBADMSG || r == -EPIPE) break;
    if (r != 0 && r != -ETIMEDOUT) abort();
  }
  capsa_rloop_close(&l);
  if (LowestFree() != before) abort();  // a received descriptor leaked
  return 0;
}
