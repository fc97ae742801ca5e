// Worker pools (host/capsa_pool.h): dispatch of queued jobs to idle READY
// renderers of one kind, replacement of workers that end, retirement (one
// job per process, recycling), and each job's outcome with its reason.
// Supervision (restarts, deadlines, heartbeats) stays the host's; the pool
// only watches its workers' events through the renderer's observer hook
// (host/host_internal.h).
//
// A job whose worker ends — killed by the pool after its job, or by its
// own doing — is reported only once that process is gone (its CLOSED, or
// the host's RESTARTED): nothing of a job is released while the process
// that served it can still run.
#include "host/capsa_pool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host_internal.h"
#include "host/pool_reply.h"

#define POOL_REASON_MAX 256
#define POOL_BACKOFF_CAP_MS 5000
#define POOL_MAX_PROCS (2 * CAPSA_POOL_MAX_WORKERS)

struct pool_job {
  uint64_t timeout_ms;
  capsa_pool_fill_fn fill;
  capsa_pool_done_fn done;
  void *arg;
  struct capsa__pool_impl *p;
  struct pool_job *next;  // queue, or the deferred list
  // The outcome, once known, while it waits for its worker to be gone.
  int status;
  capsa_host_event_type_t ended;
  int signal, exit_status;
  char reason[POOL_REASON_MAX];
  capsa__kept_reply_t reply;
};

enum proc_state {
  P_FREE = 0,
  P_STARTING,  // spawned (or restarting), not READY yet
  P_IDLE,      // READY, no job
  P_BUSY,      // its job in flight
  P_ENDING,    // ending (killed by us, or by itself): not counted alive
};

struct pool_proc {
  struct capsa__pool_impl *p;
  enum proc_state state;
  capsa_renderer_t *r;
  struct pool_job *job;  // BUSY: in flight; ENDING: waits for it to be gone
  bool was_ready;        // this incarnation reached READY
  bool failed_job;       // this incarnation ended with a job
  bool retired;          // killed by the pool (after its job, or closing)
  unsigned jobs;         // done by this incarnation
  uint64_t cpu_checked;  // loop time (ms) of the last CPU reading
};

struct capsa__pool_impl {
  capsa_pool_t *pub;
  capsa_host_t *host;
  int kind;
  capsa_pool_options_t o;
  bool started, closing, gave_up;
  capsa_pool_close_cb close_cb;
  uv_timer_t respawn;  // spawns what is missing once a backoff is over
  uv_timer_t later;    // reports deferred outcomes from the loop
  int open_timers;
  struct pool_proc procs[POOL_MAX_PROCS];
  struct pool_job *head, *tail;
  struct pool_job *deferred;
  uint64_t respawn_at;      // loop ms before which nothing is spawned; 0: now
  unsigned idle_ends;       // workers in a row that ended without a job
  unsigned start_failures;  // in a row, pool-wide
  char last_start_failure[POOL_REASON_MAX];
  char error[POOL_REASON_MAX];  // why it gave up
  capsa_pool_stats_t st;
};

void capsa_pool_options_init(capsa_pool_options_t *o) {
  memset(o, 0, sizeof *o);
  o->workers = 4;
  o->max_queued = 1024;
  o->shutdown_timeout_ms = 1000;
  o->max_start_failures = 3;
  o->respawn_backoff_ms = 100;
}

static bool one_job(const struct capsa__pool_impl *p) {
  return p->o.isolation == CAPSA_POOL_ONE_JOB_PER_PROCESS;
}

static unsigned count(const struct capsa__pool_impl *p, unsigned states) {
  unsigned n = 0;
  for (unsigned i = 0; i < POOL_MAX_PROCS; i++)
    n += (states >> p->procs[i].state) & 1u;
  return n;
}
#define BIT(s) (1u << (s))
#define ALIVE (BIT(P_STARTING) | BIT(P_IDLE) | BIT(P_BUSY))
#define ANY (ALIVE | BIT(P_ENDING))

static const char *kind_name(const struct capsa__pool_impl *p) {
  return p->host->impl->kinds[p->kind].name;
}

