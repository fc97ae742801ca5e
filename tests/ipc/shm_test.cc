// Sealed shared-memory regions (ipc/shm.h): the seals are checked from the
// receiving side, in a forked child that got the descriptor over SCM_RIGHTS,
// as a renderer would.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "ipc/shm.h"
#include "sandbox/errors.h"
#include "sandbox/memfd.h"
#include "tests/harness/child.h"
#include "tests/harness/fd_passing.h"

namespace {

constexpr size_t kSize = 8192;

// execveat(fd, "", AT_EMPTY_PATH): -1 with errno when refused.
long ExecFd(int fd) {
  char arg0[] = "x";
  char *argv[] = {arg0, nullptr};
  char *envp[] = {nullptr};
  return syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

size_t CountDir(const char *path) {
  DIR *d = opendir(path);
  size_t n = 0;
  while (d && readdir(d)) n++;
  if (d) closedir(d);
  return n;
}

size_t CountMaps() {
  FILE *f = fopen("/proc/self/maps", "r");
  size_t n = 0;
  int ch;
  while (f && (ch = fgetc(f)) != EOF) n += ch == '\n';
  if (f) fclose(f);
  return n;
}

TEST(Shm, CreateRejectsBadArguments) {
  capsa_shm_region_t r;
  EXPECT_EQ(-EINVAL, capsa_shm_create(0, "x", CAPSA_SHM_BOTH_WRITE, &r));
  EXPECT_EQ(-EINVAL, capsa_shm_create(CAPSA_SHM_MAX_SIZE + 1, "x",
                                      CAPSA_SHM_BOTH_WRITE, &r));
  EXPECT_EQ(-EINVAL, capsa_shm_create(kSize, "x", (capsa_shm_mode_t)9, &r));
  EXPECT_EQ(-1, r.fd);
  EXPECT_EQ(nullptr, r.base);
  EXPECT_EQ(-EINVAL,
            capsa_shm_create(kSize, "x", CAPSA_SHM_BOTH_WRITE, nullptr));
}

TEST(Shm, CreatorWritesSealsAndRoundsToPages) {
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(100, "t", CAPSA_SHM_CREATOR_WRITES, &r));
  EXPECT_EQ((size_t)sysconf(_SC_PAGESIZE), r.size);
  EXPECT_TRUE(r.writable);
  uint32_t want = CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK | CAPSA_SEAL_SEAL |
                  CAPSA_SEAL_FUTURE_WRITE;
  EXPECT_EQ(want, r.seals & want);
  EXPECT_EQ((uint32_t)capsa_memfd_seals(r.fd), r.seals);
  if (capsa_memfd_exec_sealed()) {
    EXPECT_TRUE(r.seals & CAPSA_SEAL_EXEC);
  }
  // The creator's own mapping predates FUTURE_WRITE and stays writable...
  ASSERT_EQ(0, capsa_shm_write(&r, 0, "abc", 3));
  // ...but no new write path exists, even for the creator.
  EXPECT_EQ(-1, write(r.fd, "x", 1));
  EXPECT_EQ(EPERM, errno);
  EXPECT_EQ(0, capsa_shm_close(&r));
}

// The host fills a region, seals it read-only and sends it; the renderer
// verifies and maps it and every way of writing, resizing or re-sealing it is
// refused by the kernel with the exact errno.
TEST(Shm, ReceiverCannotWriteResizeOrReseal) {
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(kSize, "ro", CAPSA_SHM_CREATOR_WRITES, &r));
  void *p;
  ASSERT_EQ(0, capsa_shm_view_mut(&r, 0, kSize, &p));
  memset(p, 0x5a, kSize);
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  ASSERT_EQ(0, capsa_test::SendFd(sv[0], r.fd));
  ASSERT_EQ(0, capsa_shm_close(&r));
  close(sv[0]);

