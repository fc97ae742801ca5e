// Everything capability mode refuses, with the errno the caller sees. Each
// test enters capability mode in a forked child.
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <string>

#include "tests/harness/child.h"
#include "tests/sandbox/capmode_test_util.h"

namespace {

TEST(CapModeRefuses, PathsFromTheGlobalNamespace) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    // Allowed before entering: the refusals below are capability mode's.
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_LE(0, fd);
    close(fd);
    ENTER_CAPMODE();
    struct stat st;
    char buf[64];
    EXPECT_ERRNO(ECAPMODE, open("/etc/passwd", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, open("relative", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, creat("/tmp/capsa-x", 0600));
    EXPECT_ERRNO(ECAPMODE, openat(AT_FDCWD, "/etc/passwd", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, openat(AT_FDCWD, "x", O_RDONLY));
    // AT_FDCWD sign-extended and zero-extended to 64 bits: both refused.
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_openat, (long)-100, "x", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_openat, 0xffffff9cL, "x", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_stat, "/", &st));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_lstat, "/", &st));
    EXPECT_ERRNO(ECAPMODE, fstatat(AT_FDCWD, "/", &st, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_access, "/", F_OK));
    EXPECT_ERRNO(ECAPMODE, faccessat(AT_FDCWD, "/", F_OK, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_readlink, "/proc/self/exe", buf, 64));
    EXPECT_ERRNO(ECAPMODE, readlinkat(AT_FDCWD, "/proc/self/exe", buf, 64));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_unlink, "/tmp/capsa-x"));
    EXPECT_ERRNO(ECAPMODE, unlinkat(AT_FDCWD, "/tmp/capsa-x", 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/tmp/capsa-d", 0700));
    EXPECT_ERRNO(ECAPMODE, mkdirat(AT_FDCWD, "/tmp/capsa-d", 0700));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_rmdir, "/tmp"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_rename, "/tmp/a", "/tmp/b"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_link, "/tmp/a", "/tmp/b"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_symlink, "/tmp/a", "/tmp/b"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_chmod, "/tmp", 0777));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_truncate, "/tmp/a", 0));
    EXPECT_ERRNO(ECAPMODE, chdir("/"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_getcwd, buf, sizeof(buf)));
    EXPECT_ERRNO(ECAPMODE, chroot("/"));
    struct statfs_buf {
      char b[256];
    } sfs;
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_statfs, "/", &sfs));
  }));
}

// Fixture: a fresh directory with a file, a subdirectory and a symlink that
// points outside it.
class CapModeDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/capsa-capmode-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir_ = tmpl;
    ASSERT_EQ(0, mkdir((dir_ + "/sub").c_str(), 0700));
    int fd = open((dir_ + "/file").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_LE(0, fd);
    ASSERT_EQ(5, write(fd, "hello", 5));
    close(fd);
    ASSERT_EQ(0, symlink("/etc", (dir_ + "/escape").c_str()));
    // Unprivileged pass: the files must stay reachable by uid 65534.
    chmod(dir_.c_str(), 0755);
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(0, system(cmd.c_str()));
  }
  std::string dir_;
};

TEST_F(CapModeDir, AtCallsStayBeneathAHeldDirectory) {
  std::string dir = dir_;
  CAPSA_EXPECT_CHILD_OK(([dir] {
    REQUIRE_SECCOMP();
    REQUIRE_LANDLOCK(1);
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_LE(0, dfd);
    int subfd = openat(dfd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_LE(0, subfd);
    // Reachable before entering: the refusals below are Landlock's.
    int probe = openat(dfd, "escape/hostname", O_RDONLY | O_CLOEXEC);
    if (probe >= 0) close(probe);
    ENTER_CAPMODE();
    // Keeps working beneath the held directory.
    int fd = openat(dfd, "file", O_RDONLY | O_CLOEXEC);
    ASSERT_LE(0, fd);
    char buf[8] = {0};
    EXPECT_EQ(5, read(fd, buf, sizeof(buf)));
    EXPECT_STREQ("hello", buf);
    close(fd);
    fd = openat(dfd, "sub/new", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    ASSERT_LE(0, fd);
    EXPECT_EQ(3, write(fd, "abc", 3));
    close(fd);
    struct stat st;
    EXPECT_OK(fstatat(dfd, "sub/new", &st, 0));
    EXPECT_EQ(3, st.st_size);
    EXPECT_OK(mkdirat(dfd, "made", 0700));
    EXPECT_OK(renameat(dfd, "sub/new", dfd, "moved"));
    EXPECT_OK(unlinkat(dfd, "moved", 0));
    EXPECT_OK(unlinkat(dfd, "made", AT_REMOVEDIR));
    // Escapes: "..", absolute paths, symlinks out. Landlock answers EACCES
    // where FreeBSD answers ENOTCAPABLE (docs/freebsd-differences.md).
    EXPECT_ERRNO(EACCES, openat(dfd, "../", O_RDONLY | O_DIRECTORY));
    EXPECT_ERRNO(EACCES, openat(subfd, "../../../etc/passwd", O_RDONLY));
    EXPECT_ERRNO(EACCES, openat(dfd, "/etc/passwd", O_RDONLY));
    EXPECT_ERRNO(EACCES, openat(dfd, "escape/passwd", O_RDONLY));
    EXPECT_ERRNO(EACCES, mkdirat(dfd, "../capsa-escape-dir", 0700));
    // ".." that stays beneath the held directory is fine (sub -> dir).
    fd = openat(subfd, "../file", O_RDONLY | O_CLOEXEC);
    EXPECT_LE(0, fd);
    if (fd >= 0) close(fd);
    // Devices cannot be created even beneath a held directory.
    EXPECT_ERRNO(EACCES, mknodat(dfd, "dev", S_IFCHR | 0600, makedev(1, 3)));
    // No executing anything: execveat on a held directory's file.
    char *argv[] = {nullptr};
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_execveat, dfd, "file", argv, argv, 0));
  }));
}

