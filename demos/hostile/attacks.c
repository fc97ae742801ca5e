// The attempts themselves. Each returns 0 if the operation worked (an
// escape), -errno if it was refused, CAPSA_ATTACK_NOT_APPLICABLE when the
// environment lacks what it needs. Each is written to be harmless if it did
// work (it runs in a throw-away child; see hostile.h).
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "demos/hostile/attacks_internal.h"
#include "sandbox/rights/rights.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#define X32_SYSCALL_BIT 0x40000000L

// -errno of the last failed call, for `return fail();`.
static int fail(void) {
  return -errno;
}

int capsa__atk_open_passwd(const struct capsa_attack_env *env) {
  int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

int capsa__atk_openat_cwd(const struct capsa_attack_env *env) {
  int fd = openat(AT_FDCWD, "/etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

int capsa__atk_openat_dotdot(const struct capsa_attack_env *env) {
  if (env->dir_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  int fd = openat(env->dir_fd, "../../../../../../../../etc/passwd",
                  O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

int capsa__atk_openat_absolute(const struct capsa_attack_env *env) {
  if (env->dir_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  // An absolute path ignores the directory descriptor.
  int fd = openat(env->dir_fd, "/etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

int capsa__atk_symlink_escape(const struct capsa_attack_env *env) {
  if (env->dir_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  static const char kLink[] = ".capsa-hostile-link";
  int made = symlinkat("/etc/passwd", env->dir_fd, kLink) == 0;
  if (!made && errno != EEXIST) return fail();
  int fd = openat(env->dir_fd, kLink, O_RDONLY | O_CLOEXEC);
  int rc = fd < 0 ? fail() : 0;
  if (fd >= 0) close(fd);
  if (made) unlinkat(env->dir_fd, kLink, 0);
  return rc;
}

int capsa__atk_proc_fd_reopen(const struct capsa_attack_env *env) {
  // Re-open a held descriptor (the read-only region if there is one) through
  // /proc with more access than it carries.
  int target = env->ro_shm_fd >= 0 ? env->ro_shm_fd : 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", target);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

int capsa__atk_stat_path(const struct capsa_attack_env *env) {
  struct stat st;
  return stat("/etc/shadow", &st) == 0 ? 0 : fail();
}

int capsa__atk_open_by_handle(const struct capsa_attack_env *env) {
  // The "shocker" container escape: open a file by its handle, bypassing
  // paths. The handle bytes do not matter: the call must not run at all.
  struct {
    unsigned int bytes;
    int type;
    unsigned char f[8];
  } h = {8, 1, {2, 0, 0, 0, 0, 0, 0, 0}};
  long fd = syscall(SYS_open_by_handle_at, env->dir_fd >= 0 ? env->dir_fd : 0,
                    &h, O_RDONLY);
  if (fd < 0) return fail();
  close((int)fd);
  return 0;
}

static int connect_to(int domain, int type, const struct sockaddr *sa,
                      socklen_t len) {
  int s = socket(domain, type | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  int rc = connect(s, sa, len) == 0 ? 0 : fail();
  close(s);
  return rc;
}

int capsa__atk_tcp_connect(const struct capsa_attack_env *env) {
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons(1),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  return connect_to(AF_INET, SOCK_STREAM, (struct sockaddr *)&a, sizeof a);
}

int capsa__atk_udp_sendto(const struct capsa_attack_env *env) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons(9),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int rc =
      sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a) == 1 ? 0 : fail();
  close(s);
  return rc;
}

int capsa__atk_netlink(const struct capsa_attack_env *env) {
  int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */);
  if (s < 0) return fail();
  close(s);
  return 0;
}

static socklen_t abstract_addr(struct sockaddr_un *u) {
  static const char kName[] = "capsa-hostile-abstract";
  memset(u, 0, sizeof *u);
  u->sun_family = AF_UNIX;
  memcpy(u->sun_path + 1, kName, sizeof kName - 1);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + sizeof kName -
                     1);
}

int capsa__atk_unix_abstract_connect(const struct capsa_attack_env *env) {
  struct sockaddr_un u;
  socklen_t len = abstract_addr(&u);
  return connect_to(AF_UNIX, SOCK_STREAM, (struct sockaddr *)&u, len);
}

int capsa__atk_unix_abstract_bind(const struct capsa_attack_env *env) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  struct sockaddr_un u;
  socklen_t len = abstract_addr(&u);
  int rc = bind(s, (struct sockaddr *)&u, len) == 0 ? 0 : fail();
  close(s);
  return rc;
}

int capsa__atk_unix_path_connect(const struct capsa_attack_env *env) {
  struct sockaddr_un u = {.sun_family = AF_UNIX};
  snprintf(u.sun_path, sizeof u.sun_path, "/run/systemd/private");
  return connect_to(AF_UNIX, SOCK_STREAM, (struct sockaddr *)&u, sizeof u);
}

int capsa__atk_ptrace_host(const struct capsa_attack_env *env) {
  // SEIZE does not stop the tracee; the tracer child exits right after,
  // which detaches.
  return ptrace(PTRACE_SEIZE, env->host_pid, 0, 0) == 0 ? 0 : fail();
}

int capsa__atk_ptrace_sibling(const struct capsa_attack_env *env) {
  if (env->sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return ptrace(PTRACE_SEIZE, env->sibling_pid, 0, 0) == 0 ? 0 : fail();
}

static int read_other(pid_t pid) {
  char buf[16];
  static char there[16];
  struct iovec local = {buf, sizeof buf}, remote = {there, sizeof there};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) >= 0 ? 0 : fail();
}

int capsa__atk_process_vm_sibling(const struct capsa_attack_env *env) {
  if (env->sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return read_other(env->sibling_pid);
}

int capsa__atk_kill_sibling(const struct capsa_attack_env *env) {
  if (env->sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return kill(env->sibling_pid, 0) == 0 ? 0 : fail();
}

int capsa__atk_process_vm_read(const struct capsa_attack_env *env) {
  char buf[16];
  static char there[16];
  struct iovec local = {buf, sizeof buf}, remote = {there, sizeof there};
  return process_vm_readv(env->host_pid, &local, 1, &remote, 1, 0) >= 0
             ? 0
             : fail();
}

int capsa__atk_kill_init(const struct capsa_attack_env *env) {
  return kill(1, 0) == 0 ? 0 : fail();  // signal 0: a permission probe
}

int capsa__atk_kill_host(const struct capsa_attack_env *env) {
  // The filter lets a renderer signal itself: aimed at its own pid the call
  // would succeed and prove nothing about the host.
  if (capsa_attack_aims_at_self(env, env->host_pid))
    return CAPSA_ATTACK_NOT_APPLICABLE;
  return kill(env->host_pid, 0) == 0 ? 0 : fail();
}

int capsa__atk_tgkill_host(const struct capsa_attack_env *env) {
  if (capsa_attack_aims_at_self(env, env->host_pid))
    return CAPSA_ATTACK_NOT_APPLICABLE;
  return syscall(SYS_tgkill, env->host_pid, env->host_pid, 0) == 0 ? 0 : fail();
}

int capsa__atk_mount(const struct capsa_attack_env *env) {
  return mount("capsa", "/capsa-hostile-nonexistent", "tmpfs", 0, NULL) == 0
             ? 0
             : fail();
}

int capsa__atk_chroot(const struct capsa_attack_env *env) {
  return chroot("/") == 0 ? 0 : fail();
}

int capsa__atk_unshare_user(const struct capsa_attack_env *env) {
  return unshare(CLONE_NEWUSER) == 0 ? 0 : fail();
}

int capsa__atk_unshare_net(const struct capsa_attack_env *env) {
  return unshare(CLONE_NEWNET) == 0 ? 0 : fail();
}

int capsa__atk_setns(const struct capsa_attack_env *env) {
  // Any descriptor: the call itself must be refused before the kernel looks.
  return setns(0, 0) == 0 ? 0 : fail();
}

int capsa__atk_clone_newns(const struct capsa_attack_env *env) {
  long pid =
      syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
  if (pid < 0) return fail();
  if (pid == 0) _exit(0);  // the new child: leave at once
  waitpid((pid_t)pid, NULL, 0);
  return 0;
}

int capsa__atk_execve_sh(const struct capsa_attack_env *env) {
  // Exits 42 if it runs: the runner recognises that as an escape.
  char *const argv[] = {"sh", "-c", "exit 42", NULL};
  char *const envp[] = {NULL};
  execve("/bin/sh", argv, envp);
  return fail();
}

int capsa__atk_execveat_fd(const struct capsa_attack_env *env) {
  char *const argv[] = {"sh", "-c", "exit 42", NULL};
  char *const envp[] = {NULL};
  syscall(SYS_execveat, AT_FDCWD, "/bin/sh", argv, envp, 0);
  return fail();
}

int capsa__atk_execve_setuid(const struct capsa_attack_env *env) {
  // mount(8) is setuid root on Debian; --version only prints.
  char *const argv[] = {"mount", "--version", NULL};
  char *const envp[] = {NULL};
  execve("/bin/mount", argv, envp);
  return fail();
}

int capsa__atk_rights_widen(const struct capsa_attack_env *env) {
  if (env->limited_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  capsa_rights_t all;
  capsa_rights_init_all(&all);
  return capsa_rights_limit(env->limited_fd, &all);
}

int capsa__atk_rights_write(const struct capsa_attack_env *env) {
  if (env->limited_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return write(env->limited_fd, "", 0) == 0 ? 0 : fail();
}

int capsa__atk_rights_dup(const struct capsa_attack_env *env) {
  if (env->limited_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  int fd = dup(env->limited_fd);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

int capsa__atk_setuid_root(const struct capsa_attack_env *env) {
  return syscall(SYS_setuid, 0) == 0 ? 0 : fail();
}

int capsa__atk_io_uring(const struct capsa_attack_env *env) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  long fd = syscall(SYS_io_uring_setup, 4, &p);
  if (fd < 0) return fail();
  close((int)fd);
  return 0;
}

int capsa__atk_bpf(const struct capsa_attack_env *env) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_type = BPF_MAP_TYPE_ARRAY;
  a.key_size = 4;
  a.value_size = 4;
  a.max_entries = 1;
  long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
  if (fd < 0) return fail();
  close((int)fd);
  return 0;
}

int capsa__atk_perf_event_open(const struct capsa_attack_env *env) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof a;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0) return fail();
  close((int)fd);
  return 0;
}

int capsa__atk_userfaultfd(const struct capsa_attack_env *env) {
  long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
  if (fd < 0) return fail();
  close((int)fd);
  return 0;
}

int capsa__atk_keyctl(const struct capsa_attack_env *env) {
  return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING,
                 0) >= 0
             ? 0
             : fail();
}

int capsa__atk_sysv_shm(const struct capsa_attack_env *env) {
  int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  if (id < 0) return fail();
  shmctl(id, IPC_RMID, NULL);
  return 0;
}

int capsa__atk_mmap_exec(const struct capsa_attack_env *env) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) return fail();
  munmap(p, 4096);
  return 0;
}

int capsa__atk_mprotect_exec(const struct capsa_attack_env *env) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return fail();
  int rc = mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0 ? 0 : fail();
  munmap(p, 4096);
  return rc;
}

int capsa__atk_tiocsti(const struct capsa_attack_env *env) {
  // A NUL byte: harmless even if some terminal accepted it.
  char c = 0;
  return syscall(SYS_ioctl, env->tty_fd, (unsigned long)TIOCSTI, &c) == 0
             ? 0
             : fail();
}

int capsa__atk_tiocsti_high_bits(const struct capsa_attack_env *env) {
  // CVE-2019-10063: the kernel truncates the request to 32 bits, a filter
  // comparing 64 bits would not recognise it.
  char c = 0;
  unsigned long req = (unsigned long)TIOCSTI | 0xdead000000000000UL;
  return syscall(SYS_ioctl, env->tty_fd, req, &c) == 0 ? 0 : fail();
}

int capsa__atk_int80_getpid(const struct capsa_attack_env *env) {
  // i386 getpid (20) through the 32-bit entry: a filter that only knows
  // x86_64 numbers would see syscall 20 (writev) or nothing at all.
  long ret = 20;
  __asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "rcx", "r11");
  if (ret < 0 && ret > -4096) return (int)ret;
  return 0;
}

int capsa__atk_x32_getpid(const struct capsa_attack_env *env) {
  long r = syscall(X32_SYSCALL_BIT | SYS_getpid);
  return r >= 0 ? 0 : fail();
}

int capsa__atk_shm_write(const struct capsa_attack_env *env) {
  if (env->ro_shm_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return pwrite(env->ro_shm_fd, "x", 1, 0) == 1 ? 0 : fail();
}

int capsa__atk_shm_grow(const struct capsa_attack_env *env) {
  if (env->ro_shm_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  off_t bigger = (off_t)env->ro_shm_size * 2 + 4096;
  return ftruncate(env->ro_shm_fd, bigger) == 0 ? 0 : fail();
}

int capsa__atk_shm_shrink(const struct capsa_attack_env *env) {
  if (env->ro_shm_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  // Shrinking under the host's mapping would SIGBUS the host.
  return ftruncate(env->ro_shm_fd, 0) == 0 ? 0 : fail();
}

int capsa__atk_shm_mmap_writable(const struct capsa_attack_env *env) {
  if (env->ro_shm_fd < 0 || env->ro_shm_size == 0)
    return CAPSA_ATTACK_NOT_APPLICABLE;
  void *p = mmap(NULL, env->ro_shm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                 env->ro_shm_fd, 0);
  if (p == MAP_FAILED) return fail();
  munmap(p, env->ro_shm_size);
  return 0;
}

int capsa__atk_shm_mprotect_writable(const struct capsa_attack_env *env) {
  if (env->ro_shm_fd < 0 || env->ro_shm_size == 0)
    return CAPSA_ATTACK_NOT_APPLICABLE;
  void *p =
      mmap(NULL, env->ro_shm_size, PROT_READ, MAP_SHARED, env->ro_shm_fd, 0);
  if (p == MAP_FAILED) return fail();  // not even readable: refused too
  int rc =
      mprotect(p, env->ro_shm_size, PROT_READ | PROT_WRITE) == 0 ? 0 : fail();
  munmap(p, env->ro_shm_size);
  return rc;
}
