// The zygote process and the host's side of its control socket. See
// host/zygote.h.
#include "host/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/sched.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/crash_handler.h"
#include "host/fd_passing.h"
#include "host/fork_guard.h"
#include "host/host_internal.h"
#include "host/kind_registry.h"
#include "host/sanitizer_limits.h"
#include "ipc/loop.h"
#include "sandbox/features.h"
#include "sandbox/memfd.h"
#include "sandbox/seccomp.h"

#define ZYGOTE_TIMEOUT_MS 5000
// Freed heap a renderer keeps rather than returns (see zygote_body).
#define ZYGOTE_RENDERER_TRIM_THRESHOLD (32 << 20)
// Heap growth per brk in a renderer beyond what is asked (glibc: 128 KiB).
#define ZYGOTE_RENDERER_TOP_PAD (1 << 20)
#define CTRL_FD 3
#define CHANNEL_FD 3

struct request {
  uint32_t kind;
};

struct reply {
  int32_t status;  // 0 (a pidfd is attached) or -errno; drain: 1 per spare
  int32_t pid;
  int32_t spare;  // 1: a channel end is attached too, use it instead
};
// A renderer's reply carries its pidfd, the read end of its stderr pipe and,
// for a spare, its channel's host end, in that order.

// A request for this "kind" hands every spare's pidfd to the host, so that
// it can kill and reap them (they are its children) before stopping us.
#define DRAIN_KIND UINT32_MAX

struct ready {
  int32_t status;  // 0, or why an exec'd zygote could not start
  // An exec'd zygote builds its empty root itself (see image_main).
  int32_t empty_root;
  int32_t empty_root_error;
  int32_t staged;      // 1: renderers take only the final capability-mode step
  int32_t baseline;    // not staged: syscalls the zygote's baseline refuses
  int32_t own_userns;  // capsa__zygote.own_userns (host/zygote.h)
  int32_t kind_error[CAPSA__ZYGOTE_MAX_KINDS];
  struct capsa_capmode_report capmode[CAPSA__ZYGOTE_MAX_KINDS];
  int32_t warm_up[CAPSA__ZYGOTE_MAX_KINDS];  // capsa__zygote.warm_up
  // The launcher's child could not exec the image: its errno (status too).
  int32_t exec_error;
  // An exec'd image's registered kind names (capsa__zygote.registered).
  char registered[CAPSA__ZYGOTE_REGISTERED];
};

struct boot {
  const struct capsa__zygote_kind *kinds;
  unsigned nkinds;
  // The host can tell a renderer's own filter from the zygote's (the kernel
  // reports Seccomp_filters): only then may a stage or a baseline go under
  // renderers. Otherwise Seccomp 2 and NoNewPrivs 1 would be inherited, and
  // from outside a renderer that never took its own step (final step, or
  // its policy in full) would look filtered.
  bool baseline_ok;
  rlim_t nproc_total;  // the zygote's RLIMIT_NPROC; RLIM_INFINITY: inherited
  bool foreign;        // capsa__zygote_exec_start's: nnp before the exec
};

// In the launcher's child, before anything else (and so before an exec,
// which keeps it): the zygote's own RLIMIT_NPROC, lowered to the host's
// total for renderers. Each renderer's user namespace records it as the
// ceiling of the zygote namespace's count, where every renderer's processes
// meet. Never raised (that needs CAP_SYS_RESOURCE outside).
static int apply_nproc_total(const struct boot *b) {
  if (b->nproc_total == RLIM_INFINITY) return 0;
  struct rlimit r;
  if (getrlimit(RLIMIT_NPROC, &r) < 0) return -errno;
  if (b->nproc_total < r.rlim_max) r.rlim_max = b->nproc_total;
  if (b->nproc_total < r.rlim_cur) r.rlim_cur = b->nproc_total;
  if (r.rlim_cur > r.rlim_max) r.rlim_cur = r.rlim_max;
  return setrlimit(RLIMIT_NPROC, &r) < 0 ? -errno : 0;
}

// --- in the zygote ----------------------------------------------------------

// The zygote's copy of what it needs; lives in its own memory.
static struct capsa__zygote_kind g_kinds[CAPSA__ZYGOTE_MAX_KINDS];
static unsigned g_nkinds;
static struct ready g_ready;
// An exec'd image runs the kinds' warm-ups (a forked zygote does not:
// host/kind_registry.h).
static bool g_warm_ups;
static unsigned g_namespaces;
// Each renderer in a nested user namespace of its own (see fork_renderer).
static bool g_own_userns;
// Descriptors the compiled policies hold (Landlock rulesets): every renderer
// keeps them at the same numbers, since capsa_capmode_policy_enter uses them.
// A ruleset descriptor grants nothing: it can only restrict its holder.
#define MAX_POLICY_FDS 12
static int g_policy_fds[MAX_POLICY_FDS];
static unsigned g_npolicy_fds;  // the zygote's own, from the launcher
static bool g_empty_root;
// Each kind's sandbox report and its detail line, formatted once here: the
// same for every renderer of the kind, and formatting in each renderer
// costs it page faults on code it never needs again.
static capsa_sandbox_report_t g_report[CAPSA__ZYGOTE_MAX_KINDS];
static char g_detail[CAPSA__ZYGOTE_MAX_KINDS][512];

static void set_limit(int resource, rlim_t v) {
  if (v == 0 || v == RLIM_INFINITY) return;
  // A sanitizer runtime in the process (whatever libcapsa was compiled
  // with) reserves terabytes of shadow address space: RLIMIT_AS would kill
  // every renderer at its first allocation. Decided at run time
  // (host/sanitizer_limits.h); the host's limits summary says so.
  if (resource == RLIMIT_AS && !capsa__rlimit_as_applies()) return;
  // CPU: SIGXCPU at the soft limit (reported as a limit), SIGKILL a second
  // later at the hard one if it is ignored.
  struct rlimit rl = {v, resource == RLIMIT_CPU ? v + 1 : v};
  // Lower only: a renderer can never be given more than the zygote has.
  struct rlimit cur;
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
      cur.rlim_max < v)
    rl.rlim_cur = rl.rlim_max = cur.rlim_max;
  if (setrlimit(resource, &rl) < 0) _exit(125);
}

// A renderer is pid 1 of its pid namespace, and pid 1 ignores SIGXCPU's
// default action: exit with a code the host reports as the CPU limit.
static void on_sigxcpu(int sig) {
  (void)sig;
  _exit(CAPSA__EXIT_CPU_LIMIT);
}

