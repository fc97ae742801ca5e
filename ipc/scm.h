// One datagram with descriptors over a local socket: the SCM_RIGHTS control
// block is built here, once, for every sender (channels, the host's zygote
// control socket, the fuzz renderer's raw records).
//
//   int fds[2] = {memfd, pidfd};  // still ours afterwards
//   ssize_t n = capsa_scm_send(sock, buf, len, fds, 2, MSG_NOSIGNAL);
//   if (n < 0) ... -errno
#ifndef CAPSA_IPC_SCM_H_
#define CAPSA_IPC_SCM_H_

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA_SCM_MAX_FDS 253  // the kernel's SCM_MAX_FD

// sendmsg(sock, flags) of `len` bytes of `buf` and, when nfds > 0, `nfds`
// descriptors of `fds` as SCM_RIGHTS. `buf` and `fds` are borrowed: the
// caller keeps (and closes) its descriptors. Retried on EINTR. Returns the
// bytes sent, or -errno (-EINVAL for nfds outside 0..CAPSA_SCM_MAX_FDS).
ssize_t capsa_scm_send(int sock, const void *buf, size_t len, const int *fds,
                       int nfds, int flags);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_SCM_H_
