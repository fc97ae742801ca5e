// Worker pools (host/capsa_pool.h): dispatch of queued jobs to idle READY
// renderers of one kind, replacement of workers that end, recycling, and
// each job's outcome with its reason. Supervision (restarts, deadlines,
// heartbeats) stays the host's; the pool only watches its workers' events
// through the renderer's observer hook (host/host_internal.h).
#include "host/capsa_pool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host_internal.h"

#define POOL_REASON_MAX 256
#define POOL_BACKOFF_CAP_MS 5000

struct pool_job {
  uint64_t timeout_ms;
  capsa_pool_fill_fn fill;
  capsa_pool_done_fn done;
  void *arg;
  struct capsa__pool_impl *p;
  struct pool_worker *w;  // while sent
  struct pool_job *next;  // queue, or the deferred list
  int status;             // deferred: the outcome to report
  char reason[POOL_REASON_MAX];
};

struct pool_worker {
  struct capsa__pool_impl *p;
  capsa_renderer_t *r;   // NULL: slot empty (or waiting to be refilled)
  bool ready;            // READY and not dying
  bool was_ready;        // this incarnation reached READY
  bool failed_job;       // this incarnation failed a job (the input's doing)
  struct pool_job *job;  // in flight
  // Failed with -ECANCELED: the worker is ending, and the event that says
  // how follows at once (host.c cancels requests, then reports); the job's
  // `done` waits for it so that it can say why.
  struct pool_job *ending;
  unsigned jobs;         // done by this worker
  bool recycling;        // asked to shut down, replaced when CLOSED
  uint64_t cpu_checked;  // loop time (ms) of the last CPU reading
  uint64_t respawn_at;   // loop time to refill the empty slot; 0: none
  unsigned idle_ends;    // endings without a job since its last success
};

