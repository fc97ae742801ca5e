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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/landlock.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#define X32_SYSCALL_BIT 0x40000000

static struct capsa_features g_features;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

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
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void probe(void) {
  struct capsa_features *f = &g_features;
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
  f->userns_unprivileged = probe_userns();
  int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  f->pidfd = pidfd >= 0;
  if (pidfd >= 0) close(pidfd);
  // clone3(NULL, 0): EINVAL (size too small) when it exists, ENOSYS if not.
  f->clone3 = syscall(SYS_clone3, NULL, 0) < 0 && errno != ENOSYS;
  f->memfd_seals = probe_memfd(MFD_ALLOW_SEALING);
  f->memfd_noexec_seal = probe_memfd(MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
  struct statfs sfs;
  f->cgroup2 = statfs("/sys/fs/cgroup", &sfs) == 0 &&
               (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC;
  // getpid through the x32 ABI: ENOSYS when the kernel lacks it.
  errno = 0;
  long r = syscall(X32_SYSCALL_BIT | SYS_getpid);
  f->x32_abi = !(r < 0 && errno == ENOSYS);
}

const struct capsa_features *capsa_features_get(void) {
  pthread_once(&g_once, probe);
  return &g_features;
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
             "\"x32_abi\":%s}"
           : "no_new_privs=%s seccomp_filter=%s seccomp_tsync=%s "
             "seccomp_kill_process=%s seccomp_trap=%s landlock_abi=%d "
             "userns_unprivileged=%s pidfd=%s clone3=%s memfd_seals=%s "
             "memfd_noexec_seal=%s cgroup2=%s x32_abi=%s",
      B(f->no_new_privs), B(f->seccomp_filter), B(f->seccomp_tsync),
      B(f->seccomp_kill_process), B(f->seccomp_trap), f->landlock_abi,
      B(f->userns_unprivileged), B(f->pidfd), B(f->clone3), B(f->memfd_seals),
      B(f->memfd_noexec_seal), B(f->cgroup2), B(f->x32_abi));
#undef B
  return n < 0 ? -EINVAL : n;
}
