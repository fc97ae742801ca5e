// The broker's dispatcher (host/broker/broker.h): a RESOURCE_REQUEST's URL
// names its service; each service is a file of this folder. The answer's
// cost is judged here against the renderer's queue budget
// (host/limits/budget.c), and the verdict returned to the state machine.
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "host/host_internal.h"
#include "host/thread_pool.h"

// The service of `url`: 0 (answered, or to be), or -errno.
static int dispatch(struct capsa_host_renderer *r, const capsa_msg_t *req,
                    const char *url, char *why) {
  if (!url) return -EINVAL;
  if (strncmp(url, "file:", 5) == 0)
    return capsa__broker_file(r, req, url + 5, why);
  if (strncmp(url, "font:", 5) == 0)
    return capsa__broker_font(r, req, url + 5, why);
  if (strncmp(url, "dns:", 4) == 0)
    return capsa__broker_dns(r, req, url + 4, why);
  return -EPROTONOSUPPORT;
}

const char *capsa__broker_serve(struct capsa_host_renderer *r,
                                const capsa_msg_t *req, char *why) {
  why[0] = 0;
  int err = dispatch(r, req, req->u.resource_request.url, why);
  if (err < 0 && !why[0]) {
    capsa_msg_t resp;
    capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
    resp.u.resource_response.status = err;
    capsa_channel_reply(&r->ch, req, &resp);
    capsa__budget_queue_verdict(r, why);  // error answers queue bytes too
  }
  return why[0] ? why : NULL;
}

// libuv starts its thread pool on the first job, and aborts the process if
// it cannot create the threads then. The broker no longer queues work there,
// but an embedder's own may: started here, at capsa_host_start and before
// any renderer exists, no renderer (say, one that forks until the process
// table is full) can make that first job abort the host.
static void warm_work(uv_work_t *w) {}
static void warm_done(uv_work_t *w, int status) {}
static pthread_once_t g_warm_once = PTHREAD_ONCE_INIT;
static bool g_pool_not_used;

void capsa__thread_pool_not_used(void) {
  g_pool_not_used = true;
}

static void warm_once(void) {
  // On a loop of its own, run to completion here: the pool is process-wide,
  // and the embedder's loop is left without a request it did not make.
  uv_loop_t loop;
  uv_work_t w;
  if (uv_loop_init(&loop) != 0) return;
  if (uv_queue_work(&loop, &w, warm_work, warm_done) == 0)
    uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
}

int capsa__broker_start(struct capsa__host_impl *h,
                        capsa__broker_verdict_fn verdict) {
  if (!g_pool_not_used) pthread_once(&g_warm_once, warm_once);
  h->broker.verdict = verdict;
  return capsa__broker_dns_start(h);
}

void capsa__broker_cancel(struct capsa_host_renderer *r) {
  capsa__broker_dns_cancel(r);
}

void capsa__broker_close(struct capsa__host_impl *h, uv_close_cb cb) {
  for (struct capsa_host_renderer *r = h->renderers; r; r = r->next)
    capsa__broker_cancel(r);
  uv_close((uv_handle_t *)&h->broker.dns_async, cb);
}
