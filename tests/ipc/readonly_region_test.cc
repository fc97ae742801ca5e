// Read-only means read-only (issue 32, item 5). F_SEAL_FUTURE_WRITE refuses
// new write paths but leaves the mappings made before it writable: right
// for a region the host fills and hands a renderer (the renderer trusts the
// host), wrong for one a renderer hands the host, whose maker then rewrites
// it under the host's checks. From a renderer, read-only takes F_SEAL_WRITE,
// which the kernel refuses while any writable mapping exists; renderers make
// such a region with CAPSA_SHM_CREATOR_FREEZES and capsa_shm_freeze().
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/loop.h"
#include "ipc/shm.h"
#include "ipc/uv_channel.h"
#include "sandbox/memfd.h"
#include "tests/ipc/ipc_test_util.h"

namespace {

constexpr size_t kSize = 4096;

// The renderer's Give of a read-only region (handle 0), seq 2, as it goes on
// the wire; `fd` only fills the slot (a declaration carries no number).
std::vector<uint8_t> GiveRecord(int fd) {
  capsa_test_carrier_give_t g;
  capsa_test_carrier_give_init(&g);
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_test_carrier_interface,
                       CAPSA_TEST_CARRIER_GIVE, &g);
  capsa_rights_t rr = ipc_test::ReadRights();
  g.region = capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_SHM, &rr, kSize, false);
  EXPECT_EQ(0, g.region);
  m.seq = 2;
  return ipc_test::EncodeCarried(m);
}

// A host channel (its peer a renderer) on its own loop.
class HostSide : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_EQ(0, uv_loop_init(&loop_));
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp_));
    capsa_channel_options_t o = {};
    o.peer = CAPSA_PEER_RENDERER;
    o.interfaces = ipc_test::kCarrier;
    o.ninterfaces = 1;
    ASSERT_EQ(0, capsa_channel_init(&loop_, &ch_, sp_[0], &o));
    ch_.data = this;
    ASSERT_EQ(0, capsa_channel_start(
                     &ch_,
                     [](capsa_channel_t *c, capsa_msg_t *m) {
                       static_cast<HostSide *>(c->data)->OnMessage(m);
                     },
                     [](capsa_channel_t *c, int err, const char *why) {
                       auto *t = static_cast<HostSide *>(c->data);
                       t->err_ = err;
                       t->why_ = why ? why : "";
                     }));
  }
  void TearDown() override {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    capsa_channel_close(&ch_, nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    if (sp_[1] >= 0) close(sp_[1]);
    capsa_shm_close(&got_);
    EXPECT_EQ(0, uv_loop_close(&loop_));
  }
  // A Give arrived: map its region as the host would and watch it for a
  // while, counting how often its first word changed under us.
  void OnMessage(capsa_msg_t *m) {
    if (m->type == CAPSA_MSG_HELLO) return;
    delivered_ = true;
    int fd = capsa_msg_take_handle(m, 0);
    ASSERT_GE(fd, 0);
    int err = capsa_shm_map_fd(fd, kSize, CAPSA_SHM_PEER_READS, &got_);
    if (err < 0) close(fd);
    ASSERT_EQ(0, err);
    const volatile uint64_t *w =
        static_cast<const volatile uint64_t *>(got_.base);
    uint64_t last = w[0];
    for (int i = 0; i < 2000; i++) {
      usleep(100);
      uint64_t now = w[0];
      changes_ += now != last;
      last = now;
    }
  }
  void RunFor(int ms) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
      uv_run(&loop_, UV_RUN_NOWAIT);
      if (err_ != 0 || delivered_) return;
      usleep(1000);
      clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 +
                 (t.tv_nsec - t0.tv_nsec) / 1000000 <
             ms);
  }

  uv_loop_t loop_;
  int sp_[2] = {-1, -1};
  capsa_channel_t ch_;
  pid_t child_ = -1;
  int err_ = 0;
  std::string why_;
  bool delivered_ = false;
  int changes_ = 0;
  capsa_shm_region_t got_ = {-1, nullptr, 0, false, 0};
};

