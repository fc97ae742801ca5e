// Arguments of a traced violation, decoded as strace would show them:
// AT_FDCWD, flags by name, modes in octal, and path strings read from the
// caller's memory. Everything here runs in the SIGSYS handler, so it is
// async-signal-safe: no allocation, no stdio, only syscalls capability mode
// allows (pipe2, write, read, fstat).
//
// A path is read through a pipe of the handler's own (made at the first
// violation that needs one): write(2) from the caller's pointer copies in the
// kernel and answers EFAULT for an unmapped or unreadable address, where a
// direct read would fault inside the handler. Before each use the pipe's two
// descriptors are checked (fstat: same inode as when made), because the
// program may have closed and reused those numbers since.
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/trace.h"

void capsa__trace_put(struct capsa__trace_line *l, const char *s) {
  while (*s && l->len < sizeof(l->buf) - 1) l->buf[l->len++] = *s++;
}

void capsa__trace_put_char(struct capsa__trace_line *l, char c) {
  if (l->len < sizeof(l->buf) - 1) l->buf[l->len++] = c;
}

static void put_base(struct capsa__trace_line *l, uint64_t v, unsigned base,
                     const char *prefix) {
  char tmp[24];
  int i = (int)sizeof(tmp);
  tmp[--i] = '\0';
  do {
    tmp[--i] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v && i > 0);
  capsa__trace_put(l, prefix);
  capsa__trace_put(l, tmp + i);
}

void capsa__trace_put_hex(struct capsa__trace_line *l, uint64_t v) {
  put_base(l, v, 16, "0x");
}

void capsa__trace_put_dec(struct capsa__trace_line *l, int64_t v) {
  if (v < 0) {
    put_base(l, (uint64_t)0 - (uint64_t)v, 10, "-");
    return;
  }
  put_base(l, (uint64_t)v, 10, "");
}

// How one argument is shown.
enum arg {
  A_END = 0,
  A_HEX,       // pointers, masks, anything without a better form
  A_INT,       // signed decimal (int)
  A_ULONG,     // unsigned decimal (sizes)
  A_FD,        // descriptor; AT_FDCWD by name
  A_PATH,      // NUL-terminated string in the caller's memory
  A_OFLAGS,    // open(2) flags: O_ACCMODE | O_*
  A_MODE,      // octal
  A_ATFLAGS,   // AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH, ...
  A_UNLINKAT,  // unlinkat's flags: AT_REMOVEDIR
  A_ACCESSAT,  // faccessat2's flags: AT_EACCESS and the AT_* above
  A_AMODE,     // access(2) mode: F_OK or R_OK|W_OK|X_OK
  A_AF,        // socket domain
  A_SOCKTYPE,  // SOCK_* | SOCK_NONBLOCK | SOCK_CLOEXEC
  A_SIG,       // signal number by name
  A_CLONE,     // CLONE_* (unshare, setns)
};

