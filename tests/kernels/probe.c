// capsa-kernel-probe: what this kernel gives, found without capsa's code,
// so that `./dev kernels` can check `capsa doctor --json` against it.
// Prints one "name=value" line per fact. Built static (no libc version or
// library in the guest matters) by tests/kernels/run_matrix.py:
//   cc -std=c17 -O1 -static -o probe tests/kernels/probe.c
// Each fact is found by a call that fails in a known way when it is absent;
// never by the kernel's version number.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#define LANDLOCK_CREATE_RULESET_VERSION 1U
#define X32_SYSCALL_BIT 0x40000000L
#define I386_NR_GETPID 20
#define CGROUP2_MAGIC 0x63677270

static const char *yn(int b) {
  return b ? "true" : "false";
}

// Runs fn in a forked child; returns its exit status, or 128 + the signal
// that killed it.
static int in_child(int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(fn());
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WEXITSTATUS(st);
}

// getpid through int 0x80: 0 when it returns our pid, 1 when the kernel
// answers -ENOSYS, SIGSEGV (general protection fault) when there is no i386
// entry at all (ia32_emulation=0, or CONFIG_IA32_EMULATION off).
static int i386_getpid(void) {
  long ret;
  __asm__ volatile("int $0x80"
                   : "=a"(ret)
                   : "a"((long)I386_NR_GETPID)
                   : "memory", "rcx", "r8", "r9", "r10", "r11");
  if (ret == (long)getpid()) return 0;
  return ret == -ENOSYS ? 1 : 2;
}

static int userns_as_nobody(void) {
  if (getuid() == 0 &&
      (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
       setresuid(65534, 65534, 65534) < 0))
    return 2;
  return unshare(CLONE_NEWUSER) == 0 ? 0 : 1;
}

static int action_avail(uint32_t action) {
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static int memfd(unsigned flags) {
  int fd = (int)syscall(SYS_memfd_create, "probe", MFD_CLOEXEC | flags);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

// The value of "Name:" in /proc/self/status, or "absent".
static void status_field(const char *name, char *out, size_t len) {
  snprintf(out, len, "absent");
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return;
  char line[256];
  size_t n = strlen(name);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, name, n) == 0 && line[n] == ':') {
      char *v = line + n + 1;
      while (*v == ' ' || *v == '\t') v++;
      v[strcspn(v, "\n")] = 0;
      snprintf(out, len, "%s", v);
      break;
    }
  }
  fclose(f);
}

static void read_line(const char *path, char *out, size_t len) {
  snprintf(out, len, "absent");
  FILE *f = fopen(path, "r");
  if (!f) return;
  if (fgets(out, (int)len, f))
    out[strcspn(out, "\n")] = 0;
  else
    out[0] = 0;
  fclose(f);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  errno = 0;
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
                     LANDLOCK_CREATE_RULESET_VERSION);
  printf("landlock_abi=%ld\n", abi < 0 ? 0 : abi);
  printf("landlock_errno=%s\n", abi < 0 ? strerrorname_np(errno) : "0");
  char buf[512];
  read_line("/sys/kernel/security/lsm", buf, sizeof buf);
  printf("lsm=%s\n", buf);

  int r = in_child(i386_getpid);
  printf("i386_entry=%s\n", yn(r == 0));
  printf("i386_detail=%s\n", r == 0               ? "getpid-works"
                             : r == 1             ? "ENOSYS"
                             : r == 128 + SIGSEGV ? "SIGSEGV"
                             : r == 128 + SIGKILL ? "SIGKILL"
                                                  : "other");
  errno = 0;
  long x = syscall(X32_SYSCALL_BIT | SYS_getpid);
  printf("x32_abi=%s\n", yn(!(x < 0 && errno == ENOSYS)));

  int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  printf("pidfd=%s\n", yn(pfd >= 0));
  if (pfd >= 0) close(pfd);
  errno = 0;
  long c3 = syscall(SYS_clone3, NULL, 0);
  printf("clone3=%s\n", yn(c3 < 0 && errno != ENOSYS));
  printf("clone3_errno=%s\n", c3 < 0 ? strerrorname_np(errno) : "0");

  printf("no_new_privs=%s\n", yn(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) >= 0));
  int filt =
      prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && action_avail(SECCOMP_RET_ERRNO);
  printf("seccomp_filter=%s\n", yn(filt));
  printf("seccomp_kill_process=%s\n",
         yn(filt && action_avail(SECCOMP_RET_KILL_PROCESS)));
  printf("seccomp_trap=%s\n", yn(filt && action_avail(SECCOMP_RET_TRAP)));
  printf("seccomp_log=%s\n", yn(filt && action_avail(SECCOMP_RET_LOG)));
  printf("seccomp_user_notif=%s\n",
         yn(filt && action_avail(SECCOMP_RET_USER_NOTIF)));
  status_field("Seccomp", buf, sizeof buf);
  printf("status_seccomp=%s\n", buf);
  status_field("Seccomp_filters", buf, sizeof buf);
  printf("status_seccomp_filters=%s\n", buf);

  r = in_child(userns_as_nobody);
  printf("userns_unprivileged=%s\n", yn(r == 0));
  read_line("/proc/sys/kernel/unprivileged_userns_clone", buf, sizeof buf);
  printf("sysctl_unprivileged_userns_clone=%s\n", buf);
  read_line("/proc/sys/user/max_user_namespaces", buf, sizeof buf);
  printf("sysctl_max_user_namespaces=%s\n", buf);

  printf("memfd_seals=%s\n", yn(memfd(MFD_ALLOW_SEALING)));
  printf("memfd_noexec_seal=%s\n",
         yn(memfd(MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL)));

  struct statfs sfs;
  int cg2 = statfs("/sys/fs/cgroup", &sfs) == 0 &&
            (unsigned long)sfs.f_type == CGROUP2_MAGIC;
  printf("cgroup2=%s\n", yn(cg2));
  // Wherever cgroup v2 is mounted (hybrid hosts: /sys/fs/cgroup/unified).
  char mnt[256] = "absent";
  FILE *m = fopen("/proc/self/mounts", "r");
  while (m && fgets(buf, sizeof buf, m)) {
    char dev[128], dir[256], type[64];
    if (sscanf(buf, "%127s %255s %63s", dev, dir, type) == 3 &&
        strcmp(type, "cgroup2") == 0) {
      snprintf(mnt, sizeof mnt, "%s", dir);
      break;
    }
  }
  if (m) fclose(m);
  printf("cgroup2_mount=%s\n", mnt);
  char path[1100];
  snprintf(path, sizeof path, "%s/cgroup.controllers", mnt);
  read_line(path, buf, sizeof buf);
  printf("cgroup2_controllers=%s\n", strcmp(mnt, "absent") ? buf : "absent");
  // ... and in our own cgroup (what a host could give its renderers).
  char self[512] = "";
  FILE *c = fopen("/proc/self/cgroup", "r");
  while (c && fgets(buf, sizeof buf, c)) {
    if (strncmp(buf, "0::", 3) == 0) {
      buf[strcspn(buf, "\n")] = 0;
      snprintf(self, sizeof self, "%s", buf + 3);
      break;
    }
  }
  if (c) fclose(c);
  snprintf(path, sizeof path, "%s%s/cgroup.controllers", mnt,
           strcmp(self, "/") ? self : "");
  read_line(path, buf, sizeof buf);
  printf("cgroup2_dir=%s%s\n", mnt, strcmp(self, "/") ? self : "");
  printf("cgroup2_dir_controllers=%s\n",
         strcmp(mnt, "absent") ? buf : "absent");
  return 0;
}
