// Process descriptors on pidfds: see sandbox/procdesc.h.
#include "sandbox/procdesc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/errors.h"
#include "sandbox/rights/rights.h"
#include "sandbox/rights/rights_internal.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

// PIDFD_GET_INFO (Linux 6.13), not in older uapi headers: the first version
// of struct pidfd_info is 64 bytes; the kernel reads the size from the
// request number, so this struct is the whole contract.
struct capsa_pidfd_info {
  uint64_t mask;
  uint64_t cgroupid;
  uint32_t pid;
  uint32_t tgid;
  uint32_t ppid;
  uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  uint32_t spare0[1];
};
#define CAPSA_PIDFD_INFO_PID 1ull
#define CAPSA_PIDFD_GET_INFO _IOWR(0xFF, 11, struct capsa_pidfd_info)
_Static_assert(CAPSA_PIDFD_GET_INFO == CAPSA__PIDFD_GET_INFO,
               "the rights filter knows this request number");

// The library-side check gives a clear ENOTCAPABLE for rights the seccomp
// layer cannot see (pdgetpid reads the pid without a dedicated syscall).
static int check_right(int pidfd, uint64_t right) {
  capsa_rights_t r;
  int err = capsa_rights_get(pidfd, &r);
  if (err < 0) return err;
  return capsa_rights_is_set(&r, right) ? 0 : -ENOTCAPABLE;
}

// The pids of the descriptors capsa_pdfork made, so that pdgetpid works
// where neither PIDFD_GET_INFO (kernel < 6.13, or an ioctl policy that
// refuses it) nor /proc (capability mode) is available. An entry is trusted
// only while its number still names the same pidfd inode.
struct known_pd {
  int fd;
  pid_t pid;
  ino_t ino;
  bool reaped;
};
#define KNOWN_MAX 64
static struct known_pd g_known[KNOWN_MAX];
static pthread_mutex_t g_known_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember(int fd, pid_t pid) {
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  pthread_mutex_lock(&g_known_lock);
  struct known_pd *slot = NULL;
  for (int i = 0; i < KNOWN_MAX && !slot; i++)
    if (g_known[i].pid == 0 || g_known[i].fd == fd) slot = &g_known[i];
  if (!slot) slot = &g_known[(unsigned)fd % KNOWN_MAX];  // evict one
  *slot = (struct known_pd){fd, pid, st.st_ino, false};
  pthread_mutex_unlock(&g_known_lock);
}

// 0 with *pid, -ESRCH for a reaped child, -ENOENT when unknown.
static int recall(int fd, pid_t *pid, bool mark_reaped) {
  struct stat st;
  // A number limited without CAP_FSTAT cannot be checked: trust the number
  // (it reveals a pid, no authority).
  bool check_ino = fstat(fd, &st) == 0;
  if (!check_ino && errno != ENOTCAPABLE) return -ENOENT;
  int r = -ENOENT;
  pthread_mutex_lock(&g_known_lock);
  for (int i = 0; i < KNOWN_MAX; i++) {
    struct known_pd *k = &g_known[i];
    if (k->pid == 0 || k->fd != fd) continue;
    if (check_ino && k->ino != st.st_ino) continue;
    if (mark_reaped) k->reaped = true;
    if (k->reaped) {
      r = -ESRCH;
    } else {
      *pid = k->pid;
      r = 0;
    }
  }
  pthread_mutex_unlock(&g_known_lock);
  return r;
}

pid_t capsa_pdfork(int *pidfd, int flags) {
  if (!pidfd || (flags & ~(CAPSA_PD_DAEMON | CAPSA_PD_CLOEXEC))) return -EINVAL;
  int fd = -1;
  // x86_64 clone(flags, stack, parent_tid, child_tid, tls): with CLONE_PIDFD
  // the kernel stores the descriptor through parent_tid, atomically with the
  // child's creation.
  long r = syscall(SYS_clone, (unsigned long)(CLONE_PIDFD | SIGCHLD), NULL, &fd,
                   NULL, 0UL);
  if (r < 0) return errno == EINVAL ? -ENOSYS : -errno;
  if (r == 0) return 0;
  *pidfd = fd;
  remember(fd, (pid_t)r);
  return (pid_t)r;
}

