// Worker pools (host/capsa_pool.h): dispatch of queued jobs to idle READY
// renderers of one kind, and recycling. Supervision (restarts, deadlines,
// heartbeats) stays the host's; the pool only watches its workers' events
// through the renderer's observer hook (host/host_internal.h).
#include "host/capsa_pool.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "host/host_internal.h"

struct pool_job {
  uint64_t timeout_ms;
  capsa_pool_fill_fn fill;
  capsa_pool_done_fn done;
  void *arg;
  struct capsa__pool_impl *p;
  struct pool_worker *w;  // while sent
  struct pool_job *next;  // queue
};

struct pool_worker {
  struct capsa__pool_impl *p;
  capsa_renderer_t *r;   // NULL: slot empty (or being refilled)
  bool ready;            // READY and not dying
  struct pool_job *job;  // in flight
  unsigned jobs;         // done by this worker
  bool recycling;        // asked to shut down, replaced when CLOSED
  uint64_t cpu_checked;  // loop time (ms) of the last CPU reading
};

struct capsa__pool_impl {
  capsa_pool_t *pub;
  capsa_host_t *host;
  int kind;
  capsa_pool_options_t o;
  bool started, closing;
  capsa_pool_close_cb close_cb;
  uv_timer_t closer;  // calls close_cb from the loop
  struct pool_worker w[CAPSA_POOL_MAX_WORKERS];
  struct pool_job *head, *tail;
  capsa_pool_stats_t st;
};

void capsa_pool_options_init(capsa_pool_options_t *o) {
  memset(o, 0, sizeof *o);
  o->workers = 4;
  o->max_queued = 1024;
  o->shutdown_timeout_ms = 1000;
}

static unsigned live_workers(const struct capsa__pool_impl *p) {
  unsigned n = 0;
  for (unsigned i = 0; i < p->o.workers; i++) n += p->w[i].r != NULL;
  return n;
}

static void finish_job(struct pool_job *j, capsa_renderer_t *r, int status,
                       capsa_msg_t *reply) {
  struct capsa__pool_impl *p = j->p;
  if (status == 0)
    p->st.completed++;
  else
    p->st.failed++;
  j->done(p->pub, r, status, reply, j->arg);
  free(j);
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
  // A failed job means the worker is dying (-ECANCELED) or about to be
  // killed for its deadline: no more work until it is READY again.
  if (status < 0 &&
      !(status == -ETIMEDOUT && r->h->kinds[r->kind].keep_on_request_timeout))
    w->ready = false;
  finish_job(j, r, status, reply);
  if (w->ready && !p->closing && worn_out(p, w)) {
    w->ready = false;
    w->recycling = true;
    if (capsa_renderer_shutdown(w->r, p->o.shutdown_timeout_ms) < 0)
      capsa_renderer_kill(w->r);
  }
  dispatch(p);
}

