// Process descriptors: pdfork, pdgetpid, pdkill, pdwait, their rights, and
// the same in capability mode.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/procdesc.h"
#include "sandbox/rights/rights.h"
#include "tests/harness/child.h"

namespace {

// CAPSA_EXPECT_CHILD_OK with a lambda that may contain top-level commas.
#define IN_CHILD(...) CAPSA_EXPECT_CHILD_OK((__VA_ARGS__))

// A child that waits to be killed, and dies with its parent if a failed
// assertion ends the test first (no orphans left behind).
[[noreturn]] void SleepUntilKilled() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(1);
  for (;;) pause();
}

void ForkExitWait() {
  int pd = -1;
  pid_t pid = capsa_pdfork(&pd, 0);
  ASSERT_GE(pid, 0) << capsa_strerror(pid);
  if (pid == 0) _exit(7);
  ASSERT_GE(pd, 0);
  EXPECT_EQ(FD_CLOEXEC, fcntl(pd, F_GETFD));
  pid_t got = 0;
  int err = capsa_pdgetpid(pd, &got);
  // Before the exit is reaped the pid is known.
  if (err == 0) {
    EXPECT_EQ(pid, got);
  }
  // The descriptor becomes readable when the child exits.
  struct pollfd p = {pd, POLLIN, 0};
  ASSERT_EQ(1, poll(&p, 1, 5000));
  EXPECT_TRUE(p.revents & POLLIN);
  int status = 0;
  ASSERT_EQ(pid, capsa_pdwait(pd, &status, 0, nullptr));
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(7, WEXITSTATUS(status));
  // Reaped: no second wait, no signal.
  EXPECT_EQ(-ECHILD, capsa_pdwait(pd, &status, WNOHANG, nullptr));
  EXPECT_EQ(-ESRCH, capsa_pdkill(pd, SIGKILL));
  close(pd);
}

TEST(Procdesc, ForkExitWait) {
  IN_CHILD([] { ForkExitWait(); });
}

TEST(Procdesc, GetPidKillWait) {
  IN_CHILD([] {
    int pd = -1;
    pid_t pid = capsa_pdfork(&pd, CAPSA_PD_CLOEXEC);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SleepUntilKilled();
    }
    pid_t got = 0;
    ASSERT_EQ(0, capsa_pdgetpid(pd, &got));
    EXPECT_EQ(pid, got);
    int status = 0;
    EXPECT_EQ(0, capsa_pdwait(pd, &status, WNOHANG, nullptr));  // running
    ASSERT_EQ(0, capsa_pdkill(pd, SIGKILL));
    struct rusage ru = {};
    ASSERT_EQ(pid, capsa_pdwait(pd, &status, 0, &ru));
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(SIGKILL, WTERMSIG(status));
    EXPECT_EQ(-ESRCH, capsa_pdgetpid(pd, &got));
  });
}

TEST(Procdesc, BadArguments) {
  EXPECT_EQ(-EINVAL, capsa_pdfork(nullptr, 0));
  int pd;
  EXPECT_EQ(-EINVAL, capsa_pdfork(&pd, 0x100));
  pid_t got;
  EXPECT_EQ(-EBADF, capsa_pdgetpid(-1, &got));
  EXPECT_EQ(-EBADF, capsa_pdkill(-1, SIGTERM));
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  EXPECT_EQ(-EBADF, capsa_pdgetpid(p[0], &got));  // not a pidfd
  EXPECT_EQ(-EBADF, capsa_pdkill(p[0], SIGTERM));
  close(p[0]);
  close(p[1]);
}

TEST(Procdesc, RightsHonoured) {
  IN_CHILD([] {
    int pd = -1;
    pid_t pid = capsa_pdfork(&pd, 0);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SleepUntilKilled();
    }
    capsa_rights_t r;
    capsa_rights_init(&r, CAPSA_CAP_PDWAIT, CAPSA_CAP_EVENT);
    ASSERT_EQ(0, capsa_rights_limit(pd, &r));
    pid_t got;
    EXPECT_EQ(-ENOTCAPABLE, capsa_pdgetpid(pd, &got));
    EXPECT_EQ(-ENOTCAPABLE, capsa_pdkill(pd, SIGKILL));
    kill(pid, SIGKILL);  // by pid: the test's own way out
    int status = 0;
    ASSERT_EQ(pid, capsa_pdwait(pd, &status, 0, nullptr));
    EXPECT_TRUE(WIFSIGNALED(status));
    // Without CAP_PDWAIT the wait is refused too.
    int pd2 = -1;
    pid_t pid2 = capsa_pdfork(&pd2, 0);
    ASSERT_GE(pid2, 0);
    if (pid2 == 0) _exit(0);
    capsa_rights_init(&r, CAPSA_CAP_PDKILL);
    ASSERT_EQ(0, capsa_rights_limit(pd2, &r));
    EXPECT_EQ(-ENOTCAPABLE, capsa_pdwait(pd2, &status, 0, nullptr));
    ASSERT_EQ(pid2, waitpid(pid2, &status, 0));
  });
}