static void format(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void format(char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, POOL_REASON_MAX, fmt, ap);
  va_end(ap);
}

// How an incarnation ended, in one line: "crashed: signal 11 (SEGV)".
static void describe_ending(char *buf, const capsa_host_event_t *ev) {
  const char *name = capsa_host_event_name(ev->type);
  if (ev->text && ev->text[0])
    format(buf, "%s: %s", name, ev->text);
  else if (ev->type == CAPSA_EV_EXITED)
    format(buf, "%s: status %d", name, ev->status);
  else if (ev->type == CAPSA_EV_HUNG)
    format(buf, "%s: no answer to the heartbeat", name);
  else if (ev->signal)
    format(buf, "%s: signal %d", name, ev->signal);
  else
    format(buf, "%s", name);
}

// Calls done() with what the job holds (and `reply`, borrowed, if any).
static void finish(struct pool_job *j, capsa_renderer_t *r,
                   capsa_msg_t *reply) {
  struct capsa__pool_impl *p = j->p;
  if (j->status == 0)
    p->st.completed++;
  else
    p->st.failed++;
  if (!reply && j->reply.kept) reply = &j->reply.msg;
  capsa_pool_result_t res = {.status = j->status,
                             .worker = r,
                             .reply = j->status == 0 ? reply : NULL,
                             .ended = j->ended,
                             .signal = j->signal,
                             .exit_status = j->exit_status,
                             .reason = j->status == 0 ? "" : j->reason};
  j->done(p->pub, &res, j->arg);
  capsa__kept_reply_release(&j->reply);
  free(j);
}

static void fail(struct pool_job *j, int status, const char *reason) {
  j->status = status;
  format(j->reason, "%s", reason);
  finish(j, NULL, NULL);
}

static void dispatch(struct capsa__pool_impl *p);
static void top_up(struct capsa__pool_impl *p);

// Whether a shared worker should make way for a fresh process now.
static bool worn_out(const struct capsa__pool_impl *p, struct pool_proc *w) {
  if (p->o.recycle_after_jobs && w->jobs >= p->o.recycle_after_jobs)
    return true;
  if (p->o.recycle_after_cpu_ms) {
    // Read at most once per tenth of the budget (1..50 ms), not after every
    // short job: without a cgroup the reading walks /proc over the worker's
    // tree. The worker may run that much past the budget before recycling.
    uint64_t every = p->o.recycle_after_cpu_ms / 10,
             now = uv_now(w->r->h->loop);
    if (every > 50) every = 50;
    if (every < 1) every = 1;
    if (w->cpu_checked && now - w->cpu_checked < every) return false;
    w->cpu_checked = now;
    uint64_t usec;
    if (capsa__renderer_cpu_usec(w->r, &usec) == 0 &&
        usec / 1000 >= p->o.recycle_after_cpu_ms)
      return true;
  }
  return false;
}

// Kills the worker (not asked: a compromised one would not go) and keeps
// its job, if any, until the process is gone; a replacement starts now.
static void retire(struct pool_proc *w, const char *why) {
  struct capsa__pool_impl *p = w->p;
  w->state = P_ENDING;
  w->retired = true;  // before the kill: its KILLED event is reported inside
  p->st.recycled++;
  capsa__renderer_retire(w->r, why);
  top_up(p);
}