// Sends job j to idle worker w. 0, or the error (the job is not consumed).
static int send_job(struct pool_worker *w, struct pool_job *j) {
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_NONE);
  int err = j->fill(&m, j->arg);
  if (err >= 0) {
    j->w = w;
    err = capsa_renderer_request(w->r, &m, j->timeout_ms, on_reply, j);
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

static void fail_queue(struct capsa__pool_impl *p, int status) {
  while (p->head) {
    struct pool_job *j = p->head;
    p->head = j->next;
    p->st.queued--;
    finish_job(j, NULL, status, NULL);
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
    if (err < 0) finish_job(j, w->r, err, NULL);
  }
  // Nobody left who could take them: say so rather than wait forever.
  if (p->head && live_workers(p) == 0) fail_queue(p, -ENOTCONN);
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
  w->job = NULL;
  w->jobs = 0;
  w->cpu_checked = 0;
  w->recycling = false;
  r->observer = observe;
  r->observer_ctx = w;
  return 0;
}

static void observe(capsa_renderer_t *r, const capsa_host_event_t *ev,
                    void *ctx) {
  struct pool_worker *w = ctx;
  struct capsa__pool_impl *p = w->p;
  switch (ev->type) {
    case CAPSA_EV_READY:
      w->ready = !w->recycling && !p->closing;
      w->jobs = 0;  // a new incarnation
      w->cpu_checked = 0;
      dispatch(p);
      break;
    case CAPSA_EV_CLOSED: {
      bool refill = w->recycling && !p->closing;
      w->r = NULL;
      w->ready = false;
      r->observer = NULL;
      if (refill && spawn_into(w) == 0) p->st.recycled++;
      p->st.workers = live_workers(p);
      if (p->closing)
        maybe_closed(p);
      else
        dispatch(p);
      break;
    }
    case CAPSA_EV_MESSAGE:
    case CAPSA_EV_LOG:
    case CAPSA_EV_RESTARTED:
      break;
    default:  // how an incarnation ended: no work until READY again
      w->ready = false;
      break;
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
      opts.max_queued == 0)
    return -EINVAL;
  struct capsa__pool_impl *p = calloc(1, sizeof *p);
  if (!p) return -ENOMEM;
  p->pub = pool;
  p->host = host;
  p->kind = kind;
  p->o = opts;
  for (unsigned i = 0; i < CAPSA_POOL_MAX_WORKERS; i++) p->w[i].p = p;
  uv_timer_init(h->loop, &p->closer);
  p->closer.data = p;
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

int capsa_pool_submit(capsa_pool_t *pool, uint64_t timeout_ms,
                      capsa_pool_fill_fn fill, capsa_pool_done_fn done,
                      void *arg) {
  if (!pool || !pool->impl || !fill || !done) return -EINVAL;
  struct capsa__pool_impl *p = pool->impl;
  if (!p->started || p->closing || live_workers(p) == 0) return -ENOTCONN;
  struct pool_job *j = calloc(1, sizeof *j);
  if (!j) return -ENOMEM;
  *j = (struct pool_job){timeout_ms, fill, done, arg, p, NULL, NULL};
  struct pool_worker *w = p->head ? NULL : idle_worker(p);
  if (w) {
    // Sent at once: its errors are this call's (done is never called).
    int err = send_job(w, j);
    if (err < 0) {
      free(j);
      return err;
    }
    p->st.submitted++;
    return 0;
  }
  if (p->st.queued >= p->o.max_queued) {
    free(j);
    return -EBUSY;
  }
  if (p->tail)
    p->tail->next = j;
  else
    p->head = j;
  p->tail = j;
  p->st.queued++;
  p->st.submitted++;
  return 0;
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

static void on_closer_closed(uv_handle_t *hd) {
  struct capsa__pool_impl *p = hd->data;
  capsa_pool_t *pool = p->pub;
  capsa_pool_close_cb cb = p->close_cb;
  pool->impl = NULL;
  free(p);
  if (cb) cb(pool);
}

static void maybe_closed(struct capsa__pool_impl *p) {
  if (!p->closing || live_workers(p) != 0) return;
  if (!uv_is_closing((uv_handle_t *)&p->closer))
    uv_close((uv_handle_t *)&p->closer, on_closer_closed);
}

void capsa_pool_close(capsa_pool_t *pool, capsa_pool_close_cb cb) {
  if (!pool || !pool->impl) return;
  struct capsa__pool_impl *p = pool->impl;
  if (p->closing) return;
  p->closing = true;
  p->close_cb = cb;
  fail_queue(p, -ECANCELED);
  for (unsigned i = 0; i < p->o.workers; i++) {
    struct pool_worker *w = &p->w[i];
    if (!w->r) continue;
    w->ready = false;
    if (capsa_renderer_shutdown(w->r, p->o.shutdown_timeout_ms) < 0)
      capsa_renderer_kill(w->r);  // not READY (starting, restarting)
  }
  maybe_closed(p);
}