  CAPSA_EXPECT_CHILD_OK([&] {
    int fd = capsa_test::RecvFd(sv[1]);
    ASSERT_GE(fd, 0);
    // The receiver's checks: wrong size, wrong intent.
    EXPECT_EQ(-EMSGSIZE, capsa_shm_verify(fd, kSize / 2, CAPSA_SHM_PEER_READS));
    EXPECT_EQ(-EACCES, capsa_shm_verify(fd, kSize, CAPSA_SHM_PEER_READWRITE));
    capsa_shm_region_t in;
    ASSERT_EQ(0, capsa_shm_map_fd(fd, kSize, CAPSA_SHM_PEER_READS, &in));
    EXPECT_FALSE(in.writable);
    uint8_t got[16];
    ASSERT_EQ(0, capsa_shm_read(&in, kSize - 16, got, sizeof got));
    EXPECT_EQ(0x5a, got[0]);
    EXPECT_EQ(0x5a, got[15]);
    void *w;
    EXPECT_EQ(-EACCES, capsa_shm_view_mut(&in, 0, 1, &w));
    EXPECT_EQ(-EACCES, capsa_shm_write(&in, 0, "x", 1));

    errno = 0;
    EXPECT_EQ(-1, write(fd, "x", 1));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(-1, pwrite(fd, "x", 1, 0));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(MAP_FAILED,
              mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(-1, mprotect(in.base, kSize, PROT_READ | PROT_WRITE));
    EXPECT_EQ(EACCES, errno);
    errno = 0;
    EXPECT_EQ(-1, ftruncate(fd, kSize * 2));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(-1, ftruncate(fd, kSize / 2));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(-1, fallocate(fd, 0, 0, kSize * 2));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(
        -1, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(-1, madvise(in.base, 4096, MADV_REMOVE));
    EXPECT_EQ(EACCES, errno);
    // Seals belong to the inode: a writable reopen is no way around them.
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    int fd2 = open(proc.c_str(), O_RDWR | O_CLOEXEC);
    if (fd2 >= 0) {
      errno = 0;
      EXPECT_EQ(-1, write(fd2, "x", 1));
      EXPECT_EQ(EPERM, errno);
      close(fd2);
    }
    // The seal set is frozen: the receiver cannot add F_SEAL_WRITE to
    // break the host's mapping, nor anything else.
    errno = 0;
    EXPECT_EQ(-1, fcntl(fd, F_ADD_SEALS, CAPSA_SEAL_WRITE));
    EXPECT_EQ(EPERM, errno);
    if (capsa_memfd_exec_sealed()) {
      // Never executable: the mode cannot gain x bits, and executing the
      // memfd is refused for lack of them (EACCES, not ENOEXEC).
      errno = 0;
      EXPECT_EQ(-1, fchmod(fd, 0755));
      EXPECT_EQ(EPERM, errno);
      errno = 0;
      EXPECT_EQ(-1, ExecFd(fd));
      EXPECT_EQ(EACCES, errno);
    }
    // The content never moved.
    ASSERT_EQ(0, capsa_shm_read(&in, 0, got, sizeof got));
    EXPECT_EQ(0x5a, got[0]);
    EXPECT_EQ(0, capsa_shm_close(&in));
    EXPECT_EQ(-1, fcntl(fd, F_GETFD));  // the region owned and closed it
  });
  close(sv[1]);
}

// The other direction: the renderer writes (e.g. a frame), the host maps
// read-only. The renderer can write but never resize, so the host's loads
// can never fault; the host copies content out before trusting it.
TEST(Shm, PeerWritesButCannotShrinkUnderTheHost) {
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(kSize, "frame", CAPSA_SHM_PEER_WRITES, &r));
  EXPECT_FALSE(r.writable);
  void *w;
  EXPECT_EQ(-EACCES, capsa_shm_view_mut(&r, 0, 1, &w));
  // A region the peer writes is not acceptable as a read-only one.
  EXPECT_EQ(-ENOTCAPABLE, capsa_shm_verify(r.fd, kSize, CAPSA_SHM_PEER_READS));

  CAPSA_EXPECT_CHILD_OK([&] {
    capsa_shm_region_t out;
    int fd = dup(r.fd);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, capsa_shm_map_fd(fd, kSize, CAPSA_SHM_PEER_READWRITE, &out));
    errno = 0;
    EXPECT_EQ(-1, ftruncate(fd, 0));
    EXPECT_EQ(EPERM, errno);
    errno = 0;
    EXPECT_EQ(-1, ftruncate(fd, kSize * 2));
    EXPECT_EQ(EPERM, errno);
    // Punching a hole is only a write here (it zeroes; the size stays), so
    // the host's mapping still reads every page without faulting.
    EXPECT_EQ(
        0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, kSize));
    ASSERT_EQ(0, capsa_shm_write(&out, kSize - 4, "pix", 4));
    errno = 0;
    EXPECT_EQ(-1, fcntl(fd, F_ADD_SEALS, CAPSA_SEAL_WRITE));
    EXPECT_EQ(EPERM, errno);
    EXPECT_EQ(0, capsa_shm_close(&out));
  });
  char got[4];
  ASSERT_EQ(0, capsa_shm_read(&r, kSize - 4, got, 4));
  EXPECT_STREQ("pix", got);
  ASSERT_EQ(0, capsa_shm_read(&r, 0, got, 4));  // the hole reads as zeros
  EXPECT_EQ(0, got[0]);
  EXPECT_EQ(0, capsa_shm_close(&r));
}

