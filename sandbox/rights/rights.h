// Capability rights on descriptors, as FreeBSD's rights(4) and
// cap_rights_limit(2). Rights only shrink.
//
//   int read_only(int fd) {  // fd: still owned by the caller
//     capsa_rights_t r;
//     capsa_rights_init(&r, CAPSA_CAP_READ, CAPSA_CAP_SEEK, CAPSA_CAP_FSTAT);
//     int err = capsa_rights_limit(fd, &r);
//     if (err < 0) fprintf(stderr, "%s\n", capsa_strerror(err));
//     return err;  // then write(fd, "x", 1) fails with ENOTCAPABLE
//   }
//
// The layout and bit values are FreeBSD's (sys/capsicum.h, CAP_RIGHTS_VERSION
// 0): two 64-bit words, the top bits of each naming the word's index, so that
// a right can never be mistaken for one in another word. The
// Capsicum-compatible <sys/capsicum.h> maps FreeBSD's names onto these.
#ifndef CAPSA_SANDBOX_RIGHTS_H_
#define CAPSA_SANDBOX_RIGHTS_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

#define CAPSA_RIGHTS_VERSION 0

typedef struct capsa_rights {
  uint64_t cr_rights[CAPSA_RIGHTS_VERSION + 2];
} capsa_rights_t;

#define CAPSA_CAPRIGHT(idx, bit) ((1ULL << (57 + (idx))) | (bit))

// Word 0.
#define CAPSA_CAP_READ CAPSA_CAPRIGHT(0, 0x0000000000000001ULL)
#define CAPSA_CAP_WRITE CAPSA_CAPRIGHT(0, 0x0000000000000002ULL)
#define CAPSA_CAP_SEEK_TELL CAPSA_CAPRIGHT(0, 0x0000000000000004ULL)
#define CAPSA_CAP_SEEK (CAPSA_CAP_SEEK_TELL | 0x0000000000000008ULL)
#define CAPSA_CAP_PREAD (CAPSA_CAP_SEEK | CAPSA_CAP_READ)
#define CAPSA_CAP_PWRITE (CAPSA_CAP_SEEK | CAPSA_CAP_WRITE)
#define CAPSA_CAP_MMAP CAPSA_CAPRIGHT(0, 0x0000000000000010ULL)
#define CAPSA_CAP_MMAP_R (CAPSA_CAP_MMAP | CAPSA_CAP_SEEK | CAPSA_CAP_READ)
#define CAPSA_CAP_MMAP_W (CAPSA_CAP_MMAP | CAPSA_CAP_SEEK | CAPSA_CAP_WRITE)
#define CAPSA_CAP_MMAP_X \
  (CAPSA_CAP_MMAP | CAPSA_CAP_SEEK | 0x0000000000000020ULL)
#define CAPSA_CAP_MMAP_RW (CAPSA_CAP_MMAP_R | CAPSA_CAP_MMAP_W)
#define CAPSA_CAP_MMAP_RX (CAPSA_CAP_MMAP_R | CAPSA_CAP_MMAP_X)
#define CAPSA_CAP_MMAP_WX (CAPSA_CAP_MMAP_W | CAPSA_CAP_MMAP_X)
#define CAPSA_CAP_MMAP_RWX \
  (CAPSA_CAP_MMAP_R | CAPSA_CAP_MMAP_W | CAPSA_CAP_MMAP_X)
