// capsa_scm_send: bytes and descriptors in one datagram, argument checks.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ipc/scm.h"

namespace {

TEST(ScmSend, BytesAndDescriptorsArriveTogether) {
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  ASSERT_EQ(3, capsa_scm_send(sv[0], "abc", 3, p, 2, MSG_NOSIGNAL));
  char buf[8] = {};
  struct iovec iov = {buf, sizeof buf};
  union {
    char b[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.b;
  mh.msg_controllen = sizeof ctl.b;
  ASSERT_EQ(3, recvmsg(sv[1], &mh, MSG_CMSG_CLOEXEC));
  EXPECT_STREQ("abc", buf);
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  ASSERT_NE(nullptr, cm);
  ASSERT_EQ(CMSG_LEN(2 * sizeof(int)), cm->cmsg_len);
  int got[2];
  memcpy(got, CMSG_DATA(cm), sizeof got);
  // The received read end reads what the kept write end writes.
  ASSERT_EQ(1, write(p[1], "x", 1));
  char c = 0;
  EXPECT_EQ(1, read(got[0], &c, 1));
  EXPECT_EQ('x', c);
  for (int fd : {got[0], got[1], p[0], p[1]}) close(fd);
  // No descriptors: just the bytes.
  ASSERT_EQ(2, capsa_scm_send(sv[0], "hi", 2, nullptr, 0, MSG_NOSIGNAL));
  mh.msg_controllen = sizeof ctl.b;
  ASSERT_EQ(2, recvmsg(sv[1], &mh, 0));
  EXPECT_EQ(nullptr, CMSG_FIRSTHDR(&mh));
  // Refused: a count outside the kernel's limit, descriptors missing, a
  // peer gone (EPIPE, no SIGPIPE with MSG_NOSIGNAL).
  EXPECT_EQ(-EINVAL, capsa_scm_send(sv[0], "x", 1, p, -1, 0));
  EXPECT_EQ(-EINVAL,
            capsa_scm_send(sv[0], "x", 1, p, CAPSA_SCM_MAX_FDS + 1, 0));
  EXPECT_EQ(-EINVAL, capsa_scm_send(sv[0], "x", 1, nullptr, 1, 0));
  close(sv[1]);
  EXPECT_EQ(-EPIPE, capsa_scm_send(sv[0], "x", 1, nullptr, 0, MSG_NOSIGNAL));
  close(sv[0]);
}

}  // namespace
