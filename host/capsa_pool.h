// A worker pool: N renderers of one kind serving jobs in turn, for batch
// work on untrusted input (thumbnails, decoders, converters).
//
//   static int fill(capsa_msg_t *m, void *arg) {       // when a worker is free
//     struct job *j = arg;                   // j->q: the generated struct,
//     capsa_msg_init_iface(m, &my_iface, MY_JOB, &j->q);  // sent after fill
//     ... attach dups of j's regions (reused across jobs) ...
//     return 0;
//   }
//   static void done(capsa_pool_t *p, capsa_renderer_t *r, int status,
//                    capsa_msg_t *reply, void *arg) { ... }
//
//   capsa_pool_options_t po;
//   capsa_pool_options_init(&po);
//   po.workers = 8;
//   po.recycle_after_jobs = 500;            // a fresh process now and then
//   capsa_pool_t pool;
//   capsa_pool_init(&host, &pool, kind, &po);  // after capsa_host_start
//   capsa_pool_start(&pool);
//   capsa_pool_submit(&pool, 5000, fill, done, job);
//   ...
//   capsa_pool_close(&pool, on_pool_closed);   // before capsa_host_close
//
// Jobs wait in a bounded FIFO until a worker is READY and idle; `fill`
// builds the request then (so descriptors are dup'd only for the job being
// sent), and `done` gets the worker's reply, or -ETIMEDOUT (the deadline
// passed: the kind's policy kills and restarts that worker, see
// keep_on_request_timeout), or -ECANCELED (the worker died; the job is not
// retried: whether a job is safe to retry is the embedder's call), or
// -ENOTCONN (the pool has no worker left). Every submitted job gets `done`
// exactly once.
//
// Supervision is the host's: a crashed or hung worker is restarted under its
// kind's max_restarts / restart_window_ms / restart_backoff_ms; a worker
// whose restarts are spent is gone and the pool shrinks (capsa_pool_get_stats).
// Recycling is the pool's: after recycle_after_jobs jobs, or once its process
// tree used recycle_after_cpu_ms of CPU (read after a job, unless the last
// reading is younger than a tenth of that budget, at most 50 ms: so a worker
// may run that much past it; and a long-lived worker never meets its kind's
// lifetime limit_cpu_seconds), a worker is shut down cleanly
// (CAPSA_EV_SHUTDOWN) when idle and a new one spawned in its place. The host's
// event callback still sees every event of every worker.
#ifndef CAPSA_HOST_CAPSA_POOL_H_
#define CAPSA_HOST_CAPSA_POOL_H_

#include <stdint.h>

#include "host/capsa_host.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA_POOL_MAX_WORKERS 64

typedef struct capsa_pool_options {
  unsigned workers;               // 1..CAPSA_POOL_MAX_WORKERS; default 4
  unsigned max_queued;            // jobs waiting for a worker; default 1024
  unsigned recycle_after_jobs;    // 0: never (default)
  uint64_t recycle_after_cpu_ms;  // 0: never (default)
  unsigned shutdown_timeout_ms;   // recycling, closing; default 1000
} capsa_pool_options_t;

void capsa_pool_options_init(capsa_pool_options_t *o);

typedef struct capsa_pool {
  void *data;                     // for the embedder
  struct capsa__pool_impl *impl;  // private
} capsa_pool_t;

typedef struct capsa_pool_stats {
  unsigned workers;  // handles alive (READY or starting or restarting)
  unsigned idle;     // READY and without a job
  unsigned queued;   // jobs waiting for a worker
  uint64_t submitted, completed, failed;  // completed: status 0
  uint64_t recycled;                      // workers replaced by recycling
} capsa_pool_stats_t;

// Fills `msg` (already capsa_msg_init'ed to CAPSA_MSG_NONE) with the job's
// request for the worker about to take it; handles attached are sent as by
// capsa_renderer_request (the pool owns them then, even on error). Return 0,
// or < 0 to fail the job with that status (`done` is then called with it).
typedef int (*capsa_pool_fill_fn)(capsa_msg_t *msg, void *arg);
// A job's outcome (see above). `r` is the worker it ran on (NULL when it
// never reached one); `reply` borrowed, valid during the call.
typedef void (*capsa_pool_done_fn)(capsa_pool_t *pool, capsa_renderer_t *r,
                                   int status, capsa_msg_t *reply, void *arg);
typedef void (*capsa_pool_close_cb)(capsa_pool_t *pool);

// Binds a pool to a started `host` (borrowed; must outlive the pool) and a
// kind of it. `o` is copied (NULL: defaults). Returns 0, -EINVAL (bad kind
// or options, host not started), -ENOMEM.
int capsa_pool_init(capsa_host_t *host, capsa_pool_t *pool, int kind,
                    const capsa_pool_options_t *o);
// Spawns the workers. Returns 0 or the first spawn's error (then no worker
// is left running: the pool can be closed or started again).
int capsa_pool_start(capsa_pool_t *pool);
// Queues a job: `fill` and `done` as above, `arg` passed to both (borrowed
// until `done`). timeout_ms: the job's deadline once sent (0: none; then
// only the heartbeat judges the worker). Returns 0 (then `done` is called
// exactly once, never from inside this call), -EINVAL, -EBUSY (queue full),
// -ENOTCONN (no worker left, or closing).
int capsa_pool_submit(capsa_pool_t *pool, uint64_t timeout_ms,
                      capsa_pool_fill_fn fill, capsa_pool_done_fn done,
                      void *arg);
int capsa_pool_get_stats(const capsa_pool_t *pool, capsa_pool_stats_t *out);
// Fails the queued jobs (-ECANCELED), shuts every worker down (killed after
// shutdown_timeout_ms), then calls `cb` (may be NULL) from the loop. Jobs
// running finish or get -ECANCELED first.
void capsa_pool_close(capsa_pool_t *pool, capsa_pool_close_cb cb);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_CAPSA_POOL_H_
