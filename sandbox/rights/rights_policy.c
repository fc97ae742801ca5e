// The rights policy as reviewable data: which syscall, used on a limited
// descriptor number, needs which right (FreeBSD's rights(4) mapping onto
// Linux x86_64 syscalls). One row per (syscall, argument, condition), with
// the reason. Rows of one syscall are adjacent. ioctl and the fcntl command
// allowlist are built by rights_bpf.c from capsa__rights_fcntl_allowed().
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sandbox/rights/rights_internal.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

#define C_EQ(a, m, v) \
  { .arg = (a), .high = 0, .op = CAPSA__COND_EQ, .mask = (m), .value = (v) }
#define C_NE(a, m, v) \
  { .arg = (a), .high = 0, .op = CAPSA__COND_NE, .mask = (m), .value = (v) }
#define C_HI_NE(a, v) \
  { .arg = (a), .high = 1, .op = CAPSA__COND_NE, .mask = ~0u, .value = (v) }
// "flags has every bit of b" / "flags has none of the bits of b".
#define C_SET(a, b) C_EQ(a, b, b)
#define C_CLEAR(a, b) C_EQ(a, b, 0)

#define ROW(sys, fdarg, right, why)                              \
  {                                                              \
    .nr = (sys), .fd_arg = (fdarg), .need = (right), .ncond = 0, \
    .reason = (why)                                              \
  }
#define ROW1(sys, fdarg, right, c0, why)                                       \
  {                                                                            \
    .nr = (sys), .fd_arg = (fdarg), .need = (right), .ncond = 1, .cond = {c0}, \
    .reason = (why)                                                            \
  }
#define ROW2(sys, fdarg, right, c0, c1, why)                     \
  {                                                              \
    .nr = (sys), .fd_arg = (fdarg), .need = (right), .ncond = 2, \
    .cond = {c0, c1}, .reason = (why)                            \
  }

// mmap flags that decide which rights a mapping needs: MAP_SHARED (also part
// of MAP_SHARED_VALIDATE) and MAP_ANONYMOUS (no descriptor involved).
#define MMAP_KIND (MAP_ANONYMOUS | MAP_SHARED)