static void on_reply(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                     void *arg) {
  struct pool_job *j = arg;
  struct capsa__pool_impl *p = j->p;
  struct pool_proc *w = r->observer_ctx;
  bool keep = r->h->kinds[r->kind].keep_on_request_timeout;
  w->job = NULL;
  w->jobs++;
  j->status = status;
  if (status == 0) {
    p->idle_ends = 0;
    bool last = one_job(p) || (!p->closing && worn_out(p, w));
    if (!last) {
      w->state = P_IDLE;
      finish(j, r, reply);
      if (p->closing && w->state == P_IDLE) {
        // Closing: it leaves cleanly now that its job is done.
        w->state = P_ENDING;
        w->retired = true;
        if (capsa_renderer_shutdown(r, p->o.shutdown_timeout_ms) < 0)
          capsa_renderer_kill(r);
      }
      dispatch(p);
      return;
    }
    // Its last job: reported once the process is gone, with a copy of the
    // reply (the channel's lives only during this call).
    int err = capsa__kept_reply_take(reply, &j->reply);
    if (err < 0) {
      j->status = err;
      format(j->reason, "keeping the reply: %s", strerror(-err));
    }
    w->job = j;
    retire(w, one_job(p) ? "one job per process: retired by the pool"
                         : "recycled by the pool");
    dispatch(p);
    return;
  }
  if (status == -ECANCELED) {
    // The worker is ending (or the pool closing): its ending event follows
    // at once and says why; done() waits until the process is gone.
    format(
        j->reason, "%s",
        p->closing ? "the pool is closing" : "the worker ended with the job");
    w->failed_job = true;
    w->state = P_ENDING;
    w->job = j;
    return;
  }
  if (status == -ETIMEDOUT) {
    format(j->reason, "deadline: no reply within %llu ms (%s)",
           (unsigned long long)j->timeout_ms,
           keep && !one_job(p) ? "the worker is kept"
                               : "the worker is killed and replaced");
    if (!keep || one_job(p)) {
      // Killed for it as this returns (or by us): wait until it is gone.
      w->failed_job = true;
      w->job = j;
      if (keep)
        retire(w, "one job per process: retired by the pool");
      else
        w->state = P_ENDING;
      return;
    }
    w->state = P_IDLE;
    finish(j, r, NULL);
    dispatch(p);
    return;
  }
  // No other outcome is known: do not trust the worker with another job.
  format(j->reason, "%s", strerror(-status));
  w->failed_job = true;
  w->job = j;
  retire(w, "its job failed");
}

// Sends job j to idle worker w. 0, or the error with j->reason set (the
// job is not consumed).
static int send_job(struct pool_proc *w, struct pool_job *j) {
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_NONE);
  int err = j->fill(w->p->pub, w->r, &m, j->arg);
  if (err < 0) {
    format(j->reason, "fill failed: %s", strerror(-err));
  } else {
    err = capsa_renderer_request(w->r, &m, j->timeout_ms, on_reply, j);
    if (err < 0) {
      const char *why = capsa_renderer_send_error(w->r);
      format(j->reason, "request refused: %s", why[0] ? why : strerror(-err));
    }
  }
  if (err < 0) {
    capsa_msg_close_handles(&m);  // ours on error (capsa_pool_fill_fn)
    return err;
  }
  w->job = j;
  w->state = P_BUSY;
  return 0;
}

static struct pool_proc *idle_worker(struct capsa__pool_impl *p) {
  if (one_job(p) && count(p, BIT(P_BUSY)) >= p->o.workers) return NULL;
  for (unsigned i = 0; i < POOL_MAX_PROCS; i++)
    if (p->procs[i].state == P_IDLE) return &p->procs[i];
  return NULL;
}

static void fail_queue(struct capsa__pool_impl *p, int status,
                       const char *reason) {
  while (p->head) {
    struct pool_job *j = p->head;
    p->head = j->next;
    p->st.queued--;
    fail(j, status, reason);
  }
  p->tail = NULL;
}

static bool respawn_pending(const struct capsa__pool_impl *p) {
  return p->respawn_at != 0 && !p->gave_up && !p->closing;
}

static void dispatch(struct capsa__pool_impl *p) {
  struct pool_proc *w;
  while (p->head && (w = idle_worker(p)) != NULL) {
    struct pool_job *j = p->head;
    p->head = j->next;
    if (!p->head) p->tail = NULL;
    p->st.queued--;
    int err = send_job(w, j);
    if (err < 0) {
      j->status = err;
      finish(j, w->r, NULL);
    } else if (one_job(p)) {
      top_up(p);  // its successor starts while it works
    }
  }
  // Nobody left who could take them: say so rather than wait forever.
  if (p->head && count(p, ALIVE) == 0 && !respawn_pending(p))
    fail_queue(p, -ENOTCONN,
               p->error[0] ? p->error : "the pool has no worker left");
}