// The same for SIGABRT: without this, glibc's abort() falls through to its
// last resort, a fault, and a failed assert or "stack smashing detected"
// would be reported as SIGSEGV.
static void on_sigabrt(int sig) {
  (void)sig;
  _exit(CAPSA__EXIT_ABORTED);
}

// In a freshly forked renderer: limits, capability mode, then main. Never
// returns.
// A spare waits, idle, until it is claimed; then the host's first messages
// run code none of its pages map yet, and each first touch of a shared
// library page is a fault (~8 us on this kind of guest; ~40 of them were
// most of a navigation's first reply). So a spare maps its read-only
// segments (code, constants) now, before its first byte of input: page
// table entries for pages the zygote's image shares, no new memory.
// MADV_POPULATE_READ is Linux 5.14+; earlier kernels refuse it (EINVAL)
// and the spare faults as any renderer does.
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
static bool g_forking_spare;

static int prefault_segments(struct dl_phdr_info *info, size_t size,
                             void *arg) {
  (void)size;
  (void)arg;
  for (unsigned i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || ph->p_memsz == 0)
      continue;
    uintptr_t start = (uintptr_t)(info->dlpi_addr + ph->p_vaddr);
    uintptr_t end = start + ph->p_memsz;
    uintptr_t page = 4096;
    start &= ~(page - 1);
    end = (end + page - 1) & ~(page - 1);
    if (madvise((void *)start, end - start, MADV_POPULATE_READ) < 0 &&
        errno == EINVAL)
      return 1;  // not this kernel: stop trying
  }
  return 0;
}

static void renderer_start(unsigned k, bool pid_ns) {
  if (g_forking_spare) dl_iterate_phdr(prefault_segments, NULL);
  const struct capsa__zygote_kind *kind = &g_kinds[k];
  set_limit(RLIMIT_AS, kind->limit_as);
  set_limit(RLIMIT_CPU, kind->limit_cpu);
  if (kind->limit_cpu) signal(SIGXCPU, on_sigxcpu);
  if (pid_ns) signal(SIGABRT, on_sigabrt);
  set_limit(RLIMIT_NOFILE, kind->limit_nofile);
  set_limit(RLIMIT_NPROC, kind->limit_nproc);
  // Crash reports (host/crash_handler.h), for every kind whatever its entry;
  // after the SIGABRT handler above, which it takes over. Without it the
  // renderer still runs, its crashes reported without detail.
  (void)capsa__crash_handler_install(pid_ns);
  // Shared memory under rlimits: no file (memfd) larger than limit_memory /
  // limit_open_files, refused with EFBIG rather than SIGXFSZ (see
  // capsa_kind_options_t limit_memory). Applied under ASan too.
  if (kind->limit_as && kind->limit_nofile) {
    signal(SIGXFSZ, SIG_IGN);
    set_limit(RLIMIT_FSIZE, kind->limit_as / kind->limit_nofile);
  }
  capsa_sandbox_report_t *rep = &g_report[k];
  rep->namespaces = g_namespaces | (pid_ns ? CAPSA_NAMESPACE_PID : 0);
  if (kind->capmode) {
    // Point of no return: _exit(127) inside on failure.
    if (capsa_capmode_policy_enter(kind->capmode) < 0) _exit(127);
  } else {
    rep->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
  }
  // Before the first byte of input: keep libuv's fork handler off the
  // renderer's own descriptors (host/fork_guard.h).
  int chan = capsa__fork_guard_reserve(CHANNEL_FD);
  if (chan < 0) _exit(126);
  _exit(kind->main(chan, rep, kind->arg));
}

// Each kind's fork policy (see fork_renderer); lives as long as the zygote.
static capsa_ns_policy *g_fork_policy[CAPSA__ZYGOTE_MAX_KINDS];

// Forks a renderer of kind k on channel end `chan` (borrowed). Its fd 2 is
// the write end of a pipe of its own, never the host's stderr: *err_out is
// the read end (owned by the caller), which the host reads as LOG lines.
// Returns 0 with *child filled, or -errno; never returns in the child.
static int fork_renderer(unsigned k, int chan, struct capsa_ns_child *child,
                         int *err_out) {
  *err_out = -1;
  bool pid_ns = g_kinds[k].pid_namespace;
  // One policy per kind, made at its first fork and reused: a malloc and a
  // free per fork write the heap and malloc's state in libc, pages the
  // previous renderer shares copy-on-write, so the zygote copied them at
  // every fork (measured: ~8.6 -> ~6 page faults in the zygote per fork).
  capsa_ns_policy *p = g_fork_policy[k];
  if (!p) {
    p = capsa_ns_policy_new();
    if (!p) return -ENOMEM;
    // A user namespace per renderer, nested in ours and unmapped: the
    // kernel counts RLIMIT_NPROC per user namespace and uid, so without one
    // every renderer's processes and threads are one count, and a renderer
    // that forks up to its limit_processes leaves its siblings none.
    unsigned ns = (pid_ns ? CAPSA_NAMESPACE_PID : 0) |
                  (g_own_userns ? CAPSA_NAMESPACE_USER : 0);
    capsa_ns_policy_set_namespaces(p, ns, ns);
    capsa_ns_policy_set_clone_parent(p, true);
    g_fork_policy[k] = p;
  }
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) < 0) return -errno;
  capsa_ns_policy_clear_fds(p);
  capsa_ns_policy_keep_fd(p, chan, CHANNEL_FD);
  capsa_ns_policy_keep_fd(p, ep[1], 2);
  for (unsigned i = 0; i < g_npolicy_fds; i++)
    capsa_ns_policy_keep_fd(p, g_policy_fds[i], g_policy_fds[i]);
  capsa__crash_handler_prepare();
  int r = capsa_ns_fork(p, child);
  if (r == 0) renderer_start(k, pid_ns);  // child; never returns
  close(ep[1]);
  if (r < 0) {
    close(ep[0]);
    return r;
  }
  *err_out = ep[0];
  return 0;
}

// One renderer per kind forked ahead of time (kinds with keep_spare): it is
// already in capability mode, its HELLO waiting in the socket, when the host
// asks. Its host end of the channel stays here until then.
// How long the control socket stays quiet before the next spare is forked.
#define SPARE_DELAY_MS 1

struct spare {
  bool valid;
  int chan;  // host end
  int err;   // read end of its stderr pipe
  struct capsa_ns_child child;
};
static struct spare g_spare[CAPSA__ZYGOTE_MAX_KINDS];

static bool g_spare_due;  // a spare was handed over: make the next one

// Set by a drain: the host is stopping this zygote. No spare is made after
// it: one forked then (a spare was due) would be the host's child (we fork
// with CLONE_PARENT) that the host never learns of, left a zombie in the
// host when this zygote is killed.
static bool g_drained;

