// The escapes `capsa doctor` tries. Each row: what, which layer refuses it,
// the errno that proves it was that layer. The child reports errno values
// over a pipe; the parent judges, so a child that dies mid-way is a failure,
// not a pass.
#include "sandbox/selftest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/child_run.h"
#include "sandbox/features.h"

// What the child holds when it enters, as a real program would.
struct held {
  int usr_dir;  // a directory: *at() must stay beneath it
  int dgram;    // a datagram socket from before: no abstract addresses
  int pipe_rd;
  // An abstract datagram socket bound before entering (outside the
  // sandbox's Landlock domain) that `dgram` must not reach.
  struct sockaddr_un bound;
  socklen_t namelen;
  bool i386_entry;  // the kernel has an i386 entry (probed outside)
};

// Each check returns the errno of its attempt (0 when it succeeded).
typedef int (*check_fn)(const struct held *h);

static int err_of(long r) {
  return r < 0 ? errno : 0;
}

static int open_abs(const struct held *h) {
  int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) close(fd);
  return err_of(fd);
}
static int openat_cwd(const struct held *h) {
  int fd = openat(AT_FDCWD, ".", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) close(fd);
  return err_of(fd);
}
static int dotdot(const struct held *h) {
  if (h->usr_dir < 0) return ENOENT;
  int fd = openat(h->usr_dir, "../etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) close(fd);
  return err_of(fd);
}
static int tcp_socket(const struct held *h) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) close(fd);
  return err_of(fd);
}
static int abstract_connect(const struct held *h) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  struct sockaddr_un un = {.sun_family = AF_UNIX};
  memcpy(un.sun_path, "\0capsa-selftest", 15);
  long r = connect(fd, (struct sockaddr *)&un,
                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 15));
  int e = err_of(r);
  close(fd);
  return e;
}
static int abstract_sendmsg(const struct held *h) {
  if (h->dgram < 0 || h->namelen == 0) return ENOENT;
  struct iovec iov = {(void *)"x", 1};
  struct msghdr msg = {.msg_name = (void *)&h->bound,
                       .msg_namelen = h->namelen,
                       .msg_iov = &iov,
                       .msg_iovlen = 1};
  return err_of(sendmsg(h->dgram, &msg, MSG_DONTWAIT));
}
static int signal_parent(const struct held *h) {
  return err_of(kill(getppid(), 0));
}
static int ptrace_parent(const struct held *h) {
  return err_of(syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, getppid(), 0, 0));
}
static int exec_shell(const struct held *h) {
  char *argv[] = {(char *)"sh", NULL};
  char *envp[] = {NULL};
  return err_of(execve("/bin/sh", argv, envp));
}
static int new_userns(const struct held *h) {
  return err_of(syscall(SYS_unshare, CLONE_NEWUSER));
}
static int exec_mapping(const struct held *h) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno;
  munmap(p, 4096);
  return 0;
}
static int tiocsti_high_bits(const struct held *h) {
  char c = 'x';
  return err_of(syscall(SYS_ioctl, h->pipe_rd, (1UL << 32) | TIOCSTI, &c));
}
static int io_uring(const struct held *h) {
  return err_of(syscall(SYS_io_uring_setup, 1, NULL));
}
static int bpf_call(const struct held *h) {
  return err_of(syscall(SYS_bpf, 0, NULL, 0));
}
static int x32_call(const struct held *h) {
  return err_of(syscall(0x40000000 | SYS_getpid));
}
// Only tried where the probe (outside the sandbox, in a child) found the
// entry: where it is absent, int 0x80 faults whatever the filter says.
static int i386_call(const struct held *h) {
  if (!h->i386_entry) return ENOSYS;
  long r = 20;  // i386 getpid
  __asm__ volatile("int $0x80"
                   : "+a"(r)
                   :
                   : "memory", "rcx", "r8", "r9", "r10", "r11");
  return r < 0 && r > -4096 ? (int)-r : 0;
}
static int memfd_works(const struct held *h) {
  int fd = memfd_create("capsa-selftest", MFD_CLOEXEC);
  if (fd < 0) return errno;
  int e = ftruncate(fd, 4096) < 0 ? errno : 0;
  close(fd);
  return e;
}

enum need { NEED_SECCOMP, NEED_LANDLOCK, NEED_LANDLOCK6, NEED_I386 };

