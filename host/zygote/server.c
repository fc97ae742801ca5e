// The zygote's server: once its kinds are known (launch.c for a forked
// zygote, image.c for an exec'd one) it compiles their policies, runs their
// warm-ups, enters capability mode's stage or baseline (stage.c), reports
// ready and serves the host's requests, forking renderers and keeping
// spares; and each renderer's first steps after its fork (limits,
// capability mode, its kind's main). See host/zygote/zygote.h.
#include <errno.h>
#include <fcntl.h>
#include <link.h>
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
#include "host/zygote/zygote.h"
#include "host/zygote/zygote_internal.h"
#include "ipc/loop.h"
#include "sandbox/memfd.h"

// Freed heap a renderer keeps rather than returns (see capsa__zygote_serve).
#define ZYGOTE_RENDERER_TRIM_THRESHOLD (32 << 20)
// Heap growth per brk in a renderer beyond what is asked (glibc: 128 KiB).
#define ZYGOTE_RENDERER_TOP_PAD (1 << 20)
#define CTRL_FD CAPSA__ZYGOTE_CTRL_FD
#define CHANNEL_FD 3

// --- in the zygote ----------------------------------------------------------

// The zygote's copy of what it needs; lives in its own memory.
static struct capsa__zygote_kind g_kinds[CAPSA__ZYGOTE_MAX_KINDS];
static unsigned g_nkinds;
static struct capsa__zygote_ready g_ready;
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
#define SET_RLIMIT(X, field, resource, option, def) \
  set_limit(resource, kind->field);
  CAPSA__ZYGOTE_KIND_RLIMITS(SET_RLIMIT, )
#undef SET_RLIMIT
  if (kind->limit_cpu) signal(SIGXCPU, on_sigxcpu);
  if (pid_ns) signal(SIGABRT, on_sigabrt);
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
    struct capsa__zygote_reply rep = {1, g_spare[k].child.pid, 0};
    capsa__send_fd(ctrl, &rep, sizeof rep, g_spare[k].child.pidfd);
    close(g_spare[k].child.pidfd);
    close(g_spare[k].chan);
    close(g_spare[k].err);
    g_spare[k].valid = false;
  }
  struct capsa__zygote_reply done = {0, 0, 0};
  capsa__send_fd(ctrl, &done, sizeof done, -1);
}

static void serve_one(int ctrl, const struct capsa__zygote_request *req,
                      int chan) {
  struct capsa__zygote_reply rep = {0, 0, 0};
  unsigned k = req->kind;
  if (k == CAPSA__ZYGOTE_DRAIN_KIND) {
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
    // machine the very spawn the spare was for (see capsa__zygote_serve).
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

int capsa__zygote_serve(const struct capsa__zygote_setup *setup,
                        const struct capsa__zygote_ready *preset, int *dirfds,
                        unsigned ndirfds) {
  if (setup->nkinds > CAPSA__ZYGOTE_MAX_KINDS) return 1;
  memcpy(g_kinds, setup->kinds, setup->nkinds * sizeof g_kinds[0]);
  g_nkinds = setup->nkinds;
  g_namespaces = setup->namespaces;
  g_empty_root = setup->empty_root;
  g_warm_ups = setup->warm_ups;
  if (preset) g_ready = *preset;
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
  g_ready.staged = capsa__zygote_stage_enter(g_kinds, g_ready.kind_error,
                                             g_nkinds, setup->baseline_ok);
  if (!g_ready.staged)
    g_ready.baseline =
        (int32_t)capsa__zygote_baseline_enter(setup->baseline_ok);
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
    struct capsa__zygote_request req;
    int chan = -1;
    ssize_t n = capsa__recv_fd(CTRL_FD, &req, sizeof req, &chan, -1);
    if (n == 0 || n == -EPIPE || n == -ECONNRESET) return 0;  // host gone
    if (n < 0) continue;
    if (n != (ssize_t)sizeof req || chan < 0) {
      if (chan >= 0) close(chan);
      struct capsa__zygote_reply rep = {-EBADMSG, 0, 0};
      capsa__send_fd(CTRL_FD, &rep, sizeof rep, -1);
      continue;
    }
    serve_one(CTRL_FD, &req, chan);
    // Reap nothing: renderers are the host's children (CLONE_PARENT).
  }
}

// The forked zygote (a copy of the host): its kinds are in the copied
