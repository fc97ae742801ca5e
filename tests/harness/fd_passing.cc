#include "tests/harness/fd_passing.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

namespace capsa_test {

int SendFd(int sock, int fd) {
  char byte = 'f';
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int RecvFd(int sock) {
  char byte;
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1) return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
    return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

}  // namespace capsa_test