static void make_spare(unsigned k) {
  if (!g_kinds[k].keep_spare || g_spare[k].valid || g_ready.kind_error[k] < 0 ||
      g_drained)
    return;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return;
  struct capsa_ns_child c;
  int efd = -1;
  g_forking_spare = true;
  int err = fork_renderer(k, sv[1], &c, &efd);
  g_forking_spare = false;
  close(sv[1]);
  if (err < 0) {
    close(sv[0]);
    return;
  }
  g_spare[k] = (struct spare){true, sv[0], efd, c};
}

static void drain(int ctrl) {
  g_drained = true;
  for (unsigned k = 0; k < g_nkinds; k++) {
    if (!g_spare[k].valid) continue;
    struct reply rep = {1, g_spare[k].child.pid, 0};
    capsa__send_fd(ctrl, &rep, sizeof rep, g_spare[k].child.pidfd);
    close(g_spare[k].child.pidfd);
    close(g_spare[k].chan);
    close(g_spare[k].err);
    g_spare[k].valid = false;
  }
  struct reply done = {0, 0, 0};
  capsa__send_fd(ctrl, &done, sizeof done, -1);
}

static void serve_one(int ctrl, const struct request *req, int chan) {
  struct reply rep = {0, 0, 0};
  unsigned k = req->kind;
  if (k == DRAIN_KIND) {
    close(chan);
    drain(ctrl);
    return;
  }
  if (k >= g_nkinds || g_ready.kind_error[k] < 0) {
    rep.status = k >= g_nkinds ? -EINVAL : g_ready.kind_error[k];
    close(chan);
    capsa__send_fd(ctrl, &rep, sizeof rep, -1);
    return;
  }
  if (g_spare[k].valid) {
    // Hand over the spare; the host's own channel end is not needed.
    close(chan);
    struct spare sp = g_spare[k];
    g_spare[k].valid = false;
    rep.pid = sp.child.pid;
    rep.spare = 1;
    int fds[3] = {sp.child.pidfd, sp.err, sp.chan};
    capsa__send_fds(ctrl, &rep, sizeof rep, fds, 3);
    close(sp.child.pidfd);
    close(sp.err);
    close(sp.chan);
    // The next one once the requester is served: forking now would take a
    // core from the host and the renderer just handed over, on a small
    // machine the very spawn the spare was for (see zygote_body).
    g_spare_due = true;
    return;
  }
  struct capsa_ns_child child = {-1, 0};
  int efd = -1;
  rep.status = fork_renderer(k, chan, &child, &efd);
  g_spare_due = false;  // made below
  rep.pid = child.pid;
  close(chan);
  int fds[2] = {child.pidfd, efd};
  capsa__send_fds(ctrl, &rep, sizeof rep, fds, rep.status == 0 ? 2 : 0);
  if (child.pidfd >= 0) close(child.pidfd);
  if (efd >= 0) close(efd);
  make_spare(k);
}

// Staged capability mode (sandbox/capmode.h): the zygote enters the kinds'
// policy itself, once, with the few calls it needs between forks, so that
// each renderer only takes the small final step instead of loading the whole
// filter. Only when one stage serves every kind exactly (same layers and
// filter; every kind sandboxed): otherwise each renderer enters its policy
// in full, as before, and the zygote stays outside capability mode.
static const capsa_capmode_policy *g_stage;

// What the zygote does between requests that capability mode refuses. The
// final step in each renderer refuses them again (ECAPMODE).
static int add_launcher_rows(capsa_capmode_policy *s) {
  // The namespace flags fork_renderer may pass, each set exactly.
  static const struct {
    unsigned long flags;
    const char *reason;
  } kClones[] = {
      {CLONE_NEWPID,
       "zygote: each renderer in a fresh pid namespace (CLONE_NEWPID | "
       "CLONE_PARENT | CLONE_PIDFD; clone3 is ENOSYS, its flags unseen)"},
      {CLONE_NEWPID | CLONE_NEWUSER,
       "zygote: each renderer in a fresh pid namespace and a user namespace "
       "of its own, unmapped (its own RLIMIT_NPROC count)"},
      {CLONE_NEWUSER,
       "zygote: a renderer of a kind without pid namespace, in a user "
       "namespace of its own, unmapped (its own RLIMIT_NPROC count)"},
  };
  struct capsa_arg_cmp ambient[2] = {
      {0, CAPSA_CMP_MASKED_EQ, 0xffffffffu, PR_CAP_AMBIENT},
      {1, CAPSA_CMP_MASKED_EQ, 0xffffffffu, PR_CAP_AMBIENT_CLEAR_ALL}};
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < sizeof kClones / sizeof kClones[0]; i++) {
    struct capsa_arg_cmp ns = {0, CAPSA_CMP_MASKED_EQ, CAPSA_CLONE_NAMESPACES,
                               kClones[i].flags};
    rc = capsa_capmode_policy_allow_launcher(s, "clone", &ns, 1,
                                             kClones[i].reason);
  }
  if (rc == 0)
    rc = capsa_capmode_policy_allow_launcher(
        s, "capset", NULL, 0,
        "renderer, before its final step: drops the capabilities the zygote "
        "holds in its user namespace (only lowers: no CAP_SETPCAP outside)");
  if (rc == 0)
    rc = capsa_capmode_policy_allow_launcher(
        s, "prctl", ambient, 2,
        "renderer, before its final step: clears the ambient capabilities");
  return rc;
}

static void enter_stage(bool ok) {
  if (g_nkinds == 0 || !ok) return;
  for (unsigned k = 0; k < g_nkinds; k++)
    if (!g_kinds[k].capmode || g_ready.kind_error[k] < 0 || g_kinds[k].no_stage)
      return;
  capsa_capmode_policy *s = capsa_capmode_policy_dup(g_kinds[0].capmode);
  int rc = s ? add_launcher_rows(s) : -ENOMEM;
  if (rc == 0) rc = capsa_capmode_policy_compile(s);
  for (unsigned k = 0; rc == 0 && k < g_nkinds; k++)
    if (capsa_capmode_policy_stage_serves(s, g_kinds[k].capmode) != 1)
      rc = -EINVAL;
  if (rc == 0) rc = capsa_capmode_policy_enter_launcher(s);
  if (rc < 0) {
    capsa_capmode_policy_free(s);
    return;
  }
  g_stage = s;  // lives as long as the zygote and its renderers
  g_ready.staged = 1;
}