TEST(Shm, VerifyRefusesWhatIsNotASealedRegion) {
  EXPECT_EQ(-EBADF, capsa_shm_verify(-1, kSize, CAPSA_SHM_PEER_READS));
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
  EXPECT_EQ(-EINVAL, capsa_shm_verify(p[0], kSize, CAPSA_SHM_PEER_READS));
  close(p[0]);
  close(p[1]);
  EXPECT_EQ(-EBADF, capsa_shm_verify(p[0], kSize, CAPSA_SHM_PEER_READS));

  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  EXPECT_EQ(-EINVAL, capsa_shm_verify(sv[0], kSize, CAPSA_SHM_PEER_READS));
  close(sv[0]);
  close(sv[1]);

  // A FIFO must be refused without ever blocking on it.
  char dir[] = "/tmp/capsa-shm-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  int ff = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(ff, 0);
  EXPECT_EQ(-EINVAL, capsa_shm_verify(ff, kSize, CAPSA_SHM_PEER_READS));
  close(ff);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_EQ(-EINVAL, capsa_shm_verify(dfd, kSize, CAPSA_SHM_PEER_READS));
  close(dfd);
  // A regular file of the right size is not a memfd.
  std::string file = std::string(dir) + "/file";
  int rf = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(rf, 0);
  ASSERT_EQ(0, ftruncate(rf, kSize));
  EXPECT_EQ(-EINVAL, capsa_shm_verify(rf, kSize, CAPSA_SHM_PEER_READWRITE));
  close(rf);
  unlink(file.c_str());
  unlink(fifo.c_str());
  rmdir(dir);

  // A memfd without seals: a peer could shrink it under our mapping.
  int m = memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(m, 0);
  ASSERT_EQ(0, ftruncate(m, kSize));
  EXPECT_EQ(-ENOTCAPABLE, capsa_shm_verify(m, kSize, CAPSA_SHM_PEER_READWRITE));
  capsa_shm_region_t out;
  EXPECT_EQ(-ENOTCAPABLE,
            capsa_shm_map_fd(m, kSize, CAPSA_SHM_PEER_READWRITE, &out));
  EXPECT_EQ(nullptr, out.base);
  EXPECT_EQ(0, fcntl(m, F_GETFD) & ~FD_CLOEXEC);  // still the caller's
  close(m);

  // A region of another size, or a size out of range.
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(kSize, "s", CAPSA_SHM_BOTH_WRITE, &r));
  EXPECT_GE(capsa_shm_verify(r.fd, kSize, CAPSA_SHM_PEER_READWRITE), 0);
  EXPECT_EQ(-EMSGSIZE,
            capsa_shm_verify(r.fd, kSize + 4096, CAPSA_SHM_PEER_READWRITE));
  EXPECT_EQ(-EMSGSIZE, capsa_shm_verify(r.fd, 0, CAPSA_SHM_PEER_READWRITE));
  // A read-only descriptor cannot back a writable mapping.
  std::string proc = "/proc/self/fd/" + std::to_string(r.fd);
  int ro = open(proc.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(ro, 0);
  EXPECT_EQ(-EACCES, capsa_shm_verify(ro, kSize, CAPSA_SHM_PEER_READWRITE));
  close(ro);
  EXPECT_EQ(-EINVAL, capsa_shm_verify(r.fd, kSize, (capsa_shm_access_t)0));
  EXPECT_EQ(0, capsa_shm_close(&r));
}

