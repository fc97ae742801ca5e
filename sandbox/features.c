// Probes the kernel once for what capability mode and launchers build on.
// Each probe asks the kernel directly (a harmless call that fails in a known
// way when the feature is absent) rather than trusting version numbers.
#include "sandbox/features.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "sandbox/child_run.h"
#include "sandbox/landlock.h"
#include "sandbox/launcher/namespaces.h"
#include "sandbox/launcher/ns_probe.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#define X32_SYSCALL_BIT 0x40000000

static struct capsa_features g_features;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_probed;

static bool seccomp_action_avail(uint32_t action) {
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static bool probe_memfd(unsigned flags) {
  int fd = (int)syscall(SYS_memfd_create, "capsa-probe", MFD_CLOEXEC | flags);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// An unprivileged user namespace: the only reliable answer is to try, in a
// child so that the caller's namespaces stay as they are. Root can always
// create one, so root's answer also reflects the sysctls a non-root user
// would hit: Debian's kernel.unprivileged_userns_clone and Ubuntu's AppArmor
// restriction.
static int read_sysctl_int(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[32] = {0};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return -1;
  int v = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
    v = v * 10 + (buf[i] - '0');
  return v;
}

static bool probe_userns(void) {
  if (read_sysctl_int("/proc/sys/kernel/unprivileged_userns_clone") == 0)
    return false;
  if (read_sysctl_int("/proc/sys/user/max_user_namespaces") == 0) return false;
  if (read_sysctl_int(
          "/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
    return false;
  // The namespace probe's answer when this process has it (a host probes
  // namespaces first): the same question, a user namespace made with this
  // process's credentials, without another child.
  unsigned avail = 0;
  if (capsa__ns_available_cached(&avail))
    return (avail & CAPSA_NAMESPACE_USER) != 0;
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  pid_t w;
  do w = waitpid(pid, &status, 0);
  while (w < 0 && errno == EINTR);
  return w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The entries that may fault: int 0x80 raises SIGSEGV where the kernel or
// hypervisor gives no i386 entry, and either call may be killed by a seccomp
// filter the caller already runs under. The child reports the x32 answer on
// a pipe before trying int 0x80; its exit status gives the i386 answer.
static long i386_getpid(void) {
  long r = 20;  // i386 getpid
  // int 0x80 from 64-bit code zeroes r8-r11 on current kernels.
  __asm__ volatile("int $0x80"
                   : "+a"(r)
                   :
                   : "memory", "rcx", "r8", "r9", "r10", "r11");
  return r;
}

static void probe_entries_child(int wfd, void *unused) {
  (void)unused;
  // Only a call that answers counts as present: a filter's errno does not.
  long me = syscall(SYS_getpid);
  long r = syscall(X32_SYSCALL_BIT | SYS_getpid);
  char x32 = r == me ? 'y' : 'n';
  if (write(wfd, &x32, 1) != 1) _exit(4);
  // Where int 0x80 faults, the fault is the answer: die of it quietly. A
  // sanitizer's SIGSEGV handler (inherited from the parent) would print a
  // crash report into the caller's stderr instead (seen under ASan on a
  // kernel without IA-32 emulation). The raw syscall: ASan intercepts
  // sigaction(). Kernel layout: handler, flags, restorer, mask.
  for (int sig = SIGSEGV; sig != 0; sig = sig == SIGSEGV ? SIGBUS : 0) {
    unsigned long act[4] = {(unsigned long)SIG_DFL, 0, 0, 0};
    syscall(SYS_rt_sigaction, sig, act, NULL, 8);
  }
  r = i386_getpid();
  _exit(r == me ? 0 : r == -ENOSYS ? 1 : (r < 0 && r > -4096) ? 2 : 3);
}

// Every text probe_entries may leave in i386_detail, in a fixed order: the
// verdicts name one by its index (capsa__features_verdicts).
enum {
  I386_NOT_RUN,
  I386_PRESENT,  // the only one with i386_entry true
  I386_NO_ANSWER,
  I386_NO_STATUS,
  I386_ENOSYS,
  I386_REFUSED,
  I386_SEGV,
  I386_SIGSYS,
  I386_WRONG,
  I386_DETAILS
};
static const char *const kI386Details[I386_DETAILS] = {
    "absent (the probe could not run)",
    "present",
    "unknown (the probe did not answer)",
    "unknown (the probe's status could not be read)",
    "absent in this kernel (int 0x80 answers ENOSYS)",
    "unknown (int 0x80 refused: probed under a filter)",
    "absent in this kernel (int 0x80 faults: SIGSEGV)",
    "unknown (probed under a seccomp filter: SIGSYS)",
    "absent (int 0x80 gave a wrong answer)",
};

int capsa_features_probe_entries(struct capsa_features *f) {
  if (!f) return -EINVAL;
  f->x32_abi = false;
  f->i386_entry = false;
  f->i386_detail = kI386Details[I386_NOT_RUN];
  char x32 = 0;
  int status = -1;
  ssize_t n =
      capsa__child_run(probe_entries_child, NULL, &x32, 1, 10000, &status);
  if (n == -ETIMEDOUT) {
    f->i386_detail = kI386Details[I386_NO_ANSWER];
    return 0;
  }
  if (n < 0) return (int)n;
  f->x32_abi = n == 1 && x32 == 'y';
  if (status == -1) {
    // SIGCHLD ignored (children reaped by the kernel): no answer is not
    // a yes.
    f->i386_detail = kI386Details[I386_NO_STATUS];
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    f->i386_entry = true;
    f->i386_detail = kI386Details[I386_PRESENT];
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
    f->i386_detail = kI386Details[I386_ENOSYS];
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    f->i386_detail = kI386Details[I386_REFUSED];
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
    f->i386_detail = kI386Details[I386_SEGV];
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
    f->i386_detail = kI386Details[I386_SIGSYS];
  } else {
    f->i386_detail = kI386Details[I386_WRONG];
  }
  return 0;
}

// What needs no child: asked of the kernel in this process.
static void probe_here(struct capsa_features *f) {
  f->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) >= 0;
  // SECCOMP_GET_ACTION_AVAIL exists since 4.14; a kernel with seccomp
  // filters but without it is too old for capsa anyway.
  f->seccomp_filter = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
                      seccomp_action_avail(SECCOMP_RET_ERRNO);
  f->seccomp_kill_process =
      f->seccomp_filter && seccomp_action_avail(SECCOMP_RET_KILL_PROCESS);
  f->seccomp_trap = f->seccomp_filter && seccomp_action_avail(SECCOMP_RET_TRAP);
  // TSYNC arrived with seccomp() itself (3.17); seccomp() working implies it.
  f->seccomp_tsync = f->seccomp_filter;
  f->landlock_abi = capsa__landlock_abi();
  int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  f->pidfd = pidfd >= 0;
  if (pidfd >= 0) close(pidfd);
  // clone3(NULL, 0): EINVAL (size too small) when it exists, ENOSYS if not.
  f->clone3 = syscall(SYS_clone3, NULL, 0) < 0 && errno != ENOSYS;
  f->memfd_seals = probe_memfd(MFD_ALLOW_SEALING);
  f->memfd_noexec_seal = probe_memfd(MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
  // Wherever it is mounted (hybrid systems: /sys/fs/cgroup/unified), as
  // the host's cgroup probe finds it, so doctor's text and JSON agree.
  f->cgroup2 = capsa_cgroup_probe()->mounted;
}

// Verdicts taken from elsewhere (capsa__features_adopt), used by the probe
// in place of the children that would find them.
static struct capsa__features_verdicts g_given;
static bool g_given_set;

static void probe(void) {
  struct capsa_features *f = &g_features;
  probe_here(f);
  if (__atomic_load_n(&g_given_set, __ATOMIC_ACQUIRE)) {
    f->userns_unprivileged = g_given.userns_unprivileged;
    f->x32_abi = g_given.x32_abi;
    f->i386_entry = g_given.i386_entry;
    f->i386_detail = kI386Details[g_given.i386_detail];
  } else {
    f->userns_unprivileged = probe_userns();
    // getpid through the x32 ABI (ENOSYS when the kernel lacks it) and the
    // i386 entry, in a child.
    capsa_features_probe_entries(f);
  }
  __atomic_store_n(&g_probed, true, __ATOMIC_RELEASE);
}

const struct capsa_features *capsa_features_get(void) {
  pthread_once(&g_once, probe);
  return &g_features;
}

int capsa__features_export(struct capsa__features_verdicts *out) {
  if (!out) return -EINVAL;
  const struct capsa_features *f = capsa_features_get();
  unsigned d = 0;
  while (d < I386_DETAILS &&
         (!f->i386_detail || strcmp(f->i386_detail, kI386Details[d]) != 0))
    d++;
  if (d == I386_DETAILS) return -EINVAL;
  out->userns_unprivileged = f->userns_unprivileged;
  out->x32_abi = f->x32_abi;
  out->i386_entry = f->i386_entry;
  out->i386_detail = (uint8_t)d;
  return 0;
}

int capsa__features_adopt(const struct capsa__features_verdicts *in) {
  if (!in || in->userns_unprivileged > 1 || in->x32_abi > 1 ||
      in->i386_entry > 1 || in->i386_detail >= I386_DETAILS ||
      (in->i386_entry == 1) != (in->i386_detail == I386_PRESENT))
    return -EINVAL;
  if (__atomic_load_n(&g_probed, __ATOMIC_ACQUIRE) ||
      __atomic_load_n(&g_given_set, __ATOMIC_ACQUIRE))
    return -EALREADY;
  // Taken at the first capsa_features_get(), which probes the rest then, as
  // it would have (an exec'd zygote: after it entered its empty root).
  g_given = *in;
  __atomic_store_n(&g_given_set, true, __ATOMIC_RELEASE);
  return 0;
}

const struct capsa_features *capsa_features_cached(void) {
  return __atomic_load_n(&g_probed, __ATOMIC_ACQUIRE) ? &g_features : NULL;
}

int capsa_features_format(const struct capsa_features *f, bool json, char *buf,
                          size_t len) {
  if (!f || (!buf && len)) return -EINVAL;
#define B(x) ((x) ? "true" : "false")
  int n = snprintf(
      buf, len,
      json ? "{\"no_new_privs\":%s,\"seccomp_filter\":%s,"
             "\"seccomp_tsync\":%s,\"seccomp_kill_process\":%s,"
             "\"seccomp_trap\":%s,\"landlock_abi\":%d,"
             "\"userns_unprivileged\":%s,\"pidfd\":%s,\"clone3\":%s,"
             "\"memfd_seals\":%s,\"memfd_noexec_seal\":%s,\"cgroup2\":%s,"
             "\"x32_abi\":%s,\"i386_entry\":%s,\"i386_detail\":\"%s\"}"
           : "no_new_privs=%s seccomp_filter=%s seccomp_tsync=%s "
             "seccomp_kill_process=%s seccomp_trap=%s landlock_abi=%d "
             "userns_unprivileged=%s pidfd=%s clone3=%s memfd_seals=%s "
             "memfd_noexec_seal=%s cgroup2=%s x32_abi=%s i386_entry=%s "
             "(%s)",
      B(f->no_new_privs), B(f->seccomp_filter), B(f->seccomp_tsync),
      B(f->seccomp_kill_process), B(f->seccomp_trap), f->landlock_abi,
      B(f->userns_unprivileged), B(f->pidfd), B(f->clone3), B(f->memfd_seals),
      B(f->memfd_noexec_seal), B(f->cgroup2), B(f->x32_abi), B(f->i386_entry),
      f->i386_detail ? f->i386_detail : "unknown");
#undef B
  return n < 0 ? -EINVAL : n;
}