// Not staged (the kinds' policies differ, or one has none): each renderer
// enters its own policy in full, and the zygote takes the capability-mode
// baseline (sandbox/capmode.h): what no policy may ever allow stays refused
// for the zygote and everything it forks. Kept: what a renderer calls on its
// way into its own policy (capabilities dropped, its own Landlock domain).
static const char *const kBaselineKeep[] = {
    "capset",                   // capsa_ns_fork's child drops capabilities
    "landlock_create_ruleset",  // ABI probe on entry
    "landlock_add_rule",        // (Landlock calls can only restrict)
    "landlock_restrict_self",   // each renderer's own domain
};

static void enter_baseline(bool ok) {
  if (g_ready.staged || !ok) return;
  struct capsa_bpf bpf;
  unsigned refused = 0;
  if (capsa_capmode_baseline_compile(
          kBaselineKeep, sizeof kBaselineKeep / sizeof kBaselineKeep[0], &bpf,
          &refused) < 0)
    return;  // reported: baseline 0
  if (capsa_bpf_install(&bpf, 0) == 0) g_ready.baseline = (int32_t)refused;
  capsa_bpf_free(&bpf);
}

// What renderer_start reports for kind k once it has entered its policy
// (a renderer that fails to enter exits instead of reporting).
static void format_report(unsigned k) {
  capsa_sandbox_report_t *rep = &g_report[k];
  const struct capsa_capmode_report *cr = &g_ready.capmode[k];
  char line[256] = "off";
  memset(rep, 0, sizeof *rep);
  if (g_kinds[k].capmode && g_ready.kind_error[k] == 0) {
    rep->capmode = true;
    rep->no_new_privs = cr->nnp == CAPSA_LAYER_ENFORCED;
    rep->landlock_abi =
        cr->landlock == CAPSA_LAYER_ENFORCED ? cr->landlock_abi : 0;
    capsa_capmode_report_format(cr, false, line, sizeof line);
  }
  snprintf(g_detail[k], sizeof g_detail[k], "root=%s capmode: %s",
           g_empty_root ? "empty-ro" : "host", line);
  rep->detail = g_detail[k];
}

// Runs what every renderer runs before its HELLO (a channel loop, one
// encoded message) once here, so that renderers inherit the result: the
// dynamic linker's lazily bound PLT slots of the codec's libraries are then
// bound in our memory, not resolved again in each renderer (measured: ~18
// page faults and ~35 us less per renderer). Done before the stage: it needs
// a socketpair. A failure only loses the saving.
static void warm_up(void) {
  // Whether memfds take an exec seal, probed once per process with a memfd
  // of its own (sandbox/memfd.h) at the first region a renderer receives:
  // probed here, every renderer inherits the answer (a property of the
  // kernel and of the pid namespace's vm.memfd_noexec, which a renderer's
  // new one inherits).
  (void)capsa_memfd_exec_sealed();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return;
  capsa_rloop_t l;
  capsa_rloop_options_t lo = {.peer = CAPSA_PEER_HOST, .send_timeout_ms = 1000};
  if (capsa_rloop_init(&l, sv[0], NULL, &lo) == 0) {
    capsa_msg_t hello;
    capsa_msg_init(&hello, CAPSA_MSG_HELLO);
    hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
    hello.u.hello.pid = 1;
    hello.u.hello.renderer_kind = "warm-up";
    capsa_rloop_send(&l, &hello);  // lands in sv[1], closed unread
    capsa_rloop_close(&l);
  } else {
    close(sv[0]);
  }
  close(sv[1]);
}