static void give_up(struct capsa__pool_impl *p) {
  p->gave_up = true;
  format(p->error,
         "workers of kind '%s' end before READY (%u in a row); the "
         "last: %s",
         kind_name(p), p->start_failures, p->last_start_failure);
  p->respawn_at = 0;
  fail_queue(p, -ENOTCONN, p->error);
}

// One more worker that never became READY (or never spawned).
static void start_failed(struct capsa__pool_impl *p, const char *why) {
  format(p->last_start_failure, "%s", why);
  if (++p->start_failures >= p->o.max_start_failures && !p->gave_up) give_up(p);
}

static void observe(capsa_renderer_t *r, const capsa_host_event_t *ev,
                    void *ctx);

static int spawn_one(struct capsa__pool_impl *p) {
  struct pool_proc *w = NULL;
  for (unsigned i = 0; i < POOL_MAX_PROCS && !w; i++)
    if (p->procs[i].state == P_FREE) w = &p->procs[i];
  if (!w) return -EAGAIN;  // every slot holds a process still ending
  capsa_renderer_t *r = NULL;
  int err = capsa_host_spawn(p->host, p->kind, NULL, &r);
  if (err < 0) return err;
  memset(w, 0, sizeof *w);
  w->p = p;
  w->r = r;
  w->state = P_STARTING;
  r->observer = observe;
  r->observer_ctx = w;
  return 0;
}

static uint64_t backoff_ms(const struct capsa__pool_impl *p) {
  unsigned shift = p->idle_ends < 16 ? p->idle_ends : 16;
  uint64_t d = (uint64_t)p->o.respawn_backoff_ms << shift;
  return d < POOL_BACKOFF_CAP_MS ? d : POOL_BACKOFF_CAP_MS;
}

static void on_respawn(uv_timer_t *t) {
  struct capsa__pool_impl *p = t->data;
  p->respawn_at = 0;
  top_up(p);
  dispatch(p);
}

// Spawns what the pool is missing: `workers` processes alive (shared), or
// `workers` waiting for a job besides those working (one job per process).
static void top_up(struct capsa__pool_impl *p) {
  if (!p->started || p->closing || p->gave_up || p->host->impl->closing) return;
  uint64_t now = uv_now(p->host->impl->loop);
  if (p->respawn_at > now) {
    uv_timer_start(&p->respawn, on_respawn, p->respawn_at - now, 0);
    return;
  }
  unsigned states = one_job(p) ? BIT(P_STARTING) | BIT(P_IDLE) : ALIVE;
  while (count(p, states) < p->o.workers && !p->gave_up) {
    int err = spawn_one(p);
    if (err == 0) continue;
    if (err == -EAGAIN && count(p, BIT(P_ENDING)) > 0) return;  // at CLOSED
    char why[POOL_REASON_MAX];
    format(why, "spawn: %s", strerror(-err));
    start_failed(p, why);
    p->idle_ends++;
    p->respawn_at = now + backoff_ms(p);
    uv_timer_start(&p->respawn, on_respawn, p->respawn_at - now, 0);
    return;
  }
  p->st.workers = count(p, ALIVE);
}

static void maybe_closed(struct capsa__pool_impl *p);

// The process that served `w`'s job is gone: report the job.
static void release_job(struct pool_proc *w, capsa_renderer_t *r) {
  struct pool_job *j = w->job;
  w->job = NULL;
  if (j) finish(j, r, NULL);
}

