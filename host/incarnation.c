// The renderer state machine: one handle's incarnations, from launch
// (claimed from the zygote, put in its limits, its channel, exit poll and
// stderr watched) through READY (on the outside check's verdict) to its
// end (exit, crash, hang, limit, bad message, the embedder's kill), then
// restart with backoff, navigation, or close. The only code that ends a
// renderer: the helpers (host/limits/, host/broker/, host/heartbeat.c,
// host/renderer_stderr.c, host/sandbox_check.c) return verdicts, and this
// file acts on them.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/crash_report.h"
#include "host/host_internal.h"
#include "host/text.h"

// A renderer that closed its channel gets this long to exit by itself.
#define LINGER_MS 2000
// How long an exited renderer's remaining messages may take to arrive.
#define DRAIN_MS 250
#define BACKOFF_CAP_MS 30000u

static void finish_exit(struct capsa_host_renderer *r);
static void after_incarnation(struct capsa_host_renderer *r);

// A process never attached (a launch that failed, a claim discarded):
// killed, reaped, closed.
static void kill_unattached(int pidfd) {
  syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  siginfo_t si;
  (void)capsa__reaper_wait(pidfd, &si);
  close(pidfd);
}

// Kills r for `reason` (reported now, with `text`); its exit is then not
// reported again. Bad messages and refused sandboxes are never restarted.
void capsa__incarnation_end(struct capsa_host_renderer *r,
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
  capsa__emit_simple(r, reason, 0, SIGKILL, text);
  if (r->exited) finish_exit(r);  // already reaped: nothing left to wait for
}

void capsa__renderer_kill_for_limit(struct capsa_host_renderer *r,
                                    const char *budget) {
  capsa__incarnation_end(r, CAPSA_EV_LIMIT, budget);
}

int capsa__renderer_retire(struct capsa_host_renderer *r, const char *why) {
  r->no_restart = true;
  if (r->backing_off || r->state == R_DYING || r->pidfd < 0 || r->kill_reason ||
      r->reporting_end)
    return -ESRCH;  // ending already: its CLOSED (or RESTARTED) follows
  capsa__incarnation_end(r, CAPSA_EV_KILLED, why);
  return 0;
}