#define CAPSA_CAP_CREATE CAPSA_CAPRIGHT(0, 0x0000000000000040ULL)
#define CAPSA_CAP_FEXECVE CAPSA_CAPRIGHT(0, 0x0000000000000080ULL)
#define CAPSA_CAP_FSYNC CAPSA_CAPRIGHT(0, 0x0000000000000100ULL)
#define CAPSA_CAP_FTRUNCATE CAPSA_CAPRIGHT(0, 0x0000000000000200ULL)
#define CAPSA_CAP_LOOKUP CAPSA_CAPRIGHT(0, 0x0000000000000400ULL)
#define CAPSA_CAP_FCHDIR CAPSA_CAPRIGHT(0, 0x0000000000000800ULL)
#define CAPSA_CAP_FCHFLAGS CAPSA_CAPRIGHT(0, 0x0000000000001000ULL)
#define CAPSA_CAP_FCHMOD CAPSA_CAPRIGHT(0, 0x0000000000002000ULL)
#define CAPSA_CAP_FCHOWN CAPSA_CAPRIGHT(0, 0x0000000000004000ULL)
#define CAPSA_CAP_FCNTL CAPSA_CAPRIGHT(0, 0x0000000000008000ULL)
#define CAPSA_CAP_FLOCK CAPSA_CAPRIGHT(0, 0x0000000000010000ULL)
#define CAPSA_CAP_FPATHCONF CAPSA_CAPRIGHT(0, 0x0000000000020000ULL)
#define CAPSA_CAP_FSCK CAPSA_CAPRIGHT(0, 0x0000000000040000ULL)
#define CAPSA_CAP_FSTAT CAPSA_CAPRIGHT(0, 0x0000000000080000ULL)
#define CAPSA_CAP_FSTATFS CAPSA_CAPRIGHT(0, 0x0000000000100000ULL)
#define CAPSA_CAP_FUTIMES CAPSA_CAPRIGHT(0, 0x0000000000200000ULL)
#define CAPSA_CAP_LINKAT_TARGET (CAPSA_CAP_LOOKUP | 0x0000000000400000ULL)
#define CAPSA_CAP_MKDIRAT (CAPSA_CAP_LOOKUP | 0x0000000000800000ULL)
#define CAPSA_CAP_MKFIFOAT (CAPSA_CAP_LOOKUP | 0x0000000001000000ULL)
#define CAPSA_CAP_MKNODAT (CAPSA_CAP_LOOKUP | 0x0000000002000000ULL)
#define CAPSA_CAP_RENAMEAT_SOURCE (CAPSA_CAP_LOOKUP | 0x0000000004000000ULL)
#define CAPSA_CAP_SYMLINKAT (CAPSA_CAP_LOOKUP | 0x0000000008000000ULL)
#define CAPSA_CAP_UNLINKAT (CAPSA_CAP_LOOKUP | 0x0000000010000000ULL)
#define CAPSA_CAP_ACCEPT CAPSA_CAPRIGHT(0, 0x0000000020000000ULL)
#define CAPSA_CAP_BIND CAPSA_CAPRIGHT(0, 0x0000000040000000ULL)
#define CAPSA_CAP_CONNECT CAPSA_CAPRIGHT(0, 0x0000000080000000ULL)
#define CAPSA_CAP_GETPEERNAME CAPSA_CAPRIGHT(0, 0x0000000100000000ULL)
#define CAPSA_CAP_GETSOCKNAME CAPSA_CAPRIGHT(0, 0x0000000200000000ULL)
#define CAPSA_CAP_GETSOCKOPT CAPSA_CAPRIGHT(0, 0x0000000400000000ULL)
#define CAPSA_CAP_LISTEN CAPSA_CAPRIGHT(0, 0x0000000800000000ULL)
#define CAPSA_CAP_PEELOFF CAPSA_CAPRIGHT(0, 0x0000001000000000ULL)
#define CAPSA_CAP_RECV CAPSA_CAP_READ
#define CAPSA_CAP_SEND CAPSA_CAP_WRITE
#define CAPSA_CAP_SETSOCKOPT CAPSA_CAPRIGHT(0, 0x0000002000000000ULL)
#define CAPSA_CAP_SHUTDOWN CAPSA_CAPRIGHT(0, 0x0000004000000000ULL)
#define CAPSA_CAP_BINDAT (CAPSA_CAP_LOOKUP | 0x0000008000000000ULL)
#define CAPSA_CAP_CONNECTAT (CAPSA_CAP_LOOKUP | 0x0000010000000000ULL)
#define CAPSA_CAP_LINKAT_SOURCE (CAPSA_CAP_LOOKUP | 0x0000020000000000ULL)
#define CAPSA_CAP_RENAMEAT_TARGET (CAPSA_CAP_LOOKUP | 0x0000040000000000ULL)
#define CAPSA_CAP_ALL0 CAPSA_CAPRIGHT(0, 0x000007FFFFFFFFFFULL)

// Word-0 combinations, as FreeBSD names them.
#define CAPSA_CAP_CHFLAGSAT (CAPSA_CAP_FCHFLAGS | CAPSA_CAP_LOOKUP)
#define CAPSA_CAP_FCHMODAT (CAPSA_CAP_FCHMOD | CAPSA_CAP_LOOKUP)
#define CAPSA_CAP_FCHOWNAT (CAPSA_CAP_FCHOWN | CAPSA_CAP_LOOKUP)
#define CAPSA_CAP_FSTATAT (CAPSA_CAP_FSTAT | CAPSA_CAP_LOOKUP)
#define CAPSA_CAP_FUTIMESAT (CAPSA_CAP_FUTIMES | CAPSA_CAP_LOOKUP)
#define CAPSA_CAP_SOCK_CLIENT                                          \
  (CAPSA_CAP_CONNECT | CAPSA_CAP_GETPEERNAME | CAPSA_CAP_GETSOCKNAME | \
   CAPSA_CAP_GETSOCKOPT | CAPSA_CAP_PEELOFF | CAPSA_CAP_RECV |         \
   CAPSA_CAP_SEND | CAPSA_CAP_SETSOCKOPT | CAPSA_CAP_SHUTDOWN)
