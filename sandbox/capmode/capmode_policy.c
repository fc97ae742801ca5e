// The capability-mode seccomp policy, as reviewable data: one row per
// syscall (and condition), with the action and the reason. Anything not
// listed is refused with ECAPMODE (the filter's default action); i386 and x32
// calls are refused before any row is looked at.
//
// Conditions on C `int` arguments compare the low 32 bits only (callers may
// sign- or zero-extend them); ioctl request numbers likewise, so TIOCSTI with
// high bits set (CVE-2019-10063) is still TIOCSTI. Descriptor arguments of
// *at() calls must be a non-negative int: AT_FDCWD (-100) and every other
// negative value fall through to ECAPMODE; Landlock then confines the path
// beneath a directory held at entry.
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <termios.h>

#include "sandbox/capmode/capmode_internal.h"

#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif
#ifndef ARCH_SET_GS
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004
#endif

// Comparisons.
#define M32(a, v) \
  { (a), CAPSA_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)(v) }
#define NOBITS(a, m) \
  { (a), CAPSA_CMP_MASKED_EQ, (m), 0 }
#define IS_NULL(a) \
  { (a), CAPSA_CMP_EQ, 0, 0 }
// A descriptor: a non-negative int (so never AT_FDCWD).
#define FD(a) NOBITS((a), 0x80000000u)

// Rows.
#define ALLOW(n, r) \
  { n, CAPSA__ALLOW, 0, 0, {{0}}, r }
#define ALLOW_IF(n, r, ...)                             \
  {                                                     \
    n, CAPSA__ALLOW, 0,                                 \
        sizeof((struct capsa_arg_cmp[]){__VA_ARGS__}) / \
            sizeof(struct capsa_arg_cmp),               \
        {__VA_ARGS__}, r                                \
  }
#define REFUSE(n, r) \
  { n, CAPSA__REFUSE, 0, 0, {{0}}, r }
#define ERRNO(n, e, r) \
  { n, CAPSA__ERRNO, (e), 0, {{0}}, r }
// ENOTCAPABLE unless the process type grants the call (see CAPSA__GRANT).
#define GRANT(n, r) \
  { n, CAPSA__GRANT, CAPSA_ENOTCAPABLE, 0, {{0}}, r }
#define GRANT_IF(n, r, ...)                             \
  {                                                     \
    n, CAPSA__GRANT, CAPSA_ENOTCAPABLE,                 \
        sizeof((struct capsa_arg_cmp[]){__VA_ARGS__}) / \
            sizeof(struct capsa_arg_cmp),               \
        {__VA_ARGS__}, r                                \
  }
// Descriptor argument `a` a negative int other than AT_FDCWD: EBADF, as
// FreeBSD answers an invalid descriptor before looking at capability mode.
// The comparison shown (sign bit of the low 32 bits) is the row's
// condition; the compiled prologue also lets AT_FDCWD through to ECAPMODE.
#define BADFD(n, a)                                                       \
  {                                                                       \
    n, CAPSA__BADFD, 9 /* EBADF */, 1,                                    \
        {{(a), CAPSA_CMP_MASKED_EQ, 0x80000000u, 0x80000000u}},           \
        "negative descriptor other than AT_FDCWD: EBADF (AT_FDCWD stays " \
        "ECAPMODE)"                                                       \
  }
#define NOT_NULL(a) \
  { (a), CAPSA_CMP_NE, 0, 0 }

