// sandbox/launcher/namespaces.h: a real child in new namespaces with an empty
// root, checked from inside (what it sees) and from outside (/proc).
#include "sandbox/launcher/namespaces.h"
#include "sandbox/launcher/ns_probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "tests/harness/child.h"
#include "tests/host/ptrace_cap.h"

namespace {

// What the child saw, written to its fd 3.
struct Seen {
  int pid;
  int uid;
  int root_entries;  // entries of "/" other than . and ..
  int root_readonly;
  int mkdir_errno;
  int fd4_errno;  // fcntl(4, F_GETFD): EBADF when closed
  int open_etc_errno;
};

int ChildMain(void *) {
  Seen s;
  memset(&s, 0, sizeof s);
  s.pid = getpid();
  s.uid = (int)getuid();
  DIR *d = opendir("/");
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) s.root_entries++;
    closedir(d);
  } else {
    s.root_entries = -1;
  }
  struct statvfs sv;
  s.root_readonly = statvfs("/", &sv) == 0 && (sv.f_flag & ST_RDONLY);
  s.mkdir_errno = mkdir("/x", 0700) == 0 ? 0 : errno;
  s.fd4_errno = fcntl(4, F_GETFD) >= 0 ? 0 : errno;
  s.open_etc_errno = open("/etc/passwd", O_RDONLY) >= 0 ? 0 : errno;
  if (write(3, &s, sizeof s) != (ssize_t)sizeof s) return 2;
  return 0;
}

unsigned AvailableOrSkip() {
  unsigned a = capsa_ns_available();
  return a;
}

TEST(Namespaces, PolicyRejectsRequiredOutsideWanted) {
  capsa_ns_policy *p = capsa_ns_policy_new();
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(-EINVAL, capsa_ns_policy_set_namespaces(p, CAPSA_NAMESPACE_USER,
                                                    CAPSA_NAMESPACE_NET));
  EXPECT_EQ(-EINVAL, capsa_ns_policy_set_namespaces(p, 0x100, 0));
  EXPECT_EQ(0, capsa_ns_policy_keep_fd(p, 0, 3));
  EXPECT_EQ(-EINVAL, capsa_ns_policy_keep_fd(p, 1, 3));  // target twice
  EXPECT_EQ(-EINVAL, capsa_ns_policy_keep_fd(p, -1, 4));
  EXPECT_EQ(-EINVAL, capsa_ns_policy_set_empty_root(p, false, true));
  capsa_ns_policy_free(p);
}

TEST(Namespaces, ChildInEveryNamespaceWithEmptyRoot) {
  unsigned avail = AvailableOrSkip();
  if (!(avail & CAPSA_NAMESPACE_USER) || !(avail & CAPSA_NAMESPACE_MOUNT))
    GTEST_SKIP() << "no user/mount namespaces here";
  int pipefd[2];
  ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
  int decoy = open("/dev/null", O_RDONLY);  // must not reach the child
  ASSERT_GE(decoy, 0);
  capsa_ns_policy *p = capsa_ns_policy_new();
  ASSERT_EQ(0, capsa_ns_policy_set_namespaces(
                   p, CAPSA_NAMESPACE_ALL,
                   CAPSA_NAMESPACE_USER | CAPSA_NAMESPACE_MOUNT));
  ASSERT_EQ(0, capsa_ns_policy_set_empty_root(p, true, true));
  ASSERT_EQ(0, capsa_ns_policy_keep_fd(p, pipefd[1], 3));
  capsa_ns_child c;
  capsa_ns_report rep;
  ASSERT_EQ(0, capsa_ns_spawn(p, ChildMain, nullptr, &c, &rep));
  close(pipefd[1]);
  capsa_ns_policy_free(p);

  EXPECT_EQ(avail, rep.applied);
  EXPECT_TRUE(rep.empty_root);
  EXPECT_TRUE(rep.fds_closed);
  EXPECT_TRUE(rep.uid_mapped);
  EXPECT_EQ(geteuid() == 0 ? 65534u : geteuid(), rep.uid_outside);
  char line[256];
  ASSERT_GT(capsa_ns_report_format(&rep, line, sizeof line), 0);
  EXPECT_NE(nullptr, strstr(line, "user=yes")) << line;
  EXPECT_NE(nullptr, strstr(line, "root=empty-ro")) << line;

  Seen s;
  ASSERT_EQ((ssize_t)sizeof s, read(pipefd[0], &s, sizeof s));
  if (avail & CAPSA_NAMESPACE_PID) {
    EXPECT_EQ(1, s.pid);
  }
  EXPECT_EQ(0, s.uid);
  EXPECT_EQ(0, s.root_entries);
  EXPECT_EQ(1, s.root_readonly);
  EXPECT_EQ(EROFS, s.mkdir_errno);
  EXPECT_EQ(EBADF, s.fd4_errno);
  EXPECT_EQ(ENOENT, s.open_etc_errno);

  siginfo_t si;
  memset(&si, 0, sizeof si);
  ASSERT_EQ(0, waitid((idtype_t)P_PIDFD, c.pidfd, &si, WEXITED));
  EXPECT_EQ(CLD_EXITED, si.si_code);
  EXPECT_EQ(0, si.si_status);
  close(c.pidfd);
  close(pipefd[0]);
  close(decoy);
}

