// See ipc/scm.h.
#include "ipc/scm.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

ssize_t capsa_scm_send(int sock, const void *buf, size_t len, const int *fds,
                       int nfds, int flags) {
  if (nfds < 0 || nfds > CAPSA_SCM_MAX_FDS || (nfds > 0 && !fds))
    return -EINVAL;
  struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int) * CAPSA_SCM_MAX_FDS)];
    struct cmsghdr align;
  } ctl;
  if (nfds > 0) {
    size_t bytes = sizeof(int) * (size_t)nfds;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = CMSG_SPACE(bytes);
    memset(ctl.buf, 0, mh.msg_controllen);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(bytes);
    memcpy(CMSG_DATA(cm), fds, bytes);
  }
  for (;;) {
    ssize_t n = sendmsg(sock, &mh, flags);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}