// A compromised renderer makes a region the way the host makes its own
// (CAPSA_SHM_CREATOR_WRITES: FUTURE_WRITE), sends it read-only and keeps
// writing through the mapping it made before the seal. The host refuses the
// message: it never maps a region whose maker can still change it.
TEST_F(HostSide, RefusesARegionItsMakerKeepsWriting) {
  std::vector<uint8_t> hello = ipc_test::Encode(ipc_test::Hello());
  std::vector<uint8_t> give = GiveRecord(0);
  int go[2];
  ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
  child_ = fork();
  ASSERT_GE(child_, 0);
  if (child_ == 0) {  // the writer: no gtest here
    close(go[0]);
    capsa_shm_region_t r;
    if (capsa_shm_create(kSize, "mine", CAPSA_SHM_CREATOR_WRITES, &r) < 0)
      _exit(2);
    if (ipc_test::RawSend(sp_[1], hello.data(), hello.size(), nullptr, 0) <= 0)
      _exit(3);
    if (ipc_test::RawSend(sp_[1], give.data(), give.size(), &r.fd, 1) <= 0)
      _exit(4);
    if (write(go[1], "s", 1) != 1) _exit(5);
    volatile uint64_t *w = static_cast<volatile uint64_t *>(r.base);
    for (uint64_t i = 1;; i++) w[0] = i;  // until killed
  }
  close(go[1]);
  char c;
  ASSERT_EQ(1, read(go[0], &c, 1)) << "the writer could not send";
  close(go[0]);
  RunFor(5000);
  EXPECT_FALSE(delivered_) << "the host mapped it and saw " << changes_
                           << " changes in 2000 samples";
  EXPECT_EQ(-EBADMSG, err_);
  EXPECT_NE(std::string::npos, why_.find("F_SEAL_WRITE")) << why_;
}

// The honest way: CAPSA_SHM_CREATOR_FREEZES, filled, then frozen. After
// capsa_shm_freeze nobody can write it, the maker included; the renderer's
// loop sends it and the host maps it (CAPSA_SHM_READS_FROZEN). Before the
// freeze, and as a FUTURE_WRITE region, the renderer's own send refuses it.
TEST_F(HostSide, AcceptsAFrozenRegionThatNoOneCanWrite) {
  capsa_rloop_t l;
  capsa_rloop_options_t o = {};
  o.interfaces = ipc_test::kCarrier;
  o.ninterfaces = 1;
  ASSERT_EQ(0, capsa_rloop_init(&l, sp_[1], nullptr, &o));
  sp_[1] = -1;  // the loop owns it
  capsa_msg_t hello = ipc_test::Hello();
  ASSERT_EQ(0, capsa_rloop_send(&l, &hello));

  capsa_shm_region_t fut, r;
  ASSERT_EQ(0,
            capsa_shm_create(kSize, "future", CAPSA_SHM_CREATOR_WRITES, &fut));
  ASSERT_EQ(0,
            capsa_shm_create(kSize, "frozen", CAPSA_SHM_CREATOR_FREEZES, &r));
  ASSERT_TRUE(r.writable);
  ASSERT_EQ(0, capsa_shm_write(&r, 0, "frozen!", 8));
  capsa_rights_t rr = ipc_test::ReadRights();
  auto give = [&](int fd) {
    capsa_test_carrier_give_t g;
    capsa_test_carrier_give_init(&g);
    capsa_msg_t m;
    capsa_msg_init_iface(&m, &capsa_test_carrier_interface,
                         CAPSA_TEST_CARRIER_GIVE, &g);
    g.region =
        capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_SHM, &rr, kSize, false);
    int err = capsa_rloop_send(&l, &m);
    if (err < 0) close(fd);
    return err;
  };
  EXPECT_EQ(-EINVAL, give(dup(fut.fd))) << "FUTURE_WRITE from a renderer";
  EXPECT_EQ(-EINVAL, give(dup(r.fd))) << "not frozen yet";

  ASSERT_EQ(0, capsa_shm_freeze(&r));
  EXPECT_FALSE(r.writable);
  EXPECT_TRUE(r.seals & CAPSA_SEAL_WRITE);
  EXPECT_EQ(-EACCES, capsa_shm_write(&r, 0, "x", 1));
  // No write path is left, not even for the maker.
  EXPECT_EQ(MAP_FAILED,
            mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0));
  EXPECT_EQ(-1, pwrite(r.fd, "x", 1, 0));
  EXPECT_EQ(EPERM, errno);
  // The maker's own mapping is private now: made writable again, it writes
  // a copy of its own, never the region.
  if (mprotect(r.base, kSize, PROT_READ | PROT_WRITE) == 0)
    memcpy(r.base, "CHANGED", 8);
  char file[8] = {};
  ASSERT_EQ(8, pread(r.fd, file, 8, 0));
  EXPECT_EQ(0, memcmp(file, "frozen!", 8));
  EXPECT_EQ(-EINVAL, capsa_shm_freeze(&r)) << "frozen once";

  ASSERT_EQ(0, give(dup(r.fd))) << l.reason;
  RunFor(5000);
  EXPECT_EQ(0, err_) << why_;
  EXPECT_TRUE(delivered_);
  EXPECT_EQ(0, changes_);
  const void *p = nullptr;
  ASSERT_EQ(0, capsa_shm_view(&got_, 0, 8, &p));
  EXPECT_EQ(0, memcmp(p, "frozen!", 8));
  EXPECT_GE(capsa_shm_verify(got_.fd, kSize, CAPSA_SHM_READS_FROZEN), 0);
  capsa_shm_close(&fut);
  capsa_shm_close(&r);
  capsa_rloop_close(&l);
}