// clone() namespace flags. CLONE_NEWTIME (0x80) overlaps clone()'s exit
// signal byte and only works through clone3/unshare, both refused.
#define CLONE_NAMESPACES                                         \
  (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
   CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
_Static_assert(CLONE_NAMESPACES == CAPSA_CLONE_NAMESPACES,
               "capmode.h's CAPSA_CLONE_NAMESPACES must match the table");
// socket()/socketpair() type without its flag bits must equal the type.
#define SOCK_TYPE_IS(t)                                              \
  {                                                                  \
    1, CAPSA_CMP_MASKED_EQ,                                          \
        0xffffffffu & ~(uint64_t)(SOCK_NONBLOCK | SOCK_CLOEXEC), (t) \
  }
// seccomp() flags that would widen: a listener hands decisions to another
// process; SPEC_ALLOW turns off speculation mitigations.
#define SECCOMP_WIDENING_FLAGS \
  (SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_SPEC_ALLOW)

const struct capsa__capmode_row capsa__capmode_table[] = {
    // --- I/O on held descriptors (rights layers narrow these per fd) ---
    ALLOW("read", "I/O on held descriptors"),
    ALLOW("write", "I/O on held descriptors"),
    ALLOW("readv", "I/O on held descriptors"),
    ALLOW("writev", "I/O on held descriptors"),
    ALLOW("pread64", "I/O on held descriptors"),
    ALLOW("pwrite64", "I/O on held descriptors"),
    ALLOW("preadv", "I/O on held descriptors"),
    ALLOW("pwritev", "I/O on held descriptors"),
    ALLOW("preadv2", "I/O on held descriptors"),
    ALLOW("pwritev2", "I/O on held descriptors"),
    ALLOW("lseek", "I/O on held descriptors"),
    ALLOW("sendfile", "between held descriptors"),
    ALLOW("splice", "between held descriptors"),
    ALLOW("tee", "between held descriptors"),
    ALLOW("vmsplice", "into a held pipe"),
    ALLOW("copy_file_range", "between held descriptors"),
    ALLOW("close", "releases authority"),
    ALLOW("close_range", "releases authority"),
    ALLOW("dup", "same object, same rights"),
    ALLOW("dup2", "same object, same rights"),
    ALLOW("dup3", "same object, same rights"),
    ALLOW("fstat", "metadata of a held descriptor"),
    ALLOW_IF("newfstatat", "fstat(fd) and stat beneath a held dir (Landlock)",
             FD(0)),
    ALLOW_IF("statx", "stat beneath a held dir (Landlock)", FD(0)),
    ALLOW("fstatfs", "held descriptor"),
    ALLOW("ftruncate", "held descriptor (Landlock TRUNCATE for new opens)"),
    ALLOW("fallocate", "held descriptor"),
    ALLOW("fsync", "held descriptor"),
    ALLOW("fdatasync", "held descriptor"),
    ALLOW("syncfs", "held descriptor's filesystem"),
    ALLOW("sync_file_range", "held descriptor"),
    ALLOW("fadvise64", "held descriptor"),
    ALLOW("readahead", "held descriptor"),
    // Metadata writes act as the process's uid on the object, which for an
    // unprivileged host's renderer is the host user's: a read-only handle
    // would be enough to chmod the user's file. Granted per process type.
    GRANT("flock", "lent identity: CAP_FLOCK; granted per process type"),
    GRANT("fchmod", "lent identity: CAP_FCHMOD; granted per process type"),
    GRANT("fchown", "lent identity: CAP_FCHOWN; granted per process type"),
    ALLOW("fgetxattr", "held descriptor"),
    ALLOW("flistxattr", "held descriptor"),
    GRANT("fsetxattr",
          "lent identity: CAP_EXTATTR_SET; granted per process type"),
    GRANT("fremovexattr",
          "lent identity: CAP_EXTATTR_DELETE; granted per process type"),
    ALLOW("getdents64", "list a held directory"),
    ALLOW("getdents", "list a held directory"),

    // --- *at() relative to a held directory; Landlock confines the path ---
    ALLOW_IF("openat", "beneath a held dir; AT_FDCWD refused", FD(0)),
    ALLOW_IF("openat2", "beneath a held dir; AT_FDCWD refused", FD(0)),
    ALLOW_IF("faccessat", "beneath a held dir", FD(0)),
    ALLOW_IF("faccessat2", "beneath a held dir", FD(0)),
    ALLOW_IF("readlinkat", "beneath a held dir", FD(0)),
    ALLOW_IF("mkdirat", "beneath a held dir", FD(0)),
    ALLOW_IF("mknodat",
             "fifo/socket beneath a held dir; Landlock refuses devices", FD(0)),
    ALLOW_IF("unlinkat", "beneath a held dir", FD(0)),
    ALLOW_IF("renameat", "within held dirs", FD(0), FD(2)),
    ALLOW_IF("renameat2", "within held dirs", FD(0), FD(2)),
    ALLOW_IF("linkat", "within held dirs", FD(0), FD(2)),
    ALLOW_IF("symlinkat", "beneath a held dir", FD(1)),
    // Attribute changes beneath a held dir lend identity as fchmod does
    // (Landlock has no right for them): granted per process type.
    GRANT_IF("fchmodat",
             "lent identity: CAP_FCHMODAT; granted per process type", FD(0)),
    GRANT_IF("fchownat",
             "lent identity: CAP_FCHOWNAT; granted per process type", FD(0)),
    GRANT_IF("utimensat",
             "beneath a held dir: lent identity, CAP_FUTIMESAT; granted per "
             "process type",
             FD(0), NOT_NULL(1)),
    GRANT_IF("utimensat",
             "futimens = utimensat(fd, NULL): lent identity, CAP_FUTIMES; "
             "granted per process type",
             IS_NULL(1)),
    GRANT_IF("futimesat",
             "lent identity: CAP_FUTIMESAT; granted per process type", FD(0)),
    BADFD("newfstatat", 0),
    BADFD("statx", 0),
    BADFD("openat", 0),
    BADFD("openat2", 0),
    BADFD("faccessat", 0),
    BADFD("faccessat2", 0),
    BADFD("readlinkat", 0),
    BADFD("mkdirat", 0),
    BADFD("mknodat", 0),
    BADFD("unlinkat", 0),
    BADFD("renameat", 0),
    BADFD("renameat", 2),
    BADFD("renameat2", 0),
    BADFD("renameat2", 2),
    BADFD("linkat", 0),
    BADFD("linkat", 2),
    BADFD("symlinkat", 1),
    BADFD("fchmodat", 0),
    BADFD("fchownat", 0),
    BADFD("utimensat", 0),
    BADFD("futimesat", 0),

    // --- memory ---
    ALLOW("brk", "heap"),
    ALLOW_IF("mmap", "no new executable mappings", NOBITS(2, PROT_EXEC)),
    ALLOW_IF("mprotect", "no new executable mappings", NOBITS(2, PROT_EXEC)),
    ALLOW_IF("pkey_mprotect", "no new executable mappings",
             NOBITS(2, PROT_EXEC)),
    ALLOW("munmap", "own memory"),
    ALLOW("mremap", "own memory (keeps protection)"),
    ALLOW("madvise", "own memory"),
    ALLOW("msync", "own memory"),
    ALLOW("mincore", "own memory"),
    ALLOW("memfd_create", "anonymous shared memory"),
    ALLOW("membarrier", "own threads"),
    ALLOW("mlock", "own memory, bounded by RLIMIT_MEMLOCK (FreeBSD allows)"),
    ALLOW("mlock2", "own memory, bounded by RLIMIT_MEMLOCK"),
    ALLOW("munlock", "own memory"),
    ALLOW("mlockall", "own memory, bounded by RLIMIT_MEMLOCK (FreeBSD allows)"),
    ALLOW("munlockall", "own memory"),

    // --- descriptors that name no global object ---
    ALLOW("pipe", "anonymous"),
    ALLOW("pipe2", "anonymous"),
    ALLOW("eventfd", "anonymous"),
    ALLOW("eventfd2", "anonymous"),
    ALLOW("timerfd_create", "anonymous"),
    ALLOW("timerfd_settime", "held descriptor"),
    ALLOW("timerfd_gettime", "held descriptor"),
    ALLOW("signalfd", "own signals"),
    ALLOW("signalfd4", "own signals"),
    ALLOW("epoll_create", "anonymous"),
    ALLOW("epoll_create1", "anonymous"),
    ALLOW("epoll_ctl", "held descriptors"),
    ALLOW("epoll_wait", "held descriptors"),
    ALLOW("epoll_pwait", "held descriptors"),
    ALLOW("epoll_pwait2", "held descriptors"),
    ALLOW("poll", "held descriptors"),
    ALLOW("ppoll", "held descriptors"),
    ALLOW("select", "held descriptors"),
    ALLOW("pselect6", "held descriptors"),

    // --- fcntl: commands that act on the descriptor only. F_SETOWN/F_SETSIG
    // would direct SIGIO at another process; F_NOTIFY watches a directory ---
    ALLOW_IF("fcntl", "dup", M32(1, F_DUPFD)),
    ALLOW_IF("fcntl", "dup", M32(1, F_DUPFD_CLOEXEC)),
    ALLOW_IF("fcntl", "fd flags", M32(1, F_GETFD)),
    ALLOW_IF("fcntl", "fd flags", M32(1, F_SETFD)),
    ALLOW_IF("fcntl", "status flags", M32(1, F_GETFL)),
    ALLOW_IF("fcntl", "status flags (kernel keeps access mode)",
             M32(1, F_SETFL)),
    ALLOW_IF("fcntl", "record locks", M32(1, F_GETLK)),
    GRANT_IF("fcntl", "lent identity: CAP_FLOCK; granted per process type",
             M32(1, F_SETLK)),
    GRANT_IF("fcntl", "lent identity: CAP_FLOCK; granted per process type",
             M32(1, F_SETLKW)),
    ALLOW_IF("fcntl", "record locks", M32(1, F_OFD_GETLK)),
    GRANT_IF("fcntl", "lent identity: CAP_FLOCK; granted per process type",
             M32(1, F_OFD_SETLK)),
    GRANT_IF("fcntl", "lent identity: CAP_FLOCK; granted per process type",
             M32(1, F_OFD_SETLKW)),
    ALLOW_IF("fcntl", "memfd seals only narrow", M32(1, F_ADD_SEALS)),
    ALLOW_IF("fcntl", "memfd seals", M32(1, F_GET_SEALS)),
    ALLOW_IF("fcntl", "pipe size", M32(1, F_GETPIPE_SZ)),
    ALLOW_IF("fcntl", "pipe size", M32(1, F_SETPIPE_SZ)),

    // --- ioctl: a short list of descriptor-local requests, compared on the
    // low 32 bits. TIOCSTI/TIOCLINUX (tty injection) and everything else fall
    // to ECAPMODE ---
    ALLOW_IF("ioctl", "bytes readable", M32(1, FIONREAD)),
    ALLOW_IF("ioctl", "non-blocking", M32(1, FIONBIO)),
    ALLOW_IF("ioctl", "close-on-exec", M32(1, FIOCLEX)),
    ALLOW_IF("ioctl", "close-on-exec", M32(1, FIONCLEX)),
    ALLOW_IF("ioctl", "isatty()", M32(1, TCGETS)),
    ALLOW_IF("ioctl", "terminal size (read)", M32(1, TIOCGWINSZ)),
    // PIDFD_GET_INFO = _IOWR(0xFF, 11, struct pidfd_info): pdgetpid() on a
    // held process descriptor. The size field (bits 16-29) grows with the
    // struct, so it is masked out.
    ALLOW_IF("ioctl", "pdgetpid: PIDFD_GET_INFO on a held pidfd",
             {1, CAPSA_CMP_MASKED_EQ, 0xC000FFFFu, 0xC000FF0Bu}),

    // --- sockets: only unix stream/seqpacket, never to an address ---
    ALLOW_IF("socket", "unnamed unix stream socket", M32(0, AF_UNIX),
             SOCK_TYPE_IS(SOCK_STREAM)),
    ALLOW_IF("socket", "unnamed unix seqpacket socket", M32(0, AF_UNIX),
             SOCK_TYPE_IS(SOCK_SEQPACKET)),
    ALLOW_IF("socketpair", "unix stream pair", M32(0, AF_UNIX),
             SOCK_TYPE_IS(SOCK_STREAM)),
    ALLOW_IF("socketpair", "unix seqpacket pair (IPC channels)",
             M32(0, AF_UNIX), SOCK_TYPE_IS(SOCK_SEQPACKET)),
    ALLOW_IF("sendto", "connected sockets only: no address", IS_NULL(4)),
    ALLOW("sendmsg",
          "held sockets (msg_name unseen: Landlock scopes "
          "abstract addresses)"),
    ALLOW("sendmmsg", "held sockets (as sendmsg)"),
    ALLOW("recvfrom", "held sockets"),
    ALLOW("recvmsg", "held sockets, SCM_RIGHTS"),
    ALLOW("recvmmsg", "held sockets"),
    ALLOW("accept", "on a held listening socket"),
    ALLOW("accept4", "on a held listening socket"),
    ALLOW("shutdown", "held sockets"),
    ALLOW("getsockname", "held sockets"),
    ALLOW("getpeername", "held sockets"),
    ALLOW("getsockopt", "held sockets"),
    ALLOW("setsockopt", "held sockets"),
    REFUSE("bind", "names a global address"),
    REFUSE("connect", "names a global address"),
    REFUSE("listen", "only useful after bind"),

    // --- processes and threads ---
    ALLOW_IF("clone", "fork and threads, without namespaces",
             NOBITS(0, CLONE_NAMESPACES)),
    ERRNO(
        "clone3", 38 /* ENOSYS */,
        "flags live in memory seccomp cannot read: glibc falls back to clone"),
    ALLOW("fork", "children inherit capability mode"),
    ALLOW("vfork", "children inherit capability mode"),
    ALLOW("exit", "leaving"),
    ALLOW("exit_group", "leaving"),
    ALLOW("wait4", "own children"),
    ALLOW("waitid", "own children, P_PIDFD"),
    ALLOW("set_tid_address", "thread start"),
    ALLOW("set_robust_list", "thread start"),
    ALLOW_IF("get_robust_list", "own thread", M32(0, 0)),
    ALLOW("rseq", "glibc registers it per thread"),
    ALLOW_IF("arch_prctl", "TLS", M32(0, ARCH_SET_FS)),
    ALLOW_IF("arch_prctl", "TLS", M32(0, ARCH_GET_FS)),
    ALLOW_IF("arch_prctl", "TLS", M32(0, ARCH_SET_GS)),
    ALLOW_IF("arch_prctl", "TLS", M32(0, ARCH_GET_GS)),
    ALLOW("futex", "thread synchronisation"),
    ALLOW("futex_waitv", "thread synchronisation"),
    ALLOW("sched_yield", "own thread"),
    ALLOW("sched_getaffinity",
          "read only; glibc asks by tid for own threads (pthread_getattr_np)"),
    ALLOW_IF("sched_setaffinity", "self only", M32(0, 0)),
    ALLOW("sched_getparam",
          "read only; glibc asks by tid for own threads (pthread_getattr_np)"),
    ALLOW("sched_getscheduler",
          "read only; glibc asks by tid for own threads (pthread_getattr_np)"),
    ALLOW("sched_getattr",
          "read only; glibc asks by tid for own threads (pthread_getattr_np)"),
    ALLOW_IF("sched_setscheduler",
             "self only (pid 0), as FreeBSD; raising needs CAP_SYS_NICE",
             M32(0, 0)),
    ALLOW_IF("sched_setparam",
             "self only (pid 0), as FreeBSD; raising needs CAP_SYS_NICE",
             M32(0, 0)),
    ALLOW_IF("sched_rr_get_interval", "self only (pid 0), read only",
             M32(0, 0)),
    ALLOW("sched_get_priority_max", "constant"),
    ALLOW("sched_get_priority_min", "constant"),
    ALLOW_IF("getpriority", "self only", M32(0, PRIO_PROCESS), M32(1, 0)),
    ALLOW_IF("setpriority", "self only", M32(0, PRIO_PROCESS), M32(1, 0)),
    ALLOW_IF("prlimit64", "self only", M32(0, 0)),
    ALLOW("getrlimit", "self"),
    ALLOW("setrlimit", "self (only lowers without privilege)"),
    ALLOW("getrusage", "self/children"),
    ALLOW("times", "self"),
    ALLOW("getpid", "self"),
    ALLOW("gettid", "self"),
    ALLOW("getppid", "FreeBSD allows it"),
    ALLOW("getuid", "credentials, read only"),
    ALLOW("geteuid", "credentials, read only"),
    ALLOW("getgid", "credentials, read only"),
    ALLOW("getegid", "credentials, read only"),
    ALLOW("getresuid", "credentials, read only"),
    ALLOW("getresgid", "credentials, read only"),
    ALLOW("getgroups", "credentials, read only"),
    ALLOW("capget", "credentials, read only"),
    ALLOW("getpgrp", "self"),
    ALLOW("setsid", "detach from a controlling terminal (no TIOCSTI target)"),
    ALLOW_IF("setpgid", "own process into its own group", M32(0, 0), M32(1, 0)),
    ALLOW_IF("getpgid", "self", M32(0, 0)),
    ALLOW_IF("getsid", "self", M32(0, 0)),
    ALLOW("umask", "FreeBSD allows it"),
    ALLOW("uname", "FreeBSD allows kern.* sysctls"),
    ALLOW("getcpu", "own thread"),
    ALLOW("getrandom", "entropy without /dev/urandom"),

    // --- signals: only to itself (pid captured at entry) ---
    ALLOW_IF("kill", "own process only", M32(0, CAPSA__SELF_PID)),
    ALLOW_IF("tgkill", "own threads only (raise, pthread_kill)",
             M32(0, CAPSA__SELF_PID)),
    ALLOW_IF("rt_sigqueueinfo", "own process only", M32(0, CAPSA__SELF_PID)),
    ALLOW_IF("rt_tgsigqueueinfo", "own threads only", M32(0, CAPSA__SELF_PID)),
    REFUSE("tkill", "a bare tid may name another process's thread"),
    ALLOW("pidfd_send_signal", "held process descriptor (pdkill)"),
    ALLOW("rt_sigaction", "own handlers"),
    ALLOW("rt_sigprocmask", "own mask"),
    ALLOW("rt_sigreturn", "signal return"),
    ALLOW("rt_sigpending", "own signals"),
    ALLOW("rt_sigtimedwait", "own signals"),
    ALLOW("rt_sigsuspend", "own signals"),
    ALLOW("sigaltstack", "own stack"),
    ALLOW("restart_syscall", "kernel restart"),

    // --- time and sleeping ---
    ALLOW("clock_gettime", "clocks"),
    ALLOW("clock_getres", "clocks"),
    ALLOW("gettimeofday", "clocks"),
    ALLOW("time", "clocks"),
    ALLOW("clock_nanosleep", "sleeping"),
    ALLOW("nanosleep", "sleeping"),
    ALLOW("pause", "sleeping"),
    ALLOW("alarm", "own timer"),
    ALLOW("getitimer", "own timer"),
    ALLOW("setitimer", "own timer"),
    ALLOW("timer_create", "own timer (signals to itself)"),
    ALLOW("timer_settime", "own timer"),
    ALLOW("timer_gettime", "own timer"),
    ALLOW("timer_getoverrun", "own timer"),
    ALLOW("timer_delete", "own timer"),

    // --- narrowing only: further seccomp layers (rights), no_new_privs ---
    ALLOW_IF("seccomp", "add a filter (rights layers); never widens",
             M32(0, SECCOMP_SET_MODE_FILTER),
             NOBITS(1, SECCOMP_WIDENING_FLAGS)),
    ALLOW_IF("seccomp", "query", M32(0, SECCOMP_GET_ACTION_AVAIL)),
    ALLOW_IF("prctl", "thread name", M32(0, PR_SET_NAME)),
    ALLOW_IF("prctl", "thread name", M32(0, PR_GET_NAME)),
    ALLOW_IF("prctl", "query", M32(0, PR_GET_NO_NEW_PRIVS)),
    ALLOW_IF("prctl", "setting it again is a no-op; clearing is refused",
             M32(0, PR_SET_NO_NEW_PRIVS), M32(1, 1)),
    ALLOW_IF("prctl", "query", M32(0, PR_GET_SECCOMP)),
    ALLOW_IF("prctl", "add a filter", M32(0, PR_SET_SECCOMP),
             M32(1, SECCOMP_MODE_FILTER)),
    ALLOW_IF("prctl", "query", M32(0, PR_GET_DUMPABLE)),
    ALLOW_IF("prctl", "only turning dumping off", M32(0, PR_SET_DUMPABLE),
             M32(1, 0)),
    ALLOW_IF("prctl", "die with the parent", M32(0, PR_SET_PDEATHSIG)),
    ALLOW_IF("prctl", "query", M32(0, PR_GET_PDEATHSIG)),
    ALLOW_IF("prctl", "query", M32(0, PR_CAPBSET_READ)),
    // cap_getmode()'s marker; explicit so that tracing never reports it.
    {"prctl",
     CAPSA__ERRNO,
     CAPSA_ECAPMODE,
     2,
     {M32(0, CAPSA__GETMODE_OPTION), M32(1, CAPSA__GETMODE_ARG)},
     "cap_getmode() marker"},

    // --- refused: filesystem by path (global namespace) ---
    REFUSE("open", "path from the global namespace"),
    REFUSE("creat", "path from the global namespace"),
    REFUSE("stat", "path from the global namespace"),
    REFUSE("lstat", "path from the global namespace"),
    REFUSE("access", "path from the global namespace"),
    REFUSE("readlink", "path from the global namespace"),
    REFUSE("unlink", "path from the global namespace"),
    REFUSE("rmdir", "path from the global namespace"),
    REFUSE("mkdir", "path from the global namespace"),
    REFUSE("mknod", "path from the global namespace"),
    REFUSE("rename", "path from the global namespace"),
    REFUSE("link", "path from the global namespace"),
    REFUSE("symlink", "path from the global namespace"),
    REFUSE("chmod", "path from the global namespace"),
    REFUSE("chown", "path from the global namespace"),
    REFUSE("lchown", "path from the global namespace"),
    REFUSE("utime", "path from the global namespace"),
    REFUSE("utimes", "path from the global namespace"),
    REFUSE("truncate", "path from the global namespace"),
    REFUSE("statfs", "path from the global namespace"),
    REFUSE("chdir", "changes the meaning of AT_FDCWD"),
    REFUSE("fchdir", "changes the meaning of AT_FDCWD"),
    REFUSE("getcwd", "reveals the global namespace"),
    REFUSE("getxattr", "path"),
    REFUSE("lgetxattr", "path"),
    REFUSE("setxattr", "path"),
    REFUSE("lsetxattr", "path"),
    REFUSE("listxattr", "path"),
    REFUSE("llistxattr", "path"),
    REFUSE("removexattr", "path"),
    REFUSE("lremovexattr", "path"),
    REFUSE("inotify_add_watch", "path"),
    REFUSE("fanotify_init", "global filesystem events"),
    REFUSE("fanotify_mark", "path"),
    REFUSE("name_to_handle_at", "file handles bypass paths"),
    REFUSE("open_by_handle_at", "file handles bypass paths"),
    REFUSE("chroot", "namespace change"),
    ALLOW("sync",
          "FreeBSD allows it; flushes dirty data, names nothing (fsync and "
          "syncfs on held descriptors are allowed anyway)"),
    // --- refused: execution ---
    REFUSE("execve", "no exec: the program is the sandbox"),
    REFUSE("execveat", "no exec: the program is the sandbox"),
    REFUSE("uselib", "loads code by path"),
    // --- refused: other processes ---
    REFUSE("ptrace", "other processes"),
    REFUSE("process_vm_readv", "other processes' memory"),
    REFUSE("process_vm_writev", "other processes' memory"),
    REFUSE("kcmp", "other processes"),
    REFUSE("pidfd_open", "names a process by global pid"),
    REFUSE("pidfd_getfd", "takes another process's descriptor"),
    REFUSE("process_madvise", "other processes' memory"),
    REFUSE("process_mrelease", "other processes' memory"),
    REFUSE("migrate_pages", "other processes"),
    REFUSE("move_pages", "other processes"),
    REFUSE("sched_setscheduler", "scheduling class change of another process"),
    REFUSE("sched_setparam", "scheduling change of another process"),
    REFUSE("sched_setattr", "scheduling change"),
    REFUSE("ioprio_set", "other processes' I/O"),
    // --- refused: namespaces and mounts ---
    REFUSE("unshare", "namespaces"),
    REFUSE("setns", "namespaces"),
    REFUSE("mount", "mounts"),
    REFUSE("umount2", "mounts"),
    REFUSE("pivot_root", "mounts"),
    REFUSE("move_mount", "mounts"),
    REFUSE("open_tree", "mounts"),
    REFUSE("fsopen", "mounts"),
    REFUSE("fsconfig", "mounts"),
    REFUSE("fsmount", "mounts"),
    REFUSE("fspick", "mounts"),
    REFUSE("mount_setattr", "mounts"),
    // --- refused: kernel attack surface ---
    REFUSE("bpf", "kernel attack surface"),
    REFUSE("perf_event_open", "kernel attack surface, side channels"),
    REFUSE("userfaultfd", "race amplification in exploits"),
    REFUSE("io_uring_setup", "operations seccomp never sees"),
    REFUSE("io_uring_enter", "operations seccomp never sees"),
    REFUSE("io_uring_register", "operations seccomp never sees"),
    REFUSE("keyctl", "global keyrings"),
    REFUSE("add_key", "global keyrings"),
    REFUSE("request_key", "global keyrings"),
    REFUSE("init_module", "module loading"),
    REFUSE("finit_module", "module loading"),
    REFUSE("delete_module", "module loading"),
    REFUSE("kexec_load", "kexec"),
    REFUSE("kexec_file_load", "kexec"),
    REFUSE("ioperm", "hardware"),
    REFUSE("iopl", "hardware"),
    REFUSE("personality", "changes syscall semantics (READ_IMPLIES_EXEC)"),
    REFUSE("reboot", "system"),
    REFUSE("acct", "system"),
    REFUSE("swapon", "system"),
    REFUSE("swapoff", "system"),
    REFUSE("quotactl", "system"),
    REFUSE("quotactl_fd", "system"),
    REFUSE("syslog", "kernel log"),
    REFUSE("vhangup", "terminals"),
    REFUSE("sethostname", "system"),
    REFUSE("setdomainname", "system"),
    REFUSE("settimeofday", "clock setting"),
    REFUSE("clock_settime", "clock setting"),
    REFUSE("adjtimex", "clock setting"),
    REFUSE("clock_adjtime", "clock setting"),
    REFUSE("lookup_dcookie", "global"),
    REFUSE("memfd_secret", "memory the kernel cannot inspect"),
    REFUSE("landlock_create_ruleset", "capsa owns the Landlock layer"),
    REFUSE("landlock_add_rule", "capsa owns the Landlock layer"),
    REFUSE("landlock_restrict_self", "capsa owns the Landlock layer"),
    // --- refused: credentials ---
    REFUSE("setuid", "credential change"),
    REFUSE("setgid", "credential change"),
    REFUSE("setreuid", "credential change"),
    REFUSE("setregid", "credential change"),
    REFUSE("setresuid", "credential change"),
    REFUSE("setresgid", "credential change"),
    REFUSE("setfsuid", "credential change"),
    REFUSE("setfsgid", "credential change"),
    REFUSE("setgroups", "credential change"),
    REFUSE("capset", "credential change"),
    // --- refused: System V IPC and POSIX message queues (global names) ---
    REFUSE("shmget", "SysV IPC"),
    REFUSE("shmat", "SysV IPC"),
    REFUSE("shmctl", "SysV IPC"),
    REFUSE("shmdt", "SysV IPC"),
    REFUSE("semget", "SysV IPC"),
    REFUSE("semop", "SysV IPC"),
    REFUSE("semctl", "SysV IPC"),
    REFUSE("semtimedop", "SysV IPC"),
    REFUSE("msgget", "SysV IPC"),
    REFUSE("msgsnd", "SysV IPC"),
    REFUSE("msgrcv", "SysV IPC"),
    REFUSE("msgctl", "SysV IPC"),
    REFUSE("mq_open", "POSIX mqueue"),
    REFUSE("mq_unlink", "POSIX mqueue"),
    REFUSE("mq_timedsend", "POSIX mqueue"),
    REFUSE("mq_timedreceive", "POSIX mqueue"),
    REFUSE("mq_notify", "POSIX mqueue"),
    REFUSE("mq_getsetattr", "POSIX mqueue"),
};

const size_t capsa__capmode_table_len =
    sizeof(capsa__capmode_table) / sizeof(capsa__capmode_table[0]);
