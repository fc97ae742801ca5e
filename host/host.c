// The host: renderer kinds, spawning through the zygote, the outside
// sandbox check on HELLO, and supervision (exit, crash, hang, limits, bad
// messages, restarts). See host/capsa_host.h.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/crash_report.h"
#include "host/fork_guard.h"
#include "host/host_internal.h"
#include "host/kind_registry.h"
#include "host/oom_score.h"
#include "host/orphans.h"
#include "host/sanitizer_limits.h"
#include "host/text.h"
#include "ipc/interface.h"
#include "sandbox/features.h"
#include "sandbox/proc_view.h"

// A renderer that closed its channel gets this long to exit by itself.
#define LINGER_MS 2000
// How long an exited renderer's remaining messages may take to arrive.
#define DRAIN_MS 250

// Waits for (and reaps) the process of `pidfd`. A pidfd that was watched
// by a uv_poll is non-blocking (uv_poll_init sets O_NONBLOCK), and waitid
// on it then fails EAGAIN instead of waiting: that would leave a zombie
// behind, so the flag is cleared first. 0 or -errno (ECHILD: not ours).
static int wait_exit(int pidfd, siginfo_t *si) {
  int fl = fcntl(pidfd, F_GETFL);
  if (fl >= 0 && (fl & O_NONBLOCK)) fcntl(pidfd, F_SETFL, fl & ~O_NONBLOCK);
  int rc;
  do {
    rc = waitid((idtype_t)P_PIDFD, (id_t)pidfd, si, WEXITED);
  } while (rc < 0 && errno == EINTR);
  return rc < 0 ? -errno : 0;
}

static void launch_failed_cleanup(int pidfd) {
  syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  siginfo_t si;
  (void)wait_exit(pidfd, &si);
  close(pidfd);
}

const char *capsa_host_event_name(capsa_host_event_type_t t) {
  switch (t) {
    case CAPSA_EV_READY:
      return "ready";
    case CAPSA_EV_MESSAGE:
      return "message";
    case CAPSA_EV_LOG:
      return "log";
    case CAPSA_EV_EXITED:
      return "exited";
    case CAPSA_EV_CRASHED:
      return "crashed";
    case CAPSA_EV_HUNG:
      return "hung";
    case CAPSA_EV_BAD_MESSAGE:
      return "bad-message";
    case CAPSA_EV_SANDBOX_REFUSED:
      return "sandbox-refused";
    case CAPSA_EV_LIMIT:
      return "limit";
    case CAPSA_EV_RESTARTED:
      return "restarted";
    case CAPSA_EV_SPAWN_FAILED:
      return "spawn-failed";
    case CAPSA_EV_CLOSED:
      return "closed";
    case CAPSA_EV_KILLED:
      return "killed";
    case CAPSA_EV_SHUTDOWN:
      return "shutdown";
    case CAPSA_EV_ABORTED:
      return "aborted";
  }
  return "?";
}

void capsa_host_options_init(capsa_host_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->namespaces_wanted = CAPSA_NAMESPACE_ALL;
  o->empty_root = true;
}

void capsa_kind_options_init(capsa_kind_options_t *k, const char *name,
                             capsa_renderer_entry_fn main, void *arg) {
  if (!k) return;
  memset(k, 0, sizeof *k);
  k->name = name;
  k->main = main;
  k->arg = arg;
  k->pid_namespace = true;
  k->limit_memory = CAPSA__DEFAULT_MEMORY;
  k->limit_cpu_seconds = CAPSA__DEFAULT_CPU_SECONDS;
  k->limit_open_files = CAPSA__DEFAULT_OPEN_FILES;
  k->limit_processes = CAPSA__DEFAULT_PROCESSES;
  k->limit_broker_requests = CAPSA__DNS_PER_RENDERER;
  k->limit_queued_fds = CAPSA__QUEUE_FDS_PER_RENDERER;
  k->limit_queued_bytes = CAPSA__QUEUE_BYTES_PER_RENDERER;
  k->limit_log_bytes_per_second = CAPSA__DEFAULT_LOG_BYTES_PER_SECOND;
  k->host_share_percent = CAPSA__DEFAULT_HOST_SHARE_PERCENT;
  k->heartbeat_ms = 1000;
  k->heartbeat_timeout_ms = 5000;
  k->resource_dir_fd = -1;
}

void capsa__emit(struct capsa_host_renderer *r, capsa_host_event_t *ev) {
  ev->renderer = r;
  if (r->observer) r->observer(r, ev, r->observer_ctx);
  if (r->h->cb) r->h->cb(r->h->pub, ev);
}

static void emit_report(struct capsa_host_renderer *r,
                        capsa_host_event_type_t type, int status, int sig,
                        const char *text,
                        const capsa_crash_report_t *crash_report) {
  capsa_host_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.status = status;
  ev.signal = sig;
  ev.text = text;
  ev.crash_report = crash_report;
  capsa__emit(r, &ev);
}

static void emit_simple(struct capsa_host_renderer *r,
                        capsa_host_event_type_t type, int status, int sig,
                        const char *text) {
  emit_report(r, type, status, sig, text, NULL);
}

// Kills r for `reason` (reported now, with `text`); its exit is then not
// reported again. Bad messages and refused sandboxes are never restarted.
static void finish_exit(struct capsa_host_renderer *r);

static void kill_for(struct capsa_host_renderer *r,
                     capsa_host_event_type_t reason, const char *text) {
  // Also while its end is being reported: an event callback that kills the
  // renderer it is told about must not report (or tear down) twice.
  if (r->state == R_DYING || r->kill_reason || r->reporting_end) return;
  r->kill_reason = reason;
  if (reason == CAPSA_EV_BAD_MESSAGE || reason == CAPSA_EV_SANDBOX_REFUSED)
    r->no_restart = true;
  capsa_channel_stop(&r->ch);
  uv_timer_stop(&r->timer);
  syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
  // What waited on it learns first; then why it ended.
  capsa_channel_cancel_requests(&r->ch);
  emit_simple(r, reason, 0, SIGKILL, text);
  if (r->exited) finish_exit(r);  // already reaped: nothing left to wait for
}

void capsa__renderer_kill_for_limit(struct capsa_host_renderer *r,
                                    const char *budget) {
  kill_for(r, CAPSA_EV_LIMIT, budget);
}

int capsa__renderer_retire(struct capsa_host_renderer *r, const char *why) {
  r->no_restart = true;
  if (r->backing_off || r->state == R_DYING || r->pidfd < 0 || r->kill_reason ||
      r->reporting_end)
    return -ESRCH;  // ending already: its CLOSED (or RESTARTED) follows
  kill_for(r, CAPSA_EV_KILLED, why);
  return 0;
}

static void maybe_free(struct capsa_host_renderer *r);
static void after_incarnation(struct capsa_host_renderer *r);
static int launch(struct capsa_host_renderer *r);

static void limits_release(struct capsa_host_renderer *r, bool last_try);
static void reap_group(struct capsa_host_renderer *r);

static void on_handle_closed(struct capsa_host_renderer *r) {
  if (--r->open_handles > 0) return;
  reap_group(r);  // what was killed at its exit has died by now
  if (r->pidfd >= 0) close(r->pidfd);  // -1: detached (detach_dying)
  r->pidfd = -1;
  limits_release(r, true);
  capsa__broker_cancel(r);
  after_incarnation(r);
}

static void on_channel_closed(capsa_channel_t *ch) {
  on_handle_closed(ch->data);
}

static void on_poll_closed(uv_handle_t *hd) {
  on_handle_closed(hd->data);
}

static void teardown(struct capsa_host_renderer *r) {
  r->state = R_DYING;
  uv_timer_stop(&r->timer);
  capsa_channel_close(&r->ch, on_channel_closed);
  uv_close((uv_handle_t *)&r->exit_poll, on_poll_closed);
  capsa__stderr_close(r, on_poll_closed);
}

// --- limits: a cgroup v2 per renderer where usable, else rlimits ---------

static unsigned kind_controllers(const capsa_kind_options_t *k) {
  return (k->limit_memory != CAPSA_LIMIT_NONE ? CAPSA_CGROUP_MEMORY : 0) |
         (k->limit_processes != CAPSA_LIMIT_NONE ? CAPSA_CGROUP_PIDS : 0);
}

// A limit as the zygote takes it: 0 leaves the inherited one.
static rlim_t zygote_limit(uint64_t v) {
  return v == CAPSA_LIMIT_NONE ? 0 : (rlim_t)v;
}

