// CAPSA_IPC_DUMP (ipc/ipc_dump.h): a host's channel to a renderer records
// every record as it arrives, in order, with its descriptors' kinds and
// sizes, in fuzz_host's input layout; the renderer's side never records,
// nor does anything without the variable.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dirent.h>
#include <sys/mman.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/ipc_dump.h"
#include "ipc/loop.h"
#include "tests/ipc/ipc_test_util.h"

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/capsa-dump-XXXXXX";
    if (mkdtemp(t)) path = t;
  }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    DIR *d = opendir(path.c_str());
    if (!d) return out;
    while (struct dirent *e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(path + "/" + e->d_name);
    closedir(d);
    return out;
  }
  ~TempDir() {
    for (const std::string &f : Files()) unlink(f.c_str());
    rmdir(path.c_str());
  }
};

std::vector<uint8_t> Slurp(const std::string &path) {
  std::vector<uint8_t> b;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return b;
  uint8_t buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) b.insert(b.end(), buf, buf + n);
  close(fd);
  return b;
}

int Ignore(capsa_rloop_t *, capsa_msg_t *) {
  return 0;
}

// Runs a receiving loop as `peer` over everything `send` wrote to the other
// end, to end of stream or the first refusal.
void Receive(capsa_peer_role_t peer, int fd) {
  capsa_rloop_t l;
  capsa_rloop_options_t o = {};
  o.peer = peer;
  o.send_timeout_ms = 1000;
  o.interfaces = ipc_test::kCarrier;
  o.ninterfaces = 1;
  ASSERT_EQ(0, capsa_rloop_init(&l, fd, Ignore, &o));
  for (int i = 0; i < 16; i++) {
    int r = capsa_rloop_run_once(&l, 0);
    if (r != 0 && r != -ETIMEDOUT) break;
  }
  capsa_rloop_close(&l);
}

void Append(std::vector<uint8_t> *want, const std::vector<uint8_t> &rec,
            const std::vector<std::pair<uint8_t, uint8_t>> &handles) {
  want->push_back((uint8_t)handles.size());
  for (const auto &h : handles) {
    want->push_back(h.first);
    want->push_back(h.second);
  }
  want->push_back((uint8_t)(rec.size() & 0xff));
  want->push_back((uint8_t)(rec.size() >> 8));
  want->insert(want->end(), rec.begin(), rec.end());
}

class IpcDump : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path.empty());
    ASSERT_EQ(0, setenv("CAPSA_IPC_DUMP", dir_.path.c_str(), 1));
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp_));
  }
  void TearDown() override {
    unsetenv("CAPSA_IPC_DUMP");
    if (sp_[1] >= 0) close(sp_[1]);
  }
  TempDir dir_;
  int sp_[2] = {-1, -1};
};

TEST_F(IpcDump, HostSideRecordsEveryRecordInOrderWithItsDescriptors) {
  std::vector<uint8_t> hello = ipc_test::Encode(ipc_test::Hello());
  capsa_msg_t log = ipc_test::Sample(CAPSA_MSG_LOG);
  log.seq = 2;
  std::vector<uint8_t> log_b = ipc_test::Encode(log);
  capsa_msg_t ping = ipc_test::Sample(CAPSA_MSG_PING);
  ping.seq = 3;
  std::vector<uint8_t> ping_b = ipc_test::Encode(ping);
  // Frozen: what a renderer's read-only region is (F_SEAL_WRITE).
  int frozen = memfd_create("frozen", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(frozen, 0);
  ASSERT_EQ(0, ftruncate(frozen, 4096));
  ASSERT_EQ(0, fcntl(frozen, F_ADD_SEALS,
                     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL));
  int writable = ipc_test::SealedRegion(8192, true);
  ASSERT_GE(writable, 0);
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  ASSERT_GT(ipc_test::RawSend(sp_[1], hello.data(), hello.size(), nullptr, 0),
            0);
  ASSERT_GT(ipc_test::RawSend(sp_[1], log_b.data(), log_b.size(), nullptr, 0),
            0);
  // A record whose descriptors its message does not declare: refused by
  // the channel, recorded all the same (before any check), and the last.
  int fds[3] = {frozen, writable, p[1]};
  ASSERT_GT(ipc_test::RawSend(sp_[1], ping_b.data(), ping_b.size(), fds, 3), 0);
  ASSERT_GT(ipc_test::RawSend(sp_[1], log_b.data(), log_b.size(), nullptr, 0),
            0);
  close(frozen);
  close(writable);
  close(p[0]);
  close(p[1]);
  close(sp_[1]);
  sp_[1] = -1;
  Receive(CAPSA_PEER_RENDERER, sp_[0]);
  std::vector<std::string> files = dir_.Files();
  ASSERT_EQ(1u, files.size());
  EXPECT_NE(std::string::npos,
            files[0].find("/ipc-" + std::to_string(getpid())));
  std::vector<uint8_t> want = {CAPSA__DUMP_AUTO_HELLO};  // HELLO left out
  Append(&want, log_b, {});
  Append(&want, ping_b,
         {{CAPSA__DUMP_SHM_FROZEN, 16},
          {CAPSA__DUMP_SHM_SHARED, 32},
          {CAPSA__DUMP_PIPE_WRITE, 0}});
  EXPECT_EQ(want, Slurp(files[0]));
}

TEST_F(IpcDump, RendererSideAndUnsetVariableRecordNothing) {
  std::vector<uint8_t> hello = ipc_test::Encode(ipc_test::Hello());
  ASSERT_GT(ipc_test::RawSend(sp_[1], hello.data(), hello.size(), nullptr, 0),
            0);
  close(sp_[1]);
  sp_[1] = -1;
  Receive(CAPSA_PEER_HOST, sp_[0]);  // a renderer's loop: the host's HELLO
  EXPECT_TRUE(dir_.Files().empty());
  unsetenv("CAPSA_IPC_DUMP");
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  ASSERT_GT(ipc_test::RawSend(sp[1], hello.data(), hello.size(), nullptr, 0),
            0);
  close(sp[1]);
  Receive(CAPSA_PEER_RENDERER, sp[0]);
  EXPECT_TRUE(dir_.Files().empty());
}

TEST(IpcDumpKind, EachDescriptorKindIsNamed) {
  int sp[2], p[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  EXPECT_EQ((unsigned)CAPSA__DUMP_CHANNEL, capsa__dump_kind(sp[0]));
  close(sp[0]);
  close(sp[1]);
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp));
  EXPECT_EQ((unsigned)CAPSA__DUMP_STREAM, capsa__dump_kind(sp[0]));
  close(sp[0]);
  close(sp[1]);
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  EXPECT_EQ((unsigned)CAPSA__DUMP_PIPE_READ, capsa__dump_kind(p[0]));
  EXPECT_EQ((unsigned)CAPSA__DUMP_PIPE_WRITE, capsa__dump_kind(p[1]));
  close(p[0]);
  close(p[1]);
  int ro = ipc_test::SealedRegion(4096, false);
  ASSERT_GE(ro, 0);
  EXPECT_EQ((unsigned)CAPSA__DUMP_SHM_READONLY, capsa__dump_kind(ro));
  close(ro);
  int fd = memfd_create("plain", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ((unsigned)CAPSA__DUMP_SHM_UNSEALED, capsa__dump_kind(fd));
  close(fd);
}

}  // namespace