struct capsa__pool_impl {
  capsa_pool_t *pub;
  capsa_host_t *host;
  int kind;
  capsa_pool_options_t o;
  bool started, closing, gave_up;
  capsa_pool_close_cb close_cb;
  uv_timer_t respawn;  // refills empty slots when their backoff is over
  uv_timer_t later;    // reports deferred outcomes from the loop
  int open_timers;
  struct pool_worker w[CAPSA_POOL_MAX_WORKERS];
  struct pool_job *head, *tail;
  struct pool_job *deferred;
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

static unsigned live_workers(const struct capsa__pool_impl *p) {
  unsigned n = 0;
  for (unsigned i = 0; i < p->o.workers; i++) n += p->w[i].r != NULL;
  return n;
}

static bool respawn_pending(const struct capsa__pool_impl *p) {
  for (unsigned i = 0; i < p->o.workers; i++)
    if (!p->w[i].r && p->w[i].respawn_at) return true;
  return false;
}

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

static void finish_job(struct pool_job *j, capsa_pool_result_t *res) {
  struct capsa__pool_impl *p = j->p;
  if (res->status == 0)
    p->st.completed++;
  else
    p->st.failed++;
  if (!res->reason) res->reason = "";
  j->done(p->pub, res, j->arg);
  free(j);
}

static void finish_simple(struct pool_job *j, capsa_renderer_t *r, int status,
                          const char *reason) {
  capsa_pool_result_t res = {.status = status, .worker = r, .reason = reason};
  finish_job(j, &res);
}

static void dispatch(struct capsa__pool_impl *p);

// Whether the worker should make way for a fresh process now.
static bool worn_out(const struct capsa__pool_impl *p, struct pool_worker *w) {
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

static void on_reply(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                     void *arg) {
  struct pool_job *j = arg;
  struct pool_worker *w = j->w;
  struct capsa__pool_impl *p = j->p;
  w->job = NULL;
  w->jobs++;
  bool keep = r->h->kinds[r->kind].keep_on_request_timeout;
  if (status == -ECANCELED && !p->closing) {
    // The worker is ending: its ending event follows and says why.
    w->ready = false;
    w->failed_job = true;
    w->ending = j;
    return;
  }
  if (status == 0) {
    w->idle_ends = 0;
    capsa_pool_result_t res = {.worker = r, .reply = reply};
    finish_job(j, &res);
  } else if (status == -ETIMEDOUT) {
    // Killed for it right after this returns, unless the kind keeps it.
    if (!keep) {
      w->ready = false;
      w->failed_job = true;
    }
    char why[POOL_REASON_MAX];
    format(why, "deadline: no reply within %llu ms (%s)",
           (unsigned long long)j->timeout_ms,
           keep ? "the worker is kept" : "the worker is killed and replaced");
    finish_simple(j, r, status, why);
  } else {
    w->ready = false;
    finish_simple(j, r, status,
                  p->closing ? "the pool is closing" : strerror(-status));
  }
  if (w->ready && !p->closing && worn_out(p, w)) {
    w->ready = false;
    w->recycling = true;
    if (capsa_renderer_shutdown(w->r, p->o.shutdown_timeout_ms) < 0)
      capsa_renderer_kill(w->r);
  }
  dispatch(p);
}

// Sends job j to idle worker w. 0, or the error with j->reason set (the
// job is not consumed).
static int send_job(struct pool_worker *w, struct pool_job *j) {
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_NONE);
  int err = j->fill(w->p->pub, w->r, &m, j->arg);
  if (err < 0) {
    format(j->reason, "fill failed: %s", strerror(-err));
  } else {
    j->w = w;
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
  return 0;
}

static struct pool_worker *idle_worker(struct capsa__pool_impl *p) {
  for (unsigned i = 0; i < p->o.workers; i++)
    if (p->w[i].r && p->w[i].ready && !p->w[i].job) return &p->w[i];
  return NULL;
}

static void fail_queue(struct capsa__pool_impl *p, int status,
                       const char *reason) {
  while (p->head) {
    struct pool_job *j = p->head;
    p->head = j->next;
    p->st.queued--;
    finish_simple(j, NULL, status, reason);
  }
  p->tail = NULL;
}

static void dispatch(struct capsa__pool_impl *p) {
  struct pool_worker *w;
  while (p->head && (w = idle_worker(p)) != NULL) {
    struct pool_job *j = p->head;
    p->head = j->next;
    if (!p->head) p->tail = NULL;
    p->st.queued--;
    int err = send_job(w, j);
    if (err < 0) finish_simple(j, w->r, err, j->reason);
  }
  // Nobody left who could take them: say so rather than wait forever.
  if (p->head && live_workers(p) == 0 && !respawn_pending(p))
    fail_queue(p, -ENOTCONN,
               p->error[0] ? p->error : "the pool has no worker left");
}

static void give_up(struct capsa__pool_impl *p) {
  p->gave_up = true;
  format(p->error,
         "workers of kind '%s' end before READY (%u in a row); the "
         "last: %s",
         kind_name(p), p->start_failures, p->last_start_failure);
  for (unsigned i = 0; i < p->o.workers; i++) p->w[i].respawn_at = 0;
  fail_queue(p, -ENOTCONN, p->error);
}

// One more worker that never became READY (or never spawned).
static void start_failed(struct capsa__pool_impl *p, const char *why) {
  snprintf(p->last_start_failure, sizeof p->last_start_failure, "%s", why);
  if (++p->start_failures >= p->o.max_start_failures && !p->gave_up) give_up(p);
}

static void maybe_closed(struct capsa__pool_impl *p);
static void observe(capsa_renderer_t *r, const capsa_host_event_t *ev,
                    void *ctx);

static int spawn_into(struct pool_worker *w) {
  struct capsa__pool_impl *p = w->p;
  capsa_renderer_t *r = NULL;
  int err = capsa_host_spawn(p->host, p->kind, NULL, &r);
  if (err < 0) return err;
  w->r = r;
  w->ready = false;
  w->was_ready = false;
  w->failed_job = false;
  w->job = NULL;
  w->ending = NULL;
  w->jobs = 0;
  w->cpu_checked = 0;
  w->recycling = false;
  w->respawn_at = 0;
  r->observer = observe;
  r->observer_ctx = w;
  return 0;
}

static void on_respawn(uv_timer_t *t);

static void arm_respawn(struct capsa__pool_impl *p) {
  uint64_t next = 0;
  for (unsigned i = 0; i < p->o.workers; i++) {
    uint64_t at = p->w[i].r ? 0 : p->w[i].respawn_at;
    if (at && (!next || at < next)) next = at;
  }
  if (!next) {
    uv_timer_stop(&p->respawn);
    return;
  }
  uint64_t now = uv_now(p->host->impl->loop);
  uv_timer_start(&p->respawn, on_respawn, next > now ? next - now : 0, 0);
}

static void on_respawn(uv_timer_t *t) {
  struct capsa__pool_impl *p = t->data;
  uint64_t now = uv_now(p->host->impl->loop);
  for (unsigned i = 0; i < p->o.workers && !p->gave_up && !p->closing; i++) {
    struct pool_worker *w = &p->w[i];
    if (w->r || !w->respawn_at || w->respawn_at > now) continue;
    int err = spawn_into(w);
    if (err == 0) {
      p->st.replaced++;
      continue;
    }
    char why[POOL_REASON_MAX];
    format(why, "spawn: %s", strerror(-err));
    w->idle_ends++;
    unsigned shift = w->idle_ends < 16 ? w->idle_ends : 16;
    uint64_t delay =
        (uint64_t)(p->o.respawn_backoff_ms ? p->o.respawn_backoff_ms : 1)
        << shift;
    w->respawn_at =
        now + (delay < POOL_BACKOFF_CAP_MS ? delay : POOL_BACKOFF_CAP_MS);
    start_failed(p, why);
  }
  p->st.workers = live_workers(p);
  if (p->gave_up || p->closing) {
    for (unsigned i = 0; i < p->o.workers; i++) p->w[i].respawn_at = 0;
    if (p->closing) maybe_closed(p);
  }
  arm_respawn(p);
  dispatch(p);
}

// The slot's worker is gone for good (CLOSED, not recycled): a new process
// takes its place, at once when it ended with a job (that input's doing:
// the job already failed), after a growing backoff when it ended idle.
static void schedule_respawn(struct capsa__pool_impl *p, struct pool_worker *w,
                             bool ended_with_job) {
  if (p->closing || p->gave_up || p->host->impl->closing) return;
  uint64_t delay = 0;
  if (!ended_with_job) {
    unsigned shift = w->idle_ends < 16 ? w->idle_ends : 16;
    w->idle_ends++;
    delay = (uint64_t)p->o.respawn_backoff_ms << shift;
    if (delay > POOL_BACKOFF_CAP_MS) delay = POOL_BACKOFF_CAP_MS;
  }
  w->respawn_at = uv_now(p->host->impl->loop) + delay;
  if (w->respawn_at == 0) w->respawn_at = 1;
  arm_respawn(p);
}

static void observe(capsa_renderer_t *r, const capsa_host_event_t *ev,
                    void *ctx) {
  struct pool_worker *w = ctx;
  struct capsa__pool_impl *p = w->p;
  switch (ev->type) {
    case CAPSA_EV_READY:
      w->ready = !w->recycling && !p->closing;
      w->was_ready = true;
      w->failed_job = false;
      w->jobs = 0;  // a new incarnation
      w->cpu_checked = 0;
      p->start_failures = 0;
      dispatch(p);
      break;
    case CAPSA_EV_RESTARTED:
      w->was_ready = false;  // the host's restart: a new incarnation starts
      break;
    case CAPSA_EV_CLOSED: {
      bool refill = w->recycling && !p->closing;
      bool with_job = w->failed_job;
      w->r = NULL;
      w->ready = false;
      r->observer = NULL;
      if (w->ending) {  // no ending event came: say what is known
        struct pool_job *j = w->ending;
        w->ending = NULL;
        finish_simple(j, r, -ECANCELED, "the worker ended with the job");
      }
      if (refill) {
        if (spawn_into(w) == 0)
          p->st.recycled++;
        else
          schedule_respawn(p, w, false);
      } else {
        schedule_respawn(p, w, with_job);
      }
      p->st.workers = live_workers(p);
      if (p->closing)
        maybe_closed(p);
      else
        dispatch(p);
      break;
    }
    case CAPSA_EV_MESSAGE:
    case CAPSA_EV_LOG:
      break;
    default: {  // how an incarnation ended: no work until READY again
      char why[POOL_REASON_MAX];
      describe_ending(why, ev);
      w->ready = false;
      if (w->ending) {
        struct pool_job *j = w->ending;
        w->ending = NULL;
        capsa_pool_result_t res = {.status = -ECANCELED,
                                   .worker = r,
                                   .ended = ev->type,
                                   .signal = ev->signal,
                                   .exit_status = ev->status,
                                   .reason = why};
        finish_job(j, &res);
      }
      if (!p->closing && !w->recycling && !p->host->impl->closing &&
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
      opts.max_queued == 0 || opts.max_start_failures == 0)
    return -EINVAL;
  struct capsa__pool_impl *p = calloc(1, sizeof *p);
  if (!p) return -ENOMEM;
  p->pub = pool;
  p->host = host;
  p->kind = kind;
  p->o = opts;
  for (unsigned i = 0; i < CAPSA_POOL_MAX_WORKERS; i++) p->w[i].p = p;
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
    int err = spawn_into(&p->w[i]);
    if (err < 0) {
      for (unsigned k = 0; k < i; k++) capsa_renderer_kill(p->w[k].r);
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
    finish_simple(j, NULL, j->status, j->reason);
  }
}

int capsa_pool_submit(capsa_pool_t *pool, uint64_t timeout_ms,
                      capsa_pool_fill_fn fill, capsa_pool_done_fn done,
                      void *arg) {
  if (!pool || !pool->impl || !fill || !done) return -EINVAL;
  struct capsa__pool_impl *p = pool->impl;
  if (!p->started || p->closing || p->gave_up) return -ENOTCONN;
  if (live_workers(p) == 0 && !respawn_pending(p)) return -ENOTCONN;
  if (p->st.queued >= p->o.max_queued) return -EBUSY;
  struct pool_job *j = calloc(1, sizeof *j);
  if (!j) return -ENOMEM;
  j->timeout_ms = timeout_ms;
  j->fill = fill;
  j->done = done;
  j->arg = arg;
  j->p = p;
  p->st.submitted++;
  struct pool_worker *w = p->head ? NULL : idle_worker(p);
  if (w) {
    int err = send_job(w, j);
    if (err < 0) {
      // Reported through `done`, with the reason, from the loop: never
      // from inside this call.
      j->status = err;
      j->next = p->deferred;
      p->deferred = j;
      uv_timer_start(&p->later, on_later, 0, 0);
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
  out->workers = live_workers(p);
  out->idle = 0;
  for (unsigned i = 0; i < p->o.workers; i++)
    out->idle += p->w[i].r && p->w[i].ready && !p->w[i].job;
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
  if (!p->closing || live_workers(p) != 0) return;
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
  fail_queue(p, -ECANCELED, "the pool is closing");
  for (unsigned i = 0; i < p->o.workers; i++) {
    struct pool_worker *w = &p->w[i];
    w->respawn_at = 0;
    if (!w->r) continue;
    w->ready = false;
    if (capsa_renderer_shutdown(w->r, p->o.shutdown_timeout_ms) < 0)
      capsa_renderer_kill(w->r);  // not READY (starting, restarting)
  }
  uv_timer_stop(&p->respawn);
  maybe_closed(p);
}