int SleepMain(void *) {
  pause();
  return 0;
}

TEST(Namespaces, OutsideViewSeesEveryAppliedNamespace) {
  CAPSA_SKIP_IF_ROOT_WITHOUT_PTRACE();
  unsigned avail = AvailableOrSkip();
  if (!(avail & CAPSA_NAMESPACE_USER)) GTEST_SKIP() << "no user namespaces";
  capsa_ns_policy *p = capsa_ns_policy_new();
  ASSERT_EQ(0, capsa_ns_policy_set_namespaces(p, avail, 0));
  capsa_ns_child c;
  capsa_ns_report rep;
  ASSERT_EQ(0, capsa_ns_spawn(p, SleepMain, nullptr, &c, &rep));
  capsa_ns_policy_free(p);
  EXPECT_EQ((int)avail, capsa_ns_of_pid_differ(c.pid));
  // The snapshot form says the same, and a snapshot equals itself.
  capsa_ns_ids theirs, ours;
  ASSERT_EQ(0, capsa_ns_ids_of(c.pid, &theirs));
  ASSERT_EQ(0, capsa_ns_ids_of(0, &ours));
  EXPECT_EQ(avail, capsa_ns_ids_differ(&theirs, &ours));
  EXPECT_EQ(0u, capsa_ns_ids_differ(&ours, &ours));
  EXPECT_EQ(-EINVAL, capsa_ns_ids_of(-1, &ours));
  EXPECT_EQ(0,
            (int)syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0));
  siginfo_t si;
  memset(&si, 0, sizeof si);
  ASSERT_EQ(0, waitid((idtype_t)P_PIDFD, c.pidfd, &si, WEXITED));
  EXPECT_EQ(CLD_KILLED, si.si_code);
  EXPECT_EQ(SIGKILL, si.si_status);
  close(c.pidfd);
  // Gone: the outside check says so.
  EXPECT_EQ(-ESRCH, capsa_ns_of_pid_differ(c.pid));
  EXPECT_EQ(-ESRCH, capsa_ns_ids_of(c.pid, &theirs));
}

TEST(Namespaces, NoNamespacesMeansSameNamespaces) {
  capsa_ns_policy *p = capsa_ns_policy_new();
  capsa_ns_child c;
  capsa_ns_report rep;
  ASSERT_EQ(0, capsa_ns_spawn(p, SleepMain, nullptr, &c, &rep));
  capsa_ns_policy_free(p);
  EXPECT_EQ(0u, rep.applied);
  EXPECT_FALSE(rep.empty_root);
  EXPECT_EQ(0, capsa_ns_of_pid_differ(c.pid));
  syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0);
  siginfo_t si;
  waitid((idtype_t)P_PIDFD, c.pidfd, &si, WEXITED);
  close(c.pidfd);
}

// A zygote-like parent forks with CLONE_PARENT | CLONE_NEWPID: the grandchild
// is our child (we can wait for it) and pid 1 of its own pid namespace.
struct ZygoteArg {
  int report_fd;
};
int ZygoteMain(void *a) {
  (void)a;
  capsa_ns_policy *p = capsa_ns_policy_new();
  capsa_ns_policy_set_namespaces(p, CAPSA_NAMESPACE_PID, CAPSA_NAMESPACE_PID);
  capsa_ns_policy_set_clone_parent(p, true);
  capsa_ns_policy_keep_fd(p, 3, 3);
  capsa_ns_child c;
  int r = capsa_ns_fork(p, &c);
  if (r == 0) {
    int pid = getpid();
    if (write(3, &pid, sizeof pid) < 0) _exit(2);
    _exit(7);
  }
  if (r < 0) {
    int neg = r;
    if (write(3, &neg, sizeof neg) < 0) return 2;
    return 1;
  }
  // Hand the pidfd to no one: the test finds its child by waiting.
  return 0;
}

