// libuv integration of the ring fast path's doorbell (ipc/ring_watch.h).
#include "ipc/ring_watch.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

static void ring_self(capsa_ring_watch_t *w) {
  uint64_t one = 1;
  ssize_t n = write(capsa_ring_fastpath_bell_fd(w->fp), &one, sizeof one);
  (void)n;  // EAGAIN: already rung
}

static void on_prepare(uv_prepare_t *h) {
  capsa_ring_watch_t *w = h->data;
  // Data already there (or a corrupt ring to report): do not block.
  int r = capsa_ring_fastpath_arm(w->fp);
  if (r < 0) w->broken = 1;
  if (r != 0) ring_self(w);
}

static void on_check(uv_check_t *h) {
  capsa_ring_watch_t *w = h->data;
  capsa_ring_fastpath_disarm(w->fp);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  capsa_ring_watch_t *w = h->data;
  (void)status;
  (void)events;
  // The doorbell's count is drained at the next arm; what matters is the
  // ring, which the callback reads.
  if (w->cb) w->cb(w);
  // A corrupt ring has been reported through the callback (the channel's
  // recv fails); watching it further would only spin the loop.
  if (w->broken) capsa_ring_watch_stop(w);
}

int capsa_ring_watch_init(uv_loop_t *loop, capsa_ring_watch_t *w,
                          capsa_ring_fastpath_t *fp) {
  if (!loop || !w || !fp) return -EINVAL;
  int bell = capsa_ring_fastpath_bell_fd(fp);
  if (bell < 0) return -EBADF;
  w->fp = fp;
  w->cb = NULL;
  w->close_cb = NULL;
  w->broken = 0;
  int err = uv_poll_init(loop, &w->poll, bell);
  if (err < 0) return err;
  uv_prepare_init(loop, &w->prepare);
  uv_check_init(loop, &w->check);
  w->poll.data = w->prepare.data = w->check.data = w;
  w->open_handles = 3;
  return 0;
}

int capsa_ring_watch_start(capsa_ring_watch_t *w, capsa_ring_watch_cb cb) {
  if (!w || !cb) return -EINVAL;
  int err = uv_poll_start(&w->poll, UV_READABLE, on_poll);
  if (err < 0) return err;
  w->cb = cb;
  uv_prepare_start(&w->prepare, on_prepare);
  uv_check_start(&w->check, on_check);
  return 0;
}

int capsa_ring_watch_stop(capsa_ring_watch_t *w) {
  if (!w) return -EINVAL;
  uv_poll_stop(&w->poll);
  uv_prepare_stop(&w->prepare);
  uv_check_stop(&w->check);
  capsa_ring_fastpath_disarm(w->fp);
  w->cb = NULL;
  return 0;
}

static void on_closed(uv_handle_t *h) {
  capsa_ring_watch_t *w = h->data;
  if (--w->open_handles == 0 && w->close_cb) w->close_cb(w);
}

void capsa_ring_watch_close(capsa_ring_watch_t *w,
                            capsa_ring_watch_close_cb cb) {
  if (!w) return;
  capsa_ring_watch_stop(w);
  w->close_cb = cb;
  uv_close((uv_handle_t *)&w->poll, on_closed);
  uv_close((uv_handle_t *)&w->prepare, on_closed);
  uv_close((uv_handle_t *)&w->check, on_closed);
}