static void on_handle_closed(struct capsa_host_renderer *r) {
  if (--r->open_handles > 0) return;
  capsa__reaper_group(r);  // what was killed at its exit has died by now
  if (r->pidfd >= 0) close(r->pidfd);  // -1: detached (detach_dying)
  r->pidfd = -1;
  capsa__limits_release(r, true);
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

// CRASHED / ABORTED with the renderer's crash report when it wrote one
// for this signal (host/crash_report.h), symbolised with the image the
// zygote execs (the host's own running image for a forked zygote).
static void emit_crash(struct capsa_host_renderer *r,
                       capsa_host_event_type_t type, int status, int sig,
                       const char *text) {
  int image = r->h->exe_fd >= 0 ? r->h->exe_fd : capsa__exe_fd();
  capsa__emit_report(r, type, status, sig, text,
                     capsa__crash_report(r->err.crash, sig, image));
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
  int lstatus = 0, lsig = 0;
  const char *limit = capsa__limits_exit_verdict(r, &lstatus, &lsig);
  bool pid1 = r->h->zkinds[r->kind].pid_namespace;
  if (!r->kill_reason) {
    if (limit) {
      capsa__emit_simple(r, CAPSA_EV_LIMIT, lstatus, lsig, limit);
    } else if (si->si_code == CLD_EXITED &&
               si->si_status == CAPSA__EXIT_ABORTED && pid1) {
      emit_crash(r, CAPSA_EV_ABORTED, si->si_status, SIGABRT,
                 "abort() (SIGABRT, caught as pid 1 of its namespace)");
    } else if (si->si_code == CLD_EXITED && si->si_status == 0 &&
               r->shutdown_asked) {
      capsa__emit_simple(r, CAPSA_EV_SHUTDOWN, 0, 0, NULL);
    } else if (si->si_code == CLD_EXITED) {
      capsa__emit_simple(r, CAPSA_EV_EXITED, si->si_status, 0, NULL);
      if (si->si_status == 0) r->no_restart = true;
    } else if (si->si_status == SIGABRT) {
      emit_crash(r, CAPSA_EV_ABORTED, 0, SIGABRT, "abort() (SIGABRT)");
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
static void on_exit_poll(uv_poll_t *p, int status, int events) {
  struct capsa_host_renderer *r = p->data;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (capsa__reaper_group_kind(r)) {
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
  capsa__reaper_group(r);
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

static void on_pong(capsa_channel_t *ch, int status, capsa_msg_t *reply,
                    void *arg) {
  struct capsa_host_renderer *r = ch->data;
  const char *hung = capsa__heartbeat_pong_verdict(r, status);
  if (hung) capsa__incarnation_end(r, CAPSA_EV_HUNG, hung);
}

static void on_heartbeat(uv_timer_t *t) {
  struct capsa_host_renderer *r = t->data;
  const char *cpu = capsa__cpu_budget_verdict(r);  // host/limits/cpu_budget.c
  if (cpu) {
    capsa__incarnation_end(r, CAPSA_EV_LIMIT, cpu);
    return;
  }
  if (!capsa__heartbeat_due(r)) return;
  if (capsa__heartbeat_ping(r, on_pong) == -EPIPE) {
    // It can no longer be sent to (gone, or it shut its reading side):
    // what it sent is still read, and, as after a close, it is killed if it
    // has not exited within LINGER_MS (no heartbeat could judge it now).
    uv_timer_stop(&r->timer);
    uv_timer_start(&r->timer, on_linger, LINGER_MS, 0);
  }
}

static void on_hello(struct capsa_host_renderer *r, const capsa_msg_t *m) {
  // Already reaped (its HELLO read while draining): its pid may name
  // another process now, so there is nothing to check or serve; its exit is
  // what gets reported.
  if (r->exited) return;
  capsa_renderer_check_t check;
  char why[512];
  capsa_host_event_type_t verdict =
      capsa__check_hello(r, m, &check, why, sizeof why);
  if (verdict == CAPSA_EV_BAD_MESSAGE) {
    capsa__incarnation_end(r, CAPSA_EV_BAD_MESSAGE, why);
    return;
  }
  capsa_host_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.check = &check;
  ev.sandbox = &m->u.hello.sandbox;
  if (verdict == CAPSA_EV_SANDBOX_REFUSED) {
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
  char why[CAPSA__VERDICT_MAX];
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
      const char *over =
          capsa__budget_log_charge(r, len, uv_now(r->h->loop), why);
      if (over) {
        capsa__incarnation_end(r, CAPSA_EV_LIMIT, over);
        return;
      }
      capsa__text_escape(t, len, safe, sizeof safe);
      ev.text = safe;
      capsa__emit(r, &ev);
      return;
    }
    case CAPSA_MSG_RESOURCE_REQUEST: {
      const char *over = capsa__broker_serve(r, m, why);
      if (over) capsa__incarnation_end(r, CAPSA_EV_LIMIT, over);
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
    capsa__incarnation_end(r, CAPSA_EV_BAD_MESSAGE, why ? why : "bad message");
    return;
  }
  // Our send failed (its queue could not be written): the host ends it,
  // and says why, rather than leave a renderer nothing can reach.
  if (err != -EPIPE && err != -ECONNRESET) {
    char text[CAPSA_IPC_REASON_MAX + 32];
    snprintf(text, sizeof text, "channel failed: %s",
             why && *why ? why : strerror(-err));
    capsa__incarnation_end(r, CAPSA_EV_KILLED, text);
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

// Not waited for when the reaper's dying list has room (as detach_dying):
// killed, it exits on its own time and is reaped by the reaper's timer.
static void claimed_discard(struct capsa__host_impl *h,
                            struct capsa__claimed *c) {
  if (!c->valid) return;
  c->valid = false;
  close(c->chan);
  close(c->err_fd);
  syscall(SYS_pidfd_send_signal, c->child.pidfd, SIGKILL, NULL, 0);
  if (!capsa__reaper_add_dying(h, c->child.pidfd))
    kill_unattached(c->child.pidfd);
}

// A navigation claims the next renderer at once, while the old one exits
// (it was killed; its handles close on the loop): the new one then starts,
// says HELLO and waits in its socket meanwhile. Not where a cgroup would
// have to hold it from its fork on (cgroups in use and no spare: its
// rlimits were dropped for the cgroup, host/limits/cgroup.c), and not when
// a claim failed: launch forks then, as for any restart.
static void claim_ahead(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  const capsa_kind_options_t *k = &h->kinds[r->kind];
  if (r->next_claim.valid || (!k->keep_spare && capsa__limits_use_cgroup(h, k)))
    return;
  if (capsa__claim(r, &r->next_claim) < 0) r->next_claim.valid = false;
}

static int launch(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  struct capsa__claimed cl;
  if (r->next_claim.valid) {
    cl = capsa__claim_take(r);
  } else {
    int cerr = capsa__claim(r, &cl);
    if (cerr < 0) return cerr;
  }
  struct capsa_ns_child c = cl.child;
  int sv[2] = {cl.chan, -1};
  int err_fd = cl.err_fd;
  int err;
  err = capsa__limits_enter(r, c.pid);
  if (err < 0) {
    close(sv[0]);
    close(err_fd);
    kill_unattached(c.pidfd);
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
    kill_unattached(c.pidfd);
    capsa__limits_release(r, true);
    return err;
  }
  r->ch.data = r;
  r->chan_fd = sv[0];  // the channel's now: only looked at (heartbeat.c)
  r->origin = 0;       // until its first message: nothing of it to answer yet
  r->pidfd = c.pidfd;
  r->pid = c.pid;
  r->state = R_STARTING;
  r->kill_reason = 0;
  r->shutdown_asked = false;
  r->deadline_requests = 0;
  capsa__heartbeat_reset(r);
  r->exited = false;
  r->peer_closed = false;
  r->reporting_end = false;
  capsa__budget_log_reset(r, uv_now(h->loop));
  capsa_channel_start(&r->ch, on_message, on_channel_error);
  uv_poll_init(h->loop, &r->exit_poll, r->pidfd);
  r->exit_poll.data = r;
  uv_poll_start(&r->exit_poll, UV_READABLE, on_exit_poll);
  // The channel, the exit poll and (when it could be watched) stderr's.
  r->open_handles =
      2 + capsa__stderr_start(r, err_fd, capsa__renderer_kill_for_limit);
  capsa__check_prepare(r);
  return 0;
}

int capsa__incarnation_launch(struct capsa_host_renderer *r) {
  return launch(r);
}

static void maybe_free(struct capsa_host_renderer *r) {
  if (r->closing && r->pending == 0) free(r);
}

static void on_timer_closed(uv_handle_t *hd) {
  struct capsa_host_renderer *r = hd->data;
  struct capsa__host_impl *h = r->h;
  capsa__emit_simple(r, CAPSA_EV_CLOSED, 0, 0, NULL);
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
  if (h->closing && h->live == 0) capsa__host_finish_close(h);
}

// The handle's last step: CLOSED follows, nothing can start it again.
static void close_handle(struct capsa_host_renderer *r) {
  r->no_restart = true;
  r->navigating = false;
  // Claimed for a navigation that is not to be.
  struct capsa__claimed next = capsa__claim_take(r);
  claimed_discard(r->h, &next);
  uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

static void relaunch(struct capsa_host_renderer *r, const char *why) {
  int err = launch(r);
  if (err == 0) {
    capsa__emit_simple(r, CAPSA_EV_RESTARTED, (int)r->restarts, 0, why);
    return;
  }
  capsa__emit_simple(r, CAPSA_EV_SPAWN_FAILED, err, 0, strerror(-err));
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

// --- the embedder's transitions (host/capsa_host.h) -------------------------

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
  capsa__incarnation_end(r, CAPSA_EV_KILLED, "killed by the host");
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
  capsa__incarnation_end(r, CAPSA_EV_BAD_MESSAGE, text);
  return 0;
}

int capsa_renderer_restart(capsa_renderer_t *r) {
  if (!r) return -EINVAL;
  if (r->state == R_DYING || r->pidfd < 0 || r->kill_reason) return -ESRCH;
  capsa__incarnation_end(r, CAPSA_EV_KILLED, "restart requested");
  return 0;
}

// A navigation does not wait for the killed process to exit (~0.3-1 ms
// here, tearing down its address space) before its successor is attached:
// its pidfd goes to the reaper's dying list (and its cgroup and process
// group to the busy lists, as after any end), and its handles close now.
// Its end was reported (KILLED); nothing of it is read any more. Only with
// room on every list: otherwise it ends the usual way.
static void detach_dying(struct capsa_host_renderer *r) {
  if (r->exited || r->state == R_DYING || r->reporting_end || r->pidfd < 0 ||
      !capsa__reaper_room(r))
    return;
  uv_poll_stop(&r->exit_poll);
  capsa__reaper_add_dying(r->h, r->pidfd);
  r->pidfd = -1;
  r->exited = true;
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
  capsa__incarnation_end(r, CAPSA_EV_KILLED, "navigation");
  claim_ahead(r);
  if (r->next_claim.valid) detach_dying(r);
  return 0;
}

static void on_shutdown_timeout(uv_timer_t *t) {
  capsa__incarnation_end(t->data, CAPSA_EV_KILLED,
                         "no exit within the shutdown timeout");
}

int capsa_renderer_shutdown(capsa_renderer_t *r, uint64_t timeout_ms) {
  if (!r) return -EINVAL;
  if (r->state != R_READY || r->kill_reason) return -ENOTCONN;
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

void capsa__incarnation_close_all(struct capsa__host_impl *h) {
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
        capsa__incarnation_end(r, CAPSA_EV_KILLED, "host closing");
      else
        syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    }
  }
}