TEST(Namespaces, ZygoteForkMakesSiblingInOwnPidNamespace) {
  unsigned avail = AvailableOrSkip();
  if (!(avail & CAPSA_NAMESPACE_USER) || !(avail & CAPSA_NAMESPACE_PID))
    GTEST_SKIP() << "no user/pid namespaces";
  int pipefd[2];
  ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
  capsa_ns_policy *p = capsa_ns_policy_new();
  ASSERT_EQ(0, capsa_ns_policy_set_namespaces(
                   p, CAPSA_NAMESPACE_USER | CAPSA_NAMESPACE_MOUNT,
                   CAPSA_NAMESPACE_USER | CAPSA_NAMESPACE_MOUNT));
  ASSERT_EQ(0, capsa_ns_policy_keep_fd(p, pipefd[1], 3));
  ASSERT_EQ(0, capsa_ns_policy_set_keep_caps(p, true));
  capsa_ns_child z;
  ASSERT_EQ(0, capsa_ns_spawn(p, ZygoteMain, nullptr, &z, nullptr));
  capsa_ns_policy_free(p);
  close(pipefd[1]);
  int got = 0;
  ASSERT_EQ((ssize_t)sizeof got, read(pipefd[0], &got, sizeof got));
  EXPECT_EQ(1, got) << "grandchild pid (negative: fork error)";
  // Both the zygote and the renderer are our children.
  int exits = 0, sevens = 0;
  for (int i = 0; i < 2; i++) {
    int st;
    pid_t w = wait(&st);
    ASSERT_GT(w, 0);
    exits++;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 7) sevens++;
  }
  EXPECT_EQ(2, exits);
  EXPECT_EQ(1, sevens);
  close(z.pidfd);
  close(pipefd[0]);
}

// capsa_ns_available tries every namespace in one child first; its answer
// must be what one child per namespace finds.
int TryClone(unsigned long flags) {
  pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid < 0) return -errno;
  if (pid == 0) _exit(0);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return 0;
}

unsigned EachAlone(int errs[CAPSA_NAMESPACE_COUNT]) {
  static const struct {
    unsigned bit;
    unsigned long flag;
  } kAll[CAPSA_NAMESPACE_COUNT] = {
      {CAPSA_NAMESPACE_USER, CLONE_NEWUSER},
      {CAPSA_NAMESPACE_PID, CLONE_NEWPID},
      {CAPSA_NAMESPACE_IPC, CLONE_NEWIPC},
      {CAPSA_NAMESPACE_MOUNT, CLONE_NEWNS},
      {CAPSA_NAMESPACE_NET, CLONE_NEWNET},
  };
  unsigned a = 0;
  errs[0] = TryClone(CLONE_NEWUSER);
  if (errs[0] == 0) a |= CAPSA_NAMESPACE_USER;
  unsigned long base = errs[0] == 0 ? CLONE_NEWUSER : 0;
  for (int i = 1; i < CAPSA_NAMESPACE_COUNT; i++) {
    errs[i] = TryClone(base | kAll[i].flag);
    if (errs[i] == 0) a |= kAll[i].bit;
  }
  return a;
}

TEST(Namespaces, AvailableIsWhatEachNamespaceAloneGives) {
  CAPSA_EXPECT_CHILD_OK([] {
    int errs[CAPSA_NAMESPACE_COUNT];
    unsigned alone = EachAlone(errs);
    EXPECT_EQ(alone, capsa__ns_available_reprobe());
    capsa_ns_report rep;
    ASSERT_EQ(0, capsa_ns_available_report(&rep));
    EXPECT_EQ(alone, rep.applied);
    for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
      EXPECT_EQ(errs[i], rep.ns_error[i]) << "namespace " << i;
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
}

bool WriteFile(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  return close(fd) == 0 && ok;
}

// One namespace refused (no network namespace may be made under a user
// namespace of the test's own, max_net_namespaces=0 there): the child with
// all of them is refused, so each is tried alone; the refusal is named and
// the others stay available.
TEST(Namespaces, OneRefusedNamespaceIsNamedAndTheOthersStay) {
  CAPSA_EXPECT_CHILD_OK([] {
    char map[64];
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER) < 0) _exit(::capsa_test::kChildSkipped);
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
    bool mapped = WriteFile("/proc/self/setgroups", "deny") &&
                  WriteFile("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
    mapped = mapped && WriteFile("/proc/self/gid_map", map);
    if (!mapped || !WriteFile("/proc/sys/user/max_net_namespaces", "0"))
      _exit(::capsa_test::kChildSkipped);
    int errs[CAPSA_NAMESPACE_COUNT];
    unsigned alone = EachAlone(errs);
    if (!(alone & CAPSA_NAMESPACE_USER)) _exit(::capsa_test::kChildSkipped);
    EXPECT_FALSE(alone & CAPSA_NAMESPACE_NET);
    EXPECT_EQ(alone, capsa__ns_available_reprobe());
    capsa_ns_report rep;
    ASSERT_EQ(0, capsa_ns_available_report(&rep));
    EXPECT_EQ(alone, rep.applied);
    for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
      EXPECT_EQ(errs[i], rep.ns_error[i]) << "namespace " << i;
    EXPECT_EQ(-ENOSPC, rep.ns_error[CAPSA_NAMESPACE_COUNT - 1]);  // net
    EXPECT_TRUE(rep.applied & CAPSA_NAMESPACE_USER);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
}

}  // namespace