static void observe(capsa_renderer_t *r, const capsa_host_event_t *ev,
                    void *ctx) {
  struct pool_proc *w = ctx;
  struct capsa__pool_impl *p = w->p;
  switch (ev->type) {
    case CAPSA_EV_READY:
      w->was_ready = true;
      w->failed_job = false;
      w->jobs = 0;  // a new incarnation
      w->cpu_checked = 0;
      p->start_failures = 0;
      if (w->state != P_STARTING) break;  // retired before it was READY
      if (p->closing) {
        capsa_renderer_kill(r);
        break;
      }
      w->state = P_IDLE;
      dispatch(p);
      break;
    case CAPSA_EV_RESTARTED:  // the kind's own restart: the process is gone
      release_job(w, r);
      w->state = P_STARTING;
      w->was_ready = false;
      break;
    case CAPSA_EV_CLOSED:
      release_job(w, r);
      r->observer = NULL;
      w->state = P_FREE;
      w->r = NULL;
      if (!w->retired && !p->closing) {
        // Ended by itself: replaced at once when a job failed with it (that
        // input's doing), after a growing backoff when it ended idle.
        p->st.replaced++;
        if (!w->failed_job) {
          uint64_t d = backoff_ms(p);
          p->idle_ends++;
          uint64_t at = uv_now(p->host->impl->loop) + d;
          if (d && at > p->respawn_at) p->respawn_at = at;
        }
      }
      top_up(p);
      p->st.workers = count(p, ALIVE);
      if (p->closing)
        maybe_closed(p);
      else
        dispatch(p);
      break;
    case CAPSA_EV_MESSAGE:
    case CAPSA_EV_LOG:
      break;
    default: {  // how an incarnation ended: no work until READY again
      char why[POOL_REASON_MAX];
      describe_ending(why, ev);
      bool ours = w->retired;
      if (w->job && w->job->status != 0) {
        struct pool_job *j = w->job;
        j->ended = ev->type;
        j->signal = ev->signal;
        j->exit_status = ev->status;
        if (j->status == -ECANCELED) format(j->reason, "%s", why);
      }
      if (!ours) w->state = P_ENDING;
      if (!p->closing && !ours && !p->host->impl->closing &&
          (!w->was_ready || ev->type == CAPSA_EV_SPAWN_FAILED))
        start_failed(p, why);
      break;
    }
  }
}

int capsa_pool_init(capsa_host_t *host, capsa_pool_t *pool, int kind,
                    const capsa_pool_options_t *o) {
  if (!host || !host->impl || !pool) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  if (!h->started || h->closing || kind < 0 || (unsigned)kind >= h->nkinds)
    return -EINVAL;
  capsa_pool_options_t opts;
  if (o)
    opts = *o;
  else
    capsa_pool_options_init(&opts);
  if (opts.workers == 0 || opts.workers > CAPSA_POOL_MAX_WORKERS ||
      opts.max_queued == 0 || opts.max_start_failures == 0 ||
      (opts.isolation != CAPSA_POOL_SHARED_WORKERS &&
       opts.isolation != CAPSA_POOL_ONE_JOB_PER_PROCESS))
    return -EINVAL;
  struct capsa__pool_impl *p = calloc(1, sizeof *p);
  if (!p) return -ENOMEM;
  p->pub = pool;
  p->host = host;
  p->kind = kind;
  p->o = opts;
  for (unsigned i = 0; i < POOL_MAX_PROCS; i++) p->procs[i].p = p;
  uv_timer_init(h->loop, &p->respawn);
  uv_timer_init(h->loop, &p->later);
  p->respawn.data = p;
  p->later.data = p;
  p->open_timers = 2;
  pool->impl = p;
  return 0;
}

int capsa_pool_start(capsa_pool_t *pool) {
  if (!pool || !pool->impl) return -EINVAL;
  struct capsa__pool_impl *p = pool->impl;
  if (p->started || p->closing) return -EINVAL;
  for (unsigned i = 0; i < p->o.workers; i++) {
    int err = spawn_one(p);
    if (err < 0) {
      for (unsigned k = 0; k < POOL_MAX_PROCS; k++) {
        struct pool_proc *w = &p->procs[k];
        if (w->state == P_FREE) continue;
        w->r->observer = NULL;
        capsa_renderer_kill(w->r);
        w->state = P_FREE;
        w->r = NULL;
      }
      return err;
    }
  }
  p->started = true;
  p->st.workers = p->o.workers;
  return 0;
}

