// Passing one descriptor over a unix socket, for tests that check what a
// receiving process can do with it.
//
//   ASSERT_EQ(0, capsa_test::SendFd(sv[0], fd));   // fd stays open here
//   int got = capsa_test::RecvFd(sv[1]);           // owned by the caller
#ifndef CAPSA_TESTS_HARNESS_FD_PASSING_H_
#define CAPSA_TESTS_HARNESS_FD_PASSING_H_

namespace capsa_test {

// Sends `fd` as SCM_RIGHTS with one data byte. Returns 0, or -1 with errno.
// `fd` remains owned by the caller.
int SendFd(int sock, int fd);

// Receives one descriptor (MSG_CMSG_CLOEXEC). Returns it (the caller owns
// it), or -1 when no descriptor arrived.
int RecvFd(int sock);

}  // namespace capsa_test

#endif  // CAPSA_TESTS_HARNESS_FD_PASSING_H_
