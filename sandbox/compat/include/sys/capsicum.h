// FreeBSD's <sys/capsicum.h> on Linux, over capsa: code written for
// Capsicum compiles unchanged and gets capsa's capability mode and rights.
//
//   #include <err.h>
//   #include <sys/capsicum.h>
//
//   void sandbox(int fd) {
//     cap_rights_t r;
//     cap_rights_init(&r, CAP_READ, CAP_FSTAT);
//     if (cap_rights_limit(fd, &r) < 0 && errno != ENOSYS) err(1, "limit");
//     if (cap_enter() < 0) err(1, "cap_enter");
//     if (write(fd, "x", 1) < 0) warn("write");             // ENOTCAPABLE
//     if (open("/etc/passwd", O_RDONLY) < 0) warn("open");  // ECAPMODE
//   }
//
// Build with `cc prog.c $(pkg-config --cflags --libs capsa)`. FreeBSD's
// conventions hold: functions return -1 and set errno (0 on success). The
// values of CAP_* and the cap_rights_t layout are FreeBSD's; ECAPMODE and
// ENOTCAPABLE are 1094 and 1093 (FreeBSD's plus 1000, see
// sandbox/errors.h). Differences: docs/freebsd-differences.md.
#ifndef CAPSA_COMPAT_SYS_CAPSICUM_H_
#define CAPSA_COMPAT_SYS_CAPSICUM_H_

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/errors.h"
#include "sandbox/rights/rights.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

#define CAP_RIGHTS_VERSION_00 0
#define CAP_RIGHTS_VERSION CAP_RIGHTS_VERSION_00

// Same layout as capsa_rights_t (checked in the implementation).
typedef struct cap_rights {
  uint64_t cr_rights[CAP_RIGHTS_VERSION + 2];
} cap_rights_t;

typedef unsigned long cap_ioctl_t;

#define CAPRIGHT(idx, bit) CAPSA_CAPRIGHT(idx, bit)
#define CAPRVER(right) CAPSA_CAPRVER(right)
#define CAPVER(rights) CAPRVER((rights)->cr_rights[0])
#define CAPARSIZE(rights) (CAPVER(rights) + 2)
#define CAPIDXBIT(right) CAPSA_CAPIDXBIT(right)

