// Channels end to end: the libuv host side against a renderer loop, and
// against a hostile peer sending raw records.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/codec.h"
#include "ipc/loop.h"
#include "ipc/shm.h"
#include "ipc/uv_channel.h"
#include "tests/ipc/ipc_test_util.h"

using ipc_test::Encode;
using ipc_test::Sample;

namespace {

// A renderer loop that also speaks the tests' carrier of handles.
const capsa_rloop_options_t kCarrierLoop = [] {
  capsa_rloop_options_t o = {};
  o.interfaces = ipc_test::kCarrier;
  o.ninterfaces = 1;
  return o;
}();

// A host channel on its own loop with the far end kept raw.
class HostChannel : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_EQ(0, uv_loop_init(&loop_));
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp_));
    fds_before_ = ipc_test::OpenFdCount();
  }
  void TearDown() override {
    if (ch_open_) Close();
    if (sp_[1] >= 0) close(sp_[1]);
    uv_loop_close(&loop_);
  }
  // By default the channel also speaks the tests' carrier of handles.
  void Open(const capsa_channel_options_t *o = nullptr) {
    capsa_channel_options_t carrier = {};
    carrier.peer = CAPSA_PEER_RENDERER;
    carrier.interfaces = ipc_test::kCarrier;
    carrier.ninterfaces = 1;
    ASSERT_EQ(0, capsa_channel_init(&loop_, &ch_, sp_[0], o ? o : &carrier));
    ch_.data = this;
    ch_open_ = true;
    ASSERT_EQ(0, capsa_channel_start(
                     &ch_,
                     [](capsa_channel_t *c, capsa_msg_t *m) {
                       auto *t = static_cast<HostChannel *>(c->data);
                       t->got_.push_back(m->type);
                       if (t->on_msg_) t->on_msg_(m);
                     },
                     [](capsa_channel_t *c, int err, const char *why) {
                       auto *t = static_cast<HostChannel *>(c->data);
                       t->err_ = err;
                       t->why_ = why;
                       uv_stop(c->loop);
                     }));
  }
  void Close() {
    capsa_channel_close(&ch_, nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    ch_open_ = false;
  }
  // Runs the loop until an error, `pred` or `max_iter` iterations.
  template <typename P>
  void RunUntil(P pred, int max_iter = 2000, uv_run_mode mode = UV_RUN_ONCE) {
    for (int i = 0; i < max_iter && err_ == 0 && !pred(); i++)
      uv_run(&loop_, mode);
  }
  void SendRaw(const capsa_msg_t &m, const int *fds = nullptr, size_t n = 0) {
    auto b = Encode(m);
    ASSERT_EQ((ssize_t)b.size(),
              ipc_test::RawSend(sp_[1], b.data(), b.size(), fds, n));
  }
  void ExpectBad(const char *needle) {
    RunUntil([] { return false; }, 50, UV_RUN_NOWAIT);
    EXPECT_EQ(-EBADMSG, err_);
    EXPECT_NE(std::string::npos, why_.find(needle)) << "reason: " << why_;
  }

  uv_loop_t loop_;
  int sp_[2] = {-1, -1};
  capsa_channel_t ch_;
  bool ch_open_ = false;
  std::vector<int> got_;
  std::function<void(capsa_msg_t *)> on_msg_;
  int err_ = 0;
  std::string why_;
  int fds_before_ = 0;
};

TEST_F(HostChannel, HelloThenMessages) {
  Open();
  EXPECT_EQ(1, capsa_channel_reading(&ch_));
  SendRaw(Sample(CAPSA_MSG_HELLO));
  capsa_msg_t log = Sample(CAPSA_MSG_LOG);
  log.seq = 2;
  SendRaw(log);
  RunUntil([&] { return got_.size() == 2; });
  EXPECT_EQ(0, err_) << why_;
  EXPECT_EQ((std::vector<int>{CAPSA_MSG_HELLO, CAPSA_MSG_LOG}), got_);
}

TEST_F(HostChannel, NothingBeforeHello) {
  Open();
  SendRaw(Sample(CAPSA_MSG_LOG));
  ExpectBad("before hello");
  EXPECT_EQ(0, capsa_channel_reading(&ch_));  // never trusted again
  EXPECT_TRUE(got_.empty());
}

TEST_F(HostChannel, GarbageIsABadMessage) {
  Open();
  char junk[64];
  memset(junk, 0xa5, sizeof junk);
  ASSERT_EQ(64, ipc_test::RawSend(sp_[1], junk, sizeof junk, nullptr, 0));
  ExpectBad("verification");
}

