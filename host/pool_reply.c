// A reply kept until its worker is gone (host/pool_reply.h). The channel's
// message lives only during the callback: its decoded struct points into
// the channel's receive slot. Decoding the verified payload again into
// memory of our own costs one verification, and leaves no pointer into
// memory we do not own.
#include "host/pool_reply.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/interface.h"

int capsa__kept_reply_take(capsa_msg_t *reply, capsa__kept_reply_t *k) {
  memset(k, 0, sizeof *k);
  k->msg = *reply;
  for (uint32_t i = 0; i < CAPSA_IPC_MAX_HANDLES; i++)
    k->msg.handles[i].fd = -1;
  if (reply->type == CAPSA_MSG_INTERFACE && reply->u.iface.value) {
    const capsa_msg_interface_t *im = &reply->u.iface;
    const capsa_imessage_t *d = capsa_iface_message(im->iface, im->id);
    if (d == NULL) return -EINVAL;
    size_t head = ((size_t)d->c_size + 7u) & ~(size_t)7u;
    size_t len = im->payload.len;
    uint8_t *mem = malloc(head + (len ? len : 1));
    if (mem == NULL) return -ENOMEM;
    if (len) memcpy(mem + head, im->payload.data, len);
    char why[128];
    // The same bytes the channel verified: this cannot fail but for memory.
    if (capsa_iface_decode(im->iface, im->id, mem + head, len, reply->handles,
                           reply->handle_count, mem, why, sizeof why) < 0) {
      free(mem);
      return -EINVAL;
    }
    k->mem = mem;
    k->msg.u.iface.value = mem;
    k->msg.u.iface.payload = (capsa_bytes_t){mem + head, len};
  } else if (reply->type == CAPSA_MSG_ERROR && reply->u.error.message) {
    k->mem = strdup(reply->u.error.message);
    if (k->mem == NULL) return -ENOMEM;
    k->msg.u.error.message = k->mem;
  }
  for (uint32_t i = 0; i < reply->handle_count && i < CAPSA_IPC_MAX_HANDLES;
       i++)
    k->msg.handles[i].fd = capsa_msg_take_handle(reply, i);
  k->kept = 1;
  return 0;
}

void capsa__kept_reply_release(capsa__kept_reply_t *k) {
  if (k->kept) capsa_msg_close_handles(&k->msg);
  free(k->mem);
  memset(k, 0, sizeof *k);
}