static const struct {
  const char *name;
  const char *layer;
  int expected;
  enum need need;
  check_fn fn;
} kChecks[] = {
    {"open an absolute path", "seccomp", ECAPMODE, NEED_SECCOMP, open_abs},
    {"openat(AT_FDCWD)", "seccomp", ECAPMODE, NEED_SECCOMP, openat_cwd},
    {"openat(held dir, \"../\")", "landlock", EACCES, NEED_LANDLOCK, dotdot},
    {"TCP socket", "seccomp", ECAPMODE, NEED_SECCOMP, tcp_socket},
    {"connect to an abstract unix socket", "seccomp", ECAPMODE, NEED_SECCOMP,
     abstract_connect},
    {"sendmsg to an abstract address (held socket)", "landlock", EPERM,
     NEED_LANDLOCK6, abstract_sendmsg},
    {"signal the parent", "seccomp", ECAPMODE, NEED_SECCOMP, signal_parent},
    {"ptrace the parent", "seccomp", ECAPMODE, NEED_SECCOMP, ptrace_parent},
    {"execve /bin/sh", "seccomp", ECAPMODE, NEED_SECCOMP, exec_shell},
    {"unshare a user namespace", "seccomp", ECAPMODE, NEED_SECCOMP, new_userns},
    {"map memory executable", "seccomp", ECAPMODE, NEED_SECCOMP, exec_mapping},
    {"TIOCSTI with high bits set", "seccomp", ECAPMODE, NEED_SECCOMP,
     tiocsti_high_bits},
    {"io_uring_setup", "seccomp", ECAPMODE, NEED_SECCOMP, io_uring},
    {"bpf", "seccomp", ECAPMODE, NEED_SECCOMP, bpf_call},
    {"x32 syscall", "seccomp", ECAPMODE, NEED_SECCOMP, x32_call},
    {"i386 syscall (int 0x80)", "seccomp", ECAPMODE, NEED_I386, i386_call},
    {"memfd_create keeps working", "-", 0, NEED_SECCOMP, memfd_works},
};
#define NCHECKS (sizeof(kChecks) / sizeof(kChecks[0]))

struct child_arg {
  bool i386_entry;
};

static void child(int wfd, void *arg) {
  struct held h;
  h.i386_entry = ((const struct child_arg *)arg)->i386_entry;
  h.usr_dir = open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  h.dgram = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  memset(&h.bound, 0, sizeof(h.bound));
  h.bound.sun_family = AF_UNIX;
  int len = snprintf(h.bound.sun_path + 1, sizeof(h.bound.sun_path) - 1,
                     "capsa-selftest-%d", (int)getpid());
  h.namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
  int server = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (server < 0 || bind(server, (struct sockaddr *)&h.bound, h.namelen) < 0)
    h.namelen = 0;
  int p[2] = {-1, -1};
  if (pipe2(p, O_CLOEXEC) < 0) _exit(120);
  h.pipe_rd = p[0];
  int results[NCHECKS + 1];
  results[0] = capsa_cap_enter();
  for (size_t i = 0; i < NCHECKS; i++)
    results[i + 1] = results[0] == 0 ? kChecks[i].fn(&h) : -1;
  ssize_t w = write(wfd, results, sizeof(results));
  _exit(w == (ssize_t)sizeof(results) ? 0 : 121);
}

int capsa_capmode_selftest(struct capsa_selftest_result *out, size_t cap,
                           size_t *n) {
  if (!out || !n) return -EINVAL;
  *n = 0;
  const struct capsa_features *f = capsa_features_get();
  struct child_arg a = {f->i386_entry};
  int results[NCHECKS + 1];
  ssize_t got =
      capsa__child_run(child, &a, results, sizeof(results), 10000, NULL);
  if (got < 0) return (int)got;
  if ((size_t)got != sizeof(results)) return -ECHILD;
  if (results[0] < 0) return results[0];
  int failed = 0;
  for (size_t i = 0; i < NCHECKS && i < cap; i++) {
    struct capsa_selftest_result *r = &out[i];
    r->name = kChecks[i].name;
    r->layer = kChecks[i].layer;
    r->expected_errno = kChecks[i].expected;
    r->got_errno = results[i + 1];
    r->skip_reason = NULL;
    switch (kChecks[i].need) {
      case NEED_SECCOMP:
        if (!f->seccomp_filter) r->skip_reason = "no seccomp filters";
        break;
      case NEED_LANDLOCK:
        if (f->landlock_abi < 1) r->skip_reason = "no Landlock";
        break;
      case NEED_LANDLOCK6:
        if (f->landlock_abi < 6) r->skip_reason = "Landlock ABI < 6";
        break;
      case NEED_I386:
        if (!f->i386_entry)
          r->skip_reason = f->i386_detail;
        else if (!f->seccomp_filter)
          r->skip_reason = "no seccomp filters";
        break;
    }
    r->skipped = r->skip_reason != NULL;
    r->passed = !r->skipped && r->got_errno == r->expected_errno;
    if (!r->passed && !r->skipped) failed++;
    (*n)++;
  }
  return failed;
}
