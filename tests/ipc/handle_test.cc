// Received descriptors against their declarations, with hostile ones: a
// FIFO, a directory, sockets of the wrong sort, writable where read-only was
// declared. None of the checks may block.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "ipc/handle.h"
#include "sandbox/memfd.h"
#include "tests/ipc/ipc_test_util.h"

namespace {

class HandleCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/capsa-handle-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(0, system(cmd.c_str()));
  }
  capsa_handle_t Decl(capsa_handle_kind_t kind, uint64_t size, bool writable) {
    capsa_handle_t d = {};
    d.fd = -1;
    d.kind = kind;
    d.rights = writable ? ipc_test::WriteRights() : ipc_test::ReadRights();
    if (kind == CAPSA_HANDLE_CHANNEL) {
      d.rights.cr_rights[0] = CAPSA_CAP_READ | CAPSA_CAP_WRITE;
      d.rights.cr_rights[1] = 1ULL << 58;
    }
    d.size = size;
    d.writable = writable;
    return d;
  }
  // "ok" or the reason.
  std::string Check(int fd, const capsa_handle_t &d,
                    capsa_peer_role_t sender = CAPSA_PEER_HOST) {
    char r[CAPSA_IPC_REASON_MAX] = "";
    int err = capsa_handle_check(fd, &d, sender, r, sizeof r);
    if (err == 0) return "ok";
    EXPECT_EQ(-EBADMSG, err);
    return r;
  }
  int File(const char *name, size_t size, int flags) {
    std::string p = dir_ + "/" + name;
    int fd = open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(0, ftruncate(fd, (off_t)size));
    close(fd);
    fd = open(p.c_str(), flags | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    return fd;
  }
  std::string dir_;
};

#define EXPECT_REASON(got, needle) \
  EXPECT_NE(std::string::npos, (got).find(needle)) << "reason: " << (got)

TEST_F(HandleCheck, SealedRegions) {
  int ro = ipc_test::SealedRegion(4096, false);
  int rw = ipc_test::SealedRegion(4096, true);
  ASSERT_GE(ro, 0);
  ASSERT_GE(rw, 0);
  EXPECT_EQ("ok", Check(ro, Decl(CAPSA_HANDLE_SHM, 4096, false)));
  EXPECT_EQ("ok", Check(rw, Decl(CAPSA_HANDLE_SHM, 4096, true)));
  // Writable declared but write-sealed: the receiver could not write.
  EXPECT_REASON(Check(ro, Decl(CAPSA_HANDLE_SHM, 4096, true)), "write-sealed");
  // Read-only declared but nothing stops writes: refused.
  EXPECT_REASON(Check(rw, Decl(CAPSA_HANDLE_SHM, 4096, false)), "write seal");
  EXPECT_REASON(Check(ro, Decl(CAPSA_HANDLE_SHM, 8192, false)), "size");
  close(ro);
  close(rw);
}

// Read-only from a renderer takes F_SEAL_WRITE: with FUTURE_WRITE alone the
// renderer that made the region may still write it through its earlier
// mapping (issue 32, item 5). From the host, FUTURE_WRITE stays enough.
TEST_F(HandleCheck, ReadOnlyFromARendererTakesTheWriteSeal) {
  int future = ipc_test::SealedRegion(4096, false);
  ASSERT_GE(future, 0);
  capsa_handle_t ro = Decl(CAPSA_HANDLE_SHM, 4096, false);
  EXPECT_EQ("ok", Check(future, ro, CAPSA_PEER_HOST));
  EXPECT_REASON(Check(future, ro, CAPSA_PEER_RENDERER), "F_SEAL_WRITE");
  int frozen = capsa_memfd_create("frozen", 4096);
  ASSERT_GE(frozen, 0);
  ASSERT_EQ(0, fcntl(frozen, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL));
  EXPECT_EQ("ok", Check(frozen, ro, CAPSA_PEER_RENDERER));
  EXPECT_EQ("ok", Check(frozen, ro, CAPSA_PEER_HOST));
  close(future);
  close(frozen);
}

TEST_F(HandleCheck, UnsealedMemfdIsNotARegion) {
  int fd = memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, 4096));
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_SHM, 4096, true)),
                "grow/shrink/seal");
  close(fd);
}