static int pid_from_fdinfo(int pidfd, pid_t *pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -EIO;
  buf[n] = '\0';
  const char *p = strstr(buf, "\nPid:");
  if (!p) return -EBADF;  // not a pidfd
  long v = strtol(p + 5, NULL, 10);
  if (v <= 0) return -ESRCH;  // -1: reaped; 0: in another pid namespace
  *pid = (pid_t)v;
  return 0;
}

int capsa_pdgetpid(int pidfd, pid_t *pid) {
  if (!pid) return -EINVAL;
  int err = check_right(pidfd, CAPSA_CAP_PDGETPID);
  if (err < 0) return err;
  struct capsa_pidfd_info info;
  memset(&info, 0, sizeof info);
  info.mask = CAPSA_PIDFD_INFO_PID;
  if (ioctl(pidfd, CAPSA_PIDFD_GET_INFO, &info) == 0) {
    if (!(info.mask & CAPSA_PIDFD_INFO_PID) || info.pid == 0) return -ESRCH;
    *pid = (pid_t)info.pid;
    return 0;
  }
  err = -errno;
  if (err == -ESRCH || err == -EBADF) return err;
  pid_t known = 0;
  int kerr = recall(pidfd, &known, false);
  if (kerr == 0) *pid = known;
  if (kerr != -ENOENT) return kerr;
  // ENOTTY/EINVAL: not a pidfd, or a kernel without PIDFD_GET_INFO.
  int ferr = pid_from_fdinfo(pidfd, pid);
  if (ferr == -EBADF && (err == -ENOTTY || err == -EINVAL)) return -EBADF;
  return ferr;
}

int capsa_pdkill(int pidfd, int signum) {
  if (syscall(SYS_pidfd_send_signal, pidfd, signum, NULL, 0u) != 0)
    return -errno;
  return 0;
}

pid_t capsa_pdwait(int pidfd, int *status, int options, struct rusage *ru) {
  if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | WNOWAIT)) return -EINVAL;
  // waitid(P_PIDFD) answers EINVAL for a negative id before looking at the
  // descriptor; FreeBSD's pdwait4 answers EBADF for any invalid descriptor
  // (a closed number and a non-pidfd already get EBADF from the kernel).
  if (pidfd < 0) return -EBADF;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  // waitid wants WEXITED to report exits; WUNTRACED is WSTOPPED there.
  int wopts = WEXITED | (options & (WNOHANG | WCONTINUED | WNOWAIT)) |
              ((options & WUNTRACED) ? WSTOPPED : 0);
  // The raw call takes the rusage argument glibc's waitid() leaves out.
  if (syscall(SYS_waitid, P_PIDFD, pidfd, &si, wopts, ru) != 0) return -errno;
  if (si.si_pid == 0) return 0;  // WNOHANG, nothing yet
  bool reaped = !(options & WNOWAIT) &&
                (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
                 si.si_code == CLD_DUMPED);
  if (reaped) {
    pid_t unused;
    recall(pidfd, &unused, true);
  }
  int st = 0;
  switch (si.si_code) {
    case CLD_EXITED:
      st = (si.si_status & 0xff) << 8;
      break;
    case CLD_KILLED:
      st = si.si_status & 0x7f;
      break;
    case CLD_DUMPED:
      st = (si.si_status & 0x7f) | 0x80;
      break;
    case CLD_STOPPED:
    case CLD_TRAPPED:
      st = ((si.si_status & 0xff) << 8) | 0x7f;
      break;
    case CLD_CONTINUED:
      st = 0xffff;
      break;
    default:
      return -EIO;
  }
  if (status) *status = st;
  return si.si_pid;
}