// capsa_shm_freeze cannot seal while a writable mapping exists anywhere:
// one made through the descriptor (or inherited by a fork) makes it fail,
// and the region stays as it was, writable.
TEST(ShmFreeze, RefusedWhileAnotherWritableMappingExists) {
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(kSize, "busy", CAPSA_SHM_CREATOR_FREEZES, &r));
  void *alias =
      mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
  ASSERT_NE(MAP_FAILED, alias);
  EXPECT_EQ(-EBUSY, capsa_shm_freeze(&r));
  EXPECT_TRUE(r.writable);
  EXPECT_EQ(0, capsa_shm_write(&r, 0, "still", 5));
  EXPECT_EQ(0, memcmp(alias, "still", 5));
  ASSERT_EQ(0, munmap(alias, kSize));
  EXPECT_EQ(0, capsa_shm_freeze(&r));
  EXPECT_FALSE(r.writable);
  capsa_shm_close(&r);
  // Not a CAPSA_SHM_CREATOR_FREEZES region: nothing to freeze.
  capsa_shm_region_t fut;
  ASSERT_EQ(0, capsa_shm_create(kSize, "fut", CAPSA_SHM_CREATOR_WRITES, &fut));
  EXPECT_EQ(-EINVAL, capsa_shm_freeze(&fut));
  capsa_shm_close(&fut);
}

// What the host maps a renderer's region with demands F_SEAL_WRITE; a
// renderer mapping the host's FUTURE_WRITE region is unchanged.
TEST(ShmFreeze, VerifyReadsFrozenDemandsTheWriteSeal) {
  capsa_shm_region_t fut, fr;
  ASSERT_EQ(0, capsa_shm_create(kSize, "fut", CAPSA_SHM_CREATOR_WRITES, &fut));
  ASSERT_EQ(0, capsa_shm_create(kSize, "fr", CAPSA_SHM_CREATOR_FREEZES, &fr));
  EXPECT_GE(capsa_shm_verify(fut.fd, kSize, CAPSA_SHM_PEER_READS), 0);
  EXPECT_EQ(-ENOTCAPABLE,
            capsa_shm_verify(fut.fd, kSize, CAPSA_SHM_READS_FROZEN));
  // Unfrozen: the seal set is still open, so no receiver takes it.
  EXPECT_LT(capsa_shm_verify(fr.fd, kSize, CAPSA_SHM_READS_FROZEN), 0);
  EXPECT_LT(capsa_shm_verify(fr.fd, kSize, CAPSA_SHM_PEER_READS), 0);
  ASSERT_EQ(0, capsa_shm_freeze(&fr));
  EXPECT_GE(capsa_shm_verify(fr.fd, kSize, CAPSA_SHM_READS_FROZEN), 0);
  EXPECT_GE(capsa_shm_verify(fr.fd, kSize, CAPSA_SHM_PEER_READS), 0);
  capsa_shm_close(&fut);
  capsa_shm_close(&fr);
}

}  // namespace