// clang-format off
const struct capsa__rights_row capsa__rights_rows[] = {
  // Reading and writing.
  ROW(SYS_read, 0, CAPSA_CAP_READ, "read(2)"),
  ROW(SYS_readv, 0, CAPSA_CAP_READ, "readv(2)"),
  ROW(SYS_pread64, 0, CAPSA_CAP_PREAD, "pread(2): read at an offset"),
  ROW(SYS_preadv, 0, CAPSA_CAP_PREAD, "preadv(2)"),
  ROW(SYS_preadv2, 0, CAPSA_CAP_PREAD, "preadv2(2)"),
  ROW(SYS_readahead, 0, CAPSA_CAP_READ, "readahead(2) reads into the cache"),
  ROW(SYS_getdents, 0, CAPSA_CAP_READ, "FreeBSD getdirentries: CAP_READ"),
  ROW(SYS_getdents64, 0, CAPSA_CAP_READ, "FreeBSD getdirentries: CAP_READ"),
  ROW(SYS_write, 0, CAPSA_CAP_WRITE, "write(2)"),
  ROW(SYS_writev, 0, CAPSA_CAP_WRITE, "writev(2)"),
  ROW(SYS_pwrite64, 0, CAPSA_CAP_PWRITE, "pwrite(2): write at an offset"),
  ROW(SYS_pwritev, 0, CAPSA_CAP_PWRITE, "pwritev(2)"),
  ROW(SYS_pwritev2, 0, CAPSA_CAP_PWRITE, "pwritev2(2)"),
  ROW(SYS_fallocate, 0, CAPSA_CAP_PWRITE, "FreeBSD posix_fallocate: CAP_PWRITE"),
  ROW(SYS_sendfile, 0, CAPSA_CAP_WRITE, "sendfile(2) output descriptor"),
  ROW(SYS_sendfile, 1, CAPSA_CAP_READ, "sendfile(2) input descriptor"),
  // An offset pointer reads at an offset, as pread (FreeBSD's sendfile
  // always takes one and asks for CAP_PREAD).
  ROW1(SYS_sendfile, 1, CAPSA_CAP_PREAD, C_NE(2, ~0u, 0),
       "sendfile(2) input at an explicit offset (low half of the pointer)"),
  ROW1(SYS_sendfile, 1, CAPSA_CAP_PREAD, C_HI_NE(2, 0),
       "sendfile(2) input at an explicit offset (high half of the pointer)"),
  ROW(SYS_splice, 0, CAPSA_CAP_READ, "splice(2) input descriptor"),
  ROW(SYS_splice, 2, CAPSA_CAP_WRITE, "splice(2) output descriptor"),
  ROW1(SYS_splice, 0, CAPSA_CAP_PREAD, C_NE(1, ~0u, 0),
       "splice(2) input at an explicit offset (off_in, low half)"),
  ROW1(SYS_splice, 0, CAPSA_CAP_PREAD, C_HI_NE(1, 0),
       "splice(2) input at an explicit offset (off_in, high half)"),
  ROW1(SYS_splice, 2, CAPSA_CAP_PWRITE, C_NE(3, ~0u, 0),
       "splice(2) output at an explicit offset (off_out, low half)"),
  ROW1(SYS_splice, 2, CAPSA_CAP_PWRITE, C_HI_NE(3, 0),
       "splice(2) output at an explicit offset (off_out, high half)"),
  ROW(SYS_tee, 0, CAPSA_CAP_READ, "tee(2) input pipe"),
  ROW(SYS_tee, 1, CAPSA_CAP_WRITE, "tee(2) output pipe"),
  ROW(SYS_copy_file_range, 0, CAPSA_CAP_READ, "copy_file_range(2) input"),
  ROW(SYS_copy_file_range, 2, CAPSA_CAP_WRITE, "copy_file_range(2) output"),
  // FreeBSD's kern_copy_file_range asks for cap_pread_rights /
  // cap_pwrite_rights when the offset pointer is non-NULL. The pointer is a
  // 64-bit value: either half non-zero means "an offset is given".
  ROW1(SYS_copy_file_range, 0, CAPSA_CAP_PREAD, C_NE(1, ~0u, 0),
       "copy_file_range(2) input at an explicit offset (off_in, low half)"),
  ROW1(SYS_copy_file_range, 0, CAPSA_CAP_PREAD, C_HI_NE(1, 0),
       "copy_file_range(2) input at an explicit offset (off_in, high half)"),
  ROW1(SYS_copy_file_range, 2, CAPSA_CAP_PWRITE, C_NE(3, ~0u, 0),
       "copy_file_range(2) output at an explicit offset (off_out, low half)"),
  ROW1(SYS_copy_file_range, 2, CAPSA_CAP_PWRITE, C_HI_NE(3, 0),
       "copy_file_range(2) output at an explicit offset (off_out, high half)"),
  ROW(SYS_vmsplice, 0, CAPSA_CAP_READ, "vmsplice(2): direction unknown to "
      "the filter, needs both rights"),
  ROW(SYS_vmsplice, 0, CAPSA_CAP_WRITE, "vmsplice(2), see above"),

  // Seeking: lseek(fd, 0, SEEK_CUR) only tells the offset.
  ROW(SYS_lseek, 0, CAPSA_CAP_SEEK_TELL, "lseek(2) at all"),
  ROW1(SYS_lseek, 0, CAPSA_CAP_SEEK, C_NE(2, ~0u, SEEK_CUR),
       "lseek(2) moving the offset (whence other than SEEK_CUR)"),
  ROW1(SYS_lseek, 0, CAPSA_CAP_SEEK, C_NE(1, ~0u, 0),
       "lseek(2) moving the offset (non-zero offset, low half)"),
  ROW1(SYS_lseek, 0, CAPSA_CAP_SEEK, C_HI_NE(1, 0),
       "lseek(2) moving the offset (non-zero offset, high half)"),

  // Mappings: FreeBSD's kern_mmap rights. Anonymous mappings ignore the fd.
  ROW1(SYS_mmap, 4, CAPSA_CAP_MMAP, C_CLEAR(3, MAP_ANONYMOUS),
       "mmap(2) of the descriptor"),
  ROW2(SYS_mmap, 4, CAPSA_CAP_MMAP_R, C_CLEAR(3, MAP_ANONYMOUS),
       C_SET(2, PROT_READ), "mmap(2) PROT_READ"),
  ROW2(SYS_mmap, 4, CAPSA_CAP_MMAP_W, C_EQ(3, MMAP_KIND, MAP_SHARED),
       C_SET(2, PROT_WRITE), "mmap(2) PROT_WRITE, MAP_SHARED: writes reach "
       "the file (private writable mappings do not)"),
  ROW2(SYS_mmap, 4, CAPSA_CAP_MMAP_X, C_CLEAR(3, MAP_ANONYMOUS),
       C_SET(2, PROT_EXEC), "mmap(2) PROT_EXEC"),

  // Synchronising and sizing.
  ROW(SYS_fsync, 0, CAPSA_CAP_FSYNC, "fsync(2)"),
  ROW(SYS_fdatasync, 0, CAPSA_CAP_FSYNC, "fdatasync(2)"),
  ROW(SYS_sync_file_range, 0, CAPSA_CAP_FSYNC, "sync_file_range(2)"),
  ROW(SYS_syncfs, 0, CAPSA_CAP_FSYNC, "syncfs(2) through the descriptor"),
  ROW(SYS_ftruncate, 0, CAPSA_CAP_FTRUNCATE, "ftruncate(2)"),
  ROW(SYS_flock, 0, CAPSA_CAP_FLOCK, "flock(2)"),

  // Metadata of the descriptor itself.
  ROW(SYS_fstat, 0, CAPSA_CAP_FSTAT, "fstat(2)"),
  ROW(SYS_newfstatat, 0, CAPSA_CAP_FSTAT, "fstatat(2); glibc's fstat() is "
      "newfstatat(fd, \"\", AT_EMPTY_PATH)"),
  ROW1(SYS_newfstatat, 0, CAPSA_CAP_FSTATAT, C_CLEAR(3, AT_EMPTY_PATH),
       "fstatat(2) looking a name up beneath the directory"),
  ROW(SYS_statx, 0, CAPSA_CAP_FSTAT, "statx(2)"),
  ROW1(SYS_statx, 0, CAPSA_CAP_FSTATAT, C_CLEAR(2, AT_EMPTY_PATH),
       "statx(2) looking a name up beneath the directory"),
  ROW(SYS_fstatfs, 0, CAPSA_CAP_FSTATFS, "fstatfs(2)"),
  ROW(SYS_fchmod, 0, CAPSA_CAP_FCHMOD, "fchmod(2)"),
  ROW(SYS_fchown, 0, CAPSA_CAP_FCHOWN, "fchown(2)"),
  ROW(SYS_fchdir, 0, CAPSA_CAP_FCHDIR, "fchdir(2)"),
  ROW(SYS_utimensat, 0, CAPSA_CAP_FUTIMES, "futimens(2) = utimensat(fd, NULL)"),
  ROW1(SYS_utimensat, 0, CAPSA_CAP_FUTIMESAT, C_NE(1, ~0u, 0),
       "utimensat(2) with a path (low half of the pointer)"),
  ROW1(SYS_utimensat, 0, CAPSA_CAP_FUTIMESAT, C_HI_NE(1, 0),
       "utimensat(2) with a path (high half of the pointer)"),
  ROW(SYS_fgetxattr, 0, CAPSA_CAP_EXTATTR_GET, "extattr_get_fd(2)"),
  ROW(SYS_fsetxattr, 0, CAPSA_CAP_EXTATTR_SET, "extattr_set_fd(2)"),
  ROW(SYS_flistxattr, 0, CAPSA_CAP_EXTATTR_LIST, "extattr_list_fd(2)"),
  ROW(SYS_fremovexattr, 0, CAPSA_CAP_EXTATTR_DELETE, "extattr_delete_fd(2)"),

  // Lookups beneath a directory descriptor.
  ROW(SYS_openat, 0, CAPSA_CAP_LOOKUP, "openat(2) looks a name up"),
  ROW1(SYS_openat, 0, CAPSA_CAP_READ, C_EQ(2, O_ACCMODE, O_RDONLY),
       "openat(O_RDONLY)"),
  ROW1(SYS_openat, 0, CAPSA_CAP_READ, C_EQ(2, O_ACCMODE, O_RDWR),
       "openat(O_RDWR)"),
  ROW1(SYS_openat, 0, CAPSA_CAP_WRITE, C_EQ(2, O_ACCMODE, O_WRONLY),
       "openat(O_WRONLY)"),
  ROW1(SYS_openat, 0, CAPSA_CAP_WRITE, C_EQ(2, O_ACCMODE, O_RDWR),
       "openat(O_RDWR)"),
  ROW1(SYS_openat, 0, CAPSA_CAP_CREATE, C_SET(2, O_CREAT), "openat(O_CREAT)"),
  ROW1(SYS_openat, 0, CAPSA_CAP_CREATE, C_SET(2, __O_TMPFILE),
       "openat(O_TMPFILE) creates a file"),
  ROW1(SYS_openat, 0, CAPSA_CAP_FTRUNCATE, C_SET(2, O_TRUNC),
       "openat(O_TRUNC)"),
  ROW1(SYS_openat, 0, CAPSA_CAP_FSYNC, C_SET(2, O_DSYNC),
       "openat(O_SYNC / O_DSYNC)"),
  ROW(SYS_openat2, 0, CAPSA_CAP_LOOKUP | CAPSA_CAP_READ | CAPSA_CAP_WRITE |
      CAPSA_CAP_CREATE | CAPSA_CAP_FTRUNCATE | CAPSA_CAP_FSYNC,
      "openat2(2): its flags are behind a pointer the filter cannot read, "
      "so it needs every right openat could"),
  ROW(SYS_faccessat, 0, CAPSA_CAP_FSTATAT, "faccessat(2)"),
  ROW(SYS_faccessat2, 0, CAPSA_CAP_FSTATAT, "faccessat2(2)"),
  ROW(SYS_readlinkat, 0, CAPSA_CAP_LOOKUP, "readlinkat(2)"),
  ROW(SYS_mkdirat, 0, CAPSA_CAP_MKDIRAT, "mkdirat(2)"),
  ROW1(SYS_mknodat, 0, CAPSA_CAP_MKFIFOAT, C_EQ(2, S_IFMT, S_IFIFO),
       "mkfifoat(2) = mknodat(S_IFIFO)"),
  ROW1(SYS_mknodat, 0, CAPSA_CAP_MKNODAT, C_NE(2, S_IFMT, S_IFIFO),
       "mknodat(2)"),
  ROW(SYS_unlinkat, 0, CAPSA_CAP_UNLINKAT, "unlinkat(2)"),
  ROW(SYS_renameat, 0, CAPSA_CAP_RENAMEAT_SOURCE, "renameat(2) source dir"),
  ROW(SYS_renameat, 2, CAPSA_CAP_RENAMEAT_TARGET, "renameat(2) target dir"),
  ROW(SYS_renameat2, 0, CAPSA_CAP_RENAMEAT_SOURCE, "renameat2(2) source dir"),
  ROW(SYS_renameat2, 2, CAPSA_CAP_RENAMEAT_TARGET, "renameat2(2) target dir"),
  ROW(SYS_linkat, 0, CAPSA_CAP_LINKAT_SOURCE, "linkat(2) source dir"),
  ROW(SYS_linkat, 2, CAPSA_CAP_LINKAT_TARGET, "linkat(2) target dir"),
  ROW(SYS_symlinkat, 1, CAPSA_CAP_SYMLINKAT, "symlinkat(2)"),
  ROW(SYS_fchmodat, 0, CAPSA_CAP_FCHMODAT, "fchmodat(2)"),
#ifdef SYS_fchmodat2
  ROW(SYS_fchmodat2, 0, CAPSA_CAP_FCHMODAT, "fchmodat2(2)"),
#else
  ROW(452, 0, CAPSA_CAP_FCHMODAT, "fchmodat2(2) (Linux 6.6)"),
#endif
  ROW(SYS_fchownat, 0, CAPSA_CAP_FCHOWNAT, "fchownat(2)"),
  ROW(SYS_futimesat, 0, CAPSA_CAP_FUTIMESAT, "futimesat(2)"),
  ROW(SYS_name_to_handle_at, 0, CAPSA_CAP_FSTATAT, "name_to_handle_at(2)"),
  ROW(SYS_execveat, 0, CAPSA_CAP_FEXECVE, "fexecve(3) = execveat(fd)"),

  // Sockets.
  ROW(SYS_recvfrom, 0, CAPSA_CAP_RECV, "recv(2)/recvfrom(2)"),
  ROW(SYS_recvmsg, 0, CAPSA_CAP_RECV, "recvmsg(2)"),
  ROW(SYS_recvmmsg, 0, CAPSA_CAP_RECV, "recvmmsg(2)"),
  ROW(SYS_sendto, 0, CAPSA_CAP_SEND, "send(2)/sendto(2)"),
  // FreeBSD's sendit: a destination address needs CAP_CONNECT as well.
  ROW1(SYS_sendto, 0, CAPSA_CAP_CONNECT, C_NE(4, ~0u, 0),
       "sendto(2) with an address (low half of the pointer)"),
  ROW1(SYS_sendto, 0, CAPSA_CAP_CONNECT, C_HI_NE(4, 0),
       "sendto(2) with an address (high half of the pointer)"),
  ROW(SYS_sendmsg, 0, CAPSA_CAP_SEND, "sendmsg(2)"),
  ROW(SYS_sendmmsg, 0, CAPSA_CAP_SEND, "sendmmsg(2)"),
  ROW(SYS_accept, 0, CAPSA_CAP_ACCEPT, "accept(2)"),
  ROW(SYS_accept4, 0, CAPSA_CAP_ACCEPT, "accept4(2)"),
  ROW(SYS_bind, 0, CAPSA_CAP_BIND, "bind(2)"),
  ROW(SYS_connect, 0, CAPSA_CAP_CONNECT, "connect(2)"),
  ROW(SYS_listen, 0, CAPSA_CAP_LISTEN, "listen(2)"),
  ROW(SYS_getpeername, 0, CAPSA_CAP_GETPEERNAME, "getpeername(2)"),
  ROW(SYS_getsockname, 0, CAPSA_CAP_GETSOCKNAME, "getsockname(2)"),
  ROW(SYS_getsockopt, 0, CAPSA_CAP_GETSOCKOPT, "getsockopt(2)"),
  ROW(SYS_setsockopt, 0, CAPSA_CAP_SETSOCKOPT, "setsockopt(2)"),
  ROW(SYS_shutdown, 0, CAPSA_CAP_SHUTDOWN, "shutdown(2)"),

  // timerfds: arming writes the timer, querying reads it (Capsicum for
  // Linux's convention; FreeBSD's timerfd checks the descriptor's rights).
  ROW(SYS_timerfd_settime, 0, CAPSA_CAP_WRITE, "timerfd_settime(2) arms it"),
  ROW(SYS_timerfd_gettime, 0, CAPSA_CAP_READ, "timerfd_gettime(2) reads it"),

  // Events: epoll registers the descriptor; poll/select take arrays the
  // filter cannot read (a documented gap). The epoll instance itself is
  // FreeBSD's kqueue: changing its set needs CAP_KQUEUE_CHANGE, collecting
  // its events CAP_KQUEUE_EVENT (kevent(2)).
  ROW(SYS_epoll_ctl, 2, CAPSA_CAP_EVENT, "epoll_ctl(2) on the descriptor"),
  ROW(SYS_epoll_ctl, 0, CAPSA_CAP_KQUEUE_CHANGE,
      "kevent(2) changelist: epoll_ctl(2) on the instance"),
  ROW(SYS_epoll_wait, 0, CAPSA_CAP_KQUEUE_EVENT,
      "kevent(2) eventlist: epoll_wait(2) on the instance"),
  ROW(SYS_epoll_pwait, 0, CAPSA_CAP_KQUEUE_EVENT,
      "kevent(2) eventlist: epoll_pwait(2) on the instance"),
  ROW(SYS_epoll_pwait2, 0, CAPSA_CAP_KQUEUE_EVENT,
      "kevent(2) eventlist: epoll_pwait2(2) on the instance"),

  // Process descriptors (pidfds).
  ROW(SYS_pidfd_send_signal, 0, CAPSA_CAP_PDKILL, "pdkill(2)"),
  ROW1(SYS_waitid, 1, CAPSA_CAP_PDWAIT, C_EQ(0, ~0u, P_PIDFD),
       "pdwait: waitid(P_PIDFD, fd)"),

  // New numbers for the same file would not carry the filter.
  ROW(SYS_dup, 0, CAPSA__NEED_NEVER, "dup(2): the copy would escape the "
      "number-keyed filter"),
  ROW(SYS_dup2, 0, CAPSA__NEED_NEVER, "dup2(2), as dup"),
  ROW(SYS_dup3, 0, CAPSA__NEED_NEVER, "dup3(2), as dup"),
  ROW(SYS_pidfd_getfd, 1, CAPSA__NEED_NEVER, "pidfd_getfd(2) on ourselves "
      "is a dup"),
};
// clang-format on
const size_t capsa__rights_nrows =
    sizeof(capsa__rights_rows) / sizeof(capsa__rights_rows[0]);