TEST_F(HostChannel, OversizedRecordIsABadMessage) {
  Open();
  std::vector<char> big(CAPSA_IPC_MAX_MESSAGE + 100, 'x');
  int sz = 1 << 20;
  setsockopt(sp_[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  ASSERT_EQ((ssize_t)big.size(),
            ipc_test::RawSend(sp_[1], big.data(), big.size(), nullptr, 0));
  ExpectBad("larger than");
}

TEST_F(HostChannel, UndeclaredDescriptorIsClosedAndBad) {
  Open();
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  SendRaw(Sample(CAPSA_MSG_HELLO), &fd, 1);
  close(fd);
  ExpectBad("0 handles declared, 1 descriptors attached");
  // Everything the peer sent was closed: only the channel's socket remains.
  EXPECT_EQ(fds_before_, ipc_test::OpenFdCount());
}

TEST_F(HostChannel, TooManyDescriptorsIsCtrunc) {
  Open();
  std::vector<int> fds;
  for (int i = 0; i < CAPSA_IPC_MAX_HANDLES + 4; i++)
    fds.push_back(open("/dev/null", O_RDONLY | O_CLOEXEC));
  SendRaw(Sample(CAPSA_MSG_HELLO), fds.data(), fds.size());
  for (int fd : fds) close(fd);
  ExpectBad("truncated");
  EXPECT_EQ(fds_before_, ipc_test::OpenFdCount());
}

TEST_F(HostChannel, ResponseToNothingIsBad) {
  Open();
  SendRaw(Sample(CAPSA_MSG_HELLO));
  capsa_msg_t pong = Sample(CAPSA_MSG_PONG);
  pong.seq = 2;
  SendRaw(pong);
  ExpectBad("not outstanding");
}

TEST_F(HostChannel, RequestTimesOutAndLateReplyIsDropped) {
  Open();
  SendRaw(Sample(CAPSA_MSG_HELLO));
  RunUntil([&] { return got_.size() == 1; });
  capsa_msg_t ping = Sample(CAPSA_MSG_PING);
  int status = 1;
  ASSERT_EQ(0, capsa_channel_request(
                   &ch_, &ping, 20,
                   [](capsa_channel_t *, int st, capsa_msg_t *r, void *arg) {
                     *static_cast<int *>(arg) = st;
                     EXPECT_EQ(nullptr, r);
                   },
                   &status));
  RunUntil([&] { return status != 1; });
  EXPECT_EQ(-ETIMEDOUT, status);
  // The renderer answers late: dropped, not a bad message.
  capsa_msg_t pong = Sample(CAPSA_MSG_PONG);
  pong.seq = 2;
  pong.request_id = ping.request_id;
  SendRaw(pong);
  capsa_msg_t log = Sample(CAPSA_MSG_LOG);
  log.seq = 3;
  SendRaw(log);
  RunUntil([&] { return got_.size() == 2; });
  EXPECT_EQ(0, err_) << why_;
  EXPECT_EQ(CAPSA_MSG_LOG, got_.back());
}

TEST_F(HostChannel, CloseCancelsOutstandingRequests) {
  Open();
  capsa_msg_t ping = Sample(CAPSA_MSG_PING);
  int status = 1;
  ASSERT_EQ(0, capsa_channel_request(
                   &ch_, &ping, 60000,
                   [](capsa_channel_t *, int st, capsa_msg_t *, void *arg) {
                     *static_cast<int *>(arg) = st;
                   },
                   &status));
  Close();
  EXPECT_EQ(-ECANCELED, status);
}

TEST_F(HostChannel, PeerThatNeverReadsHitsTheQueueCap) {
  capsa_channel_options_t o = {};
  o.peer = CAPSA_PEER_RENDERER;
  o.max_queued_bytes = 256 * 1024;
  o.max_messages_per_wakeup = 16;
  Open(&o);
  std::vector<uint8_t> payload(16 * 1024, 7);
  int err = 0;
  size_t sent = 0;
  for (int i = 0; i < 100000 && err == 0; i++) {
    capsa_msg_t m = Sample(CAPSA_MSG_PING);
    m.flags = 0;
    m.request_id = 0;
    m.type = CAPSA_MSG_ERROR;  // a plain host -> renderer message
    m.u.error.code = -EIO;
    m.u.error.message = reinterpret_cast<const char *>("x");
    (void)payload;
    err = capsa_channel_send(&ch_, &m);
    if (err == 0) sent++;
  }
  EXPECT_EQ(-ENOBUFS, err);
  EXPECT_GT(sent, 0u);
  EXPECT_LE(capsa_channel_queued_bytes(&ch_), o.max_queued_bytes);
  EXPECT_GT(capsa_channel_queued_bytes(&ch_), o.max_queued_bytes / 2);
  // Backpressure: while the queue is over half full the channel does not
  // read from that peer, so a flood of requests cannot make it queue more.
  EXPECT_EQ(0, capsa_channel_reading(&ch_));
  SendRaw(Sample(CAPSA_MSG_HELLO));
  RunUntil([] { return false; }, 20, UV_RUN_NOWAIT);
  EXPECT_TRUE(got_.empty());
  EXPECT_EQ(0, err_);
}

TEST_F(HostChannel, PeerThatNeverReadsCannotPinOurDescriptors) {
  Open();
  int region = ipc_test::SealedRegion(800 * 600 * 4, true);
  ASSERT_GE(region, 0);
  int err = 0, sent = 0;
  for (int i = 0; i < 100000 && err == 0; i++) {
    capsa_test_carrier_deliver_t v;
    capsa_msg_t m = ipc_test::Carry(&v);
    capsa_rights_t rw = ipc_test::WriteRights();
    int fd = dup(region);
    ASSERT_GE(fd, 0);
    ipc_test::CarryHandle(&m, &v, fd, CAPSA_HANDLE_SHM, &rw, 800 * 600 * 4,
                          true);
    err = capsa_channel_send(&ch_, &m);
    if (err == 0) {
      sent++;
      EXPECT_EQ(-1, m.handles[0].fd);  // the channel owns it now
    } else {
      EXPECT_EQ(fd, m.handles[0].fd);  // still ours
      close(fd);
    }
  }
  EXPECT_EQ(-ENOBUFS, err);
  // The kernel holds some in flight; the queue at most 256 more.
  EXPECT_LT(ipc_test::OpenFdCount(), fds_before_ + sent);
  EXPECT_LE(ipc_test::OpenFdCount(), fds_before_ + 1 + 256);
  close(region);
}

// Descriptors the kernel holds for a peer that has not read them yet are
// counted until it has: exactly, message by message, when nothing is read
// during a send; messages without descriptors in between count for nothing
// but do not confuse the count.
TEST_F(HostChannel, DescriptorsInFlightAreCountedUntilThePeerReadsThem) {
  Open();
  int region = ipc_test::SealedRegion(4096, false);
  ASSERT_GE(region, 0);
  const bool carries[] = {true, true, false, true, false, true, true};
  for (bool with_fd : carries) {
    capsa_test_carrier_deliver_t v;
    capsa_msg_t m = ipc_test::Carry(&v);
    if (with_fd) {
      capsa_rights_t ro = ipc_test::ReadRights();
      int fd = dup(region);
      ASSERT_GE(fd, 0);
      ASSERT_GE(
          ipc_test::CarryHandle(&m, &v, fd, CAPSA_HANDLE_SHM, &ro, 4096, false),
          0);
    }
    ASSERT_EQ(0, capsa_channel_send(&ch_, &m));
  }
  EXPECT_EQ(0u, capsa_channel_queued_fds(&ch_));  // all in the kernel
  size_t expect = 5;
  EXPECT_EQ(expect, capsa_channel_inflight_fds(&ch_));
  for (bool with_fd : carries) {
    char buf[CAPSA_IPC_MAX_MESSAGE];
    union {
      char b[CMSG_SPACE(8 * sizeof(int))];
      struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, sizeof buf};
    struct msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof ctl.b;
    ASSERT_GT(recvmsg(sp_[1], &mh, MSG_CMSG_CLOEXEC), 0);
    for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
      int fd;
      memcpy(&fd, CMSG_DATA(c), sizeof fd);
      close(fd);
    }
    if (with_fd) expect--;
    EXPECT_EQ(expect, capsa_channel_inflight_fds(&ch_));
  }
  EXPECT_EQ(0u, capsa_channel_inflight_fds(&ch_));
  close(region);
}

TEST_F(HostChannel, FloodingPeerDoesNotStarveAnother) {
  capsa_channel_options_t o = {};
  o.peer = CAPSA_PEER_RENDERER;
  o.max_messages_per_wakeup = 4;
  Open(&o);
  int sp2[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp2));
  capsa_channel_t quiet;
  ASSERT_EQ(0, capsa_channel_init(&loop_, &quiet, sp2[0], &o));
  size_t quiet_seen_at = SIZE_MAX;
  struct Ctx {
    HostChannel *t;
    size_t *at;
  } ctx = {this, &quiet_seen_at};
  quiet.data = &ctx;
  ASSERT_EQ(0, capsa_channel_start(
                   &quiet,
                   [](capsa_channel_t *c, capsa_msg_t *) {
                     auto *x = static_cast<Ctx *>(c->data);
                     *x->at = x->t->got_.size();
                   },
                   nullptr));
  // 200 messages queued by the flooder before the quiet peer's one.
  int sz = 4 << 20;
  setsockopt(sp_[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  SendRaw(Sample(CAPSA_MSG_HELLO));
  for (int i = 2; i <= 200; i++) {
    capsa_msg_t log = Sample(CAPSA_MSG_LOG);
    log.seq = i;
    SendRaw(log);
  }
  auto hello = Encode(Sample(CAPSA_MSG_HELLO));
  ASSERT_GT(ipc_test::RawSend(sp2[1], hello.data(), hello.size(), nullptr, 0),
            0);
  RunUntil([&] { return got_.size() == 200; });
  EXPECT_EQ(200u, got_.size());
  // Served within the first rounds, long before the flood was drained.
  EXPECT_LT(quiet_seen_at, 50u);
  // `quiet` lives on this stack: finish closing it before returning.
  static bool closed;
  closed = false;
  capsa_channel_close(&quiet, [](capsa_channel_t *) { closed = true; });
  while (!closed) uv_run(&loop_, UV_RUN_ONCE);
  close(sp2[1]);
}

// Spins for `us` microseconds: a handler that costs the loop real time.
void Burn(uint64_t us) {
  uint64_t end = uv_hrtime() + us * 1000;
  while (uv_hrtime() < end) {
  }
}

// max_busy_percent: a peer whose unasked messages cost more than its share
// of the loop is rested (not read) for a while; nothing it sent is lost.
TEST_F(HostChannel, BusySharePausesAPeerThatCostsTooMuchAndLosesNothing) {
  for (unsigned percent : {0u, 10u}) {
    SCOPED_TRACE(percent);
    capsa_channel_options_t o = {};
    o.peer = CAPSA_PEER_RENDERER;
    o.max_busy_percent = percent;
    Open(&o);
    on_msg_ = [](capsa_msg_t *) { Burn(200); };  // > 10% of the 0.4 ms window
    SendRaw(Sample(CAPSA_MSG_HELLO));
    for (int i = 2; i <= 40; i++) {
      capsa_msg_t log = Sample(CAPSA_MSG_LOG);
      log.seq = i;
      SendRaw(log);
    }
    uv_run(&loop_, UV_RUN_NOWAIT);
    if (percent == 0) {
      // No cap: a whole batch per wakeup (16, the default), still reading.
      EXPECT_EQ(16u, got_.size());
      EXPECT_EQ(1, capsa_channel_reading(&ch_));
    } else {
      // The first message spent the bucket: resting, the rest waits.
      EXPECT_EQ(1u, got_.size());
      EXPECT_EQ(0, capsa_channel_reading(&ch_));
    }
    RunUntil([&] { return got_.size() == 40; }, 20000);
    EXPECT_EQ(0, err_) << why_;
    ASSERT_EQ(40u, got_.size());
    EXPECT_EQ(CAPSA_MSG_HELLO, got_[0]);
    for (size_t i = 1; i < got_.size(); i++) EXPECT_EQ(CAPSA_MSG_LOG, got_[i]);
    Close();
    got_.clear();
    on_msg_ = nullptr;
    close(sp_[1]);  // the channel closed sp_[0]; a fresh pair for the next
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp_));
  }
}

