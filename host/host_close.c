// The host's last step of capsa_host_close, once no renderer handle is
// left (the state machine's last CLOSED, or at once when there was none):
// what outlived the renderers (host/reaper.c), the zygote, the adopted
// orphans, the broker's fonts and handle, then h itself.
#include <stdlib.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "host/orphans.h"

static void on_closer_closed(uv_handle_t *hd) {
  struct capsa__host_impl *h = hd->data;
  capsa_host_t *host = h->pub;
  capsa_host_close_cb cb = h->close_cb;
  for (unsigned i = 0; i < h->nkinds; i++)
    capsa_capmode_policy_free(h->own_policy[i]);
  if (h->exe_fd >= 0) close(h->exe_fd);
  host->impl = NULL;
  free(h);
  if (cb) cb(host);
}

static void on_async_closed(uv_handle_t *hd) {
  struct capsa__host_impl *h = hd->data;
  uv_close((uv_handle_t *)&h->closer, on_closer_closed);
}

void capsa__host_finish_close(struct capsa__host_impl *h) {
  capsa__reaper_final(h);
  capsa__zygote_stop(&h->zygote);
  // After the zygote: what it left behind has landed here by now.
  capsa__orphans_stop(h->orphans);
  h->orphans = NULL;
  capsa__broker_free_fonts(h);
  // The closer last: its callback frees h (the async handle is in h).
  if (h->broker.dns_async_inited)
    capsa__broker_close(h, on_async_closed);
  else
    uv_close((uv_handle_t *)&h->closer, on_closer_closed);
}