// Once, at start (the spawn path only reads the outcome): cgroup v2 or
// rlimits for limit_memory / limit_processes, and why. Under cgroups the
// kinds' RLIMIT_AS / RLIMIT_NPROC are dropped: memory.max and pids.max
// replace them, and only then is the kernel's evidence (memory.events,
// pids.events) the one that refuses. -errno when cgroups are REQUIRED and
// unusable.
static int limits_setup(struct capsa__host_impl *h) {
  unsigned want = 0;
  for (unsigned i = 0; i < h->nkinds; i++)
    want |= kind_controllers(&h->kinds[i]);
  char why[sizeof h->limits_why] = "";
  int err = 0;
  if (h->opts.cgroups == CAPSA_CGROUPS_OFF) {
    snprintf(why, sizeof why, "off by the host's options");
  } else if (!want && h->opts.cgroups != CAPSA_CGROUPS_REQUIRED) {
    snprintf(why, sizeof why, "not needed, no kind limits memory or processes");
  } else {
    const char *parent = h->opts.cgroup_parent;
    if (!parent) {
      const capsa_cgroup_probe_t *p = capsa_cgroup_probe();
      err = capsa_cgroup_probe_check(p, want, why, sizeof why);
      parent = p->dir;
    }
    if (err == 0)
      err = capsa_cgroup_parent_prepare(parent, want, why, sizeof why);
    if (err == 0 && strlen(parent) >= sizeof h->cg_parent) err = -ENAMETOOLONG;
    if (err == 0) {
      h->cg_active = true;
      h->cg_controllers = want;
      snprintf(h->cg_parent, sizeof h->cg_parent, "%s", parent);
    }
  }
  snprintf(h->limits_why, sizeof h->limits_why, "%s", why);
  if (!h->cg_active && h->opts.cgroups == CAPSA_CGROUPS_REQUIRED)
    return err < 0 ? err : -EOPNOTSUPP;
  for (unsigned i = 0; h->cg_active && i < h->nkinds; i++) {
    // A spare runs (and may allocate and fork) before it is claimed and
    // moved into its cgroup: its rlimits stay, as the backstop until then.
    if (h->kinds[i].keep_spare) continue;
    if (h->kinds[i].limit_memory != CAPSA_LIMIT_NONE) h->zkinds[i].limit_as = 0;
    if (h->kinds[i].limit_processes != CAPSA_LIMIT_NONE)
      h->zkinds[i].limit_nproc = 0;
  }
  return 0;
}

// Right after the zygote's fork returned, before the host reads the
// renderer's HELLO or sends it a byte: its own cgroup with its kind's
// limits. Nothing when cgroups are not in use (no work on the spawn path).
static int limits_enter(struct capsa_host_renderer *r, pid_t pid) {
  struct capsa__host_impl *h = r->h;
  const capsa_kind_options_t *k = &h->kinds[r->kind];
  if (!h->cg_active ||
      (!kind_controllers(k) && h->opts.cgroups != CAPSA_CGROUPS_REQUIRED))
    return 0;
  // Unique in this process across hosts and restarts; a name left behind
  // by an earlier process with our pid is skipped.
  static atomic_uint seq;
  capsa_cgroup_t *cg;
  int err = -EEXIST;
  for (int i = 0; i < 16 && err == -EEXIST; i++) {
    char name[64];
    snprintf(name, sizeof name, "capsa-%d-%u", (int)getpid(),
             atomic_fetch_add(&seq, 1) + 1);
    err = capsa_cgroup_new(h->cg_parent, name, &cg);
  }
  if (err < 0) return err;
  err = 0;
  if (k->limit_memory != CAPSA_LIMIT_NONE)
    err = capsa_cgroup_set_memory_max(cg, k->limit_memory);
  if (err == 0 && k->limit_processes != CAPSA_LIMIT_NONE)
    err = capsa_cgroup_set_pids_max(cg, k->limit_processes);
  if (err == 0) err = capsa_cgroup_apply(cg);
  if (err == 0) err = capsa_cgroup_add_pid(cg, pid);
  if (err < 0) {
    capsa_cgroup_remove(cg);
    capsa_cgroup_free(cg);
    return err;
  }
  r->cg = cg;
  return 0;
}

#define CG_RETRY_MS 20
#define CG_RETRIES 50

// Kills what is left in each busy cgroup and tries rmdir again; gives up on
// one (the directory stays, empty of capsa's renderer) after CG_RETRIES, or
// at once when `final` (the host is closing).
static void cg_busy_sweep(struct capsa__host_impl *h, bool final) {
  unsigned kept = 0;
  for (unsigned i = 0; i < h->ncg_busy; i++) {
    capsa_cgroup_t *cg = h->cg_busy[i];
    capsa_cgroup_kill(cg);
    if (capsa_cgroup_remove(cg) == -EBUSY && !final &&
        h->cg_busy_tries[i] + 1 < CG_RETRIES) {
      h->cg_busy_tries[kept] = h->cg_busy_tries[i] + 1;
      h->cg_busy[kept++] = cg;
      continue;
    }
    capsa_cgroup_free(cg);
  }
  h->ncg_busy = kept;
}

static void group_busy_sweep(struct capsa__host_impl *h, bool final);

// Reaps the detached dying renderers that have exited (all of them, waiting,
// when `final`: they were SIGKILLed, so that takes milliseconds).
static void dying_sweep(struct capsa__host_impl *h, bool final) {
  unsigned kept = 0;
  for (unsigned i = 0; i < h->ndying; i++) {
    int fd = h->dying_pidfd[i];
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rc;
    if (final) {
      rc = wait_exit(fd, &si);
    } else {
      do {
        rc = waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG);
      } while (rc < 0 && errno == EINTR);
      // Non-blocking (a polled pidfd) and not yet exited: as WNOHANG's 0.
      if (rc < 0 && errno == EAGAIN) rc = 0, si.si_pid = 0;
    }
    if (rc == 0 && si.si_pid == 0) {  // still exiting
      h->dying_pidfd[kept++] = fd;
      continue;
    }
    close(fd);  // reaped, or not ours to reap (ECHILD: its group's sweep)
  }
  h->ndying = kept;
}

static void on_busy_retry(uv_timer_t *t) {
  struct capsa__host_impl *h = t->data;
  dying_sweep(h, false);
  cg_busy_sweep(h, false);
  group_busy_sweep(h, false);
  if (h->ncg_busy == 0 && h->ngroup_busy == 0 && h->ndying == 0)
    uv_timer_stop(&h->closer);
}

static void busy_retry_start(struct capsa__host_impl *h) {
  if (!uv_is_active((uv_handle_t *)&h->closer))
    uv_timer_start(&h->closer, on_busy_retry, CG_RETRY_MS, CG_RETRY_MS);
}

// Removes the incarnation's cgroup (its renderer was reaped). A descendant
// just killed may keep it busy a moment: once more when the handles are
// closed (last_try), then from a timer for about a second.
static void limits_release(struct capsa_host_renderer *r, bool last_try) {
  if (!r->cg) return;
  struct capsa__host_impl *h = r->h;
  if (capsa_cgroup_remove(r->cg) == -EBUSY) {
    if (!last_try) return;
    if (h->ncg_busy < CAPSA__CG_BUSY_MAX) {
      h->cg_busy_tries[h->ncg_busy] = 0;
      h->cg_busy[h->ncg_busy++] = r->cg;
      r->cg = NULL;
      busy_retry_start(h);
      return;
    }
  }
  capsa_cgroup_free(r->cg);
  r->cg = NULL;
}

// Which limit ended this incarnation, if one did: the kernel's cgroup
// counters, else a memory-limited kind's own NOMEM exit (its word, see
// host/capsa_host.h). Empties and removes the cgroup.
static const char *limit_reached(struct capsa_host_renderer *r) {
  const siginfo_t *si = &r->exit_info;
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  bool exited = si->si_code == CLD_EXITED;
  const char *what = NULL;
  bool cg_memory = false;
  if (r->cg) {
    cg_memory = k->limit_memory != CAPSA_LIMIT_NONE;
    capsa_cgroup_events_t e;
    if (capsa_cgroup_events(r->cg, &e) == 0) {
      if (e.oom_kill > 0)
        what = "memory (cgroup memory.max)";
      else if (e.pids_max > 0 && !(exited && si->si_status == 0))
        what = "processes (cgroup pids.max)";
      // A descendant outliving the renderer dies with it.
      if (e.populated != 0) capsa_cgroup_kill(r->cg);
    }
    limits_release(r, false);
  }
  if (!what && exited && si->si_status == CAPSA_HOST_EXIT_NOMEM &&
      k->limit_memory != CAPSA_LIMIT_NONE)
    what = cg_memory ? "memory (reported by the renderer)"
                     : "memory (RLIMIT_AS; reported by the renderer)";
  return what;
}

// CRASHED / ABORTED with the renderer's crash report when it wrote one
// for this signal (host/crash_report.h), symbolised with the image the
// zygote execs (the host's own running image for a forked zygote).
static void emit_crash(struct capsa_host_renderer *r,
                       capsa_host_event_type_t type, int status, int sig,
                       const char *text) {
  int image = r->h->exe_fd >= 0 ? r->h->exe_fd : capsa__exe_fd();
  emit_report(r, type, status, sig, text,
              capsa__crash_report(r->crash, sig, image));
}

