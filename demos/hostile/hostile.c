// The attack list as reviewable data (one row per attempt: what, expected
// refusal, which layer), and the runner that tries each in a forked child.
#include "demos/hostile/hostile.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demos/hostile/attacks_internal.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/errors.h"
#include "sandbox/features.h"

#define ROW(n, w, f, layer, ...) \
  { n, w, capsa__atk_##f, {__VA_ARGS__}, 0, layer, CAPSA_ATTACK_NEEDS_NOTHING }
#define ROW_KILL(n, w, f, layer, sig, ...)           \
  {                                                  \
    n, w, capsa__atk_##f, {__VA_ARGS__}, sig, layer, \
        CAPSA_ATTACK_NEEDS_NOTHING                   \
  }
#define ROW_KILL_NEEDS(need, n, w, f, layer, sig, ...) \
  { n, w, capsa__atk_##f, {__VA_ARGS__}, sig, layer, need }

// Expected errnos: the first is capsa's answer; the others are what a layer
// other than seccomp answers when it is the one that refuses (documented in
// docs/freebsd-differences.md): Landlock EACCES/EPERM, memfd seals EPERM,
// the descriptor's access mode EBADF/EACCES/EINVAL, a rights limit
// ENOTCAPABLE.
const struct capsa_attack capsa_attacks[] = {
    // --- filesystem by path ---
    ROW("open-etc-passwd", "open(\"/etc/passwd\")", open_passwd, "seccomp",
        ECAPMODE),
    ROW("openat-cwd", "openat(AT_FDCWD, \"/etc/passwd\")", openat_cwd,
        "seccomp", ECAPMODE),
    ROW("stat-path", "stat(\"/etc/shadow\")", stat_path, "seccomp", ECAPMODE),
    ROW("openat-dotdot", "openat(dirfd, \"../../../etc/passwd\")",
        openat_dotdot, "Landlock", EACCES, ENOTCAPABLE, EXDEV),
    ROW("openat-absolute", "openat(dirfd, \"/etc/passwd\")", openat_absolute,
        "Landlock", EACCES, ENOTCAPABLE, EXDEV),
    ROW("symlink-escape", "symlinkat(\"/etc/passwd\") beneath dirfd, open it",
        symlink_escape, "Landlock", EACCES, ENOTCAPABLE, EXDEV, EROFS),
    ROW("proc-fd-reopen", "open(\"/proc/self/fd/N\", O_RDWR) of a held fd",
        proc_fd_reopen, "seccomp", ECAPMODE),
    ROW("open-by-handle", "open_by_handle_at() (shocker escape)",
        open_by_handle, "seccomp", ECAPMODE),
    // --- network ---
    ROW("tcp-connect", "socket(AF_INET) + connect 127.0.0.1:1", tcp_connect,
        "seccomp", ECAPMODE, EACCES),
    ROW("udp-sendto", "socket(AF_INET, SOCK_DGRAM) + sendto 127.0.0.1",
        udp_sendto, "seccomp", ECAPMODE),
    ROW("netlink", "socket(AF_NETLINK)", netlink, "seccomp", ECAPMODE),
    ROW("unix-abstract-connect", "connect to an abstract unix socket",
        unix_abstract_connect, "seccomp", ECAPMODE, EPERM),
    ROW("unix-abstract-bind", "bind an abstract unix socket",
        unix_abstract_bind, "seccomp", ECAPMODE, EPERM),
    ROW("unix-path-connect", "connect to /run/systemd/private",
        unix_path_connect, "seccomp", ECAPMODE, EACCES),
    // --- other processes ---
    ROW("ptrace-host", "ptrace(PTRACE_SEIZE, host)", ptrace_host, "seccomp",
        ECAPMODE),
    ROW("ptrace-sibling", "ptrace(PTRACE_SEIZE, another renderer)",
        ptrace_sibling, "seccomp", ECAPMODE),
    ROW("process-vm-sibling", "process_vm_readv(another renderer)",
        process_vm_sibling, "seccomp", ECAPMODE),
    ROW("kill-sibling", "kill(another renderer, 0)", kill_sibling, "seccomp",
        ECAPMODE, EPERM),
    ROW("process-vm-read", "process_vm_readv(host)", process_vm_read, "seccomp",
        ECAPMODE),
    ROW("kill-init", "kill(1, 0)", kill_init, "seccomp", ECAPMODE, EPERM),
    ROW("kill-host", "kill(host, 0)", kill_host, "seccomp", ECAPMODE, EPERM),
    ROW("tgkill-host", "tgkill(host, host, 0)", tgkill_host, "seccomp",
        ECAPMODE, EPERM),
    // --- namespaces, privileges ---
    ROW("mount", "mount(tmpfs)", mount, "seccomp", ECAPMODE),
    ROW("chroot", "chroot(\"/\")", chroot, "seccomp", ECAPMODE),
    ROW("unshare-user", "unshare(CLONE_NEWUSER)", unshare_user, "seccomp",
        ECAPMODE),
    ROW("unshare-net", "unshare(CLONE_NEWNET)", unshare_net, "seccomp",
        ECAPMODE),
    ROW("setns", "setns()", setns, "seccomp", ECAPMODE),
    ROW("clone-newns", "clone(CLONE_NEWUSER | CLONE_NEWNS)", clone_newns,
        "seccomp", ECAPMODE),
    ROW("setuid-root", "setuid(0)", setuid_root, "seccomp", ECAPMODE),
    ROW("execve-sh", "execve(\"/bin/sh\")", execve_sh, "seccomp", ECAPMODE),
    ROW("execveat", "execveat(AT_FDCWD, \"/bin/sh\")", execveat_fd, "seccomp",
        ECAPMODE),
    ROW("execve-setuid", "execve(\"/bin/mount\"), a setuid-root binary",
        execve_setuid, "seccomp", ECAPMODE),
    // --- kernel attack surface ---
    ROW("io-uring-setup", "io_uring_setup()", io_uring, "seccomp", ECAPMODE),
    ROW("bpf", "bpf(BPF_MAP_CREATE)", bpf, "seccomp", ECAPMODE),
    ROW("perf-event-open", "perf_event_open(task clock)", perf_event_open,
        "seccomp", ECAPMODE),
    ROW("userfaultfd", "userfaultfd()", userfaultfd, "seccomp", ECAPMODE),
    ROW("keyctl", "keyctl(GET_KEYRING_ID)", keyctl, "seccomp", ECAPMODE),
    ROW("sysv-shmget", "shmget(IPC_PRIVATE)", sysv_shm, "seccomp", ECAPMODE),
    ROW("tiocsti", "ioctl(TIOCSTI)", tiocsti, "seccomp", ECAPMODE),
    ROW("tiocsti-high-bits", "ioctl(TIOCSTI | 0xdead << 48)", tiocsti_high_bits,
        "seccomp", ECAPMODE),
    ROW_KILL_NEEDS(CAPSA_ATTACK_NEEDS_I386, "int80-getpid",
                   "i386 getpid via int $0x80", int80_getpid,
                   "seccomp arch check", SIGSYS, ECAPMODE),
    ROW_KILL("x32-getpid", "x32 getpid (nr | 0x40000000)", x32_getpid,
             "seccomp arch check", SIGSYS, ECAPMODE),
    // --- code injection ---
    ROW("mmap-exec", "mmap(PROT_EXEC)", mmap_exec, "seccomp", ECAPMODE),
    ROW("mprotect-exec", "mprotect(PROT_EXEC)", mprotect_exec, "seccomp",
        ECAPMODE),
    // --- the read-only shared region the host handed over ---
    ROW("shm-write", "pwrite() to the read-only region", shm_write,
        "descriptor mode + seals", EBADF, EPERM, ENOTCAPABLE),
    ROW("shm-grow", "ftruncate() the region larger", shm_grow,
        "descriptor mode + seals", EINVAL, EPERM, EBADF, ENOTCAPABLE),
    ROW("shm-shrink", "ftruncate() the region to 0 (SIGBUS the host)",
        shm_shrink, "descriptor mode + seals", EINVAL, EPERM, EBADF,
        ENOTCAPABLE),
    ROW("shm-mmap-writable", "mmap(PROT_WRITE, MAP_SHARED) of the region",
        shm_mmap_writable, "descriptor mode + seals", EACCES, EPERM,
        ENOTCAPABLE),
    ROW("shm-mprotect-writable", "mprotect(PROT_WRITE) of its mapping",
        shm_mprotect_writable, "descriptor mode + seals", EACCES, EPERM,
        ENOTCAPABLE),
    // --- a descriptor the host limited with capsa_rights_limit() ---
    ROW("rights-widen", "capsa_rights_limit() back to all rights", rights_widen,
        "rights", ENOTCAPABLE),
    ROW("rights-write", "write() without CAP_WRITE", rights_write, "rights",
        ENOTCAPABLE, EBADF),
    ROW("rights-dup", "dup() of a limited descriptor (drops the filter)",
        rights_dup, "rights", ENOTCAPABLE),
};
const size_t capsa_attacks_count =
    sizeof capsa_attacks / sizeof capsa_attacks[0];

_Static_assert(sizeof capsa_attacks / sizeof capsa_attacks[0] <=
                   CAPSA_ATTACKS_MAX,
               "CAPSA_ATTACKS_MAX must cover the list");

void capsa_attack_env_init(struct capsa_attack_env *env) {
  if (env == NULL) return;
  memset(env, 0, sizeof *env);
  env->host_pid = getppid();
  env->self_pid = getpid();
  env->ro_shm_fd = -1;
  env->dir_fd = -1;
  env->limited_fd = -1;
  env->tty_fd = 0;
  // Outside capability mode a probe sees the kernel: take it now. Inside,
  // only what was probed before entering (the zygote's) is the truth.
  const struct capsa_features *f = capsa_features_cached();
  unsigned mode = 1;
  if (!f && capsa_cap_getmode(&mode) == 0 && mode == 0)
    f = capsa_features_get();
  env->i386_entry = f ? f->i386_entry : -1;
  env->i386_detail = f && !f->i386_entry ? f->i386_detail : NULL;
}

bool capsa_attack_aims_at_self(const struct capsa_attack_env *env,
                               pid_t target) {
  return env != NULL && target > 0 && target == env->self_pid;
}

const struct capsa_attack *capsa_attack_find(const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; i < capsa_attacks_count; i++)
    if (strcmp(capsa_attacks[i].name, name) == 0) return &capsa_attacks[i];
  return NULL;
}

enum capsa_attack_verdict capsa_attack_classify(const struct capsa_attack *a,
                                                int rc, int signal) {
  if (signal != 0)
    return a->expect_signal != 0 && signal == a->expect_signal
               ? CAPSA_VERDICT_KILLED
               : CAPSA_VERDICT_UNEXPECTED;
  if (rc == CAPSA_ATTACK_NOT_APPLICABLE) return CAPSA_VERDICT_SKIPPED;
  if (rc >= 0) return CAPSA_VERDICT_ESCAPED;
  for (int i = 0; i < CAPSA_ATTACK_MAX_ERRNOS && a->expect_errno[i] != 0; i++)
    if (a->expect_errno[i] == -rc) return CAPSA_VERDICT_REFUSED;
  return CAPSA_VERDICT_UNEXPECTED;
}

// What the child leaves in the shared page.
struct report {
  uint32_t magic;
  int rc;
};
enum { kReportMagic = 0xCA75A5, kTimeoutSeconds = 5 };

int capsa_attack_run(const struct capsa_attack *a,
                     const struct capsa_attack_env *env,
                     struct capsa_attack_result *res) {
  if (a == NULL || env == NULL || res == NULL || a->attempt == NULL)
    return -EINVAL;
  memset(res, 0, sizeof *res);
  res->attack = a;
  res->verdict = CAPSA_VERDICT_ERROR;
  if (a->need == CAPSA_ATTACK_NEEDS_I386 && env->i386_entry == 0) {
    res->verdict = CAPSA_VERDICT_ABSENT;
    return 0;
  }
  // A shared anonymous page, not a pipe: no descriptor to leak into an
  // attempt, and it works under any descriptor policy.
  struct report *rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (rep == MAP_FAILED) return 0;
  rep->magic = 0;
  pid_t pid = fork();
  if (pid < 0) {
    munmap(rep, sizeof *rep);
    return 0;
  }
  if (pid == 0) {
    alarm(kTimeoutSeconds);  // an attempt that blocks ends as SIGALRM
    int rc = a->attempt(env);
    rep->rc = rc;
    __atomic_store_n(&rep->magic, kReportMagic, __ATOMIC_RELEASE);
    _exit(0);  // never exit(): no atexit handlers, no LeakSanitizer
  }
  int status;
  pid_t w;
  do w = waitpid(pid, &status, 0);
  while (w < 0 && errno == EINTR);
  if (w == pid) {
    if (WIFSIGNALED(status)) {
      res->observed_signal = WTERMSIG(status);
      if (res->observed_signal != SIGALRM)
        res->verdict = capsa_attack_classify(a, 0, res->observed_signal);
    } else if (__atomic_load_n(&rep->magic, __ATOMIC_ACQUIRE) == kReportMagic) {
      int rc = rep->rc;
      res->observed_errno = rc < 0 ? -rc : 0;
      res->verdict = capsa_attack_classify(a, rc, 0);
    } else if (WIFEXITED(status)) {
      // No report, no signal: the attempt's process image was replaced by
      // an exec (execve-sh's shell exits 42, another program anything).
      res->verdict = CAPSA_VERDICT_ESCAPED;
    }
  }
  munmap(rep, sizeof *rep);
  return 0;
}

int capsa_attacks_run_all(const struct capsa_attack_env *env,
                          struct capsa_attack_result *res, size_t n) {
  if (env == NULL || (res == NULL && n > 0)) return -EINVAL;
  size_t count = n < capsa_attacks_count ? n : capsa_attacks_count;
  for (size_t i = 0; i < count; i++)
    capsa_attack_run(&capsa_attacks[i], env, &res[i]);
  return (int)count;
}

const char *capsa_attack_verdict_name(enum capsa_attack_verdict v) {
  switch (v) {
    case CAPSA_VERDICT_REFUSED:
      return "refused";
    case CAPSA_VERDICT_KILLED:
      return "killed";
    case CAPSA_VERDICT_ESCAPED:
      return "ESCAPED";
    case CAPSA_VERDICT_UNEXPECTED:
      return "unexpected";
    case CAPSA_VERDICT_SKIPPED:
      return "skipped";
    case CAPSA_VERDICT_ERROR:
      return "error";
    case CAPSA_VERDICT_ABSENT:
      return "absent";
  }
  return "?";
}

bool capsa_attacks_all_refused(const struct capsa_attack_result *res,
                               size_t n) {
  if (res == NULL) return n == 0;
  for (size_t i = 0; i < n; i++)
    if (res[i].verdict == CAPSA_VERDICT_ESCAPED ||
        res[i].verdict == CAPSA_VERDICT_UNEXPECTED ||
        res[i].verdict == CAPSA_VERDICT_ERROR)
      return false;
  return true;
}

static void errno_text(int e, char *buf, size_t len) {
  const char *name = capsa_errno_name(e);
  if (name != NULL)
    snprintf(buf, len, "%s", name);
  else
    snprintf(buf, len, "errno %d", e);
}

static void expected_text(const struct capsa_attack *a, char *buf, size_t len) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < CAPSA_ATTACK_MAX_ERRNOS && a->expect_errno[i] != 0; i++) {
    char e[32];
    errno_text(a->expect_errno[i], e, sizeof e);
    int k = snprintf(buf + off, len - off, "%s%s", i > 0 ? "|" : "", e);
    if (k < 0 || (size_t)k >= len - off) return;
    off += (size_t)k;
  }
  if (a->expect_signal != 0)
    snprintf(buf + off, len - off, "|SIG%s", sigabbrev_np(a->expect_signal));
}

