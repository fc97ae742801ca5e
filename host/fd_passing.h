// One datagram with at most one descriptor over a SOCK_SEQPACKET socket:
// the host <-> zygote control protocol (trusted peers; renderer traffic goes
// through ipc/ channels instead).
//
//   capsa__send_fd(sock, &req, sizeof req, channel_fd);  // fd still ours
//   int pidfd = -1;
//   ssize_t n = capsa__recv_fd(sock, &rep, sizeof rep, &pidfd, 5000);
#ifndef CAPSA_HOST_FD_PASSING_H_
#define CAPSA_HOST_FD_PASSING_H_

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__MAX_PASSED_FDS 3

// Sends `len` bytes of `buf` (borrowed) and `fd` (-1: none; borrowed, the
// caller keeps and closes its copy). Blocking. Returns 0 or -errno.
int capsa__send_fd(int sock, const void *buf, size_t len, int fd);

// Receives one datagram into `buf` (at most `len` bytes) and, when `fd_out`
// is not NULL, its descriptor (close-on-exec, owned by the caller; -1 when
// none). Any extra or unexpected descriptor is closed; a truncated datagram
// or control block is -EPROTO. Waits at most `timeout_ms` (-1: forever).
// Returns the byte count (0 at EOF), -ETIMEDOUT or -errno.
ssize_t capsa__recv_fd(int sock, void *buf, size_t len, int *fd_out,
                       int timeout_ms);

// The same with up to CAPSA__MAX_PASSED_FDS descriptors: `fds` (borrowed)
// holds `nfds` of them; received ones land in fds[0..*nfds) (owned by the
// caller), the rest of fds[0..max) is -1.
int capsa__send_fds(int sock, const void *buf, size_t len, const int *fds,
                    int nfds);
ssize_t capsa__recv_fds(int sock, void *buf, size_t len, int *fds, int max,
                        int *nfds, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FD_PASSING_H_