// Reports how the renderer ended (unless we killed it: that was reported
// then) and closes everything. Once per incarnation.
static void finish_exit(struct capsa_host_renderer *r) {
  if (r->state == R_DYING || r->reporting_end) return;
  r->reporting_end = true;  // until teardown: the callbacks below may call in
  capsa__stderr_drain(r);   // its last words before how it ended
  // What waited on it learns first; then how it ended.
  capsa_channel_cancel_requests(&r->ch);
  const siginfo_t *si = &r->exit_info;
  const char *limit = limit_reached(r);
  bool pid1 = r->h->zkinds[r->kind].pid_namespace;
  if (!r->kill_reason) {
    if (limit) {
      bool exited = si->si_code == CLD_EXITED;
      emit_simple(r, CAPSA_EV_LIMIT, exited ? si->si_status : 0,
                  exited ? 0 : si->si_status, limit);
    } else if (si->si_code == CLD_EXITED &&
               si->si_status == CAPSA__EXIT_CPU_LIMIT &&
               r->h->kinds[r->kind].limit_cpu_seconds != CAPSA_LIMIT_NONE) {
      emit_simple(r, CAPSA_EV_LIMIT, si->si_status, SIGXCPU,
                  "cpu time (RLIMIT_CPU)");
    } else if (si->si_code == CLD_EXITED &&
               si->si_status == CAPSA__EXIT_ABORTED && pid1) {
      emit_crash(r, CAPSA_EV_ABORTED, si->si_status, SIGABRT,
                 "abort() (SIGABRT, caught as pid 1 of its namespace)");
    } else if (si->si_code == CLD_EXITED && si->si_status == 0 &&
               r->shutdown_asked) {
      emit_simple(r, CAPSA_EV_SHUTDOWN, 0, 0, NULL);
    } else if (si->si_code == CLD_EXITED) {
      emit_simple(r, CAPSA_EV_EXITED, si->si_status, 0, NULL);
      if (si->si_status == 0) r->no_restart = true;
    } else if (si->si_status == SIGABRT) {
      emit_crash(r, CAPSA_EV_ABORTED, 0, SIGABRT, "abort() (SIGABRT)");
    } else if (si->si_status == SIGXCPU) {
      // RLIMIT_CPU: the soft limit's SIGXCPU (the hard limit is one second
      // later, see host/zygote.c).
      emit_simple(r, CAPSA_EV_LIMIT, 0, si->si_status, "cpu time (RLIMIT_CPU)");
    } else {
      char what[64];
      snprintf(what, sizeof what, "signal %d (%s)", si->si_status,
               sigabbrev_np(si->si_status) ? sigabbrev_np(si->si_status) : "?");
      emit_crash(r, CAPSA_EV_CRASHED, 0, si->si_status, what);
    }
  }
  teardown(r);
}

static void on_drain_deadline(uv_timer_t *t) {
  finish_exit(t->data);
}

// The pidfd became readable: the renderer exited. Reap it; report the exit
// after the messages it sent before exiting (still in the socket) have been
// delivered: nothing a renderer said is lost. A descendant holding the
// channel open cannot delay the report past DRAIN_MS.
// Renderers without a pid namespace of their own lead a process group
// (setsid at fork). Their CLONE_PARENT children are the host's, with exit
// signal 0 (the renderer's own): no SIGCHLD, so reaped here, by group.
static bool group_kind(const struct capsa_host_renderer *r) {
  return !r->h->zkinds[r->kind].pid_namespace && r->pid > 0;
}

// Reaps our children in group `pgid`: true when none is left (ECHILD), false
// while some still run (killed, exiting). The group's id cannot be reused
// while a member exists, so retrying later reaps nobody else's process.
static bool reap_pgid(pid_t pgid) {
  for (int i = 0; i < 4096; i++) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PGID, (id_t)pgid, &si, WEXITED | WNOHANG | __WALL) < 0) {
      if (errno == EINTR) continue;
      return true;  // ECHILD: none of ours left in the group
    }
    if (si.si_pid == 0) return false;
  }
  return false;
}

static void group_busy_sweep(struct capsa__host_impl *h, bool final) {
  unsigned kept = 0;
  for (unsigned i = 0; i < h->ngroup_busy; i++) {
    pid_t g = h->group_busy[i];
    // Members remain (or reap_pgid would have dropped it): still ours.
    kill(-g, SIGKILL);
    bool gone = reap_pgid(g);
    // Closing: SIGKILLed processes exit within milliseconds; wait that
    // long, bounded, rather than leave zombies behind the freed host.
    for (int n = 0; final && !gone && n < 100; n++) {
      usleep(1000);
      gone = reap_pgid(g);
    }
    if (!gone && !final && h->group_busy_tries[i] + 1 < CG_RETRIES) {
      h->group_busy_tries[kept] = h->group_busy_tries[i] + 1;
      h->group_busy[kept++] = g;
    }
  }
  h->ngroup_busy = kept;
}

static void reap_group(struct capsa_host_renderer *r) {
  if (!group_kind(r)) return;
  struct capsa__host_impl *h = r->h;
  if (reap_pgid(r->pid)) return;
  for (unsigned i = 0; i < h->ngroup_busy; i++)
    if (h->group_busy[i] == r->pid) return;
  if (h->ngroup_busy == CAPSA__CG_BUSY_MAX) return;  // reaped at close
  h->group_busy_tries[h->ngroup_busy] = 0;
  h->group_busy[h->ngroup_busy++] = r->pid;
  busy_retry_start(h);
}

static void on_exit_poll(uv_poll_t *p, int status, int events) {
  struct capsa_host_renderer *r = p->data;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (group_kind(r)) {
    // Exited but not reaped: its pid, and so its group's id, cannot be
    // reused yet. Whatever stayed in the group dies with it.
    if (waitid((idtype_t)P_PIDFD, (id_t)r->pidfd, &si,
               WEXITED | WNOHANG | WNOWAIT) == 0 &&
        si.si_pid != 0)
      kill(-r->pid, SIGKILL);
    memset(&si, 0, sizeof si);
  }
  if (waitid((idtype_t)P_PIDFD, (id_t)r->pidfd, &si, WEXITED | WNOHANG) < 0) {
    if (errno == EINTR) return;
    si.si_code = CLD_KILLED;  // not ours to reap any more: treat as gone
  } else if (si.si_pid == 0) {
    return;  // not yet
  }
  uv_poll_stop(p);
  reap_group(r);
  r->exited = true;
  r->exit_info = si;
  // The host is closing: nothing it still sent will be served.
  if (r->kill_reason || r->peer_closed || r->h->closing) {
    finish_exit(r);
    return;
  }
  uv_timer_stop(&r->timer);
  uv_timer_start(&r->timer, on_drain_deadline, DRAIN_MS, 0);
}

static void on_linger(uv_timer_t *t) {
  struct capsa_host_renderer *r = t->data;
  if (r->state != R_DYING)
    syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
}

