// Wakes a libuv loop when a ring fast path (ipc/ring_fastpath.h) has data.
//
//   static void on_ring(capsa_ring_watch_t *w) {
//     capsa_channel_poll_fastpath(w->data);   // deliver what the ring holds
//   }
//   capsa_ring_watch_t watch;
//   capsa_ring_watch_init(loop, &watch, &fp);  // fp borrowed, must outlive it
//   watch.data = &channel;
//   capsa_ring_watch_start(&watch, on_ring);
//   ...
//   capsa_ring_watch_close(&watch, NULL);
//
// How: a prepare handle arms the ring just before the loop blocks (so the
// peer rings the doorbell eventfd only then, and costs no system call while
// the loop is busy), a poll handle on the doorbell calls back, and a check
// handle disarms after the loop wakes. If the ring already holds data when
// the loop is about to block, the watch rings its own doorbell so that the
// loop does not block. The callback should drain the ring (the channel does,
// up to its per-wakeup limit; leftovers are found at the next prepare). A
// corrupt ring gets one more callback (where the channel's read reports the
// bad message), then the watch stops itself.
#ifndef CAPSA_IPC_RING_WATCH_H_
#define CAPSA_IPC_RING_WATCH_H_

#include <uv.h>

#include "ipc/ring_fastpath.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct capsa_ring_watch capsa_ring_watch_t;
typedef void (*capsa_ring_watch_cb)(capsa_ring_watch_t *w);
typedef void (*capsa_ring_watch_close_cb)(capsa_ring_watch_t *w);

struct capsa_ring_watch {
  void *data;  // for the user
  // Private.
  capsa_ring_fastpath_t *fp;
  uv_prepare_t prepare;
  uv_check_t check;
  uv_poll_t poll;
  capsa_ring_watch_cb cb;
  capsa_ring_watch_close_cb close_cb;
  int open_handles;
  int broken;  // the ring is corrupt: one last callback, then stopped
};

// Binds the watch to `loop` and to `fp` (borrowed; must outlive the watch).
// Returns 0 or -EBADF (fp has no doorbell), or a libuv error.
int capsa_ring_watch_init(uv_loop_t *loop, capsa_ring_watch_t *w,
                          capsa_ring_fastpath_t *fp);
// Calls `cb` from the loop whenever the ring may hold records. Returns 0 or a
// libuv error (then cb is never called).
int capsa_ring_watch_start(capsa_ring_watch_t *w, capsa_ring_watch_cb cb);
// Stops calling back and disarms the ring. Returns 0.
int capsa_ring_watch_stop(capsa_ring_watch_t *w);
// Closes the watch's handles (not fp), then calls `cb` (may be NULL) from the
// loop; *w must stay valid until then.
void capsa_ring_watch_close(capsa_ring_watch_t *w,
                            capsa_ring_watch_close_cb cb);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_RING_WATCH_H_