// The syscalls a program under capability mode most often trips over
// (paths, sockets, signals, namespaces), with the form of each argument;
// any other syscall shows its six registers in hex. x86_64 numbers only.
struct sig_row {
  long nr;
  unsigned char args[6];
};
static const struct sig_row kRows[] = {
    {SYS_open, {A_PATH, A_OFLAGS, A_MODE}},
    {SYS_openat, {A_FD, A_PATH, A_OFLAGS, A_MODE}},
#ifdef SYS_openat2
    {SYS_openat2, {A_FD, A_PATH, A_HEX, A_ULONG}},
#endif
    {SYS_creat, {A_PATH, A_MODE}},
    {SYS_access, {A_PATH, A_AMODE}},
    {SYS_faccessat, {A_FD, A_PATH, A_AMODE}},
#ifdef SYS_faccessat2
    {SYS_faccessat2, {A_FD, A_PATH, A_AMODE, A_ACCESSAT}},
#endif
    {SYS_stat, {A_PATH, A_HEX}},
    {SYS_lstat, {A_PATH, A_HEX}},
    {SYS_newfstatat, {A_FD, A_PATH, A_HEX, A_ATFLAGS}},
    {SYS_statx, {A_FD, A_PATH, A_ATFLAGS, A_HEX, A_HEX}},
    {SYS_statfs, {A_PATH, A_HEX}},
    {SYS_readlink, {A_PATH, A_HEX, A_ULONG}},
    {SYS_readlinkat, {A_FD, A_PATH, A_HEX, A_ULONG}},
    {SYS_unlink, {A_PATH}},
    {SYS_unlinkat, {A_FD, A_PATH, A_UNLINKAT}},
    {SYS_rmdir, {A_PATH}},
    {SYS_mkdir, {A_PATH, A_MODE}},
    {SYS_mkdirat, {A_FD, A_PATH, A_MODE}},
    {SYS_mknod, {A_PATH, A_MODE, A_HEX}},
    {SYS_mknodat, {A_FD, A_PATH, A_MODE, A_HEX}},
    {SYS_rename, {A_PATH, A_PATH}},
    {SYS_renameat, {A_FD, A_PATH, A_FD, A_PATH}},
    {SYS_renameat2, {A_FD, A_PATH, A_FD, A_PATH, A_HEX}},
    {SYS_link, {A_PATH, A_PATH}},
    {SYS_linkat, {A_FD, A_PATH, A_FD, A_PATH, A_ATFLAGS}},
    {SYS_symlink, {A_PATH, A_PATH}},
    {SYS_symlinkat, {A_PATH, A_FD, A_PATH}},
    {SYS_chdir, {A_PATH}},
    {SYS_chroot, {A_PATH}},
    {SYS_chmod, {A_PATH, A_MODE}},
    {SYS_fchmodat, {A_FD, A_PATH, A_MODE}},
    {SYS_chown, {A_PATH, A_INT, A_INT}},
    {SYS_lchown, {A_PATH, A_INT, A_INT}},
    {SYS_fchownat, {A_FD, A_PATH, A_INT, A_INT, A_ATFLAGS}},
    {SYS_truncate, {A_PATH, A_INT}},
    {SYS_utimensat, {A_FD, A_PATH, A_HEX, A_ATFLAGS}},
    {SYS_execve, {A_PATH, A_HEX, A_HEX}},
    {SYS_execveat, {A_FD, A_PATH, A_HEX, A_HEX, A_ATFLAGS}},
    {SYS_mount, {A_PATH, A_PATH, A_PATH, A_HEX, A_HEX}},
    {SYS_umount2, {A_PATH, A_HEX}},
    {SYS_pivot_root, {A_PATH, A_PATH}},
    {SYS_acct, {A_PATH}},
    {SYS_swapon, {A_PATH, A_HEX}},
    {SYS_socket, {A_AF, A_SOCKTYPE, A_INT}},
    {SYS_socketpair, {A_AF, A_SOCKTYPE, A_INT, A_HEX}},
    {SYS_connect, {A_FD, A_HEX, A_ULONG}},
    {SYS_bind, {A_FD, A_HEX, A_ULONG}},
    {SYS_kill, {A_INT, A_SIG}},
    {SYS_tkill, {A_INT, A_SIG}},
    {SYS_tgkill, {A_INT, A_INT, A_SIG}},
    {SYS_ptrace, {A_INT, A_INT, A_HEX, A_HEX}},
    {SYS_unshare, {A_CLONE}},
    {SYS_setns, {A_FD, A_CLONE}},
};