static bool unread_input(const struct capsa_host_renderer *r) {
  struct pollfd p = {.fd = r->chan_fd, .events = POLLIN};
  return r->chan_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void on_pong(capsa_channel_t *ch, int status, capsa_msg_t *reply,
                    void *arg) {
  struct capsa_host_renderer *r = ch->data;
  r->ping_outstanding = false;
  r->ping_excused = false;
  // Busy on a request with a deadline: PINGs wait behind it, and that
  // deadline, not the heartbeat, judges the renderer. A channel that
  // rested meanwhile had its messages held back by the host's share
  // (ipc/busy_share.h): the PONG may be among them, so the next heartbeat
  // asks again. A renderer that stops sending is judged once the host has
  // read what it sent (no more rests); one that floods stays held to its
  // share and its budgets.
  // Likewise while what it sent is still unread in its socket (however
  // the host came to be behind: a start-up allowance spent without rests,
  // a loop slowed by its other work, an emulated machine): its PONG may be
  // there too.
  bool held_back = r->ch.share.rests != r->ping_rests;
  if (status != -ETIMEDOUT || r->state != R_READY || r->deadline_requests)
    return;
  if (held_back || unread_input(r)) {
    // Excused: no new PING while its input stays unread (each would expire
    // in turn, and the channel remembers only the last 16 expired requests:
    // the late PONG to an older one would be a bad message).
    r->ping_excused = true;
    return;
  }
  kill_for(r, CAPSA_EV_HUNG, "no pong within the heartbeat timeout");
}

static void on_heartbeat(uv_timer_t *t) {
  struct capsa_host_renderer *r = t->data;
  if (capsa__cpu_budget_check(r)) return;  // host/cpu_budget.c
  if (r->state != R_READY || r->ping_outstanding || r->kill_reason ||
      r->deadline_requests > 0)
    return;
  // After an excused timeout: the next PING once what it sent is read.
  if (r->ping_excused && unread_input(r)) return;
  r->ping_excused = false;
  capsa_msg_t ping;
  capsa_msg_init(&ping, CAPSA_MSG_PING);
  ping.u.ping.seq = uv_now(r->h->loop);
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  int err = capsa_channel_request(&r->ch, &ping, k->heartbeat_timeout_ms,
                                  on_pong, NULL);
  if (err == 0) {
    r->ping_outstanding = true;
    r->ping_rests = r->ch.share.rests;
  } else if (err == -EPIPE) {
    // It can no longer be sent to (gone, or it shut its reading side):
    // what it sent is still read, and, as after a close, it is killed if it
    // has not exited within LINGER_MS (no heartbeat could judge it now).
    uv_timer_stop(&r->timer);
    uv_timer_start(&r->timer, on_linger, LINGER_MS, 0);
  }
}

static unsigned expected_namespaces(const struct capsa__host_impl *h,
                                    int kind) {
  unsigned ns = h->zygote.ns.applied;
  if (h->zkinds[kind].pid_namespace) ns |= CAPSA_NAMESPACE_PID;
  return ns;
}

static void on_hello(struct capsa_host_renderer *r, const capsa_msg_t *m) {
  // Already reaped (its HELLO read while draining): its pid may name
  // another process now, so there is nothing to check or serve; its exit is
  // what gets reported.
  if (r->exited) return;
  // It must speak its kind's interfaces, at their version: the same image
  // cannot differ, so a different list is a lie or a broken build.
  const capsa_kind_options_t *kind = &r->h->kinds[r->kind];
  uint64_t want = capsa_iface_list_hash(kind->interfaces, kind->ninterfaces);
  if (m->u.hello.interfaces_hash != want) {
    char why[512];
    char names[256];
    if (capsa_iface_list_names(kind->interfaces, kind->ninterfaces, names,
                               sizeof names) < 0)
      snprintf(names, sizeof names, "(%u interfaces)", kind->ninterfaces);
    char got[128];
    capsa__text_escape(
        m->u.hello.interfaces ? m->u.hello.interfaces : "",
        m->u.hello.interfaces ? strlen(m->u.hello.interfaces) : 0, got,
        sizeof got);
    snprintf(why, sizeof why,
             "hello: interfaces '%s' (version %016llx), the kind speaks "
             "'%s' (version %016llx)",
             got, (unsigned long long)m->u.hello.interfaces_hash, names,
             (unsigned long long)want);
    kill_for(r, CAPSA_EV_BAD_MESSAGE, why);
    return;
  }
  capsa_renderer_check_t check = r->check;
  int err = r->check_err;
  if (err == 0) err = capsa__check_status(r->pid, &check);
  if (err < 0) {
    snprintf(check.why, sizeof check.why, "cannot read /proc: %s",
             strerror(-err));
    check.ok = false;
  } else {
    capsa__check_verdict(&check);
    if (check.ok && !m->u.hello.sandbox.capmode) {
      snprintf(check.why, sizeof check.why,
               "renderer reports no capability mode");
      check.ok = false;
    } else if (check.ok && r->userns_of_zygote) {
      snprintf(check.why, sizeof check.why,
               "user namespace is the zygote's, not its own");
      check.ok = false;
    }
  }
  capsa_host_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.check = &check;
  ev.sandbox = &m->u.hello.sandbox;
  if (!check.ok) {
    r->no_restart = true;
    r->kill_reason = CAPSA_EV_SANDBOX_REFUSED;
    capsa_channel_stop(&r->ch);
    syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    ev.type = CAPSA_EV_SANDBOX_REFUSED;
    ev.text = check.why;
    capsa__emit(r, &ev);
    return;
  }
  r->state = R_READY;
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  if (k->heartbeat_ms)
    uv_timer_start(&r->timer, on_heartbeat, k->heartbeat_ms, k->heartbeat_ms);
  ev.type = CAPSA_EV_READY;
  capsa__emit(r, &ev);
}

static void on_message(capsa_channel_t *ch, capsa_msg_t *m) {
  struct capsa_host_renderer *r = ch->data;
  r->origin = m->origin;  // this incarnation's channel (the same every time)
  if (r->kill_reason || r->state == R_DYING || r->h->closing) return;
  if (r->state == R_STARTING) {
    // The channel's state machine admits only HELLO first.
    if (m->type == CAPSA_MSG_HELLO) on_hello(r, m);
    return;
  }
  switch (m->type) {
    case CAPSA_MSG_LOG: {
      capsa_host_event_t ev;
      memset(&ev, 0, sizeof ev);
      ev.type = CAPSA_EV_LOG;
      ev.status = (int)m->u.log.level;
      // Data, not terminal input: escaped and bounded (host/text.h).
      char safe[CAPSA__TEXT_MAX];
      const char *t = m->u.log.text ? m->u.log.text : "";
      size_t len = strlen(t);
      if (!capsa__budget_log_charge(r, len, uv_now(r->h->loop))) return;
      capsa__text_escape(t, len, safe, sizeof safe);
      ev.text = safe;
      capsa__emit(r, &ev);
      return;
    }
    case CAPSA_MSG_RESOURCE_REQUEST: {
      int err = capsa__broker_request(r, m);
      if (err < 0) {
        capsa_msg_t resp;
        capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
        resp.u.resource_response.status = err;
        capsa_channel_reply(&r->ch, m, &resp);
        capsa__budget_queue_check(r);  // error answers queue bytes too
      }
      return;
    }
    default: {
      capsa_host_event_t ev;
      memset(&ev, 0, sizeof ev);
      ev.type = CAPSA_EV_MESSAGE;
      ev.msg = m;
      capsa__emit(r, &ev);
      return;
    }
  }
}

static void on_channel_error(capsa_channel_t *ch, int err, const char *why) {
  struct capsa_host_renderer *r = ch->data;
  if (r->state == R_DYING) return;
  if (err == -EBADMSG) {
    kill_for(r, CAPSA_EV_BAD_MESSAGE, why ? why : "bad message");
    return;
  }
  // Our send failed (its queue could not be written): the host ends it,
  // and says why, rather than leave a renderer nothing can reach.
  if (err != -EPIPE && err != -ECONNRESET) {
    char text[CAPSA_IPC_REASON_MAX + 32];
    snprintf(text, sizeof text, "channel failed: %s",
             why && *why ? why : strerror(-err));
    kill_for(r, CAPSA_EV_KILLED, text);
    return;
  }
  // Peer closed: everything it sent has been delivered.
  r->peer_closed = true;
  if (r->exited) {
    finish_exit(r);
    return;
  }
  // It should exit now; make sure it does.
  uv_timer_stop(&r->timer);
  uv_timer_start(&r->timer, on_linger, LINGER_MS, 0);
}

// capsa_host_options_t.limit_renderer_processes as the zygote's rlimit.
static rlim_t nproc_total(const struct capsa__host_impl *h) {
  uint64_t n = h->opts.limit_renderer_processes;
  if (n == 0) return CAPSA__DEFAULT_RENDERER_PROCESSES;
  return n == CAPSA_LIMIT_NONE ? RLIM_INFINITY : (rlim_t)n;
}

static int start_zygote(struct capsa__host_impl *h) {
  int err =
      h->image_exec
          ? capsa__zygote_exec_start(
                &h->zygote, h->zkinds, h->nkinds, h->opts.namespaces_wanted,
                h->opts.namespaces_required, h->opts.empty_root, STDERR_FILENO,
                h->exe_fd >= 0 ? h->exe_fd : capsa__exe_fd(), h->exe_fd >= 0,
                nproc_total(h))
          : capsa__zygote_start(&h->zygote, h->zkinds, h->nkinds,
                                h->opts.namespaces_wanted,
                                h->opts.namespaces_required, h->opts.empty_root,
                                STDERR_FILENO, nproc_total(h));
  // Renderers of a staged zygote inherit its filters; the outside check
  // then wants one more, the renderer's final step.
  capsa_renderer_check_t z;
  memset(&z, 0, sizeof z);
  h->zygote_filters = -1;
  if (err < 0) return err;
  h->zygote_ns_err = capsa_ns_ids_of(h->zygote.pid, &h->zygote_ns);
  int serr = capsa__check_status(h->zygote.pid, &z);
  if (serr < 0 && (h->zygote.staged || h->zygote.baseline)) {
    // Fail closed: without the zygote's count, a renderer that never took
    // a step of its own would pass the outside check on inherited filters.
    capsa__zygote_stop(&h->zygote);
    return serr;
  }
  if (serr == 0) h->zygote_filters = z.seccomp_filters;
  h->zygote_forks = 0;
  for (unsigned k = 0; k < h->nkinds; k++) {
    int werr = h->zygote.warm_up[k];
    if (werr >= 0) continue;
    snprintf(h->start_error, sizeof h->start_error,
             werr == -ENOTUNIQ
                 ? "kind '%.64s': two warm-ups registered for the name "
                   "(CAPSA_RENDERER_WARM_UP): keep one"
                 : "kind '%.64s': its warm-up (CAPSA_RENDERER_WARM_UP) "
                   "failed in the zygote: %s",
             h->kinds[k].name, strerror(-werr));
    capsa__zygote_stop(&h->zygote);
    return werr;
  }
  return 0;
}

// The first half of the outside check, while the renderer starts: its
// namespaces were fixed by the zygote's clone (unshare and setns are
// refused in capability mode), so they need not wait for its HELLO.
static void prepare_check(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  capsa_renderer_check_t *c = &r->check;
  memset(c, 0, sizeof *c);
  c->ns_expected = expected_namespaces(h, r->kind);
  // Whatever the zygote holds (its stage, or its baseline when it cannot
  // stage), a renderer inherits: it must show one filter of its own more.
  // Known only when the kernel reports the count (then the zygote may take a
  // baseline at all, see host/zygote.c).
  if (h->zygote_filters >= 0) c->filters_expected = h->zygote_filters + 1;
  capsa_ns_ids ids;
  int err = h->self_ns_err;
  if (err == 0) err = capsa_ns_ids_of(r->pid, &ids);
  if (err == 0) c->ns_differ = capsa_ns_ids_differ(&ids, &h->self_ns);
  // Its processes are counted apart from its siblings' only in a user
  // namespace of its own (host/zygote.c fork_renderer).
  r->userns_of_zygote = false;
  if (err == 0 && h->zygote.own_userns == CAPSA__OWN_USERNS) {
    err = h->zygote_ns_err;
    const capsa_ns_ids *z = capsa__check_zygote_ns(&h->zygote_ns, &ids);
    if (err == 0)
      r->userns_of_zygote =
          !(capsa_ns_ids_differ(&ids, z) & CAPSA_NAMESPACE_USER);
  }
  r->check_err = err;
  // The OOM killer's first choice is a renderer, never its host.
  c->oom_score_adj = capsa__oom_score_raise(r->pid);
  if (c->oom_score_adj == 0) c->oom_score_adj = CAPSA__RENDERER_OOM_SCORE_ADJ;
}

// A new zygote in place of a dead one (its renderers are unaffected: they
// are our children, not its). Done from the loop thread; see
// capsa_host_start for why forking late is a risk when other threads exist:
// a child that inherits a held libc lock wedges, and the 5 s start timeout
// then fails the spawn instead of hanging the host.
static int restart_zygote(struct capsa__host_impl *h) {
  capsa__zygote_stop(&h->zygote);
  h->zygote_restarts++;
  return start_zygote(h);
}

// A renderer forked by the zygote (or its spare handed over), not yet
// attached to its handle: its pid and pidfd, its channel's host end and
// its stderr pipe's read end.
static int claim(struct capsa_host_renderer *r, struct capsa__claimed *out) {
  struct capsa__host_impl *h = r->h;
  if (h->zygote.kind_error[r->kind] < 0) return h->zygote.kind_error[r->kind];
  // opts.zygote_renew_after: a fresh exec, so a new canary and layout.
  unsigned renew = h->opts.zygote_renew_after;
  if (renew && h->zygote_forks >= renew) {
    capsa__zygote_stop(&h->zygote);
    int zerr = start_zygote(h);
    if (zerr < 0) return zerr;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -errno;
  struct capsa_ns_child c;
  int spare_chan = -1, err_fd = -1;
  int err = capsa__zygote_fork(&h->zygote, (unsigned)r->kind, sv[1], &c,
                               &spare_chan, &err_fd);
  if (err == -EPIPE || err == -ECONNRESET || err == -ETIMEDOUT ||
      err == -EPROTO) {
    // The zygote is gone or wedged: replace it once and retry.
    if (restart_zygote(h) == 0)
      err = capsa__zygote_fork(&h->zygote, (unsigned)r->kind, sv[1], &c,
                               &spare_chan, &err_fd);
  }
  close(sv[1]);
  if (err < 0) {
    close(sv[0]);
    return err;
  }
  h->zygote_forks++;
  if (spare_chan >= 0) {  // a spare renderer: its own channel, not ours
    close(sv[0]);
    sv[0] = spare_chan;
  }
  *out = (struct capsa__claimed){
      .valid = true, .child = c, .chan = sv[0], .err_fd = err_fd};
  return 0;
}

// Not waited for when the dying list has room (as detach_dying): killed,
// it exits on its own time and is reaped by the retry timer.
static void claimed_discard(struct capsa__host_impl *h,
                            struct capsa__claimed *c) {
  if (!c->valid) return;
  c->valid = false;
  close(c->chan);
  close(c->err_fd);
  if (h->ndying == CAPSA__CG_BUSY_MAX) {
    launch_failed_cleanup(c->child.pidfd);
    return;
  }
  syscall(SYS_pidfd_send_signal, c->child.pidfd, SIGKILL, NULL, 0);
  h->dying_pidfd[h->ndying++] = c->child.pidfd;
  busy_retry_start(h);
}

// Takes r's claimed next process off it.
static struct capsa__claimed claimed_take(struct capsa_host_renderer *r) {
  struct capsa__claimed c = r->next_claim;
  r->next_claim.valid = false;
  return c;
}

// A navigation claims the next renderer at once, while the old one exits
// (it was killed; its handles close on the loop): the new one then starts,
// says HELLO and waits in its socket meanwhile. Not where a cgroup would
// have to hold it from its fork on (cgroups in use and no spare: its
// rlimits were dropped for the cgroup, host/host.c limits_setup), and not
// when a claim failed: launch forks then, as for any restart.
static void claim_ahead(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  const capsa_kind_options_t *k = &h->kinds[r->kind];
  if (r->next_claim.valid ||
      (h->cg_active && !k->keep_spare &&
       (kind_controllers(k) || h->opts.cgroups == CAPSA_CGROUPS_REQUIRED)))
    return;
  if (claim(r, &r->next_claim) < 0) r->next_claim.valid = false;
}

static int launch(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  struct capsa__claimed cl;
  if (r->next_claim.valid) {
    cl = claimed_take(r);
  } else {
    int cerr = claim(r, &cl);
    if (cerr < 0) return cerr;
  }
  struct capsa_ns_child c = cl.child;
  int sv[2] = {cl.chan, -1};
  int err_fd = cl.err_fd;
  int err;
  err = limits_enter(r, c.pid);
  if (err < 0) {
    close(sv[0]);
    close(err_fd);
    launch_failed_cleanup(c.pidfd);
    return err;
  }
  const capsa_kind_options_t *k = &h->kinds[r->kind];
  capsa_channel_options_t co = {
      .peer = CAPSA_PEER_RENDERER,
      .max_busy_percent = k->host_share_percent,  // 100: no cap
      // HELLO, READY and the first requests of a new incarnation (a
      // navigation's) are not held back by the share: host_internal.h.
      .startup_free_messages = CAPSA__STARTUP_FREE_MESSAGES,
      .startup_free_ms = CAPSA__STARTUP_FREE_MS,
      .interfaces = k->interfaces,
      .ninterfaces = k->ninterfaces};
  err = capsa_channel_init(h->loop, &r->ch, sv[0], &co);
  if (err < 0) {
    close(sv[0]);
    close(err_fd);
    launch_failed_cleanup(c.pidfd);
    limits_release(r, true);
    return err;
  }
  r->ch.data = r;
  r->chan_fd = sv[0];  // the channel's now: only looked at (on_pong)
  r->origin = 0;       // until its first message: nothing of it to answer yet
  r->pidfd = c.pidfd;
  r->pid = c.pid;
  r->state = R_STARTING;
  r->kill_reason = 0;
  r->shutdown_asked = false;
  r->deadline_requests = 0;
  r->ping_outstanding = false;
  r->ping_excused = false;
  r->exited = false;
  r->peer_closed = false;
  r->reporting_end = false;
  capsa__budget_log_reset(r, uv_now(h->loop));
  capsa_channel_start(&r->ch, on_message, on_channel_error);
  uv_poll_init(h->loop, &r->exit_poll, r->pidfd);
  r->exit_poll.data = r;
  uv_poll_start(&r->exit_poll, UV_READABLE, on_exit_poll);
  // The channel, the exit poll and (when it could be watched) stderr's.
  r->open_handles = 2 + capsa__stderr_start(r, err_fd);
  prepare_check(r);
  return 0;
}

static void finish_close(struct capsa__host_impl *h);

static void on_timer_closed(uv_handle_t *hd) {
  struct capsa_host_renderer *r = hd->data;
  struct capsa__host_impl *h = r->h;
  emit_simple(r, CAPSA_EV_CLOSED, 0, 0, NULL);
  for (struct capsa_host_renderer **pp = &h->renderers; *pp;
       pp = &(*pp)->next) {
    if (*pp == r) {
      *pp = r->next;
      break;
    }
  }
  h->live--;
  r->closing = true;
  maybe_free(r);
  if (h->closing && h->live == 0) finish_close(h);
}

static void maybe_free(struct capsa_host_renderer *r) {
  if (r->closing && r->pending == 0) free(r);
}

void capsa__renderer_unpend(struct capsa_host_renderer *r) {
  r->pending--;
  maybe_free(r);
}

#define BACKOFF_CAP_MS 30000u

// The handle's last step: CLOSED follows, nothing can start it again.
static void claimed_discard(struct capsa__host_impl *h,
                            struct capsa__claimed *c);
static void close_handle(struct capsa_host_renderer *r) {
  r->no_restart = true;
  r->navigating = false;
  // Claimed for a navigation that is not to be.
  struct capsa__claimed next = claimed_take(r);
  claimed_discard(r->h, &next);
  uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

static void relaunch(struct capsa_host_renderer *r, const char *why) {
  int err = launch(r);
  if (err == 0) {
    emit_simple(r, CAPSA_EV_RESTARTED, (int)r->restarts, 0, why);
    return;
  }
  emit_simple(r, CAPSA_EV_SPAWN_FAILED, err, 0, strerror(-err));
  close_handle(r);
}

static void on_backoff_done(uv_timer_t *t) {
  struct capsa_host_renderer *r = t->data;
  r->backing_off = false;
  if (r->no_restart || r->h->closing)
    close_handle(r);
  else
    relaunch(r, NULL);
}

// Ends a backoff without restarting (killed, host closing): CLOSED follows.
static void cancel_backoff(struct capsa_host_renderer *r) {
  if (!r->backing_off) return;
  r->backing_off = false;
  uv_timer_stop(&r->timer);
  close_handle(r);
}

// The n-th restart of a window waits restart_backoff_ms * 2^(n-1), capped.
static uint64_t backoff_ms(const capsa_kind_options_t *k, unsigned n) {
  uint64_t d = k->restart_backoff_ms;
  for (unsigned i = 1; i < n && d < BACKOFF_CAP_MS; i++) d *= 2;
  return d < BACKOFF_CAP_MS ? d : BACKOFF_CAP_MS;
}

static void after_incarnation(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  const capsa_kind_options_t *k = &h->kinds[r->kind];
  uint64_t now = uv_now(h->loop);
  if (k->restart_window_ms && r->window_restarts > 0 &&
      now - r->window_start_ms >= k->restart_window_ms)
    r->window_restarts = 0;  // a new window: the old restarts are forgiven
  if (r->navigating && !r->no_restart && !h->closing) {
    // The embedder's navigation: at once, and not a crash to budget for.
    r->navigating = false;
    r->navigations++;
    relaunch(r, "navigation");
    return;
  }
  r->navigating = false;
  if (!r->no_restart && !h->closing && r->window_restarts < k->max_restarts) {
    if (r->window_restarts == 0) r->window_start_ms = now;
    r->window_restarts++;
    r->restarts++;
    uint64_t wait = backoff_ms(k, r->window_restarts);
    if (wait == 0) {
      relaunch(r, NULL);
      return;
    }
    r->backing_off = true;
    uv_timer_start(&r->timer, on_backoff_done, wait, 0);
    return;
  }
  close_handle(r);
}

// --- public API ---------------------------------------------------------

int capsa_host_init(uv_loop_t *loop, capsa_host_t *host,
                    const capsa_host_options_t *opts, capsa_host_event_cb cb) {
  if (!loop || !host) return -EINVAL;
  struct capsa__host_impl *h = calloc(1, sizeof *h);
  if (!h) return -ENOMEM;
  h->pub = host;
  h->loop = loop;
  h->cb = cb;
  if (opts)
    h->opts = *opts;
  else
    capsa_host_options_init(&h->opts);
  if (h->opts.namespaces_required & ~h->opts.namespaces_wanted) {
    free(h);
    return -EINVAL;
  }
  h->zygote.sock = -1;
  h->zygote.pidfd = -1;
  h->exe_fd = -1;
  for (int i = 0; i < CAPSA__FONTS; i++) h->fonts[i].fd = -1;
  uv_timer_init(loop, &h->closer);
  h->closer.data = h;
  host->impl = h;
  return 0;
}

int capsa_host_define_kind(capsa_host_t *host, const capsa_kind_options_t *k) {
  if (!host || !host->impl || !k || !k->name) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  // With a renderer executable the kind is its registration of the name
  // (host/kind_registry.h): an entry of the host's would be a pointer into
  // another image, so one given is a mistake, not a choice.
  bool exe = h->opts.renderer_exe != NULL;
  if (exe ? (k->main || k->arg) : !k->main) {
    snprintf(h->start_error, sizeof h->start_error,
             exe ? "kind '%.64s': with renderer_exe a kind is the "
                   "executable's registration of its name: main and arg "
                   "must be NULL"
                 : "kind '%.64s': main is NULL (only a host with "
                   "renderer_exe defines a kind by its name alone)",
             k->name);
    return -EINVAL;
  }
  if (h->started) return -EBUSY;
  if (h->nkinds == CAPSA__MAX_KINDS) return -ENOSPC;
  if (k->heartbeat_ms && k->heartbeat_timeout_ms == 0) return -EINVAL;
  if (k->host_share_percent > 100) {
    snprintf(h->start_error, sizeof h->start_error,
             "kind '%.64s': host_share_percent %u is above 100", k->name,
             k->host_share_percent);
    return -EINVAL;
  }
  // A name registered with CAPSA_RENDERER_KIND (host/kind_registry.h) is
  // what an exec'd zygote will run under that name: options naming another
  // entry or argument would be a kind that silently runs different code.
  const capsa_kind_registration_t *reg =
      exe ? NULL : capsa_kind_lookup(k->name);
  if (reg && (reg->main != k->main || reg->arg != k->arg)) {
    snprintf(h->start_error, sizeof h->start_error,
             "kind '%.64s': main or arg differ from its CAPSA_RENDERER_KIND "
             "registration",
             k->name);
    return -ENOENT;
  }
  if (k->ninterfaces > CAPSA_IFACE_MAX_PER_CHANNEL ||
      (k->ninterfaces && !k->interfaces))
    return -EINVAL;
  for (unsigned i = 0; i < k->ninterfaces; i++) {
    char why[CAPSA_IPC_REASON_MAX];
    if (capsa_iface_check_descriptor(k->interfaces[i], why, sizeof why) < 0) {
      snprintf(h->start_error, sizeof h->start_error,
               "kind '%.64s': interface %u: %s", k->name, i, why);
      return -EINVAL;
    }
  }
  if (k->nwarm_up_fds > CAPSA_WARM_UP_MAX_FDS) {
    snprintf(h->start_error, sizeof h->start_error,
             "kind '%.64s': nwarm_up_fds %u is above CAPSA_WARM_UP_MAX_FDS "
             "(%d)",
             k->name, k->nwarm_up_fds, CAPSA_WARM_UP_MAX_FDS);
    return -EINVAL;
  }
  for (unsigned i = 0; i < k->nwarm_up_fds; i++) {
    if (k->warm_up_fds[i] < 0 || fcntl(k->warm_up_fds[i], F_GETFD) < 0) {
      snprintf(h->start_error, sizeof h->start_error,
               "kind '%.64s': warm_up_fds[%u] (%d) is not an open descriptor",
               k->name, i, k->warm_up_fds[i]);
      return -EBADF;
    }
  }
  capsa_kind_options_t *c = &h->kinds[h->nkinds];
  *c = *k;
  // 0 is the default, never "no limit" (that is CAPSA_LIMIT_NONE).
  capsa_kind_options_t d;
  capsa_kind_options_init(&d, k->name, k->main, k->arg);
  uint64_t *mine[] = {
      &c->limit_memory,          &c->limit_cpu_seconds,
      &c->limit_open_files,      &c->limit_processes,
      &c->limit_broker_requests, &c->limit_queued_fds,
      &c->limit_queued_bytes,    &c->limit_log_bytes_per_second};
  const uint64_t defaults[] = {
      d.limit_memory,       d.limit_cpu_seconds,         d.limit_open_files,
      d.limit_processes,    d.limit_broker_requests,     d.limit_queued_fds,
      d.limit_queued_bytes, d.limit_log_bytes_per_second};
  for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
    if (*mine[i] == 0) *mine[i] = defaults[i];
  if (c->host_share_percent == 0) c->host_share_percent = d.host_share_percent;
  return (int)h->nkinds++;
}

// The error of a start that failed because required namespaces are
// missing: each with the kernel's errno and, when a sysctl says, why.
static void required_missing(struct capsa__host_impl *h, unsigned missing) {
  struct capsa_ns_report rep;
  capsa_ns_available_report(&rep);
  size_t n = (size_t)snprintf(h->start_error, sizeof h->start_error,
                              "required namespaces refused:");
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT && n < sizeof h->start_error; i++) {
    unsigned bit = 1u << i;
    if (!(missing & bit)) continue;
    const char *e = rep.ns_error[i] ? strerrorname_np(-rep.ns_error[i]) : "?";
    const char *why =
        bit == CAPSA_NAMESPACE_USER ? rep.user_why
        : !(rep.applied & CAPSA_NAMESPACE_USER) && rep.ns_error[i] == -EPERM
            ? "no-userns"
            : "";
    n += (size_t)snprintf(h->start_error + n, sizeof h->start_error - n,
                          " %s=no(%s%s%s)", capsa_namespace_name(bit), e,
                          why[0] ? ":" : "", why);
  }
}

static int start_failed(struct capsa__host_impl *h, const char *what, int err) {
  if (!h->start_error[0])
    snprintf(h->start_error, sizeof h->start_error, "%s: %s", what,
             strerror(-err));
  return err;
}

// Whether the zygote can be a fresh exec of this binary (h->image_exec) and
// what capsa_host_image() then says.
static void image_choose(struct capsa__host_impl *h) {
  h->image_exec = capsa_main_called() && capsa__exe_fd() >= 0;
  if (!h->image_exec)
    snprintf(h->image, sizeof h->image, "fork: capsa_main() was not called");
  for (unsigned i = 0; h->image_exec && i < h->nkinds; i++) {
    if (capsa_kind_lookup(h->kinds[i].name)) continue;
    h->image_exec = false;
    snprintf(h->image, sizeof h->image,
             "fork: kind '%.64s' is not registered with CAPSA_RENDERER_KIND",
             h->kinds[i].name);
  }
  if (h->image_exec) snprintf(h->image, sizeof h->image, "exec");
}

int capsa_host_start(capsa_host_t *host) {
  if (!host || !host->impl) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  if (h->started) return -EBUSY;
  h->start_error[0] = 0;
  // In a pid namespace whose /proc is the outer one, /proc/<pid> of a child
  // names another process: the uid_map write would fail with a bare EPERM
  // (or reach that other process). Say so, with the fix, before anything.
  int perr = capsa_proc_view_check(h->start_error, sizeof h->start_error);
  if (perr < 0) return perr;
  // Probe before anything is sandboxed: the zygote inherits the caches. The
  // namespaces first: the features then take their user-namespace verdict
  // from this probe instead of a child of their own.
  unsigned avail = capsa_ns_available();
  capsa_features_get();
  unsigned missing = h->opts.namespaces_required & ~avail;
  if (missing) {
    required_missing(h, missing);
    return -EPERM;
  }
  // A fresh image when it can run every kind: the embedder's renderer
  // executable (its zygote reports its kinds once started), or this binary
  // when it is open (capsa_main) and each kind is found by name in it.
  if (h->opts.renderer_exe) {
    int eerr = capsa__renderer_exe_open(h);
    if (eerr < 0) return eerr;
    h->image_exec = true;
    snprintf(h->image, sizeof h->image, "exec: %.128s", h->opts.renderer_exe);
  } else {
    image_choose(h);
  }
  for (unsigned i = 0; i < h->nkinds; i++) {
    const capsa_kind_options_t *k = &h->kinds[i];
    struct capsa__zygote_kind *z = &h->zkinds[i];
    memset(z, 0, sizeof *z);
    z->name = k->name;
    z->main = k->main;
    z->arg = k->arg;
    if (!k->no_capmode) {
      z->capmode = k->capmode;
      if (!z->capmode) {
        h->own_policy[i] = capsa_capmode_policy_new();
        if (!h->own_policy[i]) return -ENOMEM;
        z->capmode = h->own_policy[i];
      }
    }
    z->keep_spare = k->keep_spare;
    z->pid_namespace = k->pid_namespace &&
                       (h->opts.namespaces_wanted & CAPSA_NAMESPACE_PID) &&
                       (avail & CAPSA_NAMESPACE_PID);
    z->limit_as = zygote_limit(k->limit_memory);
    z->limit_cpu = zygote_limit(k->limit_cpu_seconds);
    z->limit_nofile = zygote_limit(k->limit_open_files);
    z->limit_nproc = zygote_limit(k->limit_processes);
    z->nwarm = k->nwarm_up_fds;
    memcpy(z->warm_fds, k->warm_up_fds, sizeof z->warm_fds);
  }
  if (!h->image_exec && !h->opts.allow_forked_zygote) {
    snprintf(h->start_error, sizeof h->start_error,
             "renderers would descend from a %s (call capsa_main() first in "
             "main() and register every kind; or set allow_forked_zygote)",
             h->image);
    h->image[0] = 0;
    return -ENOEXEC;
  }
  if (h->opts.zygote_renew_after && !h->image_exec) {
    snprintf(h->start_error, sizeof h->start_error,
             "zygote_renew_after needs an exec'd zygote (capsa_main() or "
             "renderer_exe): renderers of a %s always have the host's "
             "canary and layout",
             h->image);
    return -EINVAL;
  }
  // Which numbers libuv's fork handler replaces, so that renderers can keep
  // their own descriptors off them (host/fork_guard.h). Best effort: without
  // it only a renderer's fork() children are affected, never the renderer.
  // Only a forked zygote inherits the numbers (and the handler): an exec'd
  // image starts without either, so its host has nothing to learn.
  if (!h->image_exec) capsa__fork_guard_probe();
  int lerr = limits_setup(h);
  if (lerr < 0) {
    snprintf(h->start_error, sizeof h->start_error, "cgroups required: %s",
             h->limits_why);
    return lerr;
  }
  int err = h->dns_async_inited ? 0 : capsa__broker_start(h);
  if (err < 0) return start_failed(h, "broker threads", err);
  err = capsa__broker_load_fonts(h);
  if (err < 0) return start_failed(h, "fonts", err);
  h->self_ns_err = capsa_ns_ids_of(0, &h->self_ns);
  err = start_zygote(h);
  if (h->exe_fd >= 0) err = capsa__renderer_exe_verdict(h, err);
  if (err < 0) {
    capsa__broker_free_fonts(h);
    return start_failed(h, "zygote", err);
  }
  h->started = true;
  h->orphans = capsa__orphans_start(h->loop);
  return 0;
}

int capsa_host_spawn(capsa_host_t *host, int kind, void *data,
                     capsa_renderer_t **out) {
  if (!host || !host->impl || !out) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  if (!h->started || h->closing) return -EAGAIN;
  if (kind < 0 || (unsigned)kind >= h->nkinds) return -EINVAL;
  struct capsa_host_renderer *r = calloc(1, sizeof *r);
  if (!r) return -ENOMEM;
  r->h = h;
  r->kind = kind;
  r->data = data;
  r->pidfd = -1;
  r->chan_fd = -1;
  r->err_fd = -1;
  int err = launch(r);
  if (err < 0) {
    free(r);
    return err;
  }
  uv_timer_init(h->loop, &r->timer);
  r->timer.data = r;
  r->timer_inited = true;
  r->next = h->renderers;
  h->renderers = r;
  h->live++;
  *out = r;
  return 0;
}

static bool serving(const capsa_renderer_t *r) {
  return r && r->state == R_READY && !r->kill_reason;
}

// serving(r), remembering for capsa_renderer_send_error why not.
static bool can_send(capsa_renderer_t *r) {
  r->not_serving = !serving(r);
  return !r->not_serving;
}

const char *capsa_renderer_send_error(const capsa_renderer_t *r) {
  if (!r) return "";
  if (r->not_serving)
    return "the renderer is not READY (starting, restarting or ended): "
           "send after CAPSA_EV_READY";
  return capsa_channel_send_error(&r->ch);
}

int capsa_renderer_send(capsa_renderer_t *r, capsa_msg_t *msg) {
  if (!r || !msg) return -EINVAL;
  if (!can_send(r)) return -ENOTCONN;
  return capsa_channel_send(&r->ch, msg);
}

// One host request in flight: the embedder's callback, and whether its
// deadline stands in for the heartbeat.
struct host_request {
  struct capsa_host_renderer *r;
  capsa_renderer_reply_cb cb;
  void *arg;
  bool deadline;
};

static void on_request_done(capsa_channel_t *ch, int status, capsa_msg_t *reply,
                            void *arg) {
  (void)ch;
  struct host_request q = *(struct host_request *)arg;
  free(arg);
  struct capsa_host_renderer *r = q.r;
  if (q.deadline) r->deadline_requests--;
  q.cb((capsa_renderer_t *)r, status, reply, q.arg);
  if (status == -ETIMEDOUT && q.deadline &&
      !r->h->kinds[r->kind].keep_on_request_timeout && r->state == R_READY)
    kill_for(r, CAPSA_EV_KILLED, "request deadline");
  capsa__renderer_unpend(r);
}

int capsa_renderer_request(capsa_renderer_t *r, capsa_msg_t *msg,
                           uint64_t timeout_ms, capsa_renderer_reply_cb cb,
                           void *arg) {
  if (!r || !msg || !cb) return -EINVAL;
  if (!can_send(r)) return -ENOTCONN;
  struct host_request *q = malloc(sizeof *q);
  if (!q) return -ENOMEM;
  *q = (struct host_request){r, cb, arg, timeout_ms != 0};
  int err = capsa_channel_request(
      &r->ch, msg, timeout_ms ? timeout_ms : UINT64_MAX, on_request_done, q);
  if (err < 0) {
    free(q);
    return err;
  }
  r->pending++;
  if (q->deadline) r->deadline_requests++;
  return 0;
}

int capsa_renderer_reply(capsa_renderer_t *r, const capsa_msg_t *request,
                         capsa_msg_t *reply) {
  if (!r || !request || !reply) return -EINVAL;
  // Before READY: the incarnation that made the request may be gone while
  // the next one starts; that answer is stale, not merely early.
  if (request->origin == 0 || request->origin != r->origin) return -ESTALE;
  // Its incarnation is ending (killed, restarting, exited): the answer
  // could only reach the next one.
  if (!can_send(r)) return -ESTALE;
  return capsa_channel_reply(&r->ch, request, reply);
}

int capsa_renderer_kill(capsa_renderer_t *r) {
  if (!r) return -EINVAL;
  if (r->backing_off) {  // no process now: just no restart
    r->no_restart = true;
    cancel_backoff(r);
    return 0;
  }
  r->no_restart = true;  // also when it is already ending: no restart
  if (r->state == R_DYING || r->pidfd < 0 || r->reporting_end) return -ESRCH;
  if (r->kill_reason) return 0;  // already being killed, reported then
  kill_for(r, CAPSA_EV_KILLED, "killed by the host");
  return 0;
}

int capsa_renderer_report_bad_message(capsa_renderer_t *r, const char *reason) {
  if (!r) return -EINVAL;
  if (r->backing_off || r->state == R_DYING || r->pidfd < 0 || r->kill_reason ||
      r->reporting_end)
    return -ESRCH;
  char text[CAPSA_IPC_REASON_MAX];
  // The embedder's words, but they may quote the renderer's: data.
  const char *why = reason ? reason : "bad message";
  capsa__text_escape(why, strlen(why), text, sizeof text);
  kill_for(r, CAPSA_EV_BAD_MESSAGE, text);
  return 0;
}

int capsa_renderer_restart(capsa_renderer_t *r) {
  if (!r) return -EINVAL;
  if (r->state == R_DYING || r->pidfd < 0 || r->kill_reason) return -ESRCH;
  kill_for(r, CAPSA_EV_KILLED, "restart requested");
  return 0;
}

// A navigation does not wait for the killed process to exit (~0.3-1 ms
// here, tearing down its address space) before its successor is attached:
// its pidfd goes to the host's dying list (and its cgroup and process group
// to the busy lists, as after any end), and its handles close now. Its
// end was reported (KILLED); nothing of it is read any more. Only with
// room on every list: otherwise it ends the usual way.
static void detach_dying(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  if (r->exited || r->state == R_DYING || r->reporting_end || r->pidfd < 0 ||
      h->ndying == CAPSA__CG_BUSY_MAX ||
      (r->cg && h->ncg_busy == CAPSA__CG_BUSY_MAX) ||
      (group_kind(r) && h->ngroup_busy == CAPSA__CG_BUSY_MAX))
    return;
  uv_poll_stop(&r->exit_poll);
  h->dying_pidfd[h->ndying++] = r->pidfd;
  r->pidfd = -1;
  r->exited = true;
  busy_retry_start(h);
  teardown(r);  // on_handle_closed: its group and cgroup to the busy lists
}

int capsa_renderer_navigate(capsa_renderer_t *r) {
  if (!r) return -EINVAL;
  // Ending for good (killed, shut down, bad message) or the host closing:
  // CLOSED follows, nothing to navigate.
  if (r->no_restart || r->closing || r->h->closing) return -ESRCH;
  r->navigating = true;
  if (r->backing_off) {  // no process now: the next one starts at once
    r->backing_off = false;
    uv_timer_stop(&r->timer);
    after_incarnation(r);
    return 0;
  }
  // Already ending (crashed, killed for a limit, its end being reported):
  // the next incarnation starts when it is gone, as below.
  if (r->state == R_DYING || r->pidfd < 0 || r->kill_reason || r->reporting_end)
    return 0;
  kill_for(r, CAPSA_EV_KILLED, "navigation");
  claim_ahead(r);
  if (r->next_claim.valid) detach_dying(r);
  return 0;
}

static void on_shutdown_timeout(uv_timer_t *t) {
  kill_for(t->data, CAPSA_EV_KILLED, "no exit within the shutdown timeout");
}

int capsa_renderer_shutdown(capsa_renderer_t *r, uint64_t timeout_ms) {
  if (!r) return -EINVAL;
  if (!serving(r)) return -ENOTCONN;
  if (r->shutdown_asked) return 0;
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_SHUTDOWN);
  int err = capsa_channel_send(&r->ch, &m);
  if (err < 0) return err;
  r->shutdown_asked = true;
  r->no_restart = true;
  // The heartbeat's timer now keeps the shutdown's deadline.
  uv_timer_stop(&r->timer);
  uv_timer_start(&r->timer, on_shutdown_timeout, timeout_ms, 0);
  return 0;
}

void *capsa_renderer_get_data(const capsa_renderer_t *r) {
  return r ? r->data : NULL;
}
void capsa_renderer_set_data(capsa_renderer_t *r, void *data) {
  if (r) r->data = data;
}
pid_t capsa_renderer_pid(const capsa_renderer_t *r) {
  return r ? r->pid : -1;
}
int capsa_renderer_kind(const capsa_renderer_t *r) {
  return r ? r->kind : -1;
}
unsigned capsa_renderer_restarts(const capsa_renderer_t *r) {
  return r ? r->restarts : 0;
}
uint64_t capsa__renderer_rests_for_test(const capsa_renderer_t *r);
uint64_t capsa__renderer_rests_for_test(const capsa_renderer_t *r) {
  return r ? r->ch.share.rests : 0;
}
unsigned capsa_renderer_navigations(const capsa_renderer_t *r) {
  return r ? r->navigations : 0;
}

const char *capsa_host_image(const capsa_host_t *host) {
  if (!host || !host->impl || !host->impl->started) return "";
  return host->impl->image;
}

int capsa_host_sandbox_summary(const capsa_host_t *host, char *buf,
                               size_t len) {
  if (!host || !host->impl || (!buf && len)) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started) return -EAGAIN;
  struct capsa_ns_report rep = h->zygote.ns;
  // Renderers also get a pid namespace each when the kinds ask for it.
  bool pid = false;
  for (unsigned i = 0; i < h->nkinds; i++)
    if (h->zkinds[i].pid_namespace) pid = true;
  if (pid) rep.applied |= CAPSA_NAMESPACE_PID;
  rep.requested = h->opts.namespaces_wanted;
  // The zygote's launcher never asks for a pid namespace (each renderer
  // gets its own): a refused one has its errno from the probe.
  if (!(rep.applied & CAPSA_NAMESPACE_PID) &&
      (rep.requested & CAPSA_NAMESPACE_PID)) {
    struct capsa_ns_report avail;
    capsa_ns_available_report(&avail);
    rep.ns_error[1] = avail.ns_error[1];
  }
  char ns[256], line[300];
  capsa_ns_report_format(&rep, ns, sizeof ns);
  // Landlock as the kernel gives it (a kind's policy may still turn it off:
  // capsa_host_kind_report says per kind).
  int abi = capsa_features_get()->landlock_abi;
  if (abi > 0)
    snprintf(line, sizeof line, "%s landlock=abi%d", ns, abi);
  else
    snprintf(line, sizeof line, "%s landlock=no(kernel)", ns);
  // What the zygote itself (and so every renderer before its own policy)
  // is held to: the kinds' stage, the baseline, or only the above.
  if (h->zygote.staged)
    return snprintf(buf, len, "%s zygote=capmode-stage", line);
  if (h->zygote.baseline)
    return snprintf(buf, len, "%s zygote=baseline(%u refused)", line,
                    h->zygote.baseline);
  return snprintf(buf, len, "%s zygote=no-filter", line);
}

