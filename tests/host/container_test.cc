// A host inside a container, assembled by hand (issue 37): pid 1 of a fresh
// pid namespace with /proc remounted, and the same without the remount.
// Each case runs a real binary (capsa, or this test binary) as pid 1 in a
// forked child that made the namespaces (root: pid + mount; another uid: a
// user namespace too, mapping the uid to itself), bounded by a timeout.
// The full matrix (runtime seccomp profile, capability set, no_new_privs,
// user namespaces refused) is ./dev containers: tests/containers/.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

std::string ExeDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  std::string s(buf);
  return s.substr(0, s.rfind('/'));
}

bool WriteFile(const char *path, const std::string &text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == (ssize_t)text.size();
  close(fd);
  return ok;
}

struct Pid1Run {
  int status = -1;      // exit status of the program run as pid 1
  int setup_errno = 0;  // the namespaces could not be made: errno (a skip)
  std::string out;      // its stdout and stderr
};

// Exit codes of the namespace-making child for "could not make them".
constexpr int kNoNamespaces = 111;
constexpr int kNoProcMount = 112;

// Runs argv as pid 1 of a new pid namespace (its /proc remounted when
// `remount_proc`), output captured, killed after `timeout_s`.
Pid1Run RunAsPid1(const std::vector<std::string> &argv, bool remount_proc,
                  int timeout_s) {
  Pid1Run res;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) return res;
  pid_t outer = getuid(), outer_gid = getgid();
  pid_t c = fork();
  if (c == 0) {
    close(out[0]);
    close(err[0]);
    setpgid(0, 0);
    int flags = CLONE_NEWPID | CLONE_NEWNS;
    if (geteuid() != 0) flags |= CLONE_NEWUSER;
    if (unshare(flags) < 0) {
      int e = errno;
      ssize_t w = write(err[1], &e, sizeof e);
      (void)w;
      _exit(kNoNamespaces);
    }
    if (flags & CLONE_NEWUSER) {
      // The same uid inside: the host stays an unprivileged user there.
      WriteFile("/proc/self/setgroups", "deny");
      WriteFile("/proc/self/uid_map",
                std::to_string(outer) + " " + std::to_string(outer) + " 1\n");
      WriteFile("/proc/self/gid_map", std::to_string(outer_gid) + " " +
                                          std::to_string(outer_gid) + " 1\n");
    }
    pid_t g = fork();
    if (g == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (remount_proc) {
        if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  nullptr) < 0) {
          int e = errno;
          ssize_t w = write(err[1], &e, sizeof e);
          (void)w;
          _exit(kNoProcMount);
        }
      }
      dup2(out[1], 1);
      dup2(out[1], 2);
      std::vector<char *> a;
      for (auto &s : argv) a.push_back(const_cast<char *>(s.c_str()));
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
    int st = 0;
    while (waitpid(g, &st, 0) < 0 && errno == EINTR) {
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  }
  close(out[1]);
  close(err[1]);
  if (c < 0) return res;
  time_t end = time(nullptr) + timeout_s;
  char buf[4096];
  for (;;) {
    struct pollfd p = {out[0], POLLIN, 0};
    int left = (int)(end - time(nullptr));
    if (left <= 0) {
      kill(-c, SIGKILL);
      res.out += "\n[killed after timeout]";
      break;
    }
    if (poll(&p, 1, left * 1000) <= 0) continue;
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    res.out.append(buf, (size_t)n);
  }
  int st = 0;
  waitpid(c, &st, 0);
  int e = 0;
  if (read(err[0], &e, sizeof e) == (ssize_t)sizeof e) res.setup_errno = e;
  close(out[0]);
  close(err[0]);
  res.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return res;
}

#define SKIP_IF_NO_NAMESPACES(r)                                             \
  if ((r).status == kNoNamespaces || (r).status == kNoProcMount)             \
  GTEST_SKIP() << "cannot make a pid namespace"                              \
               << ((r).status == kNoProcMount ? " and mount its /proc" : "") \
               << " here: " << strerror((r).setup_errno)

// The hostile renderer's attempts at the host aim at pid 1, which is also
// the renderer's own pid in its own namespace: they must not count as
// escapes (they used to: "2 escaped ... demo: FAILED").
TEST(ContainerTest, DemoPassesAsPid1) {
  // The PNG goes where this uid may write (uid 65534 may not in out/).
  char dir[] = "/tmp/capsa-pid1-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  Pid1Run r = RunAsPid1({ExeDir() + "/capsa", "demo", "--out", dir}, true, 90);
  std::string rm = std::string("rm -rf '") + dir + "'";
  EXPECT_EQ(0, system(rm.c_str()));
  SKIP_IF_NO_NAMESPACES(r);
  EXPECT_EQ(0, r.status) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("demo: ")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("FAILED")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("none escaped")) << r.out;
}

// /proc of the outer pid namespace: the host refuses to start and says why
// and how to fix it, instead of a bare "Operation not permitted".
TEST(ContainerTest, ProcOfAnotherPidNamespaceIsNamed) {
  Pid1Run r = RunAsPid1({ExeDir() + "/capsa", "demo"}, false, 60);
  SKIP_IF_NO_NAMESPACES(r);
  EXPECT_NE(0, r.status) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("another pid namespace")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("mount -t proc proc /proc")) << r.out;
  Pid1Run d = RunAsPid1({ExeDir() + "/capsa", "doctor"}, false, 60);
  EXPECT_EQ(1, d.status) << d.out;
  EXPECT_NE(std::string::npos, d.out.find("a host cannot start here")) << d.out;
  EXPECT_EQ(std::string::npos, d.out.find("capability mode is fully provided"))
      << d.out;
}

// A host that is pid 1 adopts the orphans of its renderers and zygote: after
// the cases that leave some, the later ones find no zombie and no child of
// theirs left (each passed alone, failed in sequence as pid 1).
TEST(ContainerTest, HostAsPid1ReapsWhatLandsOnIt) {
  Pid1Run r = RunAsPid1(
      {"/proc/self/exe",
       // The first leaves a forked child's zygote and renderers behind (it
       // runs its host in a child that exits); the second a renderer's
       // grandchild; the third checks nothing is left.
       "--gtest_filter=HostTest.RendererInTheZygotesUserNamespaceIsRefused:"
       "HostTest.NoPidNamespaceLeavesNoZombiesNorOrphans:"
       "HostTest.SpareRendererIsHandedOverAndReapedAtClose"},
      true, 100);
  SKIP_IF_NO_NAMESPACES(r);
  EXPECT_EQ(0, r.status) << r.out;
  // The first may skip (renderers without user namespaces of their own);
  // the two that look for what is left must run and pass.
  EXPECT_NE(std::string::npos,
            r.out.find("[       OK ] HostTest.NoPidNamespaceLeavesNoZombies"))
      << r.out;
  EXPECT_NE(std::string::npos,
            r.out.find("[       OK ] HostTest.SpareRendererIsHandedOver"))
      << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("[  FAILED  ]")) << r.out;
}

}  // namespace
