// A worker pool: N renderers of one kind serving jobs in turn, for batch
// work on untrusted input (thumbnails, decoders, converters).
//
//   #include <capsa/capsa.h>
//   #include "thumb.capsa.h"  // generated from thumb.fbs (<capsa/interface.h>)
//
//   struct job {
//     const char *name;
//     capsa_shm_region_t png;  // sealed for reading, its own for this job
//     thumb_decode_t q;        // the request, encoded when it is sent
//   };
//
//   // When a worker is free: the request for that worker, fresh handles.
//   static int fill(capsa_pool_t *pool, capsa_renderer_t *worker,
//                   capsa_msg_t *m, void *arg) {
//     struct job *j = arg;
//     (void)pool, (void)worker;
//     thumb_decode_init(&j->q);
//     capsa_msg_init_iface(m, &thumb_interface, THUMB_DECODE, &j->q);
//     capsa_rights_t ro;
//     capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R);
//     int fd = dup(j->png.fd);  // the pool owns it once attached
//     j->q.png = capsa_msg_add_handle(m, fd, CAPSA_HANDLE_SHM, &ro,
//                                     j->png.size, false);
//     if (j->q.png < 0) close(fd);
//     return j->q.png < 0 ? j->q.png : 0;
//   }
//   // Exactly once per job: the reply, or why there is none.
//   static void done(capsa_pool_t *pool, const capsa_pool_result_t *res,
//                    void *arg) {
//     struct job *j = arg;
//     (void)pool;
//     if (res->status < 0)  // "crashed: signal 11 (SEGV)", "deadline: ..."
//       fprintf(stderr, "%s: %s\n", j->name, res->reason);
//     else
//       printf("%s: %d\n", j->name,
//              ((const thumb_done_t *)res->reply->u.iface.value)->status);
//     capsa_shm_close(&j->png);
//   }
//
//   // `host` started, `kind` defined on it (<capsa/host.h>).
//   int decode_all(capsa_host_t *host, int kind, struct job *jobs, int n) {
//     static capsa_pool_t pool;
//     capsa_pool_options_t po;
//     capsa_pool_options_init(&po);  // the defaults are for untrusted input
//     po.workers = 8;
//     int err = capsa_pool_init(host, &pool, kind, &po);
//     if (err == 0) err = capsa_pool_start(&pool);
//     for (int i = 0; err == 0 && i < n; i++)
//       err = capsa_pool_submit(&pool, 5000, fill, done, &jobs[i]);
//     if (err < 0) fprintf(stderr, "pool: %s\n", capsa_pool_error(&pool));
//     return err;  // uv_run, then capsa_pool_close before capsa_host_close
//   }
//
// Jobs wait in a bounded FIFO until a worker is READY and idle; `fill`
// builds the request then, for that worker (so descriptors are dup'd only
// for the job being sent), and `done` gets the outcome exactly once: the
// worker's reply, or why there is none (capsa_pool_result_t: the status,
// and for a worker that died with the job how it ended — signal, limit,
// bad-message text — in one line). A job is never retried: whether one is
// safe to retry is the embedder's call.
//
// Untrusted input crashes, hangs, exhausts and lies: the pool keeps serving
// through that with its defaults. A worker that ends (crash, deadline,
// limit, bad message, anything) is replaced by a new process: at once when
// it ended with a job (that job failed: the input's doing), after a backoff
// (respawn_backoff_ms, doubling per such ending of the slot, at most 5 s)
// when it ended idle. Only when max_start_failures workers in a row end
// before they are READY (the kind cannot serve: a missing interface, a
// sandbox this machine refuses) does the pool stop: its queued jobs fail
// with -ENOTCONN and capsa_pool_error() says why. The kind's own
// max_restarts, if any, is used first (the same handle restarts).
//
// Recycling is the pool's: after recycle_after_jobs jobs, or once its process
// tree used recycle_after_cpu_ms of CPU (read after a job, unless the last
// reading is younger than a tenth of that budget, at most 50 ms: so a worker
// may run that much past it; and a long-lived worker never meets its kind's
// lifetime limit_cpu_seconds), a worker is shut down cleanly
// (CAPSA_EV_SHUTDOWN) when idle and a new one spawned in its place. The host's
// event callback still sees every event of every worker.
//
// Isolation: a worker serves many jobs, so a worker compromised by one input
// sees the jobs it serves after it, and keeps every descriptor or region it
// was handed, until it is replaced. Regions attached by `fill` are the
// worker's from then on: do not hand the same region to another worker.
#ifndef CAPSA_HOST_CAPSA_POOL_H_
#define CAPSA_HOST_CAPSA_POOL_H_

#include <stdint.h>

#include "host/capsa_host.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

#define CAPSA_POOL_MAX_WORKERS 64

// What a worker may see of other jobs (docs/pools.md).
typedef enum capsa_pool_isolation {
  // A worker serves one job and is killed (SIGKILL, never asked) before
  // that job's done() is called: no process ever holds two jobs, and
  // nothing of a job is released while its process can run. Its successor
  // is spawned while it works (up to `workers` spares besides `workers`
  // running), so a job rarely waits for a start. The default.
  CAPSA_POOL_ONE_JOB_PER_PROCESS = 0,
  // A worker serves jobs in turn until recycled (recycle_after_*; the
  // recycled one is killed after its job, done() once it is gone): a worker
  // compromised by one input sees the inputs of every later job it serves,
  // and keeps every region it was handed, until then. Cheaper per job.
  CAPSA_POOL_SHARED_WORKERS,
} capsa_pool_isolation_t;