int capsa_host_limits_summary(const capsa_host_t *host, char *buf, size_t len) {
  if (!host || !host->impl || (!buf && len)) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started) return -EAGAIN;
  char san[256];  // RLIMIT_AS under a sanitizer (host/sanitizer_limits.h)
  capsa__sanitizer_limits_note(h, san, sizeof san);
  if (!h->cg_active) {
    // RLIMIT_NPROC is counted per user namespace and uid: per renderer only
    // when each has a user namespace of its own (host/zygote.c).
    char procs[96];
    if (h->zygote.own_userns == CAPSA__OWN_USERNS)
      snprintf(procs, sizeof procs, "per renderer (own user namespace)");
    else if (h->zygote.own_userns == CAPSA__OWN_USERNS_NONE)
      snprintf(procs, sizeof procs,
               "one count for all renderers (no user namespace)");
    else if (h->zygote.own_userns == CAPSA__OWN_USERNS_PER_UID)
      snprintf(procs, sizeof procs,
               "one count for all renderers (the kernel counts per uid)");
    else
      snprintf(procs, sizeof procs,
               "one count for all renderers (no user namespace each: %s)",
               strerrorname_np(-h->zygote.own_userns) ?: "?");
    return snprintf(buf, len, "limits: rlimits (cgroup v2: %s); processes %s%s",
                    h->limits_why, procs, san);
  }
  char names[64];
  capsa_cgroup_controllers_format(h->cg_controllers, names, sizeof names);
  return snprintf(buf, len, "limits: cgroup v2 (%s: %s)%s", h->cg_parent,
                  names[0] ? names : "no controllers", san);
}

