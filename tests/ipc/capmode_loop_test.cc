// The renderer loop inside capability mode: receiving descriptors (with
// their checks), replying, calling the host and re-applying declared rights
// must all work with only what capability mode leaves.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/codec.h"
#include "ipc/loop.h"
#include "ipc/shm.h"
#include "sandbox/capmode/capmode.h"
#include "tests/harness/child.h"
#include "tests/ipc/ipc_test_util.h"

using ipc_test::Encode;
using ipc_test::Sample;

namespace {

// A regular read-only file of 100 bytes 'a', opened before capability mode.
int ReadOnlyFile() {
  char path[] = "/tmp/capsa-capmode-loop-XXXXXX";
  int w = mkstemp(path);
  if (w < 0) return -1;
  std::string a(100, 'a');
  if (write(w, a.data(), a.size()) != 100) return -1;
  close(w);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  unlink(path);
  return fd;
}

void SendRaw(int sock, const capsa_msg_t &m, const int *fds, size_t n) {
  auto b =
      m.type == CAPSA_MSG_INTERFACE ? ipc_test::EncodeCarried(m) : Encode(m);
  ASSERT_EQ((ssize_t)b.size(),
            ipc_test::RawSend(sock, b.data(), b.size(), fds, n));
}

struct Seen {
  int frame_fd = -1;
  int file_fd = -1;
  int channel_fd = -1;
  int pings = 0;
};
Seen g_seen;

int OnMessage(capsa_rloop_t *l, capsa_msg_t *m) {
  switch (m->type) {
    case CAPSA_MSG_INTERFACE: {
      // A carrier Deliver, verified and decoded inside capability mode.
      auto *d =
          static_cast<const capsa_test_carrier_deliver_t *>(m->u.iface.value);
      if (d->frame >= 0)
        g_seen.frame_fd = capsa_msg_take_handle(m, (uint32_t)d->frame);
      if (d->file >= 0)
        g_seen.file_fd = capsa_msg_take_handle(m, (uint32_t)d->file);
      return 0;
    }
    case CAPSA_MSG_PING: {
      g_seen.pings++;
      capsa_msg_t pong;
      capsa_msg_init(&pong, CAPSA_MSG_PONG);
      pong.u.ping = m->u.ping;
      return capsa_rloop_reply(l, m, &pong);
    }
    case CAPSA_MSG_OPEN_CHANNEL:
      g_seen.channel_fd = capsa_msg_take_handle(m, 0);
      return 0;
    case CAPSA_MSG_SHUTDOWN:
      return 1;
    default:
      return -EPROTO;
  }
}

// Host messages queued on `host` before the renderer runs: a writable frame
// region, a read-only file, a ping, the answer to the renderer's first
// request (id 1), and shutdown.
// ... and a channel endpoint.
void QueueHostMessages(int host, int region, int file) {
  uint64_t seq = 1;
  capsa_test_carrier_deliver_t fv;
  capsa_msg_t rz = ipc_test::Carry(&fv);
  capsa_rights_t rw = ipc_test::WriteRights();
  ipc_test::CarryHandle(&rz, &fv, region, CAPSA_HANDLE_SHM, &rw, 4096, true);
  rz.seq = seq++;
  SendRaw(host, rz, &region, 1);
  capsa_test_carrier_deliver_t lv;
  capsa_msg_t lc = ipc_test::Carry(&lv);
  capsa_rights_t rr;
  rr.cr_rights[0] = CAPSA_CAP_READ | CAPSA_CAP_FSTAT;  // no SEEK, no MMAP
  rr.cr_rights[1] = 1ULL << 58;
  ipc_test::CarryHandle(&lc, &lv, file, CAPSA_HANDLE_FILE, &rr, 100, false);
  lc.seq = seq++;
  SendRaw(host, lc, &file, 1);
  capsa_msg_t resp = Sample(CAPSA_MSG_RESOURCE_RESPONSE);
  resp.request_id = 1;
  resp.u.resource_response.status = 0;
  resp.seq = seq++;
  SendRaw(host, resp, nullptr, 0);
  capsa_msg_t ping = Sample(CAPSA_MSG_PING);
  ping.seq = seq++;
  SendRaw(host, ping, nullptr, 0);
  // A channel endpoint: its checks need getsockopt, getsockname and
  // getpeername, which capability mode must leave.
  int inner[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, inner));
  capsa_msg_t oc = Sample(CAPSA_MSG_OPEN_CHANNEL);
  oc.handles[0].fd = inner[0];
  oc.seq = seq++;
  SendRaw(host, oc, &inner[0], 1);
  close(inner[0]);
  close(inner[1]);
  capsa_msg_t sd = Sample(CAPSA_MSG_SHUTDOWN);
  sd.seq = seq++;
  SendRaw(host, sd, nullptr, 0);
}

