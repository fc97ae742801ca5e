// What outlives a renderer's handle: killed processes detached by a
// navigation (the dying list), cgroups a killed descendant still keeps busy,
// process groups of renderers without a pid namespace whose killed members
// are still exiting. Each is retried from the host's `closer` timer for
// about a second, and finished at the host's close. Only what was already
// killed is here: the reaper sweeps, the state machine (host/incarnation.c)
// decides.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/host_internal.h"

#define RETRY_MS 20
#define RETRIES 50

// A pidfd that was watched by a uv_poll is non-blocking (uv_poll_init sets
// O_NONBLOCK), and waitid on it then fails EAGAIN instead of waiting: that
// would leave a zombie behind, so the flag is cleared first. ECHILD: not
// ours.
int capsa__reaper_wait(int pidfd, siginfo_t *si) {
  int fl = fcntl(pidfd, F_GETFL);
  if (fl >= 0 && (fl & O_NONBLOCK)) fcntl(pidfd, F_SETFL, fl & ~O_NONBLOCK);
  int rc;
  do {
    rc = waitid((idtype_t)P_PIDFD, (id_t)pidfd, si, WEXITED);
  } while (rc < 0 && errno == EINTR);
  return rc < 0 ? -errno : 0;
}

// Kills what is left in each busy cgroup and tries rmdir again; gives up on
// one (the directory stays, empty of capsa's renderer) after RETRIES, or at
// once when `final` (the host is closing).
static void cg_busy_sweep(struct capsa__reaper *rp, bool final) {
  unsigned kept = 0;
  for (unsigned i = 0; i < rp->ncg_busy; i++) {
    capsa_cgroup_t *cg = rp->cg_busy[i];
    capsa_cgroup_kill(cg);
    if (capsa_cgroup_remove(cg) == -EBUSY && !final &&
        rp->cg_busy_tries[i] + 1 < RETRIES) {
      rp->cg_busy_tries[kept] = rp->cg_busy_tries[i] + 1;
      rp->cg_busy[kept++] = cg;
      continue;
    }
    capsa_cgroup_free(cg);
  }
  rp->ncg_busy = kept;
}

// Reaps the detached dying renderers that have exited (all of them, waiting,
// when `final`: they were SIGKILLed, so that takes milliseconds).
static void dying_sweep(struct capsa__reaper *rp, bool final) {
  unsigned kept = 0;
  for (unsigned i = 0; i < rp->ndying; i++) {
    int fd = rp->dying_pidfd[i];
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rc;
    if (final) {
      rc = capsa__reaper_wait(fd, &si);
    } else {
      do {
        rc = waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG);
      } while (rc < 0 && errno == EINTR);
      // Non-blocking (a polled pidfd) and not yet exited: as WNOHANG's 0.
      if (rc < 0 && errno == EAGAIN) rc = 0, si.si_pid = 0;
    }
    if (rc == 0 && si.si_pid == 0) {  // still exiting
      rp->dying_pidfd[kept++] = fd;
      continue;
    }
    close(fd);  // reaped, or not ours to reap (ECHILD: its group's sweep)
  }
  rp->ndying = kept;
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

static void group_busy_sweep(struct capsa__reaper *rp, bool final) {
  unsigned kept = 0;
  for (unsigned i = 0; i < rp->ngroup_busy; i++) {
    pid_t g = rp->group_busy[i];
    // Members remain (or reap_pgid would have dropped it): still ours.
    kill(-g, SIGKILL);
    bool gone = reap_pgid(g);
    // Closing: SIGKILLed processes exit within milliseconds; wait that
    // long, bounded, rather than leave zombies behind the freed host.
    for (int n = 0; final && !gone && n < 100; n++) {
      usleep(1000);
      gone = reap_pgid(g);
    }
    if (!gone && !final && rp->group_busy_tries[i] + 1 < RETRIES) {
      rp->group_busy_tries[kept] = rp->group_busy_tries[i] + 1;
      rp->group_busy[kept++] = g;
    }
  }
  rp->ngroup_busy = kept;
}

static void on_retry(uv_timer_t *t) {
  struct capsa__host_impl *h = t->data;
  struct capsa__reaper *rp = &h->reaper;
  dying_sweep(rp, false);
  cg_busy_sweep(rp, false);
  group_busy_sweep(rp, false);
  if (rp->ncg_busy == 0 && rp->ngroup_busy == 0 && rp->ndying == 0)
    uv_timer_stop(&h->closer);
}

static void retry_start(struct capsa__host_impl *h) {
  if (!uv_is_active((uv_handle_t *)&h->closer))
    uv_timer_start(&h->closer, on_retry, RETRY_MS, RETRY_MS);
}

// Renderers without a pid namespace of their own lead a process group
// (setsid at fork). Their CLONE_PARENT children are the host's, with exit
// signal 0 (the renderer's own): no SIGCHLD, so reaped here, by group.
bool capsa__reaper_group_kind(const struct capsa_host_renderer *r) {
  return !r->h->zkinds[r->kind].pid_namespace && r->pid > 0;
}

void capsa__reaper_group(struct capsa_host_renderer *r) {
  if (!capsa__reaper_group_kind(r)) return;
  struct capsa__host_impl *h = r->h;
  struct capsa__reaper *rp = &h->reaper;
  if (reap_pgid(r->pid)) return;
  for (unsigned i = 0; i < rp->ngroup_busy; i++)
    if (rp->group_busy[i] == r->pid) return;
  if (rp->ngroup_busy == CAPSA__CG_BUSY_MAX) return;  // reaped at close
  rp->group_busy_tries[rp->ngroup_busy] = 0;
  rp->group_busy[rp->ngroup_busy++] = r->pid;
  retry_start(h);
}

bool capsa__reaper_room(const struct capsa_host_renderer *r) {
  const struct capsa__reaper *rp = &r->h->reaper;
  return rp->ndying < CAPSA__CG_BUSY_MAX &&
         (!r->limits.cg || rp->ncg_busy < CAPSA__CG_BUSY_MAX) &&
         (!capsa__reaper_group_kind(r) || rp->ngroup_busy < CAPSA__CG_BUSY_MAX);
}

bool capsa__reaper_add_dying(struct capsa__host_impl *h, int pidfd) {
  struct capsa__reaper *rp = &h->reaper;
  if (rp->ndying == CAPSA__CG_BUSY_MAX) return false;
  rp->dying_pidfd[rp->ndying++] = pidfd;
  retry_start(h);
  return true;
}

bool capsa__reaper_add_cgroup(struct capsa__host_impl *h, capsa_cgroup_t *cg) {
  struct capsa__reaper *rp = &h->reaper;
  if (rp->ncg_busy == CAPSA__CG_BUSY_MAX) return false;
  rp->cg_busy_tries[rp->ncg_busy] = 0;
  rp->cg_busy[rp->ncg_busy++] = cg;
  retry_start(h);
  return true;
}

void capsa__reaper_final(struct capsa__host_impl *h) {
  dying_sweep(&h->reaper, true);
  cg_busy_sweep(&h->reaper, true);
  group_busy_sweep(&h->reaper, true);
  uv_timer_stop(&h->closer);
}
