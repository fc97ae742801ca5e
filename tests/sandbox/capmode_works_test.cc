// What keeps working in capability mode, and inheritance by threads and
// children.
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "tests/harness/child.h"
#include "tests/sandbox/capmode_test_util.h"

namespace {

TEST(CapModeWorks, PipesMemfdAndHeldDescriptors) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    int held[2];
    ASSERT_EQ(0, pipe2(held, O_CLOEXEC));
    ENTER_CAPMODE();
    EXPECT_EQ(3, write(held[1], "abc", 3));
    char buf[4] = {0};
    EXPECT_EQ(3, read(held[0], buf, 3));
    EXPECT_STREQ("abc", buf);
    int p[2];
    ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
    struct iovec iov = {(void *)"xyz", 3};
    EXPECT_EQ(3, writev(p[1], &iov, 1));
    EXPECT_EQ(3, read(p[0], buf, 3));
    struct stat st;
    EXPECT_OK(fstat(p[0], &st));
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_OK(fcntl(p[0], F_GETFL));
    int d = dup(p[0]);
    EXPECT_LE(0, d);
    close(d);
    // Anonymous shared memory: memfd, sized, mapped, sealed.
    int m = memfd_create("capsa-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ASSERT_LE(0, m);
    ASSERT_EQ(0, ftruncate(m, 4096));
    char *mem =
        (char *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
    ASSERT_NE(MAP_FAILED, (void *)mem);
    mem[0] = 'q';
    EXPECT_EQ(1, pread(m, buf, 1, 0));
    EXPECT_EQ('q', buf[0]);
    EXPECT_OK(fcntl(m, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK));
    EXPECT_ERRNO(EPERM, ftruncate(m, 8192));
    munmap(mem, 4096);
    EXPECT_OK(close(m));
  }));
}

TEST(CapModeWorks, UnixSocketpairsAndDescriptorPassing) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    int sv[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
    int st[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, st));
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
    EXPECT_LE(0, s);
    close(s);
    int m = memfd_create("passed", MFD_CLOEXEC);
    ASSERT_LE(0, m);
    char cbuf[CMSG_SPACE(sizeof(int))] = {};
    struct iovec iov = {(void *)"h", 1};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof(cbuf);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &m, sizeof(int));
    EXPECT_EQ(1, sendmsg(sv[0], &msg, 0));
    char b;
    struct iovec riov = {&b, 1};
    char rbuf[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr rmsg = {};
    rmsg.msg_iov = &riov;
    rmsg.msg_iovlen = 1;
    rmsg.msg_control = rbuf;
    rmsg.msg_controllen = sizeof(rbuf);
    EXPECT_EQ(1, recvmsg(sv[1], &rmsg, MSG_CMSG_CLOEXEC));
    struct cmsghdr *rc = CMSG_FIRSTHDR(&rmsg);
    ASSERT_NE(nullptr, rc);
    int got;
    memcpy(&got, CMSG_DATA(rc), sizeof(int));
    struct stat a, bst;
    EXPECT_OK(fstat(m, &a));
    EXPECT_OK(fstat(got, &bst));
    EXPECT_EQ(a.st_ino, bst.st_ino);
    EXPECT_EQ(1, send(st[0], "z", 1, 0));
    EXPECT_EQ(1, recv(st[1], &b, 1, 0));
    EXPECT_EQ(1, sendto(st[0], "z", 1, 0, nullptr, 0));
  }));
}

static void *thread_body(void *arg) {
  auto *out = static_cast<int *>(arg);
  // Inherited by the thread: refused here too.
  errno = 0;
  int fd = open("/etc/passwd", O_RDONLY);
  out[0] = fd;
  out[1] = errno;
  unsigned mode = 0;
  capsa_cap_getmode(&mode);
  out[2] = (int)mode;
  return nullptr;
}

TEST(CapModeWorks, ThreadsFutexesAndInheritance) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    int out[3] = {0, 0, 0};
    pthread_t t;
    ASSERT_EQ(0, pthread_create(&t, nullptr, thread_body, out));
    ASSERT_EQ(0, pthread_join(t, nullptr));
    EXPECT_EQ(-1, out[0]);
    EXPECT_EQ(ECAPMODE, out[1]);
    EXPECT_EQ(1, out[2]);
    // Mutex + condition variable across threads (futex).
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    static int ready = 0;
    pthread_t t2;
    ASSERT_EQ(0, pthread_create(
                     &t2, nullptr,
                     [](void *) -> void * {
                       pthread_mutex_lock(&mu);
                       ready = 1;
                       pthread_cond_signal(&cv);
                       pthread_mutex_unlock(&mu);
                       return nullptr;
                     },
                     nullptr));
    pthread_mutex_lock(&mu);
    while (!ready) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    EXPECT_EQ(0, pthread_join(t2, nullptr));
  }));
}

