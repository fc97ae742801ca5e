// A broker service's answer with a descriptor (host/broker/broker.h),
// admitted against the host's total of queued descriptors and judged
// against the renderer's queue budget (host/limits/budget.c).
#include <unistd.h>

#include "host/host_internal.h"

int capsa__broker_reply_fd(struct capsa_host_renderer *r,
                           const capsa_msg_t *req, int fd,
                           capsa_handle_kind_t kind, uint64_t size,
                           const char *mime, char *why) {
  capsa_msg_t resp;
  capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
  resp.u.resource_response.status = 0;
  resp.u.resource_response.mime = mime;
  capsa_rights_t rights;
  capsa_handle_max_rights(kind, false, &rights);
  int err = capsa__budget_queue_admit(r, 1);
  if (err >= 0)
    err = capsa_msg_add_handle(&resp, fd, kind, &rights, size, false);
  if (err >= 0) err = capsa_channel_reply(&r->ch, req, &resp);
  if (err < 0) close(fd);  // on success the channel owns it
  if (err >= 0) capsa__budget_queue_verdict(r, why);
  return err < 0 ? err : 0;
}
