// The escape matrix's own attempts (see escape_attacks.h). Like the hostile
// list's, each returns 0 if the operation worked (an escape), -errno when
// refused, CAPSA_ATTACK_NOT_APPLICABLE when there is nothing to aim at, and
// is harmless if it did work: signal 0, PTRACE_SEIZE (no stop), writes into
// a scratch buffer nobody reads, names that do not exist.
#include "tests/escape/escape_attacks.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/ptrace.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/errors.h"
#include "sandbox/rights/rights.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

struct capsa_escape_ctx capsa_escape_ctx = {0, -1};

static int fail(void) {
  return -errno;
}

static int ok_or_fail(long rc) {
  return rc >= 0 ? 0 : fail();
}

// --- namespaces ---------------------------------------------------------

static int unshare_flag(int flag) {
  return ok_or_fail(unshare(flag));
}
static int atk_unshare_mount(const struct capsa_attack_env *e) {
  (void)e;
  return unshare_flag(CLONE_NEWNS);
}
static int atk_unshare_pid(const struct capsa_attack_env *e) {
  (void)e;
  return unshare_flag(CLONE_NEWPID);
}
static int atk_unshare_ipc(const struct capsa_attack_env *e) {
  (void)e;
  return unshare_flag(CLONE_NEWIPC);
}
static int atk_unshare_uts(const struct capsa_attack_env *e) {
  (void)e;
  return unshare_flag(CLONE_NEWUTS);
}
static int atk_unshare_cgroup(const struct capsa_attack_env *e) {
  (void)e;
  return unshare_flag(CLONE_NEWCGROUP);
}
static int atk_unshare_time(const struct capsa_attack_env *e) {
  (void)e;
  return unshare_flag(CLONE_NEWTIME);
}

static int clone_flags(unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid < 0) return fail();
  if (pid == 0) _exit(0);
  waitpid((pid_t)pid, NULL, 0);
  return 0;
}
static int atk_clone_newpid(const struct capsa_attack_env *e) {
  (void)e;
  return clone_flags(CLONE_NEWPID);
}
static int atk_clone_newnet(const struct capsa_attack_env *e) {
  (void)e;
  return clone_flags(CLONE_NEWNET);
}
static int atk_clone_newuser(const struct capsa_attack_env *e) {
  (void)e;
  return clone_flags(CLONE_NEWUSER);
}

static int atk_clone3_newuser(const struct capsa_attack_env *e) {
  (void)e;
  struct clone_args ca;
  memset(&ca, 0, sizeof ca);
  ca.flags = CLONE_NEWUSER | CLONE_NEWNS;
  ca.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &ca, sizeof ca);
  if (pid < 0) return fail();
  if (pid == 0) _exit(0);
  waitpid((pid_t)pid, NULL, 0);
  return 0;
}

static int atk_setns_file(const struct capsa_attack_env *e) {
  (void)e;
  int fd = capsa_escape_ctx.file_fd >= 0 ? capsa_escape_ctx.file_fd : 0;
  return ok_or_fail(setns(fd, CLONE_NEWNET));
}

// --- other processes: the host and a sibling renderer -------------------

static char scratch[64];  // the target of would-be remote writes; never read