// pdgetpid reads the pid with ioctl(PIDFD_GET_INFO): that request follows
// CAP_PDGETPID, not CAP_IOCTL, so neither right can stand in for the other.
TEST(Procdesc, GetPidFollowsItsOwnRight) {
  IN_CHILD([] {
    int pd = -1;
    pid_t pid = capsa_pdfork(&pd, 0);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SleepUntilKilled();
    }
    struct {
      uint64_t mask, cgroupid;
      uint32_t pid, rest[13];
    } info = {};
    info.mask = 1;
    const unsigned long kGetInfo = 0xC040FF0Bul;  // PIDFD_GET_INFO, 64 bytes
    if (ioctl(pd, kGetInfo, &info) != 0) {
      kill(pid, SIGKILL);
      GTEST_SKIP() << "kernel without PIDFD_GET_INFO (< 6.13)";
    }
    int pd2 = -1;
    pid_t pid2 = capsa_pdfork(&pd2, 0);
    ASSERT_GE(pid2, 0);
    if (pid2 == 0) {
      SleepUntilKilled();
    }
    // CAP_PDGETPID without CAP_IOCTL, in capability mode (no /proc).
    capsa_rights_t r;
    capsa_rights_init(&r, CAPSA_CAP_PDGETPID, CAPSA_CAP_PDKILL,
                      CAPSA_CAP_PDWAIT);
    ASSERT_EQ(0, capsa_rights_limit(pd, &r));
    // CAP_IOCTL without CAP_PDGETPID.
    capsa_rights_init(&r, CAPSA_CAP_IOCTL, CAPSA_CAP_PDKILL, CAPSA_CAP_PDWAIT);
    ASSERT_EQ(0, capsa_rights_limit(pd2, &r));
    pid_t got = 0;
    EXPECT_EQ(0, capsa_pdgetpid(pd, &got));
    EXPECT_EQ(pid, got);
    int n = 0;
    errno = 0;
    EXPECT_EQ(-1, ioctl(pd, FIONREAD, &n));
    EXPECT_EQ(ENOTCAPABLE, errno);
    EXPECT_EQ(-ENOTCAPABLE, capsa_pdgetpid(pd2, &got));
    errno = 0;
    EXPECT_EQ(-1, ioctl(pd2, kGetInfo, &info));
    EXPECT_EQ(ENOTCAPABLE, errno);
    // Another size of the same request is the same request.
    errno = 0;
    EXPECT_EQ(-1, ioctl(pd2, (kGetInfo & ~0x3FFF0000ul) | (72ul << 16), &info));
    EXPECT_EQ(ENOTCAPABLE, errno);
    // In capability mode (no /proc, and capability mode's own ioctl policy)
    // the pid of a descriptor this process forked is still known. Checked
    // in a child: Landlock's signal scope would keep a process in
    // capability mode from killing these older children afterwards.
    pid_t checker = fork();
    ASSERT_GE(checker, 0);
    if (checker == 0) {
      pid_t in_cap = 0;
      bool ok = capsa_cap_enter() == 0 && capsa_pdgetpid(pd, &in_cap) == 0 &&
                in_cap == pid;
      _exit(ok ? 0 : 1);
    }
    int cst = 0;
    ASSERT_EQ(checker, waitpid(checker, &cst, 0));
    EXPECT_TRUE(WIFEXITED(cst) && WEXITSTATUS(cst) == 0) << cst;
    int status;
    ASSERT_EQ(0, capsa_pdkill(pd, SIGKILL));
    ASSERT_EQ(0, capsa_pdkill(pd2, SIGKILL));
    EXPECT_EQ(pid, capsa_pdwait(pd, &status, 0, nullptr));
    EXPECT_EQ(pid2, capsa_pdwait(pd2, &status, 0, nullptr));
  });
}

TEST(Procdesc, InCapabilityMode) {
  IN_CHILD([] {
    ASSERT_EQ(0, capsa_cap_enter());
    unsigned mode = 0;
    ASSERT_EQ(0, capsa_cap_getmode(&mode));
    ASSERT_EQ(1u, mode);
    int pd = -1;
    pid_t pid = capsa_pdfork(&pd, 0);
    ASSERT_GE(pid, 0) << capsa_strerror(pid);
    if (pid == 0) {
      SleepUntilKilled();
    }
    pid_t got = 0;
    EXPECT_EQ(0, capsa_pdgetpid(pd, &got));
    EXPECT_EQ(pid, got);
    ASSERT_EQ(0, capsa_pdkill(pd, SIGTERM));
    int status = 0;
    ASSERT_EQ(pid, capsa_pdwait(pd, &status, 0, nullptr));
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(SIGTERM, WTERMSIG(status));
  });
}

}  // namespace