// A thread that exists before entering follows too (seccomp TSYNC).
TEST(CapModeWorks, ExistingThreadFollows) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    static std::atomic<int> stage{0};
    static int result[2];
    pthread_t t;
    ASSERT_EQ(0, pthread_create(
                     &t, nullptr,
                     [](void *) -> void * {
                       while (stage.load() == 0) usleep(1000);
                       errno = 0;
                       result[0] = open("/etc/passwd", O_RDONLY);
                       result[1] = errno;
                       return nullptr;
                     },
                     nullptr));
    // The Landlock gap for threads that already exist is reported.
    int err_pipe[2];
    ASSERT_EQ(0, pipe2(err_pipe, O_NONBLOCK));
    int saved = dup(2);
    ASSERT_EQ(2, dup2(err_pipe[1], 2));
    int rc = capsa_cap_enter();
    dup2(saved, 2);
    ASSERT_EQ(0, rc);
    char msg[256] = {0};
    if (capsa_features_get()->landlock_abi > 0) {
      EXPECT_LT(0, read(err_pipe[0], msg, sizeof(msg) - 1));
      EXPECT_NE(nullptr, strstr(msg, "Landlock confines only the calling"))
          << msg;
    }
    stage.store(1);
    ASSERT_EQ(0, pthread_join(t, nullptr));
    EXPECT_EQ(-1, result[0]);
    EXPECT_EQ(ECAPMODE, result[1]);
  }));
}

TEST(CapModeWorks, ForkedChildInherits) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    int p[2];
    ASSERT_EQ(0, pipe(p));
    pid_t pid = fork();
    ASSERT_LE(0, pid);
    if (pid == 0) {
      unsigned mode = 0;
      capsa_cap_getmode(&mode);
      errno = 0;
      int fd = open("/etc/passwd", O_RDONLY);
      char r[2] = {(char)mode, (char)(fd == -1 && errno == ECAPMODE)};
      ssize_t w = write(p[1], r, 2);
      _exit(w == 2 ? 0 : 3);
    }
    char r[2] = {0, 0};
    EXPECT_EQ(2, read(p[0], r, 2));
    EXPECT_EQ(1, r[0]);
    EXPECT_EQ(1, r[1]);
    int status = 0;
    EXPECT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }));
}

TEST(CapModeWorks, ClocksSleepRandomSignalsToSelf) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    struct timespec ts;
    EXPECT_OK(clock_gettime(CLOCK_MONOTONIC, &ts));
    EXPECT_OK(clock_gettime(CLOCK_REALTIME, &ts));
    EXPECT_OK(syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &ts));
    struct timespec d = {0, 1000};
    EXPECT_OK(nanosleep(&d, nullptr));
    EXPECT_OK(clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr));
    char rnd[16];
    EXPECT_EQ(16, getrandom(rnd, sizeof(rnd), 0));
    static volatile sig_atomic_t got = 0;
    signal(SIGUSR1, [](int) { got = 1; });
    EXPECT_OK(raise(SIGUSR1));
    EXPECT_EQ(1, got);
    got = 0;
    EXPECT_OK(kill(getpid(), SIGUSR1));
    EXPECT_EQ(1, got);
    got = 0;
    EXPECT_OK(pthread_kill(pthread_self(), SIGUSR1));
    EXPECT_EQ(1, got);
    EXPECT_OK(getppid());
    EXPECT_OK(sched_yield());
    // The harness already made this child a session leader: EPERM from the
    // kernel, not ECAPMODE.
    EXPECT_ERRNO(EPERM, setsid());
    EXPECT_ERRNO(ECAPMODE, setpgid(getppid(), 0));
    void *heap = malloc(1 << 20);  // mmap-backed
    EXPECT_NE(nullptr, heap);
    free(heap);
  }));
}

TEST(CapModeWorks, ExitStatusReachesTheParent) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    pid_t pid = fork();
    ASSERT_LE(0, pid);
    if (pid == 0) {
      if (capsa_cap_enter() != 0) _exit(1);
      _exit(42);  // exit_group (exit() would run LSan at exit under asan)
    }
    int status = 0;
    EXPECT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(42, WEXITSTATUS(status));
  }));
}

// pdgetpid() works in capability mode: PIDFD_GET_INFO (any struct size) on
// a held pidfd; other ioctls of the same magic (namespaces) stay refused.
TEST(CapModeWorks, PidfdGetInfo) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (pidfd < 0) GTEST_SKIP() << "no pidfd_open";
    struct {
      uint64_t mask, cgroupid;
      uint32_t pid, rest[13];
    } info = {};
    info.mask = 1;
    const unsigned long kGetInfo = 0xC040FF0Bul;
    if (ioctl(pidfd, kGetInfo, &info) != 0)
      GTEST_SKIP() << "kernel without PIDFD_GET_INFO";
    ENTER_CAPMODE();
    info = {};
    info.mask = 1;
    EXPECT_OK(ioctl(pidfd, kGetInfo, &info));
    EXPECT_EQ((uint32_t)getpid(), info.pid);
    EXPECT_ERRNO(ECAPMODE,
                 ioctl(pidfd, 0xFF01ul /* PIDFD_GET_CGROUP_NAMESPACE */, 0));
  }));
}

}  // namespace