// clang-format off
const struct capsa__rights_exempt capsa__rights_exempt[] = {
  {SYS_close, 0, "releases authority; FreeBSD checks no right"},
  {SYS_close_range, 0, "releases authority (a range of numbers)"},
  {SYS_dup2, 1, "the target number: what it held is closed (released)"},
  {SYS_dup3, 1, "the target number: what it held is closed (released)"},
  {SYS_fadvise64, 0, "FreeBSD posix_fadvise: cap_no_rights (a hint)"},
  {SYS_fcntl, 0, "per command: kFcntlRows' allowlist (rights_bpf.c)"},
  {SYS_ioctl, 0, "per command: cap_ioctls_limit's allowlist (rights_bpf.c)"},
  {SYS_signalfd, 0,
   "changes the mask of a signalfd it holds: its own signals, no other "
   "object (FreeBSD has no signalfd)"},
  {SYS_signalfd4, 0,
   "changes the mask of a signalfd it holds: its own signals, no other "
   "object (FreeBSD has no signalfd)"},
};
// clang-format on
const size_t capsa__rights_nexempt =
    sizeof(capsa__rights_exempt) / sizeof(capsa__rights_exempt[0]);

bool capsa__rights_has(const capsa_rights_t *rights, uint64_t need) {
  int idx = CAPSA_CAPIDXBIT(need);
  int w = idx == 2 ? 1 : 0;
  return (rights->cr_rights[w] & need) == need;
}

