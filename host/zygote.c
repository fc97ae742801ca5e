// The zygote process and the host's side of its control socket. See
// host/zygote.h.
#include "host/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/fd_passing.h"
#include "host/fork_guard.h"
#include "host/host_internal.h"
#include "ipc/loop.h"
#include "sandbox/seccomp.h"

#define ZYGOTE_TIMEOUT_MS 5000
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

// A request for this "kind" hands every spare's pidfd to the host, so that
// it can kill and reap them (they are its children) before stopping us.
#define DRAIN_KIND UINT32_MAX

struct ready {
  int32_t status;
  int32_t staged;    // 1: renderers take only the final capability-mode step
  int32_t baseline;  // not staged: syscalls the zygote's baseline refuses
  int32_t kind_error[CAPSA__ZYGOTE_MAX_KINDS];
  struct capsa_capmode_report capmode[CAPSA__ZYGOTE_MAX_KINDS];
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
};

// --- in the zygote ----------------------------------------------------------

// The zygote's copy of what it needs; lives in its own memory.
static struct capsa__zygote_kind g_kinds[CAPSA__ZYGOTE_MAX_KINDS];
static unsigned g_nkinds;
static struct ready g_ready;
static unsigned g_namespaces;
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

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAPSA__ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CAPSA__ASAN 1
#endif