static void on_later(uv_timer_t *t) {
  struct capsa__pool_impl *p = t->data;
  while (p->deferred) {
    struct pool_job *j = p->deferred;
    p->deferred = j->next;
    finish(j, NULL, NULL);
  }
}

int capsa_pool_submit(capsa_pool_t *pool, uint64_t timeout_ms,
                      capsa_pool_fill_fn fill, capsa_pool_done_fn done,
                      void *arg) {
  if (!pool || !pool->impl || !fill || !done) return -EINVAL;
  struct capsa__pool_impl *p = pool->impl;
  if (!p->started || p->closing || p->gave_up) return -ENOTCONN;
  if (count(p, ALIVE) == 0 && !respawn_pending(p)) return -ENOTCONN;
  if (p->st.queued >= p->o.max_queued) return -EBUSY;
  struct pool_job *j = calloc(1, sizeof *j);
  if (!j) return -ENOMEM;
  j->timeout_ms = timeout_ms;
  j->fill = fill;
  j->done = done;
  j->arg = arg;
  j->p = p;
  p->st.submitted++;
  struct pool_proc *w = p->head ? NULL : idle_worker(p);
  if (w) {
    int err = send_job(w, j);
    if (err < 0) {
      // Reported through `done`, with the reason, from the loop: never
      // from inside this call.
      j->status = err;
      j->next = p->deferred;
      p->deferred = j;
      uv_timer_start(&p->later, on_later, 0, 0);
    } else if (one_job(p)) {
      top_up(p);
    }
    return 0;
  }
  if (p->tail)
    p->tail->next = j;
  else
    p->head = j;
  p->tail = j;
  p->st.queued++;
  return 0;
}

const char *capsa_pool_error(const capsa_pool_t *pool) {
  if (!pool || !pool->impl) return "";
  const struct capsa__pool_impl *p = pool->impl;
  if (p->closing) return "the pool is closing";
  return p->error;
}

int capsa_pool_get_stats(const capsa_pool_t *pool, capsa_pool_stats_t *out) {
  if (!pool || !pool->impl || !out) return -EINVAL;
  const struct capsa__pool_impl *p = pool->impl;
  *out = p->st;
  out->workers = count(p, ALIVE);
  out->idle = count(p, BIT(P_IDLE));
  return 0;
}

static void on_timer_closed(uv_handle_t *hd) {
  struct capsa__pool_impl *p = hd->data;
  if (--p->open_timers > 0) return;
  capsa_pool_t *pool = p->pub;
  capsa_pool_close_cb cb = p->close_cb;
  pool->impl = NULL;
  free(p);
  if (cb) cb(pool);
}

static void maybe_closed(struct capsa__pool_impl *p) {
  if (!p->closing || count(p, ANY) != 0) return;
  if (uv_is_closing((uv_handle_t *)&p->later)) return;
  on_later(&p->later);  // what was deferred is reported before the close
  uv_close((uv_handle_t *)&p->respawn, on_timer_closed);
  uv_close((uv_handle_t *)&p->later, on_timer_closed);
}

void capsa_pool_close(capsa_pool_t *pool, capsa_pool_close_cb cb) {
  if (!pool || !pool->impl) return;
  struct capsa__pool_impl *p = pool->impl;
  if (p->closing) return;
  p->closing = true;
  p->close_cb = cb;
  uv_timer_stop(&p->respawn);
  fail_queue(p, -ECANCELED, "the pool is closing");
  for (unsigned i = 0; i < POOL_MAX_PROCS; i++) {
    struct pool_proc *w = &p->procs[i];
    if (w->state == P_FREE || w->state == P_ENDING) continue;
    if (w->state == P_BUSY) continue;  // its job finishes, then it goes
    // Idle or starting: it has seen nothing the pool still owes anyone.
    bool idle = w->state == P_IDLE;
    w->state = P_ENDING;
    w->retired = true;
    if (!idle || one_job(p) ||
        capsa_renderer_shutdown(w->r, p->o.shutdown_timeout_ms) < 0)
      capsa_renderer_kill(w->r);
  }
  maybe_closed(p);
}
