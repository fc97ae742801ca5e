// Checking a received descriptor against the handle its message declares.
//
//   char why[CAPSA_IPC_REASON_MAX];
//   int err = capsa_handle_check(fd, &msg.handles[i], why, sizeof why);
//   if (err < 0) { close(fd); bad_message(why); }
//
// Everything here is non-blocking whatever the descriptor is (a FIFO, a
// directory, a socket connected elsewhere, a device): only fstat, fcntl
// (F_GETFL, F_GET_SEALS), getsockopt, getsockname and getpeername are used;
// nothing is ever opened, read or written. These are the syscalls the
// capability-mode policy must allow for a receiver.
//
// Rules per kind (a declaration wider than the descriptor is refused):
//   SHM      regular file that accepts F_GET_SEALS (a memfd), st_size ==
//            declared size, sealed F_SEAL_GROW|F_SEAL_SHRINK; not executable
//            (no exec mode bits); writable: O_RDWR and no write seal;
//            read-only from the host: F_SEAL_WRITE or F_SEAL_FUTURE_WRITE
//            (the host keeps the writable mapping it filled the region
//            through, and the renderer trusts the host); read-only from a
//            renderer: F_SEAL_WRITE, which the kernel refuses while any
//            writable mapping exists. With FUTURE_WRITE alone the renderer
//            that made the region keeps its earlier writable mapping and
//            changes it under the host's checks (issue 32, item 5); it
//            makes one with CAPSA_SHM_CREATOR_FREEZES (ipc/shm.h).
//   CHANNEL  AF_UNIX SOCK_SEQPACKET, unnamed and with an unnamed peer (a
//            socketpair end, not a socket bound or connected to a path).
//   FILE     regular file, opened O_RDONLY (not O_PATH), st_size == size.
// Rights must be valid and within the kind's maximum (capsa_handle_max_rights).
#ifndef CAPSA_IPC_HANDLE_H_
#define CAPSA_IPC_HANDLE_H_

#include <stddef.h>

#include "ipc/message.h"
#include "ipc/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

// Checks `fd` (borrowed: neither closed nor modified) against `decl` (its fd
// member is ignored), sent by `sender` (CAPSA_PEER_HOST or
// CAPSA_PEER_RENDERER: which write seal a read-only region needs). Returns
// 0, or -EBADMSG with a reason.
int capsa_handle_check(int fd, const capsa_handle_t *decl,
                       capsa_peer_role_t sender, char *reason,
                       size_t reason_size);

// Checks a declaration alone (kind known, rights valid and within the kind's
// maximum, size in range). Returns 0 or -EBADMSG with a reason.
int capsa_handle_check_decl(const capsa_handle_t *decl, char *reason,
                            size_t reason_size);

// A new open file description of the object behind `fd` (borrowed), opened
// through /proc/self/fd with O_RDONLY, or O_RDWR when `writable`, and
// O_CLOEXEC: whatever the holder of the new descriptor does to its offset
// or status flags (lseek, F_SETFL) reaches no other holder. For FILE and
// SHM handles (a socket cannot be reopened: -ENXIO from the kernel).
// Returns the new descriptor (owned by the caller) or -errno (-ENOENT when
// /proc is not mounted).
int capsa_handle_reopen(int fd, bool writable);

// The widest rights a handle of `kind` may declare (`writable`: shm only).
void capsa_handle_max_rights(capsa_handle_kind_t kind, bool writable,
                             capsa_rights_t *out);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_HANDLE_H_