void RunRenderer(bool apply_rights) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  int region = ipc_test::SealedRegion(4096, true);
  ASSERT_GE(region, 0);
  int file = ReadOnlyFile();
  ASSERT_GE(file, 0);
  QueueHostMessages(sp[1], region, file);
  close(region);
  close(file);

  ASSERT_EQ(0, capsa_cap_enter());
  unsigned mode = 0;
  ASSERT_EQ(0, capsa_cap_getmode(&mode));
  ASSERT_EQ(1u, mode);

  capsa_rloop_options_t o = {};
  o.peer = CAPSA_PEER_HOST;
  o.apply_rights = apply_rights ? 1 : 0;
  o.send_timeout_ms = 1000;
  o.interfaces = ipc_test::kCarrier;
  o.ninterfaces = 1;
  capsa_rloop_t l;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], OnMessage, &o));
  capsa_msg_t req, reply;
  capsa_msg_init(&req, CAPSA_MSG_RESOURCE_REQUEST);
  req.u.resource_request.url = "capsa://font";
  // The queued deliveries of a frame and a file are dispatched meanwhile.
  ASSERT_EQ(0, capsa_rloop_call(&l, &req, 2000, &reply)) << l.reason;
  EXPECT_EQ(CAPSA_MSG_RESOURCE_RESPONSE, reply.type);
  EXPECT_EQ(1, capsa_rloop_run(&l)) << l.reason;
  EXPECT_EQ(1, g_seen.pings);
  EXPECT_GE(g_seen.channel_fd, 0);

  // The region maps writable; the file reads.
  ASSERT_GE(g_seen.frame_fd, 0);
  void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                 g_seen.frame_fd, 0);
  ASSERT_NE(MAP_FAILED, p);
  static_cast<char *>(p)[0] = 1;
  munmap(p, 4096);
  ASSERT_GE(g_seen.file_fd, 0);
  char b[4];
  EXPECT_EQ(4, read(g_seen.file_fd, b, 4));
  errno = 0;
  void *m = mmap(nullptr, 100, PROT_READ, MAP_SHARED, g_seen.file_fd, 0);
  if (apply_rights) {
    // Declared READ | FSTAT only: mapping needs CAP_MMAP.
    EXPECT_EQ(MAP_FAILED, m);
    EXPECT_EQ(ENOTCAPABLE, errno);
  } else {
    EXPECT_NE(MAP_FAILED, m);
  }

  // The host side sees the request and the pong, in order.
  capsa_rloop_close(&l);
  std::vector<uint8_t> buf(CAPSA_IPC_MAX_MESSAGE + 8);
  int types[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    ssize_t n = recv(sp[1], buf.data(), buf.size(), MSG_DONTWAIT);
    ASSERT_GT(n, 0);
    capsa_msg_t d;
    ASSERT_EQ(0, capsa_msg_decode(buf.data(), (size_t)n, &d, nullptr, 0));
    types[i] = d.type;
    EXPECT_EQ((uint64_t)i + 1, d.seq);
  }
  EXPECT_EQ(CAPSA_MSG_RESOURCE_REQUEST, types[0]);
  EXPECT_EQ(CAPSA_MSG_PONG, types[1]);
  _exit(::testing::Test::HasFailure() ? 1 : 0);  // no LSan in capmode
}

// A renderer in capability mode makes a region the host may trust as
// read-only (issue 32, item 5): CAPSA_SHM_CREATOR_FREEZES, filled, frozen
// (munmap, F_ADD_SEALS, mmap: all left by capability mode), sent by its
// loop, arriving write-sealed for good.
void FreezeAndSend() {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  ASSERT_EQ(0, capsa_cap_enter());
  capsa_rloop_options_t o = {};
  o.peer = CAPSA_PEER_HOST;
  o.send_timeout_ms = 1000;
  o.interfaces = ipc_test::kCarrier;
  o.ninterfaces = 1;
  capsa_rloop_t l;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], OnMessage, &o));
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(4096, "frozen", CAPSA_SHM_CREATOR_FREEZES, &r));
  ASSERT_EQ(0, capsa_shm_write(&r, 0, "drawn", 6));
  ASSERT_EQ(0, capsa_shm_freeze(&r));
  capsa_test_carrier_give_t g;
  capsa_test_carrier_give_init(&g);
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_test_carrier_interface,
                       CAPSA_TEST_CARRIER_GIVE, &g);
  capsa_rights_t rr = ipc_test::ReadRights();
  g.region = capsa_msg_add_handle(&m, capsa_shm_release_fd(&r),
                                  CAPSA_HANDLE_SHM, &rr, 4096, false);
  ASSERT_EQ(0, g.region);
  ASSERT_EQ(0, capsa_rloop_send(&l, &m)) << l.reason;
  // The host's end: one record, one descriptor, sealed against writes.
  std::vector<uint8_t> buf(CAPSA_IPC_MAX_MESSAGE + 8);
  struct iovec iov = {buf.data(), buf.size()};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  ASSERT_GT(recvmsg(sp[1], &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT), 0);
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  ASSERT_NE(nullptr, c);
  int got;
  memcpy(&got, CMSG_DATA(c), sizeof got);
  EXPECT_TRUE(fcntl(got, F_GET_SEALS) & F_SEAL_WRITE);
  EXPECT_EQ(-1, pwrite(got, "x", 1, 0));
  char back[6] = {};
  EXPECT_EQ(6, pread(got, back, 6, 0));
  EXPECT_STREQ("drawn", back);
  capsa_shm_close(&r);
  capsa_rloop_close(&l);
  _exit(::testing::Test::HasFailure() ? 1 : 0);  // no LSan in capmode
}

TEST(CapModeLoop, FreezesAndSendsARegionInCapabilityMode) {
  CAPSA_EXPECT_CHILD_OK([] { FreezeAndSend(); });
}

TEST(CapModeLoop, ReceivesRepliesAndCallsInCapabilityMode) {
  CAPSA_EXPECT_CHILD_OK([] { RunRenderer(false); });
}

TEST(CapModeLoop, AppliesDeclaredRightsToReceivedHandles) {
  CAPSA_EXPECT_CHILD_OK([] { RunRenderer(true); });
}

}  // namespace
