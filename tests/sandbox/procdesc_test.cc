// Process descriptors: pdfork, pdgetpid, pdkill, pdwait, their rights, and
// the same in capability mode.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sandbox/capmode.h"
#include "sandbox/procdesc.h"
#include "sandbox/rights.h"
#include "tests/harness/child.h"

namespace {

// CAPSA_EXPECT_CHILD_OK with a lambda that may contain top-level commas.
#define IN_CHILD(...) CAPSA_EXPECT_CHILD_OK((__VA_ARGS__))

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
      for (;;) pause();
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
      for (;;) pause();
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
      for (;;) pause();
    }
    pid_t got = 0;
    int err = capsa_pdgetpid(pd, &got);
    if (err == 0) {
      EXPECT_EQ(pid, got);
    } else {
      // Kernels before 6.13 read /proc, which capability mode refuses.
      EXPECT_EQ(-ECAPMODE, err) << capsa_strerror(err);
    }
    ASSERT_EQ(0, capsa_pdkill(pd, SIGTERM));
    int status = 0;
    ASSERT_EQ(pid, capsa_pdwait(pd, &status, 0, nullptr));
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(SIGTERM, WTERMSIG(status));
  });
}

}  // namespace