TEST(Shm, ViewsAreBoundsChecked) {
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(kSize, "v", CAPSA_SHM_BOTH_WRITE, &r));
  const void *p;
  void *w;
  EXPECT_EQ(0, capsa_shm_view(&r, 0, kSize, &p));
  EXPECT_EQ(r.base, p);
  EXPECT_EQ(0, capsa_shm_view(&r, kSize, 0, &p));
  EXPECT_EQ((uint8_t *)r.base + kSize, p);
  EXPECT_EQ(0, capsa_shm_view_mut(&r, kSize - 1, 1, &w));
  EXPECT_EQ(-ERANGE, capsa_shm_view(&r, kSize + 1, 0, &p));
  EXPECT_EQ(-ERANGE, capsa_shm_view(&r, 1, kSize, &p));
  EXPECT_EQ(-ERANGE, capsa_shm_view(&r, kSize - 1, 2, &p));
  // Overflowing offset + len must not wrap into range.
  EXPECT_EQ(-ERANGE, capsa_shm_view(&r, 4096, SIZE_MAX - 4095, &p));
  EXPECT_EQ(-ERANGE, capsa_shm_view(&r, SIZE_MAX, 2, &p));
  EXPECT_EQ(-ERANGE, capsa_shm_view_mut(&r, 1, SIZE_MAX, &w));
  char buf[8] = "1234567";
  EXPECT_EQ(0, capsa_shm_write(&r, kSize - 8, buf, 8));
  EXPECT_EQ(-ERANGE, capsa_shm_write(&r, kSize - 7, buf, 8));
  EXPECT_EQ(-ERANGE, capsa_shm_read(&r, SIZE_MAX - 3, buf, 8));
  char got[8];
  EXPECT_EQ(0, capsa_shm_read(&r, kSize - 8, got, 8));
  EXPECT_STREQ("1234567", got);
  EXPECT_EQ(0, capsa_shm_close(&r));
  EXPECT_EQ(-EBADF, capsa_shm_view(&r, 0, 0, &p));
  EXPECT_EQ(-EBADF, capsa_shm_read(&r, 0, got, 1));
  EXPECT_EQ(0, capsa_shm_close(&r));  // idempotent
}

TEST(Shm, ReleaseFdKeepsMappingAndHandsOverTheDescriptor) {
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(kSize, "rel", CAPSA_SHM_BOTH_WRITE, &r));
  int fd = capsa_shm_release_fd(&r);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(-1, r.fd);
  EXPECT_EQ(-EBADF, capsa_shm_release_fd(&r));
  EXPECT_EQ(0, capsa_shm_write(&r, 0, "z", 1));
  EXPECT_EQ(0, capsa_shm_close(&r));
  EXPECT_GE(fcntl(fd, F_GETFD), 0);  // ours now, not closed by the region
  char c = 0;
  EXPECT_EQ(1, pread(fd, &c, 1, 0));
  EXPECT_EQ('z', c);
  close(fd);
}

TEST(Shm, CreateAndCloseLeakNothing) {
  capsa_shm_region_t warm;
  ASSERT_EQ(0, capsa_shm_create(kSize, "w", CAPSA_SHM_BOTH_WRITE, &warm));
  ASSERT_EQ(0, capsa_shm_close(&warm));
  size_t fds = CountDir("/proc/self/fd");
  size_t maps = CountMaps();
  for (int i = 0; i < 200; i++) {
    capsa_shm_region_t r, in, bad;
    ASSERT_EQ(0, capsa_shm_create(kSize, "l", CAPSA_SHM_CREATOR_WRITES, &r));
    int fd = dup(r.fd);
    ASSERT_EQ(0, capsa_shm_map_fd(fd, kSize, CAPSA_SHM_PEER_READS, &in));
    // A failed map leaves the descriptor with the caller and maps nothing.
    int fd2 = dup(r.fd);
    ASSERT_EQ(-EMSGSIZE, capsa_shm_map_fd(fd2, 1, CAPSA_SHM_PEER_READS, &bad));
    EXPECT_EQ(nullptr, bad.base);
    ASSERT_EQ(0, close(fd2));
    ASSERT_EQ(0, capsa_shm_close(&in));
    ASSERT_EQ(0, capsa_shm_close(&r));
  }
  EXPECT_EQ(fds, CountDir("/proc/self/fd"));
  EXPECT_EQ(maps, CountMaps());
}