// Answers to this side's own requests are not charged: the work was asked
// for, and is bounded by the requests outstanding.
TEST_F(HostChannel, BusyShareDoesNotChargeAnswersToOurRequests) {
  capsa_channel_options_t o = {};
  o.peer = CAPSA_PEER_RENDERER;
  o.max_busy_percent = 10;
  Open(&o);
  SendRaw(Sample(CAPSA_MSG_HELLO));
  // The HELLO is charged: on a busy machine its handling alone may spend
  // the burst (40 µs here), and the channel rests a millisecond. Wait it out.
  RunUntil([&] { return got_.size() == 1 && capsa_channel_reading(&ch_); });
  ASSERT_EQ(1u, got_.size());
  ASSERT_EQ(1, capsa_channel_reading(&ch_));
  static int answered;
  answered = 0;
  uint64_t ids[3];
  for (uint64_t &id : ids) {
    capsa_msg_t ping;
    capsa_msg_init(&ping, CAPSA_MSG_PING);
    ASSERT_EQ(0, capsa_channel_request(
                     &ch_, &ping, 10000,
                     [](capsa_channel_t *, int status, capsa_msg_t *, void *) {
                       EXPECT_EQ(0, status);
                       Burn(200);
                       answered++;
                     },
                     nullptr));
    id = ping.request_id;
  }
  uint64_t seq = 2;
  for (uint64_t id : ids) {
    capsa_msg_t pong = Sample(CAPSA_MSG_PONG);
    pong.request_id = id;
    pong.seq = seq++;
    SendRaw(pong);
  }
  uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_EQ(3, answered);  // 600 µs of answers in one wakeup
  EXPECT_EQ(1, capsa_channel_reading(&ch_));
  EXPECT_EQ(0, err_) << why_;
}

