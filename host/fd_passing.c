// See host/fd_passing.h.
#include "host/fd_passing.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int capsa__send_fd(int sock, const void *buf, size_t len, int fd) {
  struct iovec iov = {(void *)buf, len};
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  union {
    char b[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  if (fd >= 0) {
    memset(&ctl, 0, sizeof ctl);
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof ctl.b;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  for (;;) {
    ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n >= 0) return n == (ssize_t)len ? 0 : -EPROTO;
    if (errno != EINTR) return -errno;
  }
}

ssize_t capsa__recv_fd(int sock, void *buf, size_t len, int *fd_out,
                       int timeout_ms) {
  if (fd_out) *fd_out = -1;
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
  int got = -1;
  bool extra = false;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < nfds; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < 0 && fd_out) {
        got = fd;
      } else {
        close(fd);
        extra = true;
      }
    }
  }
  if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || extra) {
    if (got >= 0) close(got);
    return -EPROTO;
  }
  if (fd_out) *fd_out = got;
  return n;
}