TEST(CapModeRefuses, OtherProcesses) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    pid_t parent = getppid();
    ENTER_CAPMODE();
    EXPECT_ERRNO(ECAPMODE, kill(parent, 0));
    EXPECT_ERRNO(ECAPMODE, kill(1, 0));
    EXPECT_ERRNO(ECAPMODE, kill(-1, SIGKILL));
    EXPECT_ERRNO(ECAPMODE, kill(0, SIGKILL));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_tgkill, parent, parent, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_tkill, parent, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_ptrace, 16 /* ATTACH */, parent, 0, 0));
    char buf[8];
    struct iovec local = {buf, sizeof(buf)}, remote = {buf, sizeof(buf)};
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_process_vm_readv, parent, &local, 1,
                                   &remote, 1, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_process_vm_writev, parent, &local, 1,
                                   &remote, 1, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_kcmp, getpid(), parent, 0, 0, 0));
    struct rlimit rl;
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_prlimit64, parent, RLIMIT_NOFILE, nullptr, &rl));
    EXPECT_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &rl));
    EXPECT_ERRNO(ECAPMODE, setpriority(PRIO_PROCESS, parent, 10));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_getpriority, PRIO_PROCESS, parent));
    cpu_set_t set;
    CPU_ZERO(&set);
    EXPECT_OK(sched_getaffinity(0, sizeof(set), &set));
    EXPECT_ERRNO(ECAPMODE, sched_setaffinity(parent, sizeof(set), &set));
    EXPECT_OK(sched_setaffinity(0, sizeof(set), &set));
    struct sched_param sp = {0};
    EXPECT_ERRNO(ECAPMODE, sched_setscheduler(parent, SCHED_OTHER, &sp));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_pidfd_open, parent, 0));
  }));
}

TEST(CapModeRefuses, Network) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    // A TCP socket held from before: it still cannot reach an address.
    int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_LE(0, tcp);
    ENTER_CAPMODE();
    EXPECT_ERRNO(ECAPMODE, socket(AF_INET, SOCK_STREAM, 0));
    EXPECT_ERRNO(ECAPMODE, socket(AF_INET6, SOCK_DGRAM, 0));
    EXPECT_ERRNO(ECAPMODE, socket(AF_NETLINK, SOCK_RAW, 0));
    EXPECT_ERRNO(ECAPMODE, socket(AF_PACKET, SOCK_RAW, 0));
    EXPECT_ERRNO(ECAPMODE, socket(AF_UNIX, SOCK_DGRAM, 0));
    int sp[2];
    EXPECT_ERRNO(ECAPMODE, socketpair(AF_UNIX, SOCK_DGRAM, 0, sp));
    EXPECT_ERRNO(ECAPMODE, socketpair(AF_INET, SOCK_STREAM, 0, sp));
    struct sockaddr_in in = {};
    in.sin_family = AF_INET;
    in.sin_port = htons(80);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_ERRNO(ECAPMODE, connect(tcp, (struct sockaddr *)&in, sizeof(in)));
    EXPECT_ERRNO(ECAPMODE, bind(tcp, (struct sockaddr *)&in, sizeof(in)));
    EXPECT_ERRNO(ECAPMODE, listen(tcp, 1));
    EXPECT_ERRNO(ECAPMODE,
                 sendto(tcp, "x", 1, 0, (struct sockaddr *)&in, sizeof(in)));
    int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_LE(0, u);
    struct sockaddr_un un = {};
    un.sun_family = AF_UNIX;
    memcpy(un.sun_path, "\0capsa-test", 11);  // abstract
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + 11;
    EXPECT_ERRNO(ECAPMODE, connect(u, (struct sockaddr *)&un, len));
    EXPECT_ERRNO(ECAPMODE, bind(u, (struct sockaddr *)&un, len));
    strcpy(un.sun_path, "/tmp/capsa-sock");
    EXPECT_ERRNO(ECAPMODE, connect(u, (struct sockaddr *)&un, sizeof(un)));
  }));
}