#define CAPSA_CAP_SOCK_SERVER                                        \
  (CAPSA_CAP_ACCEPT | CAPSA_CAP_BIND | CAPSA_CAP_GETPEERNAME |       \
   CAPSA_CAP_GETSOCKNAME | CAPSA_CAP_GETSOCKOPT | CAPSA_CAP_LISTEN | \
   CAPSA_CAP_PEELOFF | CAPSA_CAP_RECV | CAPSA_CAP_SEND |             \
   CAPSA_CAP_SETSOCKOPT | CAPSA_CAP_SHUTDOWN)

// Word 1.
#define CAPSA_CAP_MAC_GET CAPSA_CAPRIGHT(1, 0x0000000000000001ULL)
#define CAPSA_CAP_MAC_SET CAPSA_CAPRIGHT(1, 0x0000000000000002ULL)
#define CAPSA_CAP_SEM_GETVALUE CAPSA_CAPRIGHT(1, 0x0000000000000004ULL)
#define CAPSA_CAP_SEM_POST CAPSA_CAPRIGHT(1, 0x0000000000000008ULL)
#define CAPSA_CAP_SEM_WAIT CAPSA_CAPRIGHT(1, 0x0000000000000010ULL)
#define CAPSA_CAP_EVENT CAPSA_CAPRIGHT(1, 0x0000000000000020ULL)
#define CAPSA_CAP_KQUEUE_EVENT CAPSA_CAPRIGHT(1, 0x0000000000000040ULL)
#define CAPSA_CAP_IOCTL CAPSA_CAPRIGHT(1, 0x0000000000000080ULL)
#define CAPSA_CAP_TTYHOOK CAPSA_CAPRIGHT(1, 0x0000000000000100ULL)
#define CAPSA_CAP_PDGETPID CAPSA_CAPRIGHT(1, 0x0000000000000200ULL)
#define CAPSA_CAP_PDWAIT CAPSA_CAPRIGHT(1, 0x0000000000000400ULL)
#define CAPSA_CAP_PDKILL CAPSA_CAPRIGHT(1, 0x0000000000000800ULL)
#define CAPSA_CAP_EXTATTR_DELETE CAPSA_CAPRIGHT(1, 0x0000000000001000ULL)
#define CAPSA_CAP_EXTATTR_GET CAPSA_CAPRIGHT(1, 0x0000000000002000ULL)
#define CAPSA_CAP_EXTATTR_LIST CAPSA_CAPRIGHT(1, 0x0000000000004000ULL)
#define CAPSA_CAP_EXTATTR_SET CAPSA_CAPRIGHT(1, 0x0000000000008000ULL)
#define CAPSA_CAP_ACL_CHECK CAPSA_CAPRIGHT(1, 0x0000000000010000ULL)
#define CAPSA_CAP_ACL_DELETE CAPSA_CAPRIGHT(1, 0x0000000000020000ULL)
#define CAPSA_CAP_ACL_GET CAPSA_CAPRIGHT(1, 0x0000000000040000ULL)
#define CAPSA_CAP_ACL_SET CAPSA_CAPRIGHT(1, 0x0000000000080000ULL)
#define CAPSA_CAP_KQUEUE_CHANGE CAPSA_CAPRIGHT(1, 0x0000000000100000ULL)
#define CAPSA_CAP_KQUEUE (CAPSA_CAP_KQUEUE_EVENT | CAPSA_CAP_KQUEUE_CHANGE)
#define CAPSA_CAP_ALL1 CAPSA_CAPRIGHT(1, 0x00000000001FFFFFULL)
#define CAPSA_CAP_POLL_EVENT CAPSA_CAP_EVENT

// Which word a right lives in (1 or 2), and its version, as FreeBSD's
// CAPIDXBIT / CAPRVER.
#define CAPSA_CAPIDXBIT(right) ((int)(((right) >> 57) & 0x1F))
#define CAPSA_CAPRVER(right) ((int)((right) >> 62))

