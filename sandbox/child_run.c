#include "sandbox/child_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

ssize_t capsa__child_run(void (*fn)(int wfd, void *arg), void *arg, void *out,
                         size_t size, int timeout_ms, int *status) {
  if (status) *status = -1;
  if (!fn || (size && !out)) return -EINVAL;
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -errno;
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    return -e;
  }
  if (pid == 0) {
    close(p[0]);
    fn(p[1], arg);
    _exit(125);
  }
  close(p[1]);
  size_t got = 0;
  ssize_t rc = 0;
  while (got < size) {
    struct pollfd pfd = {p[0], POLLIN, 0};
    int pr = poll(&pfd, 1, timeout_ms);
    if (pr == 0) {
      rc = -ETIMEDOUT;
      break;
    }
    if (pr < 0 && errno == EINTR) continue;
    ssize_t r = read(p[0], (char *)out + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(p[0]);
  if (rc == -ETIMEDOUT) kill(pid, SIGKILL);
  int st = 0;
  pid_t w;
  do w = waitpid(pid, &st, 0);
  while (w < 0 && errno == EINTR);
  if (status && w == pid) *status = st;
  return rc < 0 ? rc : (ssize_t)got;
}