const char *capsa_host_start_error(const capsa_host_t *host) {
  return host && host->impl ? host->impl->start_error : "";
}

pid_t capsa_host_zygote_pid(const capsa_host_t *host) {
  if (!host || !host->impl || !host->impl->started) return -1;
  return host->impl->zygote.pid;
}

unsigned capsa_host_zygote_restarts(const capsa_host_t *host) {
  return host && host->impl ? host->impl->zygote_restarts : 0;
}

int capsa_host_kind_report(const capsa_host_t *host, int kind,
                           struct capsa_capmode_report *out) {
  if (!host || !host->impl || !out) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started || kind < 0 || (unsigned)kind >= h->nkinds) return -EINVAL;
  if (!h->zkinds[kind].capmode) return -ENOENT;
  if (h->zygote.kind_error[kind] < 0) return h->zygote.kind_error[kind];
  *out = h->zygote.capmode[kind];
  return 0;
}

int capsa_host_kind_warm_up(const capsa_host_t *host, int kind) {
  if (!host || !host->impl) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started || kind < 0 || (unsigned)kind >= h->nkinds) return -EINVAL;
  return h->zygote.warm_up[kind];  // the zygote's own numbers are ours
}

static void on_closer_closed(uv_handle_t *hd) {
  struct capsa__host_impl *h = hd->data;
  capsa_host_t *host = h->pub;
  capsa_host_close_cb cb = h->close_cb;
  for (unsigned i = 0; i < h->nkinds; i++)
    capsa_capmode_policy_free(h->own_policy[i]);
  if (h->exe_fd >= 0) close(h->exe_fd);
  host->impl = NULL;
  free(h);
  if (cb) cb(host);
}