// fcntl(2) commands a CAPSA_CAP_FCNTL descriptor may use, as a mask for
// capsa_fcntls_limit(). FreeBSD's bit values (1 << its F_GETFL, F_SETFL,
// F_GETOWN, F_SETOWN); capsa maps them onto Linux's commands, including the
// Linux-only ones (F_GETOWN_EX, F_SETSIG, F_ADD_SEALS, ...: see
// rights_policy.c).
#define CAPSA_CAP_FCNTL_GETFL (1u << 3)
#define CAPSA_CAP_FCNTL_SETFL (1u << 4)
#define CAPSA_CAP_FCNTL_GETOWN (1u << 5)
#define CAPSA_CAP_FCNTL_SETOWN (1u << 6)
#define CAPSA_CAP_FCNTL_ALL                                                 \
  (CAPSA_CAP_FCNTL_GETFL | CAPSA_CAP_FCNTL_SETFL | CAPSA_CAP_FCNTL_GETOWN | \
   CAPSA_CAP_FCNTL_SETOWN)

// capsa_ioctls_get() result for a descriptor whose ioctls are not limited.
#define CAPSA_IOCTLS_ALL (-1)
// Longest ioctl list capsa_ioctls_limit() accepts (FreeBSD: 256).
#define CAPSA_IOCTLS_LIMIT_MAX 256

// Rights helpers; the variadic ones take a list of CAPSA_CAP_* values
// (terminated internally, as FreeBSD's macros do). `rights` is owned by the
// caller; each returns its first argument.
capsa_rights_t *capsa_rights_init_list(int version, capsa_rights_t *rights,
                                       ...);
capsa_rights_t *capsa_rights_set_list(capsa_rights_t *rights, ...);
capsa_rights_t *capsa_rights_clear_list(capsa_rights_t *rights, ...);
bool capsa_rights_is_set_list(const capsa_rights_t *rights, ...);
// The same over a va_list of rights ending in 0 (for wrappers such as the
// Capsicum-compatible API).
capsa_rights_t *capsa_rights_vset(capsa_rights_t *rights, va_list ap);
capsa_rights_t *capsa_rights_vclear(capsa_rights_t *rights, va_list ap);
bool capsa_rights_vis_set(const capsa_rights_t *rights, va_list ap);
#define capsa_rights_init(...) \
  capsa_rights_init_list(CAPSA_RIGHTS_VERSION, __VA_ARGS__, 0ULL)
#define capsa_rights_set(...) capsa_rights_set_list(__VA_ARGS__, 0ULL)
#define capsa_rights_clear(...) capsa_rights_clear_list(__VA_ARGS__, 0ULL)
#define capsa_rights_is_set(...) capsa_rights_is_set_list(__VA_ARGS__, 0ULL)

// All rights / no rights (valid sets of the current version).
capsa_rights_t *capsa_rights_init_all(capsa_rights_t *rights);
capsa_rights_t *capsa_rights_init_none(capsa_rights_t *rights);
bool capsa_rights_is_empty(const capsa_rights_t *rights);
bool capsa_rights_is_valid(const capsa_rights_t *rights);
capsa_rights_t *capsa_rights_merge(capsa_rights_t *dst,
                                   const capsa_rights_t *src);
capsa_rights_t *capsa_rights_remove(capsa_rights_t *dst,
                                    const capsa_rights_t *src);
// true when `big` holds every right in `little`.
bool capsa_rights_contains(const capsa_rights_t *big,
                           const capsa_rights_t *little);