// A datagram socket held from before entering could name an abstract
// address in sendmsg(), which seccomp cannot read: Landlock's scope (ABI 6)
// refuses it, with EPERM.
TEST(CapModeRefuses, AbstractUnixThroughHeldDatagramSocket) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    REQUIRE_LANDLOCK(6);
    int server = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int client = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_LE(0, server);
    ASSERT_LE(0, client);
    struct sockaddr_un un = {};
    un.sun_family = AF_UNIX;
    char name[32];
    int n = snprintf(name + 1, sizeof(name) - 1, "capsa-%d", getpid()) + 1;
    name[0] = '\0';
    memcpy(un.sun_path, name, n);
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + n;
    ASSERT_EQ(0, bind(server, (struct sockaddr *)&un, len));
    // Works before entering.
    ASSERT_EQ(1, sendto(client, "a", 1, 0, (struct sockaddr *)&un, len));
    ENTER_CAPMODE();
    struct iovec iov = {(void *)"b", 1};
    struct msghdr msg = {};
    msg.msg_name = &un;
    msg.msg_namelen = len;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    EXPECT_ERRNO(EPERM, sendmsg(client, &msg, 0));
  }));
}

TEST(CapModeRefuses, SysVIpcAndMessageQueues) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    EXPECT_ERRNO(ECAPMODE, shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
    EXPECT_ERRNO(ECAPMODE, shmat(0, nullptr, 0) == (void *)-1 ? -1 : 0);
    EXPECT_ERRNO(ECAPMODE, semget(IPC_PRIVATE, 1, IPC_CREAT | 0600));
    EXPECT_ERRNO(ECAPMODE, msgget(IPC_PRIVATE, IPC_CREAT | 0600));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mq_open, "capsa", O_RDONLY, 0, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mq_unlink, "capsa"));
  }));
}

TEST(CapModeRefuses, SystemCalls) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_umount2, "/mnt", 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_pivot_root, "/", "/"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_chroot, "/"));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_unshare, CLONE_NEWUSER));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_unshare, CLONE_NEWNET));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setns, 0, 0));
    // clone with namespace flags (raw: the child would run on our stack).
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0));
    // clone3's flags are in memory seccomp cannot read: ENOSYS makes glibc
    // fall back to clone.
    struct clone_args ca = {};
    ca.flags = CLONE_NEWUSER;
    ca.exit_signal = SIGCHLD;
    EXPECT_ERRNO(ENOSYS, syscall(SYS_clone3, &ca, sizeof(ca)));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_init_module, nullptr, 0, ""));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_finit_module, 0, "", 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_delete_module, "x", 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_kexec_load, 0, 0, nullptr, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_bpf, 0, nullptr, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_userfaultfd, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_io_uring_setup, 1, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_io_uring_enter, 0, 0, 0, 0, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_io_uring_register, 0, 0, nullptr, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_keyctl, 0, 0, 0, 0, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_add_key, "user", "d", "x", 1, -4));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_request_key, "user", "d", nullptr, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_ioperm, 0, 1, 1));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_iopl, 3));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_personality, 0x0400000 /*RIE*/));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_reboot, 0, 0, 0, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_acct, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_swapon, "/swap", 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_swapoff, "/swap"));
    struct timespec ts = {0, 0};
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_settimeofday, nullptr, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_adjtimex, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_quotactl, 0, "/", 0, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_syslog, 3, nullptr, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_sethostname, "x", 1));
  }));
}

TEST(CapModeRefuses, ExecAndCredentials) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    char *argv[] = {(char *)"true", nullptr};
    char *envp[] = {nullptr};
    EXPECT_ERRNO(ECAPMODE, execve("/bin/true", argv, envp));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setuid, getuid()));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setgid, getgid()));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setresuid, -1, -1, -1));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setreuid, -1, -1));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setfsuid, getuid()));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setgroups, 0, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_capset, nullptr, nullptr));
    // Reading credentials keeps working.
    EXPECT_OK(getuid());
    // capget reaches the kernel (EFAULT for the NULL header, not ECAPMODE).
    EXPECT_ERRNO(EFAULT, syscall(SYS_capget, nullptr, nullptr));
  }));
}