#define CAP_READ CAPSA_CAP_READ
#define CAP_WRITE CAPSA_CAP_WRITE
#define CAP_SEEK_TELL CAPSA_CAP_SEEK_TELL
#define CAP_SEEK CAPSA_CAP_SEEK
#define CAP_PREAD CAPSA_CAP_PREAD
#define CAP_PWRITE CAPSA_CAP_PWRITE
#define CAP_MMAP CAPSA_CAP_MMAP
#define CAP_MMAP_R CAPSA_CAP_MMAP_R
#define CAP_MMAP_W CAPSA_CAP_MMAP_W
#define CAP_MMAP_X CAPSA_CAP_MMAP_X
#define CAP_MMAP_RW CAPSA_CAP_MMAP_RW
#define CAP_MMAP_RX CAPSA_CAP_MMAP_RX
#define CAP_MMAP_WX CAPSA_CAP_MMAP_WX
#define CAP_MMAP_RWX CAPSA_CAP_MMAP_RWX
#define CAP_CREATE CAPSA_CAP_CREATE
#define CAP_FEXECVE CAPSA_CAP_FEXECVE
#define CAP_FSYNC CAPSA_CAP_FSYNC
#define CAP_FTRUNCATE CAPSA_CAP_FTRUNCATE
#define CAP_LOOKUP CAPSA_CAP_LOOKUP
#define CAP_FCHDIR CAPSA_CAP_FCHDIR
#define CAP_FCHFLAGS CAPSA_CAP_FCHFLAGS
#define CAP_CHFLAGSAT CAPSA_CAP_CHFLAGSAT
#define CAP_FCHMOD CAPSA_CAP_FCHMOD
#define CAP_FCHMODAT CAPSA_CAP_FCHMODAT
#define CAP_FCHOWN CAPSA_CAP_FCHOWN
#define CAP_FCHOWNAT CAPSA_CAP_FCHOWNAT
#define CAP_FCNTL CAPSA_CAP_FCNTL
#define CAP_FLOCK CAPSA_CAP_FLOCK
#define CAP_FPATHCONF CAPSA_CAP_FPATHCONF
#define CAP_FSCK CAPSA_CAP_FSCK
#define CAP_FSTAT CAPSA_CAP_FSTAT
#define CAP_FSTATAT CAPSA_CAP_FSTATAT
#define CAP_FSTATFS CAPSA_CAP_FSTATFS
#define CAP_FUTIMES CAPSA_CAP_FUTIMES
#define CAP_FUTIMESAT CAPSA_CAP_FUTIMESAT
#define CAP_LINKAT_TARGET CAPSA_CAP_LINKAT_TARGET
#define CAP_MKDIRAT CAPSA_CAP_MKDIRAT
#define CAP_MKFIFOAT CAPSA_CAP_MKFIFOAT
#define CAP_MKNODAT CAPSA_CAP_MKNODAT
#define CAP_RENAMEAT_SOURCE CAPSA_CAP_RENAMEAT_SOURCE
#define CAP_SYMLINKAT CAPSA_CAP_SYMLINKAT
#define CAP_UNLINKAT CAPSA_CAP_UNLINKAT
#define CAP_ACCEPT CAPSA_CAP_ACCEPT
#define CAP_BIND CAPSA_CAP_BIND
#define CAP_CONNECT CAPSA_CAP_CONNECT
#define CAP_GETPEERNAME CAPSA_CAP_GETPEERNAME
#define CAP_GETSOCKNAME CAPSA_CAP_GETSOCKNAME
#define CAP_GETSOCKOPT CAPSA_CAP_GETSOCKOPT
#define CAP_LISTEN CAPSA_CAP_LISTEN
#define CAP_PEELOFF CAPSA_CAP_PEELOFF
#define CAP_RECV CAPSA_CAP_RECV
#define CAP_SEND CAPSA_CAP_SEND
#define CAP_SETSOCKOPT CAPSA_CAP_SETSOCKOPT
#define CAP_SHUTDOWN CAPSA_CAP_SHUTDOWN
#define CAP_BINDAT CAPSA_CAP_BINDAT
#define CAP_CONNECTAT CAPSA_CAP_CONNECTAT
#define CAP_LINKAT_SOURCE CAPSA_CAP_LINKAT_SOURCE
#define CAP_RENAMEAT_TARGET CAPSA_CAP_RENAMEAT_TARGET
#define CAP_SOCK_CLIENT CAPSA_CAP_SOCK_CLIENT
#define CAP_SOCK_SERVER CAPSA_CAP_SOCK_SERVER
#define CAP_ALL0 CAPSA_CAP_ALL0
#define CAP_MAC_GET CAPSA_CAP_MAC_GET
#define CAP_MAC_SET CAPSA_CAP_MAC_SET
#define CAP_SEM_GETVALUE CAPSA_CAP_SEM_GETVALUE
#define CAP_SEM_POST CAPSA_CAP_SEM_POST
#define CAP_SEM_WAIT CAPSA_CAP_SEM_WAIT
#define CAP_EVENT CAPSA_CAP_EVENT
#define CAP_KQUEUE_EVENT CAPSA_CAP_KQUEUE_EVENT
#define CAP_IOCTL CAPSA_CAP_IOCTL
#define CAP_TTYHOOK CAPSA_CAP_TTYHOOK
#define CAP_PDGETPID CAPSA_CAP_PDGETPID
#define CAP_PDWAIT CAPSA_CAP_PDWAIT
#define CAP_PDKILL CAPSA_CAP_PDKILL
#define CAP_EXTATTR_DELETE CAPSA_CAP_EXTATTR_DELETE
#define CAP_EXTATTR_GET CAPSA_CAP_EXTATTR_GET
#define CAP_EXTATTR_LIST CAPSA_CAP_EXTATTR_LIST
#define CAP_EXTATTR_SET CAPSA_CAP_EXTATTR_SET
#define CAP_ACL_CHECK CAPSA_CAP_ACL_CHECK
#define CAP_ACL_DELETE CAPSA_CAP_ACL_DELETE
#define CAP_ACL_GET CAPSA_CAP_ACL_GET
#define CAP_ACL_SET CAPSA_CAP_ACL_SET
#define CAP_KQUEUE_CHANGE CAPSA_CAP_KQUEUE_CHANGE
#define CAP_KQUEUE CAPSA_CAP_KQUEUE
#define CAP_ALL1 CAPSA_CAP_ALL1
#define CAP_POLL_EVENT CAPSA_CAP_POLL_EVENT

#define CAP_ALL(rights)                                                       \
  do {                                                                        \
    (rights)->cr_rights[0] = ((uint64_t)CAP_RIGHTS_VERSION << 62) | CAP_ALL0; \
    (rights)->cr_rights[1] = CAP_ALL1;                                        \
  } while (0)
#define CAP_NONE(rights)                                          \
  do {                                                            \
    (rights)->cr_rights[0] =                                      \
        ((uint64_t)CAP_RIGHTS_VERSION << 62) | CAPRIGHT(0, 0ULL); \
    (rights)->cr_rights[1] = CAPRIGHT(1, 0ULL);                   \
  } while (0)