TEST(ChannelApi, RefusesWhatIsNotASeqpacketSocket) {
  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  capsa_channel_t ch;
  EXPECT_EQ(-EINVAL, capsa_channel_init(&loop, &ch, p[0], nullptr));
  EXPECT_GE(fcntl(p[0], F_GETFD), 0);  // still open: the caller owns it
  int st[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, st));
  EXPECT_EQ(-EINVAL, capsa_channel_init(&loop, &ch, st[0], nullptr));
  capsa_rloop_t l;
  EXPECT_EQ(-EINVAL, capsa_rloop_init(&l, st[0], nullptr, nullptr));
  for (int fd : {p[0], p[1], st[0], st[1]}) EXPECT_EQ(0, close(fd));
  uv_loop_close(&loop);
}

TEST_F(HostChannel, MisuseIsRefusedWithoutCallbacks) {
  Open();
  capsa_msg_t log = Sample(CAPSA_MSG_LOG);
  EXPECT_EQ(-EINVAL, capsa_channel_reply(&ch_, &log, &log));  // not a request
  capsa_msg_t ping = Sample(CAPSA_MSG_PING);
  EXPECT_EQ(-EINVAL, capsa_channel_request(&ch_, &ping, 10, nullptr, nullptr));
  capsa_msg_t bad = Sample(CAPSA_MSG_LOG);
  bad.u.log.level = 42;
  bad.flags = 0;
  EXPECT_EQ(-EINVAL, capsa_channel_send(&ch_, &bad));
  // A failed request never calls its callback, and frees its slot.
  bad.type = CAPSA_MSG_PING;
  bad.u.ping = ping.u.ping;
  bad.u.ping.payload = {nullptr, 0};
  std::vector<uint8_t> huge(CAPSA_IPC_MAX_MESSAGE);
  bad.u.ping.payload = {huge.data(), huge.size()};
  static int called;
  called = 0;
  for (int i = 0; i < 100; i++)
    EXPECT_EQ(-EMSGSIZE, capsa_channel_request(
                             &ch_, &bad, 10,
                             [](capsa_channel_t *, int, capsa_msg_t *, void *) {
                               called++;
                             },
                             nullptr));
  Close();
  EXPECT_EQ(0, called);
}

// A renderer on capsa_rloop in a thread, the host on the uv channel.
TEST_F(HostChannel, RendererLoopRequestsAndReplies) {
  int rfd = sp_[1];
  sp_[1] = -1;
  std::thread renderer([rfd] {
    capsa_rloop_t l;
    ASSERT_EQ(0, capsa_rloop_init(
                     &l, rfd,
                     [](capsa_rloop_t *lp, capsa_msg_t *m) -> int {
                       if (m->type == CAPSA_MSG_SHUTDOWN) return 1;
                       if (m->type == CAPSA_MSG_PING) {
                         capsa_msg_t pong;
                         capsa_msg_init(&pong, CAPSA_MSG_PONG);
                         pong.u.ping = m->u.ping;
                         return capsa_rloop_reply(lp, m, &pong);
                       }
                       return 0;
                     },
                     nullptr));
    capsa_msg_t hello = Sample(CAPSA_MSG_HELLO);
    ASSERT_EQ(0, capsa_rloop_send(&l, &hello));
    capsa_msg_t req, reply;
    capsa_msg_init(&req, CAPSA_MSG_RESOURCE_REQUEST);
    req.u.resource_request.url = "capsa://a";
    ASSERT_EQ(0, capsa_rloop_call(&l, &req, 5000, &reply)) << l.reason;
    EXPECT_EQ(CAPSA_MSG_RESOURCE_RESPONSE, reply.type);
    EXPECT_STREQ("text/plain", reply.u.resource_response.mime);
    EXPECT_EQ(1, capsa_rloop_run(&l));  // until shutdown
    capsa_rloop_close(&l);
  });
  Open();
  int pongs = 0;
  on_msg_ = [&](capsa_msg_t *m) {
    if (m->type == CAPSA_MSG_RESOURCE_REQUEST) {
      EXPECT_STREQ("capsa://a", m->u.resource_request.url);
      capsa_msg_t r;
      capsa_msg_init(&r, CAPSA_MSG_RESOURCE_RESPONSE);
      r.u.resource_response.mime = "text/plain";
      EXPECT_EQ(0, capsa_channel_reply(&ch_, m, &r));
      capsa_msg_t ping = Sample(CAPSA_MSG_PING);
      EXPECT_EQ(0,
                capsa_channel_request(
                    &ch_, &ping, 5000,
                    [](capsa_channel_t *c, int st, capsa_msg_t *r2, void *arg) {
                      EXPECT_EQ(0, st);
                      ASSERT_NE(nullptr, r2);
                      EXPECT_EQ(CAPSA_MSG_PONG, r2->type);
                      EXPECT_EQ(77u, r2->u.ping.seq);
                      ++*static_cast<int *>(arg);
                      capsa_msg_t sd;
                      capsa_msg_init(&sd, CAPSA_MSG_SHUTDOWN);
                      EXPECT_EQ(0, capsa_channel_send(c, &sd));
                    },
                    &pongs));
    }
  };
  RunUntil([&] { return pongs == 1; }, 100000);
  renderer.join();
  EXPECT_EQ(1, pongs);
  // The renderer may already have left after shutdown: a closed peer, never
  // a bad message.
  EXPECT_TRUE(err_ == 0 || err_ == -EPIPE) << err_ << " " << why_;
}