// A creator done writing drops its mapping and keeps the descriptor: no
// writable alias is left, views fail, the region can still be sent.
TEST(ShmRegion, UnmapKeepsTheDescriptorAndDropsTheAlias) {
  capsa_shm_region_t r;
  ASSERT_EQ(0,
            capsa_shm_create(8192, "unmap-me", CAPSA_SHM_CREATOR_WRITES, &r));
  void *dst = nullptr;
  ASSERT_EQ(0, capsa_shm_view_mut(&r, 0, 4, &dst));
  memcpy(dst, "font", 4);
  ASSERT_EQ(0, capsa_shm_unmap(&r));
  EXPECT_EQ(nullptr, r.base);
  EXPECT_FALSE(r.writable);
  EXPECT_EQ(-EBADF, capsa_shm_view_mut(&r, 0, 4, &dst));
  EXPECT_EQ(-EINVAL, capsa_shm_unmap(&r));  // not mapped any more
  EXPECT_EQ(-EINVAL, capsa_shm_unmap(nullptr));
  FILE *maps = fopen("/proc/self/maps", "re");
  ASSERT_NE(nullptr, maps);
  char line[512];
  while (fgets(line, sizeof line, maps))
    EXPECT_EQ(nullptr, strstr(line, "memfd:unmap-me")) << line;
  fclose(maps);
  // The bytes are still there for a reader.
  char got[4] = {};
  EXPECT_EQ(4, pread(r.fd, got, 4, 0));
  EXPECT_EQ(0, memcmp("font", got, 4));
  EXPECT_EQ(0, capsa_shm_close(&r));
}

}  // namespace

namespace {

bool AllZero(const capsa_shm_region_t *r) {
  const void *p;
  if (capsa_shm_view(r, 0, r->size, &p) < 0) return false;
  for (size_t i = 0; i < r->size; i++)
    if (static_cast<const uint8_t *>(p)[i] != 0) return false;
  return true;
}

}  // namespace

// A region reused for another job once its last peer is gone must not carry
// that peer's bytes: the host clears even a region it may not write itself
// (the peer's output), and one it filled (its tail would leak otherwise).
TEST(Shm, ClearZeroesARegionTheHostCannotWrite) {
  capsa_shm_region_t host, peer;
  ASSERT_EQ(0, capsa_shm_create(3 * 4096, "out", CAPSA_SHM_PEER_WRITES, &host));
  EXPECT_FALSE(host.writable);
  int fd = dup(host.fd);
  ASSERT_EQ(0,
            capsa_shm_map_fd(fd, host.size, CAPSA_SHM_PEER_READWRITE, &peer));
  void *dst;
  ASSERT_EQ(0, capsa_shm_view_mut(&peer, 0, peer.size, &dst));
  memset(dst, 'x', peer.size);
  EXPECT_EQ(-EACCES, capsa_shm_write(&host, 0, "", 1)) << "not through capsa";
  ASSERT_FALSE(AllZero(&host));
  ASSERT_EQ(0, capsa_shm_close(&peer));
  EXPECT_EQ(0, capsa_shm_clear(&host));
  EXPECT_TRUE(AllZero(&host));
  struct stat st;
  ASSERT_EQ(0, fstat(host.fd, &st));
  EXPECT_EQ((off_t)(3 * 4096), st.st_size) << "the size is sealed and kept";
  capsa_shm_close(&host);

  capsa_shm_region_t in;
  ASSERT_EQ(0, capsa_shm_create(4096, "in", CAPSA_SHM_CREATOR_WRITES, &in));
  ASSERT_EQ(0, capsa_shm_write(&in, 0, "secret", 6));
  EXPECT_EQ(0, capsa_shm_clear(&in)) << "write-sealed: through the mapping";
  EXPECT_TRUE(AllZero(&in));
  ASSERT_EQ(0, capsa_shm_write(&in, 0, "secret", 6));
  ASSERT_EQ(0, capsa_shm_unmap(&in));
  EXPECT_EQ(-EPERM, capsa_shm_clear(&in))
      << "write-sealed and no writable mapping left: a new region it is";
  capsa_shm_close(&in);
  EXPECT_EQ(-EINVAL, capsa_shm_clear(nullptr));
}