#define CAP_FCNTL_GETFL CAPSA_CAP_FCNTL_GETFL
#define CAP_FCNTL_SETFL CAPSA_CAP_FCNTL_SETFL
#define CAP_FCNTL_GETOWN CAPSA_CAP_FCNTL_GETOWN
#define CAP_FCNTL_SETOWN CAPSA_CAP_FCNTL_SETOWN
#define CAP_FCNTL_ALL CAPSA_CAP_FCNTL_ALL

#define CAP_IOCTLS_ALL SSIZE_MAX

#define cap_rights_init(...) \
  __cap_rights_init(CAP_RIGHTS_VERSION, __VA_ARGS__, 0ULL)
cap_rights_t *__cap_rights_init(int version, cap_rights_t *rights, ...);
#define cap_rights_set(...) __cap_rights_set(__VA_ARGS__, 0ULL)
cap_rights_t *__cap_rights_set(cap_rights_t *rights, ...);
#define cap_rights_clear(...) __cap_rights_clear(__VA_ARGS__, 0ULL)
cap_rights_t *__cap_rights_clear(cap_rights_t *rights, ...);
#define cap_rights_is_set(...) __cap_rights_is_set(__VA_ARGS__, 0ULL)
bool __cap_rights_is_set(const cap_rights_t *rights, ...);

bool cap_rights_is_empty(const cap_rights_t *rights);
bool cap_rights_is_valid(const cap_rights_t *rights);
cap_rights_t *cap_rights_merge(cap_rights_t *dst, const cap_rights_t *src);
cap_rights_t *cap_rights_remove(cap_rights_t *dst, const cap_rights_t *src);
bool cap_rights_contains(const cap_rights_t *big, const cap_rights_t *little);

// Enters capability mode (capsa_cap_enter). 0, or -1 with errno.
int cap_enter(void);
// Whether the process is in capability mode.
bool cap_sandboxed(void);
// *modep = 1 in capability mode, 0 otherwise. 0, or -1 with errno.
int cap_getmode(unsigned int *modep);

int cap_rights_limit(int fd, const cap_rights_t *rights);
#define cap_rights_get(fd, rights) \
  __cap_rights_get(CAP_RIGHTS_VERSION, (fd), (rights))
int __cap_rights_get(int version, int fd, cap_rights_t *rights);
int cap_ioctls_limit(int fd, const cap_ioctl_t *cmds, size_t ncmds);
// Number of allowed commands (copying up to maxcmds), or CAP_IOCTLS_ALL.
ssize_t cap_ioctls_get(int fd, cap_ioctl_t *cmds, size_t maxcmds);
int cap_fcntls_limit(int fd, uint32_t fcntlrights);
int cap_fcntls_get(int fd, uint32_t *fcntlrightsp);

// FreeBSD's dup(2), dup2(2), dup3(2), fcntl(F_DUPFD[_CLOEXEC]) and close(2)
// for limited descriptors: a duplicate carries the same rights, a closed
// limited number is not inherited by the next open (capsa_rights_dup and
// friends in sandbox/rights/rights.h). Every other fcntl command goes straight
// to the kernel. -1 with errno, as libc's.
int capsa_fbsd_close(int fd);
int capsa_fbsd_dup(int fd);
int capsa_fbsd_dup2(int oldfd, int newfd);
int capsa_fbsd_dup3(int oldfd, int newfd, int flags);
int capsa_fbsd_fcntl(int fd, int cmd, ...);

// C code that includes this header calls them under libc's names (define
// CAPSA_NO_FD_WRAPPERS first to keep libc's); C++ opts in with
// CAPSA_FD_WRAPPERS, since function-like macros named close/dup would also
// rewrite member functions such as std::fstream::close. Calls libc makes
// itself (fclose, closedir) and raw syscall(2) are not wrapped: a number
// closed that way keeps its filter (docs/freebsd-differences.md).
#if (!defined(__cplusplus) && !defined(CAPSA_NO_FD_WRAPPERS)) || \
    defined(CAPSA_FD_WRAPPERS)
#define close(fd) capsa_fbsd_close(fd)
#define dup(fd) capsa_fbsd_dup(fd)
#define dup2(oldfd, newfd) capsa_fbsd_dup2(oldfd, newfd)
#define dup3(oldfd, newfd, flags) capsa_fbsd_dup3(oldfd, newfd, flags)
#define fcntl(...) capsa_fbsd_fcntl(__VA_ARGS__)
#endif

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_COMPAT_SYS_CAPSICUM_H_