struct bit {
  uint64_t mask;  // all of these bits...
  const char *name;
};
// Multi-bit names first: O_TMPFILE contains O_DIRECTORY, O_SYNC O_DSYNC.
static const struct bit kOpenBits[] = {
    {O_TMPFILE, "O_TMPFILE"},   {O_SYNC, "O_SYNC"},
    {O_CREAT, "O_CREAT"},       {O_EXCL, "O_EXCL"},
    {O_NOCTTY, "O_NOCTTY"},     {O_TRUNC, "O_TRUNC"},
    {O_APPEND, "O_APPEND"},     {O_NONBLOCK, "O_NONBLOCK"},
    {O_DSYNC, "O_DSYNC"},       {O_DIRECTORY, "O_DIRECTORY"},
    {O_NOFOLLOW, "O_NOFOLLOW"}, {O_CLOEXEC, "O_CLOEXEC"},
    {O_PATH, "O_PATH"},         {O_NOATIME, "O_NOATIME"},
    {O_DIRECT, "O_DIRECT"},     {0100000, "O_LARGEFILE"},
    {O_ASYNC, "O_ASYNC"},       {0, NULL},
};
static const struct bit kAtBits[] = {
    {AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"},
    {AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"},
    {AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT"},
    {AT_EMPTY_PATH, "AT_EMPTY_PATH"},
    {0, NULL},
};
static const struct bit kUnlinkBits[] = {{AT_REMOVEDIR, "AT_REMOVEDIR"},
                                         {0, NULL}};
static const struct bit kAccessAtBits[] = {
    {AT_EACCESS, "AT_EACCESS"},
    {AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"},
    {AT_EMPTY_PATH, "AT_EMPTY_PATH"},
    {0, NULL},
};
static const struct bit kAccessBits[] = {
    {R_OK, "R_OK"}, {W_OK, "W_OK"}, {X_OK, "X_OK"}, {0, NULL}};
static const struct bit kSockBits[] = {{SOCK_NONBLOCK, "SOCK_NONBLOCK"},
                                       {SOCK_CLOEXEC, "SOCK_CLOEXEC"},
                                       {0, NULL}};
static const struct bit kCloneBits[] = {
    {0x00020000, "CLONE_NEWNS"},   {0x02000000, "CLONE_NEWCGROUP"},
    {0x04000000, "CLONE_NEWUTS"},  {0x08000000, "CLONE_NEWIPC"},
    {0x10000000, "CLONE_NEWUSER"}, {0x20000000, "CLONE_NEWPID"},
    {0x40000000, "CLONE_NEWNET"},  {0x00000080, "CLONE_NEWTIME"},
    {0x00000200, "CLONE_FS"},      {0x00000400, "CLONE_FILES"},
    {0x00040000, "CLONE_SYSVSEM"}, {0, NULL},
};

struct named {
  long value;
  const char *name;
};
static const struct named kFamilies[] = {
    {1, "AF_UNIX"},     {2, "AF_INET"},    {10, "AF_INET6"},
    {16, "AF_NETLINK"}, {17, "AF_PACKET"}, {31, "AF_BLUETOOTH"},
    {38, "AF_ALG"},     {40, "AF_VSOCK"},  {44, "AF_XDP"},
    {0, NULL},
};
static const struct named kSockTypes[] = {
    {1, "SOCK_STREAM"}, {2, "SOCK_DGRAM"},     {3, "SOCK_RAW"},
    {4, "SOCK_RDM"},    {5, "SOCK_SEQPACKET"}, {10, "SOCK_PACKET"},
    {0, NULL},
};
static const char *const kSignals[32] = {
    NULL,      "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP",
    "SIGABRT", "SIGBUS",  "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV",
    "SIGUSR2", "SIGPIPE", "SIGALRM",   "SIGTERM", "SIGSTKFLT", "SIGCHLD",
    "SIGCONT", "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU",   "SIGURG",
    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",  "SIGIO",
    "SIGPWR",  "SIGSYS",
};

// Names the bits of `v` from `bits`, '|'-joined; what no name covers
// follows in hex. `zero` is what 0 shows as (NULL: "0").
static void put_bits(struct capsa__trace_line *l, uint64_t v,
                     const struct bit *bits, const char *zero, bool joined) {
  if (v == 0 && !joined) {
    capsa__trace_put(l, zero ? zero : "0");
    return;
  }
  for (const struct bit *b = bits; b->name; b++) {
    if ((v & b->mask) != b->mask) continue;
    if (joined) capsa__trace_put_char(l, '|');
    capsa__trace_put(l, b->name);
    v &= ~b->mask;
    joined = true;
  }
  if (v) {
    if (joined) capsa__trace_put_char(l, '|');
    capsa__trace_put_hex(l, v);
  }
}

static void put_named(struct capsa__trace_line *l, long v,
                      const struct named *names) {
  for (const struct named *n = names; n->name; n++)
    if (n->value == v) {
      capsa__trace_put(l, n->name);
      return;
    }
  capsa__trace_put_dec(l, v);
}

static void put_oflags(struct capsa__trace_line *l, uint64_t v) {
  static const char *const kAcc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR",
                                     "O_ACCMODE"};
  // O_PATH ignores the access mode; O_TMPFILE's names its own bits.
  capsa__trace_put(l, kAcc[v & O_ACCMODE]);
  put_bits(l, v & ~(uint64_t)O_ACCMODE, kOpenBits, NULL, true);
}

static void put_socktype(struct capsa__trace_line *l, uint64_t v) {
  put_named(l, (long)(v & 0xf), kSockTypes);
  put_bits(l, v & ~(uint64_t)0xf, kSockBits, NULL, true);
}

// The handler's pipe for reading the caller's memory (see the top).
static int g_pipe[2] = {-1, -1};
static ino_t g_pipe_ino;
static atomic_flag g_pipe_busy = ATOMIC_FLAG_INIT;

static bool pipe_is_ours(void) {
  struct stat a, b;
  // Raw fstat: glibc's goes through newfstatat, which the policy may
  // restrict.
  return g_pipe[0] >= 0 && syscall(SYS_fstat, g_pipe[0], &a) == 0 &&
         syscall(SYS_fstat, g_pipe[1], &b) == 0 && S_ISFIFO(a.st_mode) &&
         a.st_ino == g_pipe_ino && b.st_ino == g_pipe_ino;
}

static bool pipe_ready(void) {
  if (pipe_is_ours()) return true;
  // Never made, or its numbers were closed or reused by the program: the
  // old numbers are not ours to close.
  int p[2];
  if (syscall(SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  struct stat st;
  if (syscall(SYS_fstat, p[0], &st) != 0) {
    close(p[0]);
    close(p[1]);
    return false;
  }
  g_pipe[0] = p[0];
  g_pipe[1] = p[1];
  g_pipe_ino = st.st_ino;
  return true;
}

#define PATH_SHOWN 192  // bytes of a path shown; longer ones end in "..."

// Copies the string at `addr` into out (NUL-terminated, at most PATH_SHOWN
// bytes). Returns its length, -1 when unreadable, -2 when it was cut.
static int copy_string(uint64_t addr, char out[PATH_SHOWN + 1]) {
  size_t got = 0;
  while (got < PATH_SHOWN) {
    // Up to the end of the page: the next one may be unmapped even when
    // the string ends before it.
    uint64_t p = addr + got;
    size_t chunk = 4096 - (size_t)(p & 4095);
    if (chunk > PATH_SHOWN - got) chunk = PATH_SHOWN - got;
    // Raw syscall: past the string's NUL lie bytes that are not its own
    // (a sanitizer's write() would rightly call that an overflow); only
    // what precedes the NUL is shown.
    ssize_t w =
        syscall(SYS_write, g_pipe[1], (const void *)(uintptr_t)p, chunk);
    if (w <= 0) break;
    ssize_t r = read(g_pipe[0], out + got, (size_t)w);
    if (r != w) {  // cannot happen with a pipe of our own; stop cleanly
      char drain[256];
      while (read(g_pipe[0], drain, sizeof drain) > 0) {
      }
      break;
    }
    void *nul = memchr(out + got, 0, (size_t)r);
    if (nul) return (int)((char *)nul - out);
    got += (size_t)r;
    if ((size_t)w < chunk) break;  // the rest is unreadable
  }
  out[got] = '\0';
  if (got == 0) return -1;
  return got == PATH_SHOWN ? -2 : -1;
}

static void put_path(struct capsa__trace_line *l, uint64_t addr) {
  if (addr == 0) {
    capsa__trace_put(l, "NULL");
    return;
  }
  // Another thread is in the handler: its pipe, not ours to interleave.
  if (atomic_flag_test_and_set(&g_pipe_busy)) {
    capsa__trace_put_hex(l, addr);
    return;
  }
  char s[PATH_SHOWN + 1] = "";
  int n = pipe_ready() ? copy_string(addr, s) : -1;
  atomic_flag_clear(&g_pipe_busy);
  if (n == -1 && s[0] == '\0') {
    capsa__trace_put_hex(l, addr);  // unreadable: the pointer, as strace
    return;
  }
  size_t len = n >= 0 ? (size_t)n : strlen(s);
  capsa__trace_put_char(l, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      capsa__trace_put_char(l, '\\');
      capsa__trace_put_char(l, (char)c);
    } else if (c < 0x20 || c >= 0x7f) {  // control and non-ASCII: \xNN
      capsa__trace_put(l, "\\x");
      capsa__trace_put_char(l, "0123456789abcdef"[c >> 4]);
      capsa__trace_put_char(l, "0123456789abcdef"[c & 15]);
    } else {
      capsa__trace_put_char(l, (char)c);
    }
  }
  capsa__trace_put_char(l, '"');
  if (n < 0) capsa__trace_put(l, "...");  // cut, or unreadable past here
}

static void put_arg(struct capsa__trace_line *l, enum arg kind, uint64_t v) {
  switch (kind) {
    case A_INT:
      capsa__trace_put_dec(l, (int32_t)v);
      break;
    case A_ULONG:
      put_base(l, v, 10, "");
      break;
    case A_FD:
      if ((int32_t)v == AT_FDCWD)
        capsa__trace_put(l, "AT_FDCWD");
      else
        capsa__trace_put_dec(l, (int32_t)v);
      break;
    case A_PATH:
      put_path(l, v);
      break;
    case A_OFLAGS:
      put_oflags(l, (uint32_t)v);
      break;
    case A_MODE:
      put_base(l, (uint32_t)v, 8, (uint32_t)v ? "0" : "");
      break;
    case A_ATFLAGS:
      put_bits(l, (uint32_t)v, kAtBits, NULL, false);
      break;
    case A_UNLINKAT:
      put_bits(l, (uint32_t)v, kUnlinkBits, NULL, false);
      break;
    case A_ACCESSAT:
      put_bits(l, (uint32_t)v, kAccessAtBits, NULL, false);
      break;
    case A_AMODE:
      put_bits(l, (uint32_t)v, kAccessBits, "F_OK", false);
      break;
    case A_AF:
      put_named(l, (int32_t)v, kFamilies);
      break;
    case A_SOCKTYPE:
      put_socktype(l, (uint32_t)v);
      break;
    case A_SIG:
      if ((uint32_t)v > 0 && (uint32_t)v < 32)
        capsa__trace_put(l, kSignals[(uint32_t)v]);
      else
        capsa__trace_put_dec(l, (int32_t)v);
      break;
    case A_CLONE:
      put_bits(l, v, kCloneBits, NULL, false);
      break;
    case A_HEX:
    case A_END:
    default:
      capsa__trace_put_hex(l, v);
      break;
  }
}

void capsa__trace_put_args(struct capsa__trace_line *l, unsigned nr,
                           const uint64_t args[6]) {
  const struct sig_row *row = NULL;
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; i++)
    if (kRows[i].nr == (long)nr) row = &kRows[i];
  capsa__trace_put_char(l, '(');
  for (int i = 0; i < 6; i++) {
    enum arg kind = row ? (enum arg)row->args[i] : A_HEX;
    if (row && kind == A_END) break;
    // As strace: open's mode is read only with O_CREAT or O_TMPFILE;
    // otherwise its register holds whatever the caller left there.
    if (kind == A_MODE && i > 0 && row->args[i - 1] == A_OFLAGS &&
        !(args[i - 1] & (O_CREAT | O_TMPFILE)))
      break;
    if (i) capsa__trace_put(l, ", ");
    put_arg(l, kind, args[i]);
  }
  capsa__trace_put_char(l, ')');
}

void capsa__trace_put_hex_args(struct capsa__trace_line *l,
                               const uint64_t args[6]) {
  capsa__trace_put_char(l, '(');
  for (int i = 0; i < 6; i++) {
    if (i) capsa__trace_put(l, ", ");
    capsa__trace_put_hex(l, args[i]);
  }
  capsa__trace_put_char(l, ')');
}