static void observed_text(const struct capsa_attack_result *r, char *buf,
                          size_t len) {
  if (r->observed_signal != 0) {
    const char *s = sigabbrev_np(r->observed_signal);
    snprintf(buf, len, "SIG%s", s != NULL ? s : "?");
  } else if (r->verdict == CAPSA_VERDICT_SKIPPED ||
             r->verdict == CAPSA_VERDICT_ABSENT) {
    snprintf(buf, len, "-");
  } else if (r->observed_errno != 0) {
    errno_text(r->observed_errno, buf, len);
  } else if (r->verdict == CAPSA_VERDICT_ERROR) {
    snprintf(buf, len, "(no report)");
  } else {
    snprintf(buf, len, "success");
  }
}

int capsa_attacks_format(const struct capsa_attack_result *res, size_t n,
                         char *buf, size_t len) {
  if ((res == NULL && n > 0) || (buf == NULL && len > 0)) return -EINVAL;
  // Counts what would be written even when buf is too small (as snprintf).
  size_t need = 0;
#define OUT(...)                                                 \
  do {                                                           \
    int k_ = snprintf(need < len ? buf + need : NULL,            \
                      need < len ? len - need : 0, __VA_ARGS__); \
    if (k_ < 0) return -EINVAL;                                  \
    need += (size_t)k_;                                          \
  } while (0)
  OUT("%-24s %-30s %-14s %-10s %s\n", "attack", "expected", "observed",
      "verdict", "layer");
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    const struct capsa_attack *a = res[i].attack;
    if (a == NULL) return -EINVAL;
    char exp[96], obs[48];
    expected_text(a, exp, sizeof exp);
    observed_text(&res[i], obs, sizeof obs);
    OUT("%-24s %-30s %-14s %-10s %s\n", a->name, exp, obs,
        capsa_attack_verdict_name(res[i].verdict), a->layer);
    if (res[i].verdict == CAPSA_VERDICT_ESCAPED ||
        res[i].verdict == CAPSA_VERDICT_UNEXPECTED ||
        res[i].verdict == CAPSA_VERDICT_ERROR)
      bad++;
  }
  OUT("%zu attacks, %zu not refused as expected\n", n, bad);
#undef OUT
  return (int)need;
}