// Limits `fd` (still owned by the caller) to `rights` (borrowed). Returns 0,
// or -ENOTCAPABLE when `rights` is not a subset of the current rights,
// -EBADF, -EINVAL for malformed rights, -ENOMEM, -ENOSYS when this kernel
// has no seccomp filters, -EAGAIN when a thread could not be synchronised.
// On -ENOSYS/-EAGAIN the object may already have been narrowed (never
// widened) but the table and capsa_rights_get() are unchanged.
//
// Enforcement (docs/rights.md has the table of every right and gap):
// 1. the kernel object, which survives dup, fork and SCM_RIGHTS: a regular
//    file is reopened read-only (no CAP_WRITE/CAP_FTRUNCATE) or write-only
//    (no CAP_READ) through /proc/self/fd and put back under the same number
//    (outside capability mode only; the file offset and status flags are
//    kept, but the offset is no longer shared with earlier duplicates); a
//    connected socket is shut down for receiving without CAP_RECV and for
//    sending without CAP_SEND;
// 2. a seccomp filter keyed on the number `fd`, installed on every thread
//    (and inherited by children): each syscall needing a missing right fails
//    with ENOTCAPABLE, and dup/dup2/dup3/F_DUPFD*/pidfd_getfd of `fd` are
//    refused (a new number would escape the filter). Sets no_new_privs.
// The number keeps its restriction after a raw close(fd): a descriptor later
// opened under the same number inherits it (never wider, possibly narrower);
// capsa_rights_close() parks the number instead (below). -ENOMEM also when
// the kernel refuses the filter: the process's stacked filters would exceed
// its 32768-instruction cap (about 94 limits; docs/rights.md).
int capsa_rights_limit(int fd, const capsa_rights_t *rights);
// For receivers of many short-lived descriptors (IPC handles): moves `fd`
// (consumed: closed on success, still the caller's on failure) to a number
// counting down from min(RLIMIT_NOFILE, 4096) that was never used or limited
// before, limits it to `rights`, and returns it (owned by the caller,
// close-on-exec). open() and friends return the lowest free numbers, so
// closing the returned number later does not pass its restriction on to an
// unrelated descriptor. -EMFILE once the upper half of the range is used up;
// otherwise as capsa_rights_limit (-ENOTCAPABLE for a number already
// limited: it cannot be duplicated).
int capsa_rights_limit_renumber(int fd, const capsa_rights_t *rights);

// Stores fd's current rights in *rights (owned by the caller): all rights
// for a number never limited. Returns 0 or -EBADF, -EINVAL.
int capsa_rights_get(int fd, capsa_rights_t *rights);

// Limits the ioctl requests a CAPSA_CAP_IOCTL descriptor may use to `cmds`
// (borrowed, `ncmds` <= CAPSA_IOCTLS_LIMIT_MAX; compared on their low 32
// bits, as the kernel does). Only shrinks: -ENOTCAPABLE if a command is not
// in the current list. 0, -EBADF, -EINVAL, -ENOSYS, -ENOMEM.
int capsa_ioctls_limit(int fd, const unsigned long *cmds, size_t ncmds);
// Copies up to `maxcmds` allowed commands into `cmds` (owned by the caller,
// may be NULL when maxcmds is 0); returns their total number, or
// CAPSA_IOCTLS_ALL when ioctls are not limited, or -EBADF.
long capsa_ioctls_get(int fd, unsigned long *cmds, size_t maxcmds);

// Limits the fcntl commands of a CAPSA_CAP_FCNTL descriptor to the
// CAPSA_CAP_FCNTL_* mask `fcntlrights`. Only shrinks (-ENOTCAPABLE).
// 0, -EBADF, -EINVAL (unknown bits), -ENOSYS, -ENOMEM.
int capsa_fcntls_limit(int fd, uint32_t fcntlrights);
// *fcntlrights (owned by the caller) = the current mask. 0 or -EBADF.
int capsa_fcntls_get(int fd, uint32_t *fcntlrights);

// dup(2), dup2(2)/dup3(2), fcntl(F_DUPFD[_CLOEXEC]) and close(2) with
// FreeBSD's semantics for limited numbers (the raw calls stay refused on
// them). A duplicate refers to the same open file description and has
// exactly the original's rights, fcntl mask and ioctl list (it can only be
// narrowed further); it is made by sending the descriptor to ourselves over
// a socketpair and limiting the new number (a filter of its own). When the
// target number of dup3 is (or was) limited, its filter stays: the copy is
// the intersection. capsa_rights_close() of a limited number puts an inert
// placeholder under it instead of freeing it, so the next open() gets
// another number with all rights; every API call on it then answers
// -EBADF. Return the new number (capsa_rights_close: 0) or -EBADF, -EINVAL
// (unknown flags, dup3 onto itself), -EMFILE, and for a limited original
// capsa_rights_limit's errors: -ENOMEM once the process's filters reach the
// kernel's 32768-instruction cap (docs/rights.md, "dup and close").
int capsa_rights_dup(int fd);
int capsa_rights_dup3(int oldfd, int newfd, int flags);
int capsa_rights_dupfd(int fd, int minfd, int flags);
int capsa_rights_close(int fd);

// Which mechanisms hold fd's limits (bit flags), so callers can report
// precisely what is enforced; 0 for a number never limited; -EBADF.
#define CAPSA_RIGHTS_BY_SECCOMP (1u << 0)      // number-keyed filter
#define CAPSA_RIGHTS_BY_ACCESS_MODE (1u << 1)  // reopened narrower
#define CAPSA_RIGHTS_BY_SHUTDOWN (1u << 2)     // socket shut down
int capsa_rights_mechanisms(int fd);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_RIGHTS_H_