// The renderer side checks what the host sends too.
// The receiver's handle check runs on the sending side too: a descriptor
// wider than its declaration is refused with -EINVAL before it leaves, the
// caller keeps it, and nothing reaches the peer. The same descriptors,
// declared as what they are, go through.
TEST_F(HostChannel, SendRefusesAHandleWiderThanItsDeclaration) {
  Open();
  char path[] = "/tmp/capsa-send-XXXXXX";
  int rw = mkstemp(path);
  ASSERT_GE(rw, 0);
  ASSERT_EQ(5, write(rw, "hello", 5));
  int ro = open(path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(ro, 0);
  unlink(path);
  capsa_rights_t rr = ipc_test::ReadRights();
  // An O_RDWR file declared as a read-only file.
  capsa_test_carrier_deliver_t v;
  capsa_msg_t m = ipc_test::Carry(&v);
  ASSERT_EQ(
      0, ipc_test::CarryHandle(&m, &v, rw, CAPSA_HANDLE_FILE, &rr, 5, false));
  EXPECT_EQ(-EINVAL, capsa_channel_send(&ch_, &m));
  EXPECT_EQ(rw, m.handles[0].fd);  // still ours
  // An unsealed region declared read-only.
  int unsealed = memfd_create("capsa-unsealed", MFD_CLOEXEC);
  ASSERT_GE(unsealed, 0);
  ASSERT_EQ(0, ftruncate(unsealed, 4096));
  capsa_test_carrier_deliver_t sv;
  capsa_msg_t s = ipc_test::Carry(&sv);
  ASSERT_EQ(0, ipc_test::CarryHandle(&s, &sv, unsealed, CAPSA_HANDLE_SHM, &rr,
                                     4096, false));
  EXPECT_EQ(-EINVAL, capsa_channel_send(&ch_, &s));
  EXPECT_EQ(unsealed, s.handles[0].fd);
  // A region declared writable whose write is sealed.
  int sealed_ro = ipc_test::SealedRegion(4096, false);
  ASSERT_GE(sealed_ro, 0);
  capsa_test_carrier_deliver_t wv;
  capsa_msg_t w = ipc_test::Carry(&wv);
  capsa_rights_t wr = ipc_test::WriteRights();
  ASSERT_EQ(0, ipc_test::CarryHandle(&w, &wv, sealed_ro, CAPSA_HANDLE_SHM, &wr,
                                     4096, true));
  EXPECT_EQ(-EINVAL, capsa_channel_send(&ch_, &w));
  char byte;
  EXPECT_EQ(-1, recv(sp_[1], &byte, 1, MSG_DONTWAIT));
  EXPECT_EQ(EAGAIN, errno);  // nothing was sent
  // Declared as what it is: sent, and the channel owns it.
  capsa_test_carrier_deliver_t okv;
  capsa_msg_t ok = ipc_test::Carry(&okv);
  ASSERT_EQ(0, ipc_test::CarryHandle(&ok, &okv, ro, CAPSA_HANDLE_FILE, &rr, 5,
                                     false));
  EXPECT_EQ(0, capsa_channel_send(&ch_, &ok));
  EXPECT_EQ(-1, ok.handles[0].fd);
  EXPECT_EQ(0, err_) << why_;
  close(rw);
  close(unsealed);
  close(sealed_ro);
}

// What the host sends is a description of the receiver's own: its offset
// and status flags are not the sender's, and a region declared read-only
// arrives opened read-only even when the sender's descriptor was O_RDWR.
TEST_F(HostChannel, SentFilesAndRegionsAreDescriptionsOfTheirOwn) {
  Open();
  char path[] = "/tmp/capsa-own-XXXXXX";
  int tmp = mkstemp(path);
  ASSERT_GE(tmp, 0);
  ASSERT_EQ(5, write(tmp, "hello", 5));
  close(tmp);
  int ro = open(path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(ro, 0);
  unlink(path);
  int keep = dup(ro);  // the sender's view of the same description
  ASSERT_GE(keep, 0);
  capsa_shm_region_t region;
  ASSERT_EQ(0,
            capsa_shm_create(4096, "own", CAPSA_SHM_CREATOR_WRITES, &region));
  ASSERT_EQ(O_RDWR, fcntl(region.fd, F_GETFL) & O_ACCMODE);
  capsa_rights_t rr = ipc_test::ReadRights();
  capsa_test_carrier_deliver_t v;
  capsa_msg_t m = ipc_test::Carry(&v);
  ASSERT_EQ(
      0, ipc_test::CarryHandle(&m, &v, ro, CAPSA_HANDLE_FILE, &rr, 5, false));
  ASSERT_EQ(0, capsa_channel_send(&ch_, &m));
  capsa_test_carrier_deliver_t rv;
  capsa_msg_t r = ipc_test::Carry(&rv);
  r.seq = 2;
  int shm = dup(region.fd);
  ASSERT_GE(shm, 0);
  ASSERT_EQ(0, ipc_test::CarryHandle(&r, &rv, shm, CAPSA_HANDLE_SHM, &rr, 4096,
                                     false));
  ASSERT_EQ(0, capsa_channel_send(&ch_, &r));
  int got[2] = {-1, -1};
  for (int i = 0; i < 2; i++) {
    std::vector<uint8_t> buf(CAPSA_IPC_MAX_MESSAGE);
    struct iovec iov = {buf.data(), buf.size()};
    alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl;
    mh.msg_controllen = sizeof ctl;
    ASSERT_GT(recvmsg(sp_[1], &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT), 0);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    ASSERT_NE(nullptr, c);
    memcpy(&got[i], CMSG_DATA(c), sizeof(int));
  }
  // The receiver moves its offset and sets O_NONBLOCK: the sender's
  // description is untouched.
  EXPECT_EQ(3, lseek(got[0], 3, SEEK_SET));
  ASSERT_EQ(0, fcntl(got[0], F_SETFL, O_NONBLOCK));
  EXPECT_EQ(0, lseek(keep, 0, SEEK_CUR));
  EXPECT_EQ(0, fcntl(keep, F_GETFL) & O_NONBLOCK);
  EXPECT_EQ(O_RDONLY, fcntl(got[0], F_GETFL) & O_ACCMODE);
  EXPECT_EQ(O_RDONLY, fcntl(got[1], F_GETFL) & O_ACCMODE);
  EXPECT_EQ(-1, write(got[1], "x", 1));
  EXPECT_EQ(EBADF, errno);
  EXPECT_EQ(0, err_) << why_;
  close(got[0]);
  close(got[1]);
  close(keep);
  capsa_shm_close(&region);
}

// The renderer's side refuses the same way (one send path for both).
TEST(RendererLoop, SendRefusesAHandleWiderThanItsDeclaration) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  capsa_rloop_t l;
  capsa_rloop_options_t o = {};
  o.interfaces = ipc_test::kCarrier;
  o.ninterfaces = 1;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], nullptr, &o));
  int unsealed = memfd_create("capsa-unsealed", MFD_CLOEXEC);
  ASSERT_GE(unsealed, 0);
  ASSERT_EQ(0, ftruncate(unsealed, 4096));
  capsa_rights_t rr = ipc_test::ReadRights();
  capsa_test_carrier_give_t g;
  capsa_test_carrier_give_init(&g);
  capsa_msg_t s;
  capsa_msg_init_iface(&s, &capsa_test_carrier_interface,
                       CAPSA_TEST_CARRIER_GIVE, &g);
  g.region =
      capsa_msg_add_handle(&s, unsealed, CAPSA_HANDLE_SHM, &rr, 4096, false);
  ASSERT_EQ(0, g.region);
  EXPECT_EQ(-EINVAL, capsa_rloop_send(&l, &s));
  EXPECT_EQ(unsealed, s.handles[0].fd);
  char byte;
  EXPECT_EQ(-1, recv(sp[1], &byte, 1, MSG_DONTWAIT));
  EXPECT_EQ(EAGAIN, errno);
  close(unsealed);
  capsa_rloop_close(&l);
  close(sp[1]);
}