static void set_limit(int resource, rlim_t v) {
  if (v == 0 || v == RLIM_INFINITY) return;
#ifdef CAPSA__ASAN
  // ASan reserves terabytes of shadow address space: RLIMIT_AS would kill
  // every renderer at its first allocation. Not applied in asan builds.
  if (resource == RLIMIT_AS) return;
#endif
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

// In a freshly forked renderer: limits, capability mode, then main. Never
// returns.
static void renderer_start(unsigned k, bool pid_ns) {
  const struct capsa__zygote_kind *kind = &g_kinds[k];
  set_limit(RLIMIT_AS, kind->limit_as);
  set_limit(RLIMIT_CPU, kind->limit_cpu);
  if (kind->limit_cpu) signal(SIGXCPU, on_sigxcpu);
  set_limit(RLIMIT_NOFILE, kind->limit_nofile);
  set_limit(RLIMIT_NPROC, kind->limit_nproc);
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

// Forks a renderer of kind k on channel end `chan` (borrowed). Returns 0
// with *child filled, or -errno; never returns in the child.
static int fork_renderer(unsigned k, int chan, struct capsa_ns_child *child) {
  capsa_ns_policy *p = capsa_ns_policy_new();
  if (!p) return -ENOMEM;
  bool pid_ns = g_kinds[k].pid_namespace;
  capsa_ns_policy_set_namespaces(p, pid_ns ? CAPSA_NAMESPACE_PID : 0,
                                 pid_ns ? CAPSA_NAMESPACE_PID : 0);
  capsa_ns_policy_set_clone_parent(p, true);
  capsa_ns_policy_keep_fd(p, chan, CHANNEL_FD);
  capsa_ns_policy_keep_fd(p, 2, 2);
  for (unsigned i = 0; i < g_npolicy_fds; i++)
    capsa_ns_policy_keep_fd(p, g_policy_fds[i], g_policy_fds[i]);
  int r = capsa_ns_fork(p, child);
  if (r == 0) renderer_start(k, pid_ns);  // child; never returns
  // Freed in the zygote only: a free in the child would write into
  // inherited heap pages (copy-on-write faults) for nothing.
  capsa_ns_policy_free(p);
  return r < 0 ? r : 0;
}

// One renderer per kind forked ahead of time (kinds with keep_spare): it is
// already in capability mode, its HELLO waiting in the socket, when the host
// asks. Its host end of the channel stays here until then.
struct spare {
  bool valid;
  int chan;  // host end
  struct capsa_ns_child child;
};
static struct spare g_spare[CAPSA__ZYGOTE_MAX_KINDS];

static void make_spare(unsigned k) {
  if (!g_kinds[k].keep_spare || g_spare[k].valid || g_ready.kind_error[k] < 0)
    return;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return;
  struct capsa_ns_child c;
  int err = fork_renderer(k, sv[1], &c);
  close(sv[1]);
  if (err < 0) {
    close(sv[0]);
    return;
  }
  g_spare[k] = (struct spare){true, sv[0], c};
}

static void drain(int ctrl) {
  for (unsigned k = 0; k < g_nkinds; k++) {
    if (!g_spare[k].valid) continue;
    struct reply rep = {1, g_spare[k].child.pid, 0};
    capsa__send_fd(ctrl, &rep, sizeof rep, g_spare[k].child.pidfd);
    close(g_spare[k].child.pidfd);
    close(g_spare[k].chan);
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
    int fds[2] = {sp.child.pidfd, sp.chan};
    capsa__send_fds(ctrl, &rep, sizeof rep, fds, 2);
    close(sp.child.pidfd);
    close(sp.chan);
    make_spare(k);  // the next one, off the requester's critical path
    return;
  }
  struct capsa_ns_child child = {-1, 0};
  rep.status = fork_renderer(k, chan, &child);
  rep.pid = child.pid;
  close(chan);
  capsa__send_fd(ctrl, &rep, sizeof rep, rep.status == 0 ? child.pidfd : -1);
  if (child.pidfd >= 0) close(child.pidfd);
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
  struct capsa_arg_cmp newpid = {0, CAPSA_CMP_MASKED_EQ, CAPSA_CLONE_NAMESPACES,
                                 CLONE_NEWPID};
  struct capsa_arg_cmp ambient[2] = {
      {0, CAPSA_CMP_MASKED_EQ, 0xffffffffu, PR_CAP_AMBIENT},
      {1, CAPSA_CMP_MASKED_EQ, 0xffffffffu, PR_CAP_AMBIENT_CLEAR_ALL}};
  int rc = capsa_capmode_policy_allow_launcher(
      s, "clone", &newpid, 1,
      "zygote: each renderer in a fresh pid namespace (CLONE_NEWPID | "
      "CLONE_PARENT | CLONE_PIDFD; clone3 is ENOSYS, its flags unseen)");
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
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return;
  capsa_rloop_t l;
  capsa_rloop_options_t lo = {CAPSA_PEER_HOST, 0, 1000};
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

static int zygote_main(void *arg) {
  const struct boot *b = arg;
  signal(SIGPIPE, SIG_IGN);
  memcpy(g_kinds, b->kinds, b->nkinds * sizeof g_kinds[0]);
  g_nkinds = b->nkinds;
  struct capsa_ns_report self;
  if (capsa_ns_self(&self) == 0) {
    g_namespaces = self.applied;
    g_empty_root = self.empty_root;
  }
  // no_new_privs now: nothing the zygote or a renderer runs can gain
  // privileges (there is no exec in capability mode anyway).
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // Compile each policy once; renderers only load the result.
  for (unsigned k = 0; k < g_nkinds; k++) {
    if (!g_kinds[k].capmode) continue;
    int err = capsa_capmode_policy_compile(g_kinds[k].capmode);
    if (err == 0)
      err =
          capsa_capmode_policy_report(g_kinds[k].capmode, &g_ready.capmode[k]);
    g_ready.kind_error[k] = err;
  }
  warm_up();
  // Everything open now beyond stdio and the control socket belongs to the
  // policies (the launcher closed all else before we ran).
  for (int fd = CTRL_FD + 1; fd < 1024 && g_npolicy_fds < MAX_POLICY_FDS; fd++)
    if (fcntl(fd, F_GETFD) >= 0) g_policy_fds[g_npolicy_fds++] = fd;
  // After the scan: renderers do not need the stage's own ruleset.
  enter_stage(b->baseline_ok);
  enter_baseline(b->baseline_ok);
  for (unsigned k = 0; k < g_nkinds; k++) format_report(k);
  if (capsa__send_fd(CTRL_FD, &g_ready, sizeof g_ready, -1) < 0) return 1;
  // Fork with a compact heap: free chunks the zygote (a copy of the host)
  // left behind are consolidated and returned now, once, not by each
  // renderer's first malloc, where walking them costs a copy-on-write fault
  // per page touched; and fork copies fewer page tables. (Per request the
  // zygote only allocates small chunks that malloc's caches recycle.)
  malloc_trim(0);
  for (unsigned k = 0; k < g_nkinds; k++) make_spare(k);
  for (;;) {
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

// --- in the host ------------------------------------------------------------

// Whether /proc/PID/status says how many filters a process has (Linux 5.9).
static bool seccomp_filters_visible(void) {
  capsa_renderer_check_t own;
  memset(&own, 0, sizeof own);
  return capsa__check_status(getpid(), &own) == 0 && own.seccomp_filters >= 0;
}

int capsa__zygote_start(capsa__zygote *z,
                        const struct capsa__zygote_kind *kinds, unsigned nkinds,
                        unsigned ns_wanted, unsigned ns_required,
                        bool empty_root, int stderr_fd) {
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
  if (err == 0 && (ns_wanted & CAPSA_NAMESPACE_MOUNT))
    err = capsa_ns_policy_set_empty_root(
        p, empty_root, empty_root && (ns_required & CAPSA_NAMESPACE_MOUNT));
  if (err == 0) err = capsa_ns_policy_keep_fd(p, sv[1], CTRL_FD);
  if (err == 0 && stderr_fd >= 0)
    err = capsa_ns_policy_keep_fd(p, stderr_fd, 2);
  if (err == 0) err = capsa_ns_policy_set_keep_caps(p, true);
  struct boot b = {kinds, nkinds, seccomp_filters_visible()};
  struct capsa_ns_report rep;
  memset(&rep, 0, sizeof rep);
  struct capsa_ns_child c;
  if (err == 0) err = capsa_ns_spawn(p, zygote_main, &b, &c, &rep);
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
  struct ready rd;
  ssize_t n = capsa__recv_fd(z->sock, &rd, sizeof rd, NULL, ZYGOTE_TIMEOUT_MS);
  if (n != (ssize_t)sizeof rd) {
    capsa__zygote_stop(z);
    return n < 0 ? (int)n : -EPROTO;
  }
  z->staged = rd.staged == 1;
  z->baseline = rd.baseline > 0 ? (unsigned)rd.baseline : 0;
  for (unsigned k = 0; k < nkinds; k++) {
    z->kind_error[k] = rd.kind_error[k];
    z->capmode[k] = rd.capmode[k];
  }
  return 0;
}

int capsa__zygote_fork(capsa__zygote *z, unsigned kind, int channel_fd,
                       struct capsa_ns_child *child, int *channel_out) {
  if (!z || !child || channel_fd < 0 || !channel_out || kind == DRAIN_KIND)
    return -EINVAL;
  *channel_out = -1;
  if (z->sock < 0) return -EPIPE;
  struct request req = {kind};
  int err = capsa__send_fd(z->sock, &req, sizeof req, channel_fd);
  if (err < 0) return err;
  struct reply rep;
  int fds[2], nfds = 0;
  ssize_t n = capsa__recv_fds(z->sock, &rep, sizeof rep, fds, 2, &nfds,
                              ZYGOTE_TIMEOUT_MS);
  if (n < 0) return (int)n;
  int want = rep.status == 0 ? (rep.spare ? 2 : 1) : 0;
  if (n != (ssize_t)sizeof rep || rep.status > 0 || nfds != want) {
    for (int i = 0; i < nfds; i++) close(fds[i]);
    return n == 0 ? -EPIPE : rep.status < 0 ? rep.status : -EPROTO;
  }
  if (rep.status < 0) return rep.status;
  child->pidfd = fds[0];
  child->pid = rep.pid;
  if (rep.spare) *channel_out = fds[1];
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
