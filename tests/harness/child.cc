#include "tests/harness/child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace capsa_test {

std::string ChildResult::Describe() const {
  if (timed_out) return "timed out (killed)";
  if (exited) {
    if (exit_code == 0) return "exited 0";
    if (exit_code == 1) return "exited 1 (assertion failed in child)";
    return "exited " + std::to_string(exit_code);
  }
  return std::string("killed by signal ") + std::to_string(term_signal) + " (" +
         strsignal(term_signal) + ")";
}

static long MonotonicMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

ChildResult RunInChild(const std::function<void()> &body, int timeout_ms) {
  ChildResult r;
  // Unflushed parent output would otherwise be printed twice.
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << strerror(errno);
    return r;
  }
  if (pid == 0) {
    setsid();
    body();
    fflush(stdout);
    fflush(stderr);
    if (::testing::Test::HasFailure()) _exit(1);
    if (::testing::Test::IsSkipped()) _exit(kChildSkipped);
    _exit(0);
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  long deadline = MonotonicMs() + timeout_ms;
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      ADD_FAILURE() << "waitpid: " << strerror(errno);
      break;
    }
    long left = deadline - MonotonicMs();
    if (left <= 0) {
      r.timed_out = true;
      kill(-pid, SIGKILL);  // the child's session: grandchildren too
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    if (pidfd >= 0) {
      struct pollfd p = {pidfd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(left));
    } else {
      usleep(1000);
    }
  }
  if (pidfd >= 0) close(pidfd);
  if (r.timed_out) return r;
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace capsa_test