TEST(RendererLoop, RefusesAFifoDeclaredAsAFile) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  char dir[] = "/tmp/capsa-loop-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  std::string fifo = std::string(dir) + "/f";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  int f = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(f, 0);
  capsa_test_carrier_deliver_t v;
  capsa_msg_t m = ipc_test::Carry(&v);
  capsa_rights_t rr = ipc_test::ReadRights();
  ipc_test::CarryHandle(&m, &v, f, CAPSA_HANDLE_FILE, &rr, 0, false);
  auto b = ipc_test::EncodeCarried(m);
  ASSERT_GT(ipc_test::RawSend(sp[1], b.data(), b.size(), &f, 1), 0);
  close(f);
  unlink(fifo.c_str());
  rmdir(dir);
  capsa_rloop_t l;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], nullptr, &kCarrierLoop));
  EXPECT_EQ(-EBADMSG, capsa_rloop_run_once(&l, 1000));
  EXPECT_NE(nullptr, strstr(l.reason, "FIFO")) << l.reason;
  // Sticky: the peer is never trusted again.
  EXPECT_EQ(-EBADMSG, capsa_rloop_run_once(&l, 0));
  capsa_rloop_close(&l);
  close(sp[1]);
}

TEST(RendererLoop, ReceivesASealedRegion) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  int region = ipc_test::SealedRegion(800 * 600 * 4, true);
  ASSERT_GE(region, 0);
  capsa_test_carrier_deliver_t v;
  capsa_msg_t m = ipc_test::Carry(&v);
  capsa_rights_t rw = ipc_test::WriteRights();
  ipc_test::CarryHandle(&m, &v, region, CAPSA_HANDLE_SHM, &rw, 800 * 600 * 4,
                        true);
  auto b = ipc_test::EncodeCarried(m);
  ASSERT_GT(ipc_test::RawSend(sp[1], b.data(), b.size(), &region, 1), 0);
  close(region);
  capsa_rloop_t l;
  static int got_fd;
  got_fd = -1;
  ASSERT_EQ(0, capsa_rloop_init(
                   &l, sp[0],
                   [](capsa_rloop_t *, capsa_msg_t *msg) -> int {
                     EXPECT_EQ(CAPSA_MSG_INTERFACE, msg->type);
                     EXPECT_EQ(CAPSA_TEST_CARRIER_DELIVER, msg->u.iface.id);
                     auto *d =
                         static_cast<const capsa_test_carrier_deliver_t *>(
                             msg->u.iface.value);
                     EXPECT_EQ(0, d->frame);
                     got_fd = capsa_msg_take_handle(msg, 0);
                     EXPECT_EQ(-EBADF, capsa_msg_take_handle(msg, 0));
                     return 5;
                   },
                   &kCarrierLoop));
  EXPECT_EQ(5, capsa_rloop_run_once(&l, 1000)) << l.reason;
  ASSERT_GE(got_fd, 0);
  EXPECT_TRUE(fcntl(got_fd, F_GETFD) & FD_CLOEXEC);  // MSG_CMSG_CLOEXEC
  close(got_fd);
  capsa_rloop_close(&l);
  close(sp[1]);
}

// Hostile descriptors through a real channel: each is refused with its
// reason, and every descriptor that arrived is closed.
struct HostileCase {
  const char *name;
  const char *reason;
};

class HostileHandle : public ::testing::TestWithParam<HostileCase> {};

// Opens the descriptor a case attaches; the message declares a read-only
// file of 100 bytes (a carrier Deliver) unless the case says otherwise.
static int HostileFd(const std::string &name, const std::string &dir) {
  if (name == "fifo") {
    std::string p = dir + "/fifo";
    if (mkfifo(p.c_str(), 0600) < 0) return -1;
    return open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }
  if (name == "directory") return open(dir.c_str(), O_RDONLY | O_CLOEXEC);
  if (name == "socket") {
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
      return -1;
    close(sp[1]);
    return sp[0];
  }
  std::string p = dir + "/file";
  int fd = open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, 100) < 0) return -1;
  if (name == "writable_file") return fd;  // O_RDWR, declared read-only
  close(fd);
  if (name == "wrong_size") {
    if (truncate(p.c_str(), 50) < 0) return -1;  // declared 100
    return open(p.c_str(), O_RDONLY | O_CLOEXEC);
  }
  return open(p.c_str(), O_RDONLY | O_CLOEXEC);  // "missing", "extra"
}