// The kinds' own warm-ups (CAPSA_RENDERER_WARM_UP), before the stage and
// before any fork, so that every renderer inherits what they built. Their
// descriptors, and any a warm-up left open, are closed afterwards: the scan
// below takes every descriptor still open for the policies' own.
static void run_warm_ups(void) {
  for (unsigned k = 0; k < g_nkinds; k++) {
    struct capsa__zygote_kind *z = &g_kinds[k];
    bool ambiguous = false;
    capsa_warm_up_fn fn = capsa__kind_warm_up(z->name, &ambiguous);
    if (!g_warm_ups) {
      g_ready.warm_up[k] = fn ? CAPSA__WARM_UP_NOT_RUN : CAPSA__WARM_UP_NONE;
      z->nwarm = 0;  // a forked zygote's copy of the host's numbers
      continue;
    }
    if (ambiguous) g_ready.warm_up[k] = -ENOTUNIQ;
    if (fn && g_ready.kind_error[k] == 0) {
      unsigned char before[128];  // descriptors 0..1023 open before it ran
      memset(before, 0, sizeof before);
      for (int fd = 0; fd < 1024; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
          before[fd / 8] |= (unsigned char)(1 << (fd % 8));
      int err = fn(z->warm_fds, z->nwarm);
      g_ready.warm_up[k] = err < 0 ? err : CAPSA__WARM_UP_DONE;
      for (int fd = CTRL_FD + 1; fd < 1024; fd++)
        if (!(before[fd / 8] & (1 << (fd % 8))) && fcntl(fd, F_GETFD) >= 0)
          close(fd);
    }
    for (unsigned i = 0; i < z->nwarm; i++) close(z->warm_fds[i]);
    z->nwarm = 0;
  }
}

// Whether a user namespace of its own gives each renderer its own process
// count, tried once: a child in a new user namespace lowers RLIMIT_NPROC to
// 2 and forks. Counted per user namespace (Linux 5.14+) that is its second
// process; counted per uid (older kernels) the zygote makes it the third,
// and the fork is refused. CAPSA__OWN_USERNS, CAPSA__OWN_USERNS_PER_UID, or
// -errno of the clone (EPERM in a chroot or without user namespaces, ENOSPC
// at user.max_user_namespaces, EUSERS at the nesting limit).
static int probe_own_userns(void) {
  pid_t pid =
      (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0UL, NULL, NULL, 0UL);
  if (pid < 0) return -errno;
  if (pid == 0) {
    struct rlimit two = {2, 2};
    if (setrlimit(RLIMIT_NPROC, &two) < 0) _exit(1);
    pid_t g = fork();
    if (g == 0) _exit(0);
    if (g < 0) _exit(errno == EAGAIN ? CAPSA__OWN_USERNS_PER_UID : 1);
    int gst;
    while (waitpid(g, &gst, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -errno;
  if (!WIFEXITED(st)) return -EPROTO;
  if (WEXITSTATUS(st) == 0) return CAPSA__OWN_USERNS;
  return WEXITSTATUS(st) == CAPSA__OWN_USERNS_PER_UID
             ? CAPSA__OWN_USERNS_PER_UID
             : -EPROTO;
}

// Everything the zygote does once its kinds are known (g_kinds, g_nkinds,
// g_namespaces, g_empty_root), in either image: compile, stage, report
// ready, serve. `dirfds` (owned; closed once the policies recorded the
// directories) are the exec'd image's received directory descriptors.
static int zygote_body(bool baseline_ok, int *dirfds, unsigned ndirfds) {
  signal(SIGPIPE, SIG_IGN);
  // Only under a user namespace of the zygote's: a host whose namespaces
  // are off (or refused) gets renderers in none.
  g_ready.own_userns = (g_namespaces & CAPSA_NAMESPACE_USER)
                           ? probe_own_userns()
                           : CAPSA__OWN_USERNS_NONE;
  g_own_userns = g_ready.own_userns == CAPSA__OWN_USERNS;
  // no_new_privs now: nothing the zygote or a renderer runs can gain
  // privileges (there is no exec in capability mode anyway).
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // Compile each policy once; renderers only load the result.
  for (unsigned k = 0; k < g_nkinds; k++) {
    if (!g_kinds[k].capmode || g_ready.kind_error[k] < 0) continue;
    int err = capsa_capmode_policy_compile(g_kinds[k].capmode);
    if (err == 0)
      err =
          capsa_capmode_policy_report(g_kinds[k].capmode, &g_ready.capmode[k]);
    g_ready.kind_error[k] = err;
  }
  for (unsigned i = 0; i < ndirfds; i++) close(dirfds[i]);
  run_warm_ups();
  warm_up();
  // Everything open now beyond stdio and the control socket belongs to the
  // policies (the launcher closed all else before we ran).
  for (int fd = CTRL_FD + 1; fd < 1024 && g_npolicy_fds < MAX_POLICY_FDS; fd++)
    if (fcntl(fd, F_GETFD) >= 0) g_policy_fds[g_npolicy_fds++] = fd;
  // After the scan: renderers do not need the stage's own ruleset.
  enter_stage(baseline_ok);
  enter_baseline(baseline_ok);
  for (unsigned k = 0; k < g_nkinds; k++) format_report(k);
  g_ready.empty_root = g_empty_root;
  if (capsa__send_fd(CTRL_FD, &g_ready, sizeof g_ready, -1) < 0) return 1;
  // Fork with a compact heap: free chunks the zygote left behind are
  // consolidated and returned now, once, not by each renderer's first
  // malloc, where walking them costs a copy-on-write fault per page
  // touched; and fork copies fewer page tables. (Per request the zygote
  // only allocates small chunks that malloc's caches recycle.)
  malloc_trim(0);
  // Inherited by every renderer (malloc's settings live in its memory):
  // never give freed heap back to the kernel by shrinking it. A renderer
  // that frees a large buffer (a codec's state at the end of its job) would
  // otherwise shrink the heap with brk, a TLB flush, and grow it again,
  // faulting the pages anew, for the next; one that serves a single job
  // pays the shrink for nothing, as it is killed right after. What it keeps
  // stays within its kind's memory limit (RLIMIT_AS or the cgroup counts
  // it). Set after the trim above: that one is explicit, not by threshold.
  mallopt(M_TRIM_THRESHOLD, ZYGOTE_RENDERER_TRIM_THRESHOLD);
  // And grow it in larger steps: one brk for a codec's state, not several.
  mallopt(M_TOP_PAD, ZYGOTE_RENDERER_TOP_PAD);
  for (unsigned k = 0; k < g_nkinds; k++) make_spare(k);
  for (;;) {
    if (g_spare_due) {
      // SPARE_DELAY_MS without a request: the hand-over's READY is done.
      struct pollfd pfd = {CTRL_FD, POLLIN, 0};
      if (poll(&pfd, 1, SPARE_DELAY_MS) == 0) {
        g_spare_due = false;
        for (unsigned k = 0; k < g_nkinds; k++) make_spare(k);
      }
    }
    struct request req;
    int chan = -1;
    ssize_t n = capsa__recv_fd(CTRL_FD, &req, sizeof req, &chan, -1);
    if (n == 0 || n == -EPIPE || n == -ECONNRESET) return 0;  // host gone
    if (n < 0) continue;
    if (n != (ssize_t)sizeof req || chan < 0) {
      if (chan >= 0) close(chan);
      struct reply rep = {-EBADMSG, 0, 0};
      capsa__send_fd(CTRL_FD, &rep, sizeof rep, -1);
      continue;
    }
    serve_one(CTRL_FD, &req, chan);
    // Reap nothing: renderers are the host's children (CLONE_PARENT).
  }
}

// The forked zygote (a copy of the host): its kinds are in the copied
// memory already.
static int zygote_main(void *arg) {
  const struct boot *b = arg;
  if (apply_nproc_total(b) < 0) return 1;
  memcpy(g_kinds, b->kinds, b->nkinds * sizeof g_kinds[0]);
  g_nkinds = b->nkinds;
  struct capsa_ns_report self;
  if (capsa_ns_self(&self) == 0) {
    g_namespaces = self.applied;
    g_empty_root = self.empty_root;
  }
  return zygote_body(b->baseline_ok, NULL, 0);
}

// --- the exec'd zygote image ------------------------------------------------
//
// The host's launcher child (namespaces applied, uid mapped, every
// descriptor closed but 2, the control socket at 3 and the binary at 4)
// execs the binary as argv {"capsa-zygote"} with an empty environment;
// capsa_main() in the new image calls capsa__zygote_image_main(). The host
// then sends one configuration datagram (struct zcfg, then each kind's
// encoded policy) and one datagram per policy directory (struct zdir with
// the descriptor). Kinds are found by name in the image's own registry.

// "CZF2": the layout with cfg_size and ready_size. An image of the first
// layout ("CZFG") refuses it rather than reading the fields shifted.
#define CFG_MAGIC 0x32465a43u
#define CFG_MAX (64 * 1024)
#define CFG_MAX_DIRS 16
#define EXE_FD 4

#define ZCFG_KIND_FIELD(type, name, wire) wire name;
#define ZCFG_TO_WIRE(type, name, wire) ck->name = (wire)kinds[k].name;
#define ZCFG_FROM_WIRE(type, name, wire) z->name = (type)ck->name;

struct zcfg_kind {
  char name[64];
  uint32_t has_capmode;
  CAPSA__ZYGOTE_KIND_SCALARS(ZCFG_KIND_FIELD)  // host/zygote.h
  uint32_t policy_off, policy_len;             // in the datagram
  uint32_t ndirs;  // its directories' datagrams, in order
  uint32_t nwarm;  // its warm-up descriptors' datagrams, after all dirs
};

struct zcfg {
  uint32_t magic;
  // Both images' idea of the two messages: a renderer executable built
  // against another capsa may lay them out otherwise.
  uint32_t cfg_size, ready_size;
  int32_t host_pid;  // our parent: anything else is not our host
  uint32_t nkinds;
  uint32_t ns_applied;  // what the launcher applied
  uint32_t empty_root, empty_root_required;
  uint32_t baseline_ok;
  uint32_t ndirs;  // directory datagrams that follow
  uint32_t nwarm;  // then warm-up descriptor datagrams (zdir: kind, index)
  // 1: `verdicts` are the host's probes that fork (capsa__features_export),
  // taken instead of forking them again; 0: the zygote probes them itself.
  uint32_t has_verdicts;
  struct capsa__features_verdicts verdicts;
  struct zcfg_kind kinds[CAPSA__ZYGOTE_MAX_KINDS];
};

struct zdir {
  uint32_t kind, index;
};

static union {
  struct zcfg cfg;
  unsigned char bytes[CFG_MAX];
} g_cfg;

// Fails the start: the host reads `err` as the zygote's answer.
static _Noreturn void image_fail(int err) {
  g_ready.status = err;
  capsa__send_fd(CTRL_FD, &g_ready, sizeof g_ready, -1);
  _exit(125);
}

_Noreturn void capsa__zygote_image_main(void) {
  // Cleared by some execs; our host's death is ours.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ssize_t n = capsa__recv_fd(CTRL_FD, g_cfg.bytes, sizeof g_cfg, NULL,
                             ZYGOTE_TIMEOUT_MS);
  const struct zcfg *c = &g_cfg.cfg;
  if (n < (ssize_t)sizeof *c || c->magic != CFG_MAGIC)
    image_fail(-EPROTONOSUPPORT);
  if (c->cfg_size != sizeof *c || c->ready_size != sizeof g_ready)
    image_fail(-EPROTONOSUPPORT);
  if (c->nkinds > CAPSA__ZYGOTE_MAX_KINDS || c->ndirs > CFG_MAX_DIRS)
    image_fail(-EBADMSG);
  // The host's verdicts: the same kernel gives the same answers, without
  // the children that find them forked again here. A set the host's export
  // could not have made is refused, not believed.
  if (c->has_verdicts > 1 ||
      (c->has_verdicts && capsa__features_adopt(&c->verdicts) == -EINVAL))
    image_fail(-EBADMSG);
  // What this image can run, for the host's message when it lacks a kind.
  capsa__kind_names(g_ready.registered, sizeof g_ready.registered);
  if (getppid() != (pid_t)c->host_pid) _exit(125);
  int dirs[CFG_MAX_DIRS];
  unsigned ndirs = 0;
  for (unsigned i = 0; i < c->ndirs; i++) {
    struct zdir d;
    int fd = -1;
    ssize_t m = capsa__recv_fd(CTRL_FD, &d, sizeof d, &fd, ZYGOTE_TIMEOUT_MS);
    if (m != (ssize_t)sizeof d || fd < 0) image_fail(-EBADMSG);
    dirs[ndirs++] = fd;
  }
  if (c->nwarm > CAPSA__ZYGOTE_MAX_KINDS * CAPSA_WARM_UP_MAX_FDS)
    image_fail(-EBADMSG);
  for (unsigned i = 0; i < c->nwarm; i++) {
    struct zdir d;
    int fd = -1;
    ssize_t m = capsa__recv_fd(CTRL_FD, &d, sizeof d, &fd, ZYGOTE_TIMEOUT_MS);
    if (m != (ssize_t)sizeof d || fd < 0 || d.kind >= c->nkinds ||
        d.index != g_kinds[d.kind].nwarm || d.index >= c->kinds[d.kind].nwarm)
      image_fail(-EBADMSG);
    g_kinds[d.kind].warm_fds[g_kinds[d.kind].nwarm++] = fd;
  }
  g_warm_ups = true;
  g_namespaces = c->ns_applied;
  if (c->empty_root) {
    int err = capsa_ns_enter_empty_root();
    g_empty_root = err == 0;
    g_ready.empty_root_error = err;
    if (err < 0 && c->empty_root_required) image_fail(err);
  }
  g_nkinds = c->nkinds;
  unsigned next_dir = 0;
  for (unsigned k = 0; k < g_nkinds; k++) {
    const struct zcfg_kind *ck = &c->kinds[k];
    struct capsa__zygote_kind *z = &g_kinds[k];
    if (memchr(ck->name, 0, sizeof ck->name) == NULL ||
        ck->ndirs > ndirs - next_dir || ck->policy_off > (size_t)n ||
        ck->policy_len > (size_t)n - ck->policy_off)
      image_fail(-EBADMSG);
    z->name = ck->name;  // in g_cfg: lives as long as we do
    CAPSA__ZYGOTE_KIND_SCALARS(ZCFG_FROM_WIRE)
    // z->warm_fds / nwarm: received above
    // Function and argument pointers of the host mean nothing here: the
    // kind is this image's registration of the same name.
    const capsa_kind_registration_t *reg = capsa_kind_lookup(ck->name);
    if (!reg) {
      g_ready.kind_error[k] =
          capsa__kind_ambiguous(ck->name) ? -ENOTUNIQ : -ENOENT;
    } else {
      z->main = reg->main;
      z->arg = reg->arg;
    }
    if (ck->has_capmode && g_ready.kind_error[k] == 0) {
      int err = capsa_capmode_policy_decode(g_cfg.bytes + ck->policy_off,
                                            ck->policy_len, dirs + next_dir,
                                            ck->ndirs, &z->capmode);
      if (err < 0) g_ready.kind_error[k] = err;
    }
    next_dir += ck->ndirs;
  }
  _exit(zygote_body(c->baseline_ok != 0, dirs, ndirs));
}

// In the launcher's child: becomes the zygote image. Descriptors: 2, the
// control socket at 3 and the binary at 4 (all others closed by the
// launcher; closed again here so that nothing else can reach the image).
static int exec_zygote(void *arg) {
  const struct boot *b = arg;
  if (apply_nproc_total(b) < 0) return 127;
  syscall(SYS_close_range, EXE_FD + 1, ~0u, 0);
  // The binary's own descriptor goes with the exec.
  if (fcntl(EXE_FD, F_SETFD, FD_CLOEXEC) < 0) return 127;
  // The embedder's renderer executable is not the binary the host runs as:
  // whatever bits it carries by the time of this exec, it gains nothing.
  if (b->foreign && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return 127;
  char *const argv[] = {(char *)"capsa-zygote", NULL};
  char *const envp[] = {NULL};
  syscall(SYS_execveat, EXE_FD, "", argv, envp, AT_EMPTY_PATH);
  // Tell the host why (ENOEXEC, EACCES, ENOENT for a missing interpreter):
  // otherwise it only sees the socket close. Our copy of g_ready is unused.
  g_ready.exec_error = errno;
  g_ready.status = -errno;
  capsa__send_fd(CTRL_FD, &g_ready, sizeof g_ready, -1);
  return 127;
}

// Sends the exec'd zygote its configuration. 0 or -errno.
static int send_config(int sock, const struct capsa__zygote_kind *kinds,
                       unsigned nkinds, bool empty_root, bool root_required,
                       unsigned ns_applied, bool baseline_ok) {
  unsigned char *buf = calloc(1, CFG_MAX);
  if (!buf) return -ENOMEM;
  struct zcfg *c = (struct zcfg *)buf;
  c->magic = CFG_MAGIC;
  c->cfg_size = sizeof *c;
  c->ready_size = sizeof(struct ready);
  c->host_pid = getpid();
  c->nkinds = nkinds;
  c->ns_applied = ns_applied;
  c->empty_root = empty_root;
  c->empty_root_required = root_required;
  c->baseline_ok = baseline_ok;
  // Best effort: without them the zygote probes for itself.
  c->has_verdicts = capsa__features_export(&c->verdicts) == 0;
  size_t off = sizeof *c;
  int dirs[CFG_MAX_DIRS];
  unsigned dir_kind[CFG_MAX_DIRS];
  unsigned ndirs = 0, nwarm = 0;
  int err = 0;
  for (unsigned k = 0; err == 0 && k < nkinds; k++) {
    struct zcfg_kind *ck = &c->kinds[k];
    if (strlen(kinds[k].name) >= sizeof ck->name) {
      err = -ENAMETOOLONG;
      break;
    }
    strcpy(ck->name, kinds[k].name);
    CAPSA__ZYGOTE_KIND_SCALARS(ZCFG_TO_WIRE)
    ck->nwarm = kinds[k].nwarm <= CAPSA_WARM_UP_MAX_FDS ? kinds[k].nwarm : 0;
    nwarm += ck->nwarm;
    if (!kinds[k].capmode) continue;
    ck->has_capmode = 1;
    unsigned nd = 0;
    ssize_t len =
        capsa_capmode_policy_encode(kinds[k].capmode, buf + off, CFG_MAX - off,
                                    dirs + ndirs, CFG_MAX_DIRS - ndirs, &nd);
    if (len < 0) {
      err = (int)len;
      break;
    }
    ck->policy_off = (uint32_t)off;
    ck->policy_len = (uint32_t)len;
    ck->ndirs = nd;
    for (unsigned i = 0; i < nd; i++) dir_kind[ndirs + i] = k;
    ndirs += nd;
    off += (size_t)len;
  }
  c->ndirs = ndirs;
  c->nwarm = nwarm;
  if (err == 0) err = capsa__send_fd(sock, buf, off, -1);
  for (unsigned i = 0; err == 0 && i < ndirs; i++) {
    struct zdir d = {dir_kind[i], i};
    err = capsa__send_fd(sock, &d, sizeof d, dirs[i]);
  }
  for (unsigned k = 0; err == 0 && k < nkinds; k++) {
    for (unsigned i = 0; err == 0 && i < c->kinds[k].nwarm; i++) {
      struct zdir d = {k, i};
      err = capsa__send_fd(sock, &d, sizeof d, kinds[k].warm_fds[i]);
    }
  }
  free(buf);
  return err;
}

// --- in the host ------------------------------------------------------------

// The zygote's ready message. A zygote that exits with our configuration
// unread (an exec that failed, and said why first) resets the socket, and
// the kernel reports that error before the message queued ahead of it:
// read once more to get the message.
static ssize_t recv_ready(int sock, struct ready *rd, int timeout_ms) {
  ssize_t n = capsa__recv_fd(sock, rd, sizeof *rd, NULL, timeout_ms);
  if (n == -ECONNRESET) {
    ssize_t again = capsa__recv_fd(sock, rd, sizeof *rd, NULL, 0);
    if (again > 0) n = again;  // else nothing was queued: the reset stands
  }
  return n;
}

// Whether /proc/PID/status says how many filters a process has (Linux 5.9).
static bool seccomp_filters_visible(void) {
  capsa_renderer_check_t own;
  memset(&own, 0, sizeof own);
  return capsa__check_status(getpid(), &own) == 0 && own.seccomp_filters >= 0;
}

static int zygote_start(capsa__zygote *z,
                        const struct capsa__zygote_kind *kinds, unsigned nkinds,
                        unsigned ns_wanted, unsigned ns_required,
                        bool empty_root, int stderr_fd, int exe_fd,
                        bool foreign, rlim_t nproc_total) {
  if (!z || (!kinds && nkinds) || nkinds > CAPSA__ZYGOTE_MAX_KINDS)
    return -EINVAL;
  memset(z, 0, sizeof *z);
  z->sock = -1;
  z->pidfd = -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -errno;
  // The zygote's own namespaces; pid namespaces are made per renderer.
  capsa_ns_policy *p = capsa_ns_policy_new();
  if (!p) {
    close(sv[0]);
    close(sv[1]);
    return -ENOMEM;
  }
  int err = capsa_ns_policy_set_namespaces(p, ns_wanted & ~CAPSA_NAMESPACE_PID,
                                           ns_required & ~CAPSA_NAMESPACE_PID);
  // The empty root needs the mount namespace; it is required when that is.
  // An exec'd zygote builds its empty root itself, after the exec: the
  // exec needs the dynamic loader and libraries of the host's root.
  bool root_required = empty_root && (ns_required & CAPSA_NAMESPACE_MOUNT);
  if (err == 0 && (ns_wanted & CAPSA_NAMESPACE_MOUNT) && exe_fd < 0)
    err = capsa_ns_policy_set_empty_root(p, empty_root, root_required);
  if (err == 0 && exe_fd >= 0) err = capsa_ns_policy_keep_fd(p, exe_fd, EXE_FD);
  if (err == 0) err = capsa_ns_policy_keep_fd(p, sv[1], CTRL_FD);
  if (err == 0 && stderr_fd >= 0)
    err = capsa_ns_policy_keep_fd(p, stderr_fd, 2);
  if (err == 0) err = capsa_ns_policy_set_keep_caps(p, true);
  struct boot b = {kinds, nkinds, seccomp_filters_visible(), nproc_total,
                   foreign};
  struct capsa_ns_report rep;
  memset(&rep, 0, sizeof rep);
  struct capsa_ns_child c;
  if (err == 0)
    err = capsa_ns_spawn(p, exe_fd >= 0 ? exec_zygote : zygote_main, &b, &c,
                         &rep);
  capsa_ns_policy_free(p);
  close(sv[1]);
  if (err < 0) {
    close(sv[0]);
    z->ns = rep;
    return err;
  }
  z->sock = sv[0];
  z->pidfd = c.pidfd;
  z->pid = c.pid;
  z->ns = rep;
  z->exec = exe_fd >= 0;
  if (z->exec) {
    bool want_root = empty_root && (ns_wanted & CAPSA_NAMESPACE_MOUNT);
    if (want_root && !(rep.applied & CAPSA_NAMESPACE_MOUNT)) {
      // As the launcher reports it: no mount namespace to build it in.
      z->ns.empty_root_error = -EPERM;
      want_root = false;
      if (root_required) {
        capsa__zygote_stop(z);
        return -EPERM;
      }
    }
    err = send_config(z->sock, kinds, nkinds, want_root, root_required,
                      rep.applied, b.baseline_ok);
    if (err < 0) {
      // A child whose exec failed said why and exited (so the send met a
      // closed socket): the why is the error, not the EPIPE.
      struct ready late;
      if (recv_ready(z->sock, &late, 0) == (ssize_t)sizeof late &&
          late.exec_error > 0) {
        z->exec_error = late.exec_error;
        err = -late.exec_error;
      }
      capsa__zygote_stop(z);
      return err;
    }
  }
  struct ready rd;
  ssize_t n = recv_ready(z->sock, &rd, ZYGOTE_TIMEOUT_MS);
  if (n != (ssize_t)sizeof rd || rd.status < 0) {
    if (n == (ssize_t)sizeof rd && rd.exec_error > 0)
      z->exec_error = rd.exec_error;
    capsa__zygote_stop(z);
    return n < 0 ? (int)n : n == (ssize_t)sizeof rd ? rd.status : -EPROTO;
  }
  if (z->exec && !z->ns.empty_root_error) {
    z->ns.empty_root = rd.empty_root == 1;
    z->ns.empty_root_error = rd.empty_root_error;
  }
  if (z->exec) {
    memcpy(z->registered, rd.registered, sizeof z->registered);
    z->registered[sizeof z->registered - 1] = 0;
  }
  z->staged = rd.staged == 1;
  z->own_userns =
      rd.own_userns > CAPSA__OWN_USERNS_PER_UID ? -EPROTO : rd.own_userns;
  z->baseline = rd.baseline > 0 ? (unsigned)rd.baseline : 0;
  for (unsigned k = 0; k < nkinds; k++) {
    z->kind_error[k] = rd.kind_error[k];
    z->capmode[k] = rd.capmode[k];
    z->warm_up[k] = rd.warm_up[k];
  }
  return 0;
}

int capsa__zygote_start(capsa__zygote *z,
                        const struct capsa__zygote_kind *kinds, unsigned nkinds,
                        unsigned ns_wanted, unsigned ns_required,
                        bool empty_root, int stderr_fd, rlim_t nproc_total) {
  return zygote_start(z, kinds, nkinds, ns_wanted, ns_required, empty_root,
                      stderr_fd, -1, false, nproc_total);
}

int capsa__zygote_exec_start(capsa__zygote *z,
                             const struct capsa__zygote_kind *kinds,
                             unsigned nkinds, unsigned ns_wanted,
                             unsigned ns_required, bool empty_root,
                             int stderr_fd, int exe_fd, bool foreign,
                             rlim_t nproc_total) {
  if (exe_fd < 0) return -EBADF;
  return zygote_start(z, kinds, nkinds, ns_wanted, ns_required, empty_root,
                      stderr_fd, exe_fd, foreign, nproc_total);
}

int capsa__zygote_fork(capsa__zygote *z, unsigned kind, int channel_fd,
                       struct capsa_ns_child *child, int *channel_out,
                       int *stderr_out) {
  if (!z || !child || channel_fd < 0 || !channel_out || !stderr_out ||
      kind == DRAIN_KIND)
    return -EINVAL;
  *channel_out = -1;
  *stderr_out = -1;
  if (z->sock < 0) return -EPIPE;
  struct request req = {kind};
  int err = capsa__send_fd(z->sock, &req, sizeof req, channel_fd);
  if (err < 0) return err;
  struct reply rep;
  int fds[3], nfds = 0;
  ssize_t n = capsa__recv_fds(z->sock, &rep, sizeof rep, fds, 3, &nfds,
                              ZYGOTE_TIMEOUT_MS);
  if (n < 0) return (int)n;
  int want = rep.status == 0 ? (rep.spare ? 3 : 2) : 0;
  if (n != (ssize_t)sizeof rep || rep.status > 0 || nfds != want) {
    for (int i = 0; i < nfds; i++) close(fds[i]);
    return n == 0 ? -EPIPE : rep.status < 0 ? rep.status : -EPROTO;
  }
  if (rep.status < 0) return rep.status;
  child->pidfd = fds[0];
  child->pid = rep.pid;
  *stderr_out = fds[1];
  if (rep.spare) *channel_out = fds[2];
  return 0;
}

// Takes the spares back (they are our children) and kills and reaps them.
static void drain_spares(capsa__zygote *z) {
  struct request req = {DRAIN_KIND};
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return;
  int err = capsa__send_fd(z->sock, &req, sizeof req, sv[0]);
  close(sv[0]);
  close(sv[1]);
  for (int i = 0; err == 0 && i <= CAPSA__ZYGOTE_MAX_KINDS; i++) {
    struct reply rep;
    int pidfd = -1;
    ssize_t n =
        capsa__recv_fd(z->sock, &rep, sizeof rep, &pidfd, ZYGOTE_TIMEOUT_MS);
    if (n != (ssize_t)sizeof rep || rep.status != 1 || pidfd < 0) {
      if (pidfd >= 0) close(pidfd);
      break;
    }
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 &&
           errno == EINTR) {
    }
    close(pidfd);
  }
}

void capsa__zygote_stop(capsa__zygote *z) {
  if (!z) return;
  if (z->sock >= 0) {
    drain_spares(z);
    close(z->sock);
    z->sock = -1;
  }
  if (z->pidfd >= 0) {
    // It exits on EOF; kill as well so a wedged zygote cannot stall us.
    syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)z->pidfd, &si, WEXITED) < 0 &&
           errno == EINTR) {
    }
    close(z->pidfd);
    z->pidfd = -1;
  }
}
