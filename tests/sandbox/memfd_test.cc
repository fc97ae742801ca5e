// Sealed memfds: a read-only region checked from the receiving side, in a
// separate process that got the descriptor over SCM_RIGHTS.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/memfd.h"
#include "tests/harness/child.h"
#include "tests/harness/fd_passing.h"

namespace {

// CAPSA_EXPECT_CHILD_OK with a lambda that may contain top-level commas.
#define IN_CHILD(...) CAPSA_EXPECT_CHILD_OK((__VA_ARGS__))

constexpr size_t kSize = 64 * 1024;

#define EXPECT_ERRNO(err, expr)                                  \
  do {                                                           \
    errno = 0;                                                   \
    EXPECT_EQ(-1, (long)(expr)) << #expr;                        \
    EXPECT_EQ((err), errno) << #expr << ": " << strerror(errno); \
  } while (0)

// Everything a receiver might try against a read-only region.
void CheckReadOnlyFromReceiver(int fd, bool in_capmode) {
  size_t size = 0;
  ASSERT_EQ(0, capsa_memfd_check(fd, CAPSA_MEMFD_READONLY, &size));
  EXPECT_EQ(kSize, size);
  // Reading works and sees the writer's data.
  const char *r = static_cast<const char *>(
      mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd, 0));
  ASSERT_NE(MAP_FAILED, r);
  EXPECT_STREQ("hello from the writer", r);
  // Write, pwrite.
  EXPECT_ERRNO(EPERM, write(fd, "x", 1));
  EXPECT_ERRNO(EPERM, pwrite(fd, "x", 1, 0));
  // A writable shared mapping.
  errno = 0;
  EXPECT_EQ(MAP_FAILED,
            mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  EXPECT_EQ(EPERM, errno);
  // mprotect upgrade of the read-only shared mapping.
  EXPECT_ERRNO(EACCES,
               mprotect(const_cast<char *>(r), kSize, PROT_READ | PROT_WRITE));
  // Grow and shrink.
  EXPECT_ERRNO(EPERM, ftruncate(fd, kSize * 2));
  EXPECT_ERRNO(EPERM, ftruncate(fd, kSize / 2));
  EXPECT_ERRNO(EPERM, fallocate(fd, 0, 0, kSize * 2));
  // Undoing or adding seals.
  EXPECT_ERRNO(EPERM, fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
  // A private writable mapping is a copy: the writer never sees it.
  char *p = static_cast<char *>(
      mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  ASSERT_NE(MAP_FAILED, p);
  p[0] = 'X';
  EXPECT_EQ('h', r[0]);
  // Reopening through /proc gives a new description of the same sealed
  // inode (where /proc is reachable; capability mode refuses the open).
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int rw = open(path, O_RDWR | O_CLOEXEC);
  if (in_capmode) {
    EXPECT_EQ(-1, rw);
    EXPECT_EQ(ECAPMODE, errno);
  } else {
    ASSERT_GE(rw, 0) << strerror(errno);
    EXPECT_ERRNO(EPERM, write(rw, "x", 1));
    errno = 0;
    EXPECT_EQ(MAP_FAILED,
              mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0));
    EXPECT_EQ(EPERM, errno);
    close(rw);
  }
  // No executable bit can be set when the kernel has the exec seal.
  if (capsa_memfd_exec_sealed()) {
    EXPECT_NE(0, capsa_memfd_seals(fd) & CAPSA_SEAL_EXEC);
    // In capability mode fchmod is refused before the seal is consulted
    // (no lent identity: not granted by the default policy).
    EXPECT_ERRNO(in_capmode ? ENOTCAPABLE : EPERM, fchmod(fd, 0755));
  }
}

TEST(Memfd, CreateSealsSizeAndExec) {
  int fd = capsa_memfd_create("test", kSize);
  ASSERT_GE(fd, 0) << capsa_strerror(fd);
  struct stat st;
  ASSERT_EQ(0, fstat(fd, &st));
  EXPECT_EQ(static_cast<off_t>(kSize), st.st_size);
  int seals = capsa_memfd_seals(fd);
  ASSERT_GE(seals, 0);
  EXPECT_EQ(CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK,
            seals & (CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK));
  EXPECT_EQ(0, seals & CAPSA_SEAL_SEAL);  // still open for the writer
  EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
  EXPECT_ERRNO(EPERM, ftruncate(fd, kSize + 1));
  // Not yet read-only: a receiver must refuse it.
  EXPECT_EQ(-ENOTCAPABLE, capsa_memfd_check(fd, CAPSA_MEMFD_READONLY, nullptr));
  EXPECT_EQ(-ENOTCAPABLE, capsa_memfd_check(fd, CAPSA_MEMFD_SHARED, nullptr));
  ASSERT_EQ(0, capsa_memfd_seal_shared(fd));
  EXPECT_EQ(0, capsa_memfd_check(fd, CAPSA_MEMFD_SHARED, nullptr));
  EXPECT_EQ(-ENOTCAPABLE, capsa_memfd_check(fd, CAPSA_MEMFD_READONLY, nullptr));
  // Frozen: the write seal can no longer be added.
  EXPECT_EQ(-EPERM, capsa_memfd_seal_readonly(fd));
  close(fd);
  EXPECT_EQ(-EINVAL, capsa_memfd_create("zero", 0));
}

TEST(Memfd, CheckRefusesOtherKinds) {
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  EXPECT_EQ(-EINVAL, capsa_memfd_check(p[0], 0, nullptr));
  EXPECT_EQ(-EBADF, capsa_memfd_check(-1, 0, nullptr));
  // A memfd created without MFD_ALLOW_SEALING can never be sealed: it is
  // not a sealable memfd (it reports F_SEAL_SEAL alone).
  int plain = static_cast<int>(syscall(SYS_memfd_create, "plain", MFD_CLOEXEC));
  ASSERT_GE(plain, 0);
  ASSERT_EQ(0, ftruncate(plain, 4096));
  EXPECT_EQ(-EINVAL, capsa_memfd_check(plain, CAPSA_MEMFD_READONLY, nullptr));
  EXPECT_EQ(-EINVAL, capsa_memfd_check(plain, 0, nullptr));
  EXPECT_EQ(-EINVAL, capsa_memfd_seals(plain));
  close(plain);
  // Nor is a file of a tmpfs opened by name (it, too, reports F_SEAL_SEAL
  // alone); /dev/shm is a tmpfs on Debian, and so is /tmp on some machines.
  char tmpl[] = "/dev/shm/capsa-memfd-test-XXXXXX";
  int shmfile = mkstemp(tmpl);
  if (shmfile >= 0) {
    unlink(tmpl);
    ASSERT_EQ(0, ftruncate(shmfile, 4096));
    EXPECT_EQ(-EINVAL, capsa_memfd_check(shmfile, 0, nullptr));
    EXPECT_EQ(-EINVAL, capsa_memfd_seals(shmfile));
    close(shmfile);
  }
  close(p[0]);
  close(p[1]);
}

TEST(Memfd, ReadOnlyForTheReceiver) {
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    int fd = capsa_memfd_create("test-ro", kSize);
    char *w = static_cast<char *>(
        mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (fd < 0 || w == MAP_FAILED) _exit(2);
    strcpy(w, "hello from the writer");
    if (capsa_memfd_seal_readonly(fd) != 0) _exit(3);
    w[0] = 'h';  // the writer's own mapping still writes
    _exit(capsa_test::SendFd(sv[0], fd) == 0 ? 0 : 4);
  }
  int st;
  ASSERT_EQ(writer, waitpid(writer, &st, 0));
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  IN_CHILD([&] {
    int got = capsa_test::RecvFd(sv[1]);
    ASSERT_GE(got, 0);
    CheckReadOnlyFromReceiver(got, false);
  });
}

TEST(Memfd, ReadOnlyForAReceiverInCapabilityMode) {
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  int fd = capsa_memfd_create("test-ro", kSize);
  ASSERT_GE(fd, 0);
  char *w = static_cast<char *>(
      mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(MAP_FAILED, w);
  strcpy(w, "hello from the writer");
  ASSERT_EQ(0, capsa_memfd_seal_readonly(fd));
  ASSERT_EQ(0, capsa_test::SendFd(sv[0], fd));
  IN_CHILD([&] {
    ASSERT_EQ(0, capsa_cap_enter());
    int got = capsa_test::RecvFd(sv[1]);
    ASSERT_GE(got, 0);
    CheckReadOnlyFromReceiver(got, true);
  });
  // The writer still writes through its mapping; the receiver saw it.
  w[0] = 'H';
  EXPECT_EQ('H', w[0]);
  munmap(w, kSize);
  close(fd);
}

}  // namespace