TEST_P(HostileHandle, IsABadMessageAndNothingLeaks) {
  const HostileCase &c = GetParam();
  char dir[] = "/tmp/capsa-hostile-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  int before = ipc_test::OpenFdCount();
  int fd = HostileFd(c.name, dir);
  ASSERT_GE(fd, 0) << c.name;
  capsa_test_carrier_deliver_t v;
  capsa_msg_t m = ipc_test::Carry(&v);
  capsa_rights_t rr = ipc_test::ReadRights();
  ipc_test::CarryHandle(&m, &v, fd, CAPSA_HANDLE_FILE, &rr, 100, false);
  auto b = ipc_test::EncodeCarried(m);
  std::string name = c.name;
  int fds[2] = {fd, fd};
  size_t nfds = name == "missing" ? 0 : name == "extra" ? 2 : 1;
  ASSERT_GT(ipc_test::RawSend(sp[1], b.data(), b.size(), fds, nfds), 0);
  close(fd);
  capsa_rloop_t l;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], nullptr, &kCarrierLoop));
  EXPECT_EQ(-EBADMSG, capsa_rloop_run_once(&l, 1000));
  EXPECT_NE(nullptr, strstr(l.reason, c.reason)) << l.reason;
  EXPECT_EQ(before, ipc_test::OpenFdCount());  // only the two socket ends
  capsa_rloop_close(&l);
  close(sp[1]);
  std::string rm = std::string("rm -rf ") + dir;
  ASSERT_EQ(0, system(rm.c_str()));
}

INSTANTIATE_TEST_SUITE_P(
    Channel, HostileHandle,
    ::testing::Values(HostileCase{"fifo", "FIFO"},
                      HostileCase{"directory", "directory"},
                      HostileCase{"socket", "socket"},
                      HostileCase{"writable_file", "read-only"},
                      HostileCase{"wrong_size", "size"},
                      HostileCase{"missing", "1 handles declared, 0"},
                      HostileCase{"extra", "1 handles declared, 2"}),
    [](const ::testing::TestParamInfo<HostileCase> &i) {
      return std::string(i.param.name);
    });

TEST_F(HostChannel, TruncatedRecordIsABadMessage) {
  Open();
  auto b = Encode(Sample(CAPSA_MSG_HELLO));
  ASSERT_GT(ipc_test::RawSend(sp_[1], b.data(), b.size() / 2, nullptr, 0), 0);
  ExpectBad("verification");
}

// A channel endpoint travels as a handle and carries a channel of its own.
TEST(RendererLoop, ReceivesAChannelEndpointAndUsesIt) {
  int sp[2], inner[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, inner));
  capsa_msg_t m = Sample(CAPSA_MSG_OPEN_CHANNEL);
  m.handles[0].fd = inner[0];
  auto b = Encode(m);
  ASSERT_GT(ipc_test::RawSend(sp[1], b.data(), b.size(), &inner[0], 1), 0);
  close(inner[0]);
  capsa_rloop_t l;
  static int got;
  got = -1;
  ASSERT_EQ(0, capsa_rloop_init(
                   &l, sp[0],
                   [](capsa_rloop_t *, capsa_msg_t *msg) -> int {
                     EXPECT_EQ(CAPSA_MSG_OPEN_CHANNEL, msg->type);
                     EXPECT_EQ(2u, msg->u.open_channel.channel_id);
                     EXPECT_STREQ("fonts", msg->u.open_channel.purpose);
                     got = capsa_msg_take_handle(msg, 0);
                     return 1;
                   },
                   nullptr));
  ASSERT_EQ(1, capsa_rloop_run_once(&l, 1000)) << l.reason;
  ASSERT_GE(got, 0);
  // A second loop on the received endpoint hears the far end.
  capsa_rloop_t l2;
  ASSERT_EQ(0, capsa_rloop_init(
                   &l2, got,
                   [](capsa_rloop_t *, capsa_msg_t *msg) -> int {
                     return msg->type == CAPSA_MSG_SHUTDOWN ? 7 : -EPROTO;
                   },
                   nullptr));
  auto sd = Encode(Sample(CAPSA_MSG_SHUTDOWN));
  ASSERT_GT(ipc_test::RawSend(inner[1], sd.data(), sd.size(), nullptr, 0), 0);
  EXPECT_EQ(7, capsa_rloop_run_once(&l2, 1000)) << l2.reason;
  capsa_rloop_close(&l2);
  capsa_rloop_close(&l);
  close(inner[1]);
  close(sp[1]);
}

TEST(RendererLoop, RefusesAStreamSocketAsAChannel) {
  int sp[2], st[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, st));
  int before = ipc_test::OpenFdCount();
  auto b = Encode(Sample(CAPSA_MSG_OPEN_CHANNEL));
  ASSERT_GT(ipc_test::RawSend(sp[1], b.data(), b.size(), &st[0], 1), 0);
  capsa_rloop_t l;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], nullptr, nullptr));
  EXPECT_EQ(-EBADMSG, capsa_rloop_run_once(&l, 1000));
  EXPECT_NE(nullptr, strstr(l.reason, "not SEQPACKET")) << l.reason;
  EXPECT_EQ(before, ipc_test::OpenFdCount());  // the received copy is closed
  capsa_rloop_close(&l);
  close(st[0]);
  close(st[1]);
  close(sp[1]);
}

// Order across transports: an in-memory fast path standing in for the ring.
struct FakeRing {
  std::deque<std::vector<uint8_t>> q;
  bool full = false;
};