static void on_async_closed(uv_handle_t *hd) {
  struct capsa__host_impl *h = hd->data;
  uv_close((uv_handle_t *)&h->closer, on_closer_closed);
}

static void finish_close(struct capsa__host_impl *h) {
  dying_sweep(h, true);
  cg_busy_sweep(h, true);
  group_busy_sweep(h, true);
  uv_timer_stop(&h->closer);
  capsa__zygote_stop(&h->zygote);
  // After the zygote: what it left behind has landed here by now.
  capsa__orphans_stop(h->orphans);
  h->orphans = NULL;
  capsa__broker_free_fonts(h);
  // The closer last: its callback frees h (the async handle is in h).
  if (h->dns_async_inited)
    capsa__broker_close(h, on_async_closed);
  else
    uv_close((uv_handle_t *)&h->closer, on_closer_closed);
}

void capsa_host_close(capsa_host_t *host, capsa_host_close_cb cb) {
  if (!host || !host->impl) return;
  struct capsa__host_impl *h = host->impl;
  if (h->closing) return;
  h->closing = true;
  h->close_cb = cb;
  for (struct capsa_host_renderer *r = h->renderers, *next; r; r = next) {
    next = r->next;
    r->no_restart = true;
    if (r->backing_off) {
      cancel_backoff(r);
      continue;
    }
    // Nothing more is served, and what it queued with the broker is
    // dropped now, not when its exit is seen: the loop holds none of it.
    capsa_channel_stop(&r->ch);
    capsa__broker_cancel(r);
    if (r->state != R_DYING && r->pidfd >= 0) {
      if (!r->kill_reason && !r->exited)
        kill_for(r, CAPSA_EV_KILLED, "host closing");
      else
        syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    }
  }
  if (h->live == 0) finish_close(h);
}