TEST_F(HandleCheck, RegularFileIsNotARegion) {
  int fd = File("plain", 4096, O_RDWR);
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_SHM, 4096, true)),
                "not a sealable memfd");
  close(fd);
}

TEST_F(HandleCheck, ReadOnlyFile) {
  int fd = File("ro", 100, O_RDONLY);
  EXPECT_EQ("ok", Check(fd, Decl(CAPSA_HANDLE_FILE, 100, false)));
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_FILE, 99, false)), "size");
  close(fd);
  fd = File("rw", 100, O_RDWR);
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_FILE, 100, false)), "read-only");
  close(fd);
  fd = File("path", 100, O_PATH);
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_FILE, 100, false)), "O_PATH");
  close(fd);
}

TEST_F(HandleCheck, FifoIsRefusedWithoutBlocking) {
  std::string p = dir_ + "/fifo";
  ASSERT_EQ(0, mkfifo(p.c_str(), 0600));
  // O_NONBLOCK so that the test itself does not wait for a writer; the
  // check never reads it either way.
  int fd = open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_FILE, 0, false)), "FIFO");
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_SHM, 4096, false)), "FIFO");
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_CHANNEL, 0, false)), "FIFO");
  close(fd);
}

TEST_F(HandleCheck, DirectoryIsRefused) {
  int fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_FILE, 0, false)), "directory");
  close(fd);
}

TEST_F(HandleCheck, Sockets) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  EXPECT_EQ("ok", Check(sp[0], Decl(CAPSA_HANDLE_CHANNEL, 0, false)));
  EXPECT_REASON(Check(sp[0], Decl(CAPSA_HANDLE_FILE, 0, false)), "socket");
  close(sp[0]);
  close(sp[1]);

  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp));
  EXPECT_REASON(Check(sp[0], Decl(CAPSA_HANDLE_CHANNEL, 0, false)),
                "not SEQPACKET");
  close(sp[0]);
  close(sp[1]);

  // A socket connected to a named listener: a channel to elsewhere.
  struct sockaddr_un a = {};
  a.sun_family = AF_UNIX;
  std::string p = dir_ + "/sock";
  strncpy(a.sun_path, p.c_str(), sizeof a.sun_path - 1);
  int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_EQ(0, bind(l, (struct sockaddr *)&a, sizeof a));
  ASSERT_EQ(0, listen(l, 1));
  int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_EQ(0, connect(c, (struct sockaddr *)&a, sizeof a));
  EXPECT_REASON(Check(c, Decl(CAPSA_HANDLE_CHANNEL, 0, false)), "unnamed");
  EXPECT_REASON(Check(l, Decl(CAPSA_HANDLE_CHANNEL, 0, false)), "unnamed");
  close(c);
  close(l);

  int u = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);  // unconnected
  EXPECT_REASON(Check(u, Decl(CAPSA_HANDLE_CHANNEL, 0, false)), "unnamed");
  close(u);
  int in = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (in >= 0) {
    EXPECT_REASON(Check(in, Decl(CAPSA_HANDLE_CHANNEL, 0, false)), "AF_UNIX");
    close(in);
  }
}

// Anonymous-inode descriptors (eventfd, pidfd) are none of the kinds, whatever
// mode bits this kernel gives anon inodes.
TEST_F(HandleCheck, AnonymousInodesAreRefused) {
  int efd = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(efd, 0);
  int pfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  for (int fd : {efd, pfd}) {
    if (fd < 0) continue;
    EXPECT_NE("ok", Check(fd, Decl(CAPSA_HANDLE_FILE, 0, false)));
    EXPECT_NE("ok", Check(fd, Decl(CAPSA_HANDLE_SHM, 4096, false)));
    EXPECT_NE("ok", Check(fd, Decl(CAPSA_HANDLE_SHM, 4096, true)));
    EXPECT_NE("ok", Check(fd, Decl(CAPSA_HANDLE_CHANNEL, 0, false)));
    close(fd);
  }
}

TEST_F(HandleCheck, CharacterDevice) {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_REASON(Check(fd, Decl(CAPSA_HANDLE_FILE, 0, false)),
                "character device");
  close(fd);
}

}  // namespace