static int vm_read(pid_t pid) {
  char buf[16];
  struct iovec l = {buf, sizeof buf}, r = {scratch, sizeof buf};
  return ok_or_fail(process_vm_readv(pid, &l, 1, &r, 1, 0));
}
static int vm_write(pid_t pid) {
  char buf[16] = "capsa-escape";
  struct iovec l = {buf, sizeof buf}, r = {scratch, sizeof buf};
  return ok_or_fail(process_vm_writev(pid, &l, 1, &r, 1, 0));
}
static int atk_vm_write_host(const struct capsa_attack_env *e) {
  return vm_write(e->host_pid);
}
static int atk_vm_read_sibling(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return vm_read(capsa_escape_ctx.sibling_pid);
}
static int atk_vm_write_sibling(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return vm_write(capsa_escape_ctx.sibling_pid);
}
static int atk_ptrace_sibling(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return ok_or_fail(ptrace(PTRACE_SEIZE, capsa_escape_ctx.sibling_pid, 0, 0));
}
static int atk_ptrace_attach_host(const struct capsa_attack_env *e) {
  long rc = ptrace(PTRACE_ATTACH, e->host_pid, 0, 0);
  if (rc == 0) ptrace(PTRACE_DETACH, e->host_pid, 0, 0);
  return ok_or_fail(rc);
}
static int atk_ptrace_traceme(const struct capsa_attack_env *e) {
  (void)e;
  return ok_or_fail(ptrace(PTRACE_TRACEME, 0, 0, 0));
}
static int atk_kill_sibling(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.sibling_pid <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return ok_or_fail(kill(capsa_escape_ctx.sibling_pid, 0));
}
static int atk_tgkill_sibling(const struct capsa_attack_env *e) {
  (void)e;
  pid_t p = capsa_escape_ctx.sibling_pid;
  if (p <= 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return ok_or_fail(syscall(SYS_tgkill, p, p, 0));
}
static int atk_kill_all(const struct capsa_attack_env *e) {
  (void)e;
  return ok_or_fail(kill(-1, 0));
}
static int atk_kill_host_sigkill(const struct capsa_attack_env *e) {
  // A real signal this time: if it got through the host would die, and the
  // test would see that as well as this row. Where the host's pid names
  // the attacker itself (host and renderer both pid 1 of their own pid
  // namespaces) there is no host to aim at from in there.
  if (capsa_attack_aims_at_self(e, e->host_pid))
    return CAPSA_ATTACK_NOT_APPLICABLE;
  return ok_or_fail(kill(e->host_pid, SIGKILL));
}
static int atk_pidfd_open_host(const struct capsa_attack_env *e) {
  long fd = syscall(SYS_pidfd_open, e->host_pid, 0);
  if (fd < 0) return fail();
  close((int)fd);
  return 0;
}

// --- network ---------------------------------------------------------------

static int bind_to(int domain, int type, const struct sockaddr *sa,
                   socklen_t len) {
  int s = socket(domain, type | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  int rc = bind(s, sa, len) == 0 ? 0 : fail();
  close(s);
  return rc;
}
static int atk_tcp_bind(const struct capsa_attack_env *e) {
  (void)e;
  struct sockaddr_in a = {.sin_family = AF_INET};
  return bind_to(AF_INET, SOCK_STREAM, (struct sockaddr *)&a, sizeof a);
}
static int atk_udp_bind(const struct capsa_attack_env *e) {
  (void)e;
  struct sockaddr_in a = {.sin_family = AF_INET};
  return bind_to(AF_INET, SOCK_DGRAM, (struct sockaddr *)&a, sizeof a);
}
static int atk_tcp6_connect(const struct capsa_attack_env *e) {
  (void)e;
  int s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(1)};
  a.sin6_addr = in6addr_loopback;
  int rc = connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : fail();
  close(s);
  return rc;
}
static int atk_unix_path_bind(const struct capsa_attack_env *e) {
  (void)e;
  struct sockaddr_un u = {.sun_family = AF_UNIX};
  snprintf(u.sun_path, sizeof u.sun_path, "/tmp/capsa-escape-%d.sock",
           (int)getpid());
  return bind_to(AF_UNIX, SOCK_STREAM, (struct sockaddr *)&u, sizeof u);
}
static int atk_unix_dgram_sendto(const struct capsa_attack_env *e) {
  (void)e;
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  struct sockaddr_un u = {.sun_family = AF_UNIX};
  snprintf(u.sun_path, sizeof u.sun_path, "/dev/log");
  int rc =
      sendto(s, "x", 1, 0, (struct sockaddr *)&u, sizeof u) == 1 ? 0 : fail();
  close(s);
  return rc;
}
static int atk_packet_socket(const struct capsa_attack_env *e) {
  (void)e;
  int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (s < 0) return fail();
  close(s);
  return 0;
}

// --- SysV and POSIX IPC, keys, modules ------------------------------------

static int atk_msgget(const struct capsa_attack_env *e) {
  (void)e;
  int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
  if (id < 0) return fail();
  msgctl(id, IPC_RMID, NULL);
  return 0;
}
static int atk_semget(const struct capsa_attack_env *e) {
  (void)e;
  int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
  if (id < 0) return fail();
  semctl(id, 0, IPC_RMID);
  return 0;
}
static int atk_mq_open(const struct capsa_attack_env *e) {
  (void)e;
  long fd = syscall(SYS_mq_open, "capsa-escape", O_RDWR | O_CREAT, 0600, NULL);
  if (fd < 0) return fail();
  close((int)fd);
  syscall(SYS_mq_unlink, "capsa-escape");
  return 0;
}
static int atk_add_key(const struct capsa_attack_env *e) {
  (void)e;
  return ok_or_fail(syscall(SYS_add_key, "user", "capsa-escape", "x", 1,
                            KEY_SPEC_PROCESS_KEYRING));
}
static int atk_finit_module(const struct capsa_attack_env *e) {
  (void)e;
  int fd = capsa_escape_ctx.file_fd >= 0 ? capsa_escape_ctx.file_fd : 0;
  return ok_or_fail(syscall(SYS_finit_module, fd, "", 0));
}

// --- exec ------------------------------------------------------------------

static int atk_execve_setuid(const struct capsa_attack_env *e) {
  (void)e;
  // su as root runs `exit 42`, which the runner reports as an escape.
  char *const argv[] = {"su", "root", "-c", "exit 42", NULL};
  char *const envp[] = {NULL};
  execve("/bin/su", argv, envp);
  return fail();
}
static int atk_execve_proc_self(const struct capsa_attack_env *e) {
  (void)e;
  char *const argv[] = {"self", "--gtest_list_tests", NULL};
  char *const envp[] = {NULL};
  execve("/proc/self/exe", argv, envp);
  return fail();
}
static int atk_fexecve_handle(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  char *const argv[] = {"x", NULL};
  char *const envp[] = {NULL};
  syscall(SYS_execveat, capsa_escape_ctx.file_fd, "", argv, envp,
          AT_EMPTY_PATH);
  return fail();
}

// --- code ------------------------------------------------------------------

static int atk_pkey_mprotect_exec(const struct capsa_attack_env *e) {
  (void)e;
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return fail();
  int rc = ok_or_fail(
      syscall(SYS_pkey_mprotect, p, 4096, PROT_READ | PROT_EXEC, -1));
  munmap(p, 4096);
  return rc;
}
static int atk_shm_mmap_exec(const struct capsa_attack_env *e) {
  if (e->ro_shm_fd < 0 || e->ro_shm_size == 0)
    return CAPSA_ATTACK_NOT_APPLICABLE;
  void *p = mmap(NULL, e->ro_shm_size, PROT_READ | PROT_EXEC, MAP_SHARED,
                 e->ro_shm_fd, 0);
  if (p == MAP_FAILED) return fail();
  munmap(p, e->ro_shm_size);
  return 0;
}

// --- filesystem without a directory handle --------------------------------

static int atk_openat_cwd_dotdot(const struct capsa_attack_env *e) {
  (void)e;
  int fd = openat(AT_FDCWD, "../../../../etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}
static int atk_symlinkat_cwd(const struct capsa_attack_env *e) {
  (void)e;
  if (symlinkat("/etc/passwd", AT_FDCWD, "capsa-escape-link") != 0)
    return fail();
  unlinkat(AT_FDCWD, "capsa-escape-link", 0);
  return 0;
}
static int atk_linkat_handle(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  // Give the received file a name somewhere (AT_EMPTY_PATH link-by-fd).
  if (linkat(capsa_escape_ctx.file_fd, "", AT_FDCWD, "capsa-escape-hard",
             AT_EMPTY_PATH) != 0)
    return fail();
  unlinkat(AT_FDCWD, "capsa-escape-hard", 0);
  return 0;
}
static int atk_chdir_root(const struct capsa_attack_env *e) {
  (void)e;
  return ok_or_fail(chdir("/"));
}

// --- the read-only file handle from the broker ------------------------------

static int atk_file_reopen_rw(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", capsa_escape_ctx.file_fd);
  int fd = openat(AT_FDCWD, path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}
static int atk_file_write(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return pwrite(capsa_escape_ctx.file_fd, "x", 1, 0) == 1 ? 0 : fail();
}
static int atk_file_truncate(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return ok_or_fail(ftruncate(capsa_escape_ctx.file_fd, 0));
}
static int atk_file_mmap_shared_write(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                 capsa_escape_ctx.file_fd, 0);
  if (p == MAP_FAILED) return fail();
  munmap(p, 4096);
  return 0;
}

// --- rights: only ever narrower -------------------------------------------

static int widen(int fd) {
  capsa_rights_t all;
  capsa_rights_init_all(&all);
  return capsa_rights_limit(fd, &all);  // 0 would be a widening
}
static int atk_rights_widen_shm(const struct capsa_attack_env *e) {
  if (e->ro_shm_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return widen(e->ro_shm_fd);
}
static int atk_rights_widen_file(const struct capsa_attack_env *e) {
  (void)e;
  if (capsa_escape_ctx.file_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  return widen(capsa_escape_ctx.file_fd);
}
static int atk_dup_limited(const struct capsa_attack_env *e) {
  // A new number would not carry the number-keyed rights filter.
  if (e->ro_shm_fd < 0) return CAPSA_ATTACK_NOT_APPLICABLE;
  int fd = dup(e->ro_shm_fd);
  if (fd < 0) return fail();
  close(fd);
  return 0;
}

#define ROW(n, w, f, layer, ...) \
  { n, w, f, {__VA_ARGS__}, 0, layer, CAPSA_ATTACK_NEEDS_NOTHING }

// Expected answers: ECAPMODE from the seccomp table for every refused
// syscall (ENOTCAPABLE where the call names a rights-limited handle: the
// rights layer's filter is installed after capability mode's, and among
// errno answers the most recently installed filter's wins); ENOSYS for clone3
// (so that glibc falls back to clone, whose flags can be checked:
// docs/DESIGN.md); the descriptor's own mode, seals and the rights layer for
// handles (EBADF/EACCES/EPERM/EINVAL/ENOTCAPABLE).
const struct capsa_attack capsa_escape_attacks[] = {
    // namespaces
    ROW("unshare-mount", "unshare(CLONE_NEWNS)", atk_unshare_mount, "seccomp",
        ECAPMODE),
    ROW("unshare-pid", "unshare(CLONE_NEWPID)", atk_unshare_pid, "seccomp",
        ECAPMODE),
    ROW("unshare-ipc", "unshare(CLONE_NEWIPC)", atk_unshare_ipc, "seccomp",
        ECAPMODE),
    ROW("unshare-uts", "unshare(CLONE_NEWUTS)", atk_unshare_uts, "seccomp",
        ECAPMODE),
    ROW("unshare-cgroup", "unshare(CLONE_NEWCGROUP)", atk_unshare_cgroup,
        "seccomp", ECAPMODE),
    ROW("unshare-time", "unshare(CLONE_NEWTIME)", atk_unshare_time, "seccomp",
        ECAPMODE),
    ROW("clone-newpid", "clone(CLONE_NEWPID)", atk_clone_newpid, "seccomp",
        ECAPMODE),
    ROW("clone-newnet", "clone(CLONE_NEWNET)", atk_clone_newnet, "seccomp",
        ECAPMODE),
    ROW("clone-newuser", "clone(CLONE_NEWUSER)", atk_clone_newuser, "seccomp",
        ECAPMODE),
    ROW("clone3-newuser", "clone3(CLONE_NEWUSER | CLONE_NEWNS)",
        atk_clone3_newuser, "seccomp (clone3 -> ENOSYS)", ENOSYS),
    ROW("setns-handle", "setns(held fd, CLONE_NEWNET)", atk_setns_file,
        "seccomp (rights layer on a limited handle)", ECAPMODE, ENOTCAPABLE),
    // processes
    ROW("process-vm-write-host", "process_vm_writev(host)", atk_vm_write_host,
        "seccomp", ECAPMODE),
    ROW("sibling-vm-read", "process_vm_readv(sibling renderer)",
        atk_vm_read_sibling, "seccomp", ECAPMODE),
    ROW("sibling-vm-write", "process_vm_writev(sibling renderer)",
        atk_vm_write_sibling, "seccomp", ECAPMODE),
    ROW("sibling-ptrace", "ptrace(PTRACE_SEIZE, sibling renderer)",
        atk_ptrace_sibling, "seccomp", ECAPMODE),
    ROW("ptrace-attach-host", "ptrace(PTRACE_ATTACH, host)",
        atk_ptrace_attach_host, "seccomp", ECAPMODE),
    ROW("ptrace-traceme", "ptrace(PTRACE_TRACEME)", atk_ptrace_traceme,
        "seccomp", ECAPMODE),
    ROW("sibling-kill", "kill(sibling renderer, 0)", atk_kill_sibling,
        "seccomp", ECAPMODE, EPERM),
    ROW("sibling-tgkill", "tgkill(sibling, sibling, 0)", atk_tgkill_sibling,
        "seccomp", ECAPMODE, EPERM),
    ROW("kill-all", "kill(-1, 0)", atk_kill_all, "seccomp", ECAPMODE, EPERM),
    ROW("kill-host-sigkill", "kill(host, SIGKILL)", atk_kill_host_sigkill,
        "seccomp", ECAPMODE, EPERM),
    ROW("pidfd-open-host", "pidfd_open(host)", atk_pidfd_open_host, "seccomp",
        ECAPMODE),
    // network
    ROW("tcp-bind", "socket(AF_INET, STREAM) + bind 0.0.0.0:0", atk_tcp_bind,
        "seccomp", ECAPMODE, EACCES),
    ROW("udp-bind", "socket(AF_INET, DGRAM) + bind 0.0.0.0:0", atk_udp_bind,
        "seccomp", ECAPMODE),
    ROW("tcp6-connect", "socket(AF_INET6) + connect [::1]:1", atk_tcp6_connect,
        "seccomp", ECAPMODE, EACCES),
    ROW("unix-path-bind", "bind a unix socket at /tmp/...", atk_unix_path_bind,
        "seccomp", ECAPMODE, EACCES),
    ROW("unix-dgram-sendto", "sendto(/dev/log) on an AF_UNIX datagram socket",
        atk_unix_dgram_sendto, "seccomp", ECAPMODE),
    ROW("packet-socket", "socket(AF_PACKET, SOCK_RAW)", atk_packet_socket,
        "seccomp", ECAPMODE),
    // IPC, keys, modules
    ROW("sysv-msgget", "msgget(IPC_PRIVATE)", atk_msgget, "seccomp", ECAPMODE),
    ROW("sysv-semget", "semget(IPC_PRIVATE)", atk_semget, "seccomp", ECAPMODE),
    ROW("mq-open", "mq_open(\"capsa-escape\", O_CREAT)", atk_mq_open, "seccomp",
        ECAPMODE),
    ROW("add-key", "add_key(\"user\") to the process keyring", atk_add_key,
        "seccomp", ECAPMODE),
    ROW("finit-module", "finit_module(held fd)", atk_finit_module,
        "seccomp (rights layer on a limited handle)", ECAPMODE, ENOTCAPABLE),
    // exec
    ROW("execve-su", "execve(\"/bin/su\") (setuid root)", atk_execve_setuid,
        "seccomp", ECAPMODE),
    ROW("execve-proc-self", "execve(\"/proc/self/exe\")", atk_execve_proc_self,
        "seccomp", ECAPMODE),
    ROW("fexecve-handle", "execveat(file handle, \"\", AT_EMPTY_PATH)",
        atk_fexecve_handle, "seccomp (rights layer on a limited handle)",
        ECAPMODE, ENOTCAPABLE),
    // code
    ROW("pkey-mprotect-exec", "pkey_mprotect(PROT_EXEC)",
        atk_pkey_mprotect_exec, "seccomp", ECAPMODE),
    ROW("shm-mmap-exec", "mmap(PROT_EXEC, MAP_SHARED) of the read-only region",
        atk_shm_mmap_exec, "seccomp (rights layer on a limited handle)",
        ECAPMODE, ENOTCAPABLE),
    // filesystem without a directory handle
    ROW("openat-cwd-dotdot", "openat(AT_FDCWD, \"../../../../etc/passwd\")",
        atk_openat_cwd_dotdot, "seccomp", ECAPMODE),
    ROW("symlinkat-cwd", "symlinkat(\"/etc/passwd\", AT_FDCWD, ...)",
        atk_symlinkat_cwd, "seccomp", ECAPMODE),
    ROW("linkat-handle", "linkat(file handle, AT_EMPTY_PATH) to a new name",
        atk_linkat_handle, "seccomp (rights layer on a limited handle)",
        ECAPMODE, ENOTCAPABLE),
    ROW("chdir-root", "chdir(\"/\")", atk_chdir_root, "seccomp", ECAPMODE),
    // the read-only file handle
    ROW("file-reopen-rw", "openat(\"/proc/self/fd/N\", O_RDWR) of the file",
        atk_file_reopen_rw, "seccomp", ECAPMODE),
    ROW("file-write", "pwrite() to the read-only file handle", atk_file_write,
        "descriptor mode + rights", EBADF, ENOTCAPABLE),
    ROW("file-truncate", "ftruncate() the read-only file handle",
        atk_file_truncate, "descriptor mode + rights", EINVAL, EBADF,
        ENOTCAPABLE),
    ROW("file-mmap-shared-write", "mmap(PROT_WRITE, MAP_SHARED) of the file",
        atk_file_mmap_shared_write, "descriptor mode + rights", EACCES,
        ENOTCAPABLE),
    // rights
    ROW("rights-widen-shm", "capsa_rights_limit(region, all rights)",
        atk_rights_widen_shm, "rights table", ENOTCAPABLE),
    ROW("rights-widen-file", "capsa_rights_limit(file, all rights)",
        atk_rights_widen_file, "rights table", ENOTCAPABLE),
    ROW("dup-limited-shm", "dup() of the rights-limited region handle",
        atk_dup_limited, "rights filter", ENOTCAPABLE),
};
const size_t capsa_escape_attacks_count =
    sizeof capsa_escape_attacks / sizeof capsa_escape_attacks[0];