TEST(CapModeRefuses, NewExecutableMappings) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    EXPECT_EQ(MAP_FAILED, mmap(nullptr, 4096, PROT_READ | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_EQ(ECAPMODE, errno);
    void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, p);
    EXPECT_ERRNO(ECAPMODE, mprotect(p, 4096, PROT_READ | PROT_EXEC));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_pkey_mprotect, p, 4096,
                                   PROT_READ | PROT_EXEC, -1));
    EXPECT_OK(mprotect(p, 4096, PROT_READ));
    munmap(p, 4096);
  }));
}

// TIOCSTI injects input into a terminal; CVE-2019-10063 passed it with high
// bits set to filters comparing 64 bits. The filter compares the low 32.
TEST(CapModeRefuses, TerminalInjection) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    int fd[2];
    ASSERT_EQ(0, pipe(fd));
    ENTER_CAPMODE();
    char c = 'x';
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_ioctl, fd[0], TIOCSTI, &c));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_ioctl, fd[0], (1UL << 32) | TIOCSTI, &c));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_ioctl, fd[0], 0xffffffff00000000UL | TIOCSTI, &c));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_ioctl, fd[0], TIOCLINUX, &c));
    // A descriptor-local ioctl keeps working, also with high bits set.
    int n = -1;
    EXPECT_OK(ioctl(fd[0], FIONREAD, &n));
    EXPECT_EQ(0, n);
    EXPECT_OK(syscall(SYS_ioctl, fd[0], (1UL << 32) | FIONREAD, &n));
  }));
}

// The architecture check: i386 (int 0x80) and x32 calls never reach the
// x86_64 rows.
TEST(CapModeRefuses, I386Syscalls) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    // Probed in a child: where the entry is absent int 0x80 faults.
    const struct capsa_features *f = capsa_features_get();
    if (!f->i386_entry) GTEST_SKIP() << "i386 entry: " << f->i386_detail;
    long before = 20;  // i386 getpid
    __asm__ volatile("int $0x80"
                     : "+a"(before)
                     :
                     : "memory", "rcx", "r8", "r9", "r10", "r11");
    EXPECT_EQ(getpid(), before);
    ENTER_CAPMODE();
    long after = 20;
    __asm__ volatile("int $0x80"
                     : "+a"(after)
                     :
                     : "memory", "rcx", "r8", "r9", "r10", "r11");
    EXPECT_EQ(-ECAPMODE, after);
    // i386 open (5) of a path.
    long fd = 5;
    __asm__ volatile("int $0x80"
                     : "+a"(fd)
                     : "b"("/etc/passwd"), "c"(0L)
                     : "memory", "r8", "r9", "r10", "r11");
    EXPECT_EQ(-ECAPMODE, fd);
  }));
}

TEST(CapModeRefuses, X32Syscalls) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    const long kX32 = 0x40000000;
    errno = 0;
    long before = syscall(kX32 | SYS_getpid);
    int before_errno = errno;
    // Either the kernel has x32 (the pid) or not (ENOSYS); both are fine
    // outside capability mode.
    EXPECT_TRUE(before == getpid() || (before == -1 && before_errno == ENOSYS));
    ENTER_CAPMODE();
    EXPECT_ERRNO(ECAPMODE, syscall(kX32 | SYS_getpid));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(kX32 | SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY));
  }));
}

// A launcher's policy grants only the directories it names, whatever else
// the child holds.
TEST_F(CapModeDir, PolicyGrantsOnlyNamedDirectories) {
  std::string dir = dir_;
  CAPSA_EXPECT_CHILD_OK(([dir] {
    REQUIRE_SECCOMP();
    REQUIRE_LANDLOCK(1);
    int granted = open((dir + "/sub").c_str(), O_RDONLY | O_DIRECTORY);
    int other = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_LE(0, granted);
    ASSERT_LE(0, other);
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(0, capsa_capmode_policy_allow_dir(p, granted));
    ASSERT_EQ(0, capsa_capmode_policy_compile(p));
    struct capsa_capmode_report r;
    ASSERT_EQ(0, capsa_capmode_policy_report(p, &r));
    EXPECT_EQ(1u, r.landlock_dirs);
    ASSERT_EQ(0, capsa_capmode_policy_enter(p));
    int fd = openat(granted, "made", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    EXPECT_LE(0, fd);
    EXPECT_ERRNO(EACCES, openat(other, "file", O_RDONLY));
    capsa_capmode_policy_free(p);
  }));
}

}  // namespace