TEST(FastPath, OrderHoldsAcrossRingAndSocket) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  FakeRing ring;
  capsa_fastpath_t fp = {};
  fp.ctx = &ring;
  fp.send = [](void *ctx, const uint8_t *buf, size_t len) -> int {
    auto *r = static_cast<FakeRing *>(ctx);
    if (r->full) return -EAGAIN;
    r->q.emplace_back(buf, buf + len);
    return 0;
  };
  fp.recv = [](void *ctx, uint8_t *buf, size_t cap) -> ssize_t {
    auto *r = static_cast<FakeRing *>(ctx);
    if (r->q.empty()) return 0;
    auto v = r->q.front();
    r->q.pop_front();
    if (v.size() > cap) return -EMSGSIZE;
    memcpy(buf, v.data(), v.size());
    return (ssize_t)v.size();
  };
  // Sender: a renderer loop; receiver: the host channel.
  capsa_rloop_t r;
  ASSERT_EQ(0, capsa_rloop_init(&r, sp[1], nullptr, nullptr));
  ASSERT_EQ(0, capsa_rloop_set_fastpath(&r, &fp));
  capsa_msg_t hello = Sample(CAPSA_MSG_HELLO);
  ASSERT_EQ(0, capsa_rloop_send(&r, &hello));  // ring, seq 1
  capsa_msg_t log = Sample(CAPSA_MSG_LOG);
  log.u.log.text = "2";
  ASSERT_EQ(0, capsa_rloop_send(&r, &log));  // ring, seq 2
  ring.full = true;
  log.u.log.text = "3";
  ASSERT_EQ(0, capsa_rloop_send(&r, &log));  // socket, seq 3
  ring.full = false;
  log.u.log.text = "4";
  ASSERT_EQ(0, capsa_rloop_send(&r, &log));  // ring, seq 4
  EXPECT_EQ(3u, ring.q.size());

  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  capsa_channel_t ch;
  ASSERT_EQ(0, capsa_channel_init(&loop, &ch, sp[0], nullptr));
  ASSERT_EQ(0, capsa_channel_set_fastpath(&ch, &fp));
  static std::vector<std::string> order;
  order.clear();
  ASSERT_EQ(0, capsa_channel_start(
                   &ch,
                   [](capsa_channel_t *, capsa_msg_t *m) {
                     order.push_back(m->type == CAPSA_MSG_HELLO
                                         ? "hello"
                                         : std::string(m->u.log.text));
                   },
                   [](capsa_channel_t *, int err, const char *why) {
                     ADD_FAILURE() << err << " " << why;
                   }));
  ASSERT_EQ(0, capsa_channel_poll_fastpath(&ch));
  EXPECT_EQ((std::vector<std::string>{"hello", "2", "3", "4"}), order);
  capsa_channel_close(&ch, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  capsa_rloop_close(&r);
}

TEST(FastPath, AGapIsABadMessage) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  FakeRing ring;
  capsa_fastpath_t fp = {};
  fp.ctx = &ring;
  fp.send = [](void *, const uint8_t *, size_t) -> int { return -EAGAIN; };
  fp.recv = [](void *ctx, uint8_t *buf, size_t cap) -> ssize_t {
    auto *r = static_cast<FakeRing *>(ctx);
    if (r->q.empty()) return 0;
    auto v = r->q.front();
    r->q.pop_front();
    memcpy(buf, v.data(), v.size());
    return (ssize_t)v.size();
  };
  capsa_msg_t m = Sample(CAPSA_MSG_HELLO);
  m.seq = 2;  // seq 1 never sent anywhere
  ring.q.push_back(Encode(m));
  capsa_rloop_options_t o = {};
  o.peer = CAPSA_PEER_RENDERER;
  capsa_rloop_t l;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp[0], nullptr, &o));
  ASSERT_EQ(0, capsa_rloop_set_fastpath(&l, &fp));
  EXPECT_EQ(-EBADMSG, capsa_rloop_run_once(&l, 0));
  EXPECT_NE(nullptr, strstr(l.reason, "missing")) << l.reason;
  capsa_rloop_close(&l);
  close(sp[1]);
}

}  // namespace

namespace {

// A request of the peer is answered once, and only on the channel that
// delivered it (issue 32, item 3): every channel's peer numbers its requests
// from 1, so an answer meant for another channel (a renderer's earlier
// incarnation) would otherwise reach this one. Refused, nothing sent.
TEST_F(HostChannel, ARequestIsAnsweredOnceAndOnlyOnItsOwnChannel) {
  Open();
  capsa_msg_t kept;
  bool got = false;
  on_msg_ = [&](capsa_msg_t *m) {
    if (m->type != CAPSA_MSG_RESOURCE_REQUEST) return;
    kept = *m;
    got = true;
  };
  SendRaw(ipc_test::Hello());
  capsa_msg_t req = Sample(CAPSA_MSG_RESOURCE_REQUEST);
  req.flags = CAPSA_MSG_F_REQUEST;
  req.request_id = 1;
  req.seq = 2;
  SendRaw(req);
  RunUntil([&] { return got; });
  ASSERT_TRUE(got) << why_;
  EXPECT_NE(0u, kept.origin) << "the channel stamps what it delivers";
  capsa_msg_t resp;
  capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
  capsa_msg_t foreign = kept;
  foreign.origin ^= 1ULL << 63;  // delivered by some other channel
  EXPECT_EQ(-ESTALE, capsa_channel_reply(&ch_, &foreign, &resp));
  capsa_msg_t built;  // by hand: no channel delivered it
  capsa_msg_init(&built, CAPSA_MSG_RESOURCE_REQUEST);
  built.flags = CAPSA_MSG_F_REQUEST;
  built.request_id = 1;
  EXPECT_EQ(-ESTALE, capsa_channel_reply(&ch_, &built, &resp));
  capsa_msg_t unasked = kept;
  unasked.request_id = 2;
  EXPECT_EQ(-ENOENT, capsa_channel_reply(&ch_, &unasked, &resp));
  EXPECT_EQ(0, capsa_channel_reply(&ch_, &kept, &resp));
  EXPECT_EQ(-ENOENT, capsa_channel_reply(&ch_, &kept, &resp)) << "twice";
  // Exactly one record reached the peer.
  uv_run(&loop_, UV_RUN_NOWAIT);
  std::vector<uint8_t> buf(CAPSA_IPC_MAX_MESSAGE);
  EXPECT_GT(recv(sp_[1], buf.data(), buf.size(), MSG_DONTWAIT), 0);
  EXPECT_EQ(-1, recv(sp_[1], buf.data(), buf.size(), MSG_DONTWAIT));
  EXPECT_EQ(EAGAIN, errno);
  EXPECT_EQ(0, err_) << why_;
}

}  // namespace