typedef struct capsa_pool_options {
  capsa_pool_isolation_t isolation;  // default ONE_JOB_PER_PROCESS
  unsigned workers;                  // 1..CAPSA_POOL_MAX_WORKERS; default 4
  unsigned max_queued;               // jobs waiting for a worker; default 1024
  unsigned recycle_after_jobs;       // 0: never (default)
  uint64_t recycle_after_cpu_ms;     // 0: never (default)
  unsigned shutdown_timeout_ms;      // recycling, closing; default 1000
  // Workers in a row (pool-wide, reset by any READY) that may end before
  // READY, or fail to spawn, before the pool gives up; default 3.
  unsigned max_start_failures;
  // First delay before replacing a worker that ended without a job;
  // doubles per such ending of the same slot until one of its jobs
  // succeeds, capped at 5 s. Default 100; 0: at once (still capped growth).
  unsigned respawn_backoff_ms;
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
  uint64_t replaced;  // workers replaced after they ended on their own
} capsa_pool_stats_t;

// A job's outcome, borrowed by `done` for the call.
typedef struct capsa_pool_result {
  // 0: `reply` is the worker's answer. Otherwise:
  //   -ETIMEDOUT   the job's deadline passed (the kind's policy then kills
  //                and replaces the worker, see keep_on_request_timeout);
  //   -ECANCELED   the worker ended with the job (`ended` says how), or the
  //                pool closed;
  //   -ENOTCONN    the pool gave up (capsa_pool_error) or had no worker;
  //   fill's own error, or the send's (-EINVAL: a handle wider than its
  //                declaration, a FIFO as a file...: `reason` says which).
  int status;
  capsa_renderer_t *worker;  // the worker it went to; NULL: none
  capsa_msg_t *reply;        // status 0; as capsa_renderer_reply_cb's
  // How the worker's incarnation ended when that failed the job:
  // CAPSA_EV_CRASHED, _LIMIT, _BAD_MESSAGE, _KILLED, _EXITED, _ABORTED,
  // _HUNG...; 0 otherwise. `signal` and `exit_status` as in that event.
  capsa_host_event_type_t ended;
  int signal;
  int exit_status;
  // Why it failed, one line ("crashed: signal 11 (SEGV)", "limit: memory
  // (cgroup memory.max)", "bad message: ...", "deadline: no reply within
  // 500 ms"); "" when status is 0.
  const char *reason;
} capsa_pool_result_t;

// Fills `msg` (already capsa_msg_init'ed to CAPSA_MSG_NONE) with the job's
// request for `worker` (the renderer about to take it, borrowed); handles
// attached are sent as by capsa_renderer_request (the pool owns them then,
// even on error). Return 0, or < 0 to fail the job with that status (`done`
// is then called with it).
typedef int (*capsa_pool_fill_fn)(capsa_pool_t *pool, capsa_renderer_t *worker,
                                  capsa_msg_t *msg, void *arg);
typedef void (*capsa_pool_done_fn)(capsa_pool_t *pool,
                                   const capsa_pool_result_t *result,
                                   void *arg);
typedef void (*capsa_pool_close_cb)(capsa_pool_t *pool);

// Binds a pool to a started `host` (borrowed; must outlive the pool) and a
// kind of it. `o` is copied (NULL: defaults). Returns 0, -EINVAL (bad kind
// or options, host not started), -ENOMEM.
int capsa_pool_init(capsa_host_t *host, capsa_pool_t *pool, int kind,
                    const capsa_pool_options_t *o);
// Spawns the workers. Returns 0 or the first spawn's error (then no worker
// is left running: the pool can be closed or started again). Workers
// become READY later: one that cannot (see max_start_failures) fails the
// jobs, with the reason, rather than this call.
int capsa_pool_start(capsa_pool_t *pool);
// Queues a job: `fill` and `done` as above, `arg` passed to both (borrowed
// until `done`). timeout_ms: the job's deadline once sent (0: none; then
// only the heartbeat judges the worker). Returns 0 (then `done` is called
// exactly once, never from inside this call), -EINVAL, -EBUSY (queue full),
// -ENOTCONN (the pool gave up, or is closing: capsa_pool_error says why).
int capsa_pool_submit(capsa_pool_t *pool, uint64_t timeout_ms,
                      capsa_pool_fill_fn fill, capsa_pool_done_fn done,
                      void *arg);
// Why the pool cannot serve, one line owned by the pool ("" while it can):
// "workers of kind 'thumb' end before READY (3 in a row); the last:
// bad message: hello: interfaces ...".
const char *capsa_pool_error(const capsa_pool_t *pool);
int capsa_pool_get_stats(const capsa_pool_t *pool, capsa_pool_stats_t *out);
// Fails the queued jobs (-ECANCELED), shuts every worker down (killed after
// shutdown_timeout_ms), then calls `cb` (may be NULL) from the loop. Jobs
// running finish or get -ECANCELED first.
void capsa_pool_close(capsa_pool_t *pool, capsa_pool_close_cb cb);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_CAPSA_POOL_H_