// Linux fcntl commands by the right and FreeBSD fcntl bit they need.
#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif
#ifndef F_GET_RW_HINT
#define F_GET_RW_HINT 1035
#define F_SET_RW_HINT 1036
#define F_GET_FILE_RW_HINT 1037
#define F_SET_FILE_RW_HINT 1038
#endif
#ifndef F_GETOWNER_UIDS
#define F_GETOWNER_UIDS 17
#endif

struct fcntl_row {
  uint32_t cmd;
  uint64_t need;  // 0: no right needed
  uint32_t fbit;  // CAPSA_CAP_FCNTL_* bit needed as well (0: none)
};
// clang-format off
static const struct fcntl_row kFcntlRows[] = {
  // FreeBSD checks no right for the close-on-exec flag.
  {F_GETFD, 0, 0},
  {F_SETFD, 0, 0},
  // Status flags and owner: CAP_FCNTL and the matching cap_fcntls_limit bit.
  {F_GETFL, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETFL},
  {F_SETFL, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETFL},
  {F_GETOWN, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETOWN},
  {F_SETOWN, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETOWN},
  // Linux-only commands, grouped with the FreeBSD bit closest in effect.
  {F_GETOWN_EX, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETOWN},
  {F_SETOWN_EX, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETOWN},
  {F_GETOWNER_UIDS, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETOWN},
  {F_GETSIG, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETOWN},
  {F_SETSIG, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETOWN},
  {F_NOTIFY, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETOWN},
  {F_GETPIPE_SZ, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETFL},
  {F_SETPIPE_SZ, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETFL},
  {F_GET_SEALS, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETFL},
  {F_ADD_SEALS, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETFL},
  {F_GET_RW_HINT, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETFL},
  {F_SET_RW_HINT, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETFL},
  {F_GET_FILE_RW_HINT, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_GETFL},
  {F_SET_FILE_RW_HINT, CAPSA_CAP_FCNTL, CAPSA_CAP_FCNTL_SETFL},
  // Locks and leases: CAP_FLOCK, as FreeBSD's F_GETLK/F_SETLK(W).
  {F_GETLK, CAPSA_CAP_FLOCK, 0},
  {F_SETLK, CAPSA_CAP_FLOCK, 0},
  {F_SETLKW, CAPSA_CAP_FLOCK, 0},
  {F_OFD_GETLK, CAPSA_CAP_FLOCK, 0},
  {F_OFD_SETLK, CAPSA_CAP_FLOCK, 0},
  {F_OFD_SETLKW, CAPSA_CAP_FLOCK, 0},
  {F_GETLEASE, CAPSA_CAP_FLOCK, 0},
  {F_SETLEASE, CAPSA_CAP_FLOCK, 0},
  // Never on a limited number: F_DUPFD, F_DUPFD_CLOEXEC (new numbers escape
  // the filter), and any command not listed here (allowlist).
};
// clang-format on

size_t capsa__rights_fcntl_allowed(const struct capsa__rights_entry *e,
                                   uint32_t *cmds, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof(kFcntlRows) / sizeof(kFcntlRows[0]); i++) {
    const struct fcntl_row *r = &kFcntlRows[i];
    if (r->need != 0 && !capsa__rights_has(&e->rights, r->need)) continue;
    if (r->fbit != 0 && (e->fcntls & r->fbit) == 0) continue;
    if (n < max) cmds[n] = r->cmd;
    n++;
  }
  return n;
}
