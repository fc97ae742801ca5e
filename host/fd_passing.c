// See host/fd_passing.h.
#include "host/fd_passing.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/scm.h"

int capsa__send_fd(int sock, const void *buf, size_t len, int fd) {
  return capsa__send_fds(sock, buf, len, &fd, fd >= 0 ? 1 : 0);
}

int capsa__send_fds(int sock, const void *buf, size_t len, const int *fds,
                    int nfds) {
  if (nfds < 0 || nfds > CAPSA__MAX_PASSED_FDS) return -EINVAL;
  ssize_t n = capsa_scm_send(sock, buf, len, fds, nfds, MSG_NOSIGNAL);
  if (n < 0) return (int)n;
  return n == (ssize_t)len ? 0 : -EPROTO;
}

ssize_t capsa__recv_fd(int sock, void *buf, size_t len, int *fd_out,
                       int timeout_ms) {
  int n = 0;
  return capsa__recv_fds(sock, buf, len, fd_out, fd_out ? 1 : 0, &n,
                         timeout_ms);
}

ssize_t capsa__recv_fds(int sock, void *buf, size_t len, int *fds, int max,
                        int *nfds, int timeout_ms) {
  *nfds = 0;
  for (int i = 0; i < max; i++) fds[i] = -1;
  struct pollfd pfd = {sock, POLLIN, 0};
  for (;;) {
    int r = poll(&pfd, 1, timeout_ms);
    if (r > 0) break;
    if (r == 0) return -ETIMEDOUT;
    if (errno != EINTR) return -errno;
  }
  struct iovec iov = {buf, len};
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  // Room for more than one descriptor so that extras are received (and
  // closed) rather than silently dropped with MSG_CTRUNC.
  union {
    char b[CMSG_SPACE(4 * sizeof(int))];
    struct cmsghdr align;
  } ctl;
  mh.msg_control = ctl.b;
  mh.msg_controllen = sizeof ctl.b;
  ssize_t n;
  do {
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  int got = 0;
  bool extra = false;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < max) {
        fds[got++] = fd;
      } else {
        close(fd);
        extra = true;
      }
    }
  }
  if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || extra) {
    for (int i = 0; i < got; i++) {
      close(fds[i]);
      fds[i] = -1;
    }
    return -EPROTO;
  }
  *nfds = got;
  return n;
}
