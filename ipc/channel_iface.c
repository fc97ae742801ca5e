// Channel core: embedder interface messages (ipc/interface.h). The core
// codec carries an interface message as an opaque payload; here, where the
// channel knows which interfaces it speaks, every one is checked against
// its generated descriptor on both sides: the sender encodes through the
// descriptor (so it never builds what the peer must refuse), the receiver
// verifies, checks direction, flags, pairing and handles, and decodes
// before anyone sees it. A failure on receipt is a bad message: the channel
// breaks and the peer is treated as hostile, as for core messages.
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/channel_core.h"
#include "ipc/reason.h"

int capsa__core_set_interfaces(capsa__chan_core_t *c,
                               const capsa_interface_t *const *list,
                               unsigned n) {
  if (n > CAPSA_IFACE_MAX_PER_CHANNEL) return -E2BIG;
  if (n > 0 && list == NULL) return -EINVAL;
  for (unsigned i = 0; i < n; i++) {
    char why[CAPSA_IPC_REASON_MAX];
    if (capsa_iface_check_descriptor(list[i], why, sizeof why) < 0)
      return -EINVAL;
    for (unsigned j = 0; j < i; j++)
      if (list[j] == list[i]) return -EINVAL;  // one index per interface
  }
  for (unsigned i = 0; i < n; i++) c->ifaces[i] = list[i];
  c->nifaces = n;
  return 0;
}

static int index_of(const capsa__chan_core_t *c, const capsa_interface_t *f) {
  for (unsigned i = 0; i < c->nifaces; i++)
    if (c->ifaces[i] == f) return (int)i;
  return -1;
}

static capsa_peer_role_t our_role(const capsa__chan_core_t *c) {
  return c->peer.peer == CAPSA_PEER_RENDERER ? CAPSA_PEER_HOST
                                             : CAPSA_PEER_RENDERER;
}

int capsa__iface_prepare_send(capsa__chan_core_t *c, capsa_msg_t *msg) {
  if (msg->type != CAPSA_MSG_INTERFACE) return 0;
  capsa_msg_interface_t *im = &msg->u.iface;
  if (im->value == NULL) return 0;  // pre-encoded bytes, sent as they are
  int idx = index_of(c, im->iface);
  if (idx < 0)
    return capsa__core_refuse(
        c, -EINVAL, "interface %s is not one this channel speaks",
        im->iface && im->iface->name ? im->iface->name : "(null)");
  const capsa_imessage_t *d = capsa_iface_message(im->iface, im->id);
  if (d == NULL)
    return capsa__core_refuse(c, -EINVAL, "interface %s has no message %u",
                              im->iface->name, (unsigned)im->id);
  // A response's pairing is the receiver's to check (it holds the
  // request); direction and flags are ours to get right.
  char why[CAPSA_IPC_REASON_MAX];
  uint32_t answered = 0;
  for (uint32_t i = 0; d->kind == CAPSA_IMSG_RESPONSE && answered == 0 &&
                       i < im->iface->nmessages;
       i++)
    if (im->iface->messages[i].reply == im->id)
      answered = im->iface->messages[i].id;
  if (capsa_iface_check_envelope(im->iface, im->id, our_role(c), msg->flags,
                                 answered, why, sizeof why) < 0)
    return capsa__core_refuse(c, -EINVAL, "%s", why);
  if (c->itx == NULL && (c->itx = malloc(CAPSA_IPC_MAX_MESSAGE)) == NULL)
    return -ENOMEM;
  // Room for the envelope around it: the whole must fit the message limit.
  int n = capsa_iface_encode(im->iface, im->id, im->value, msg->handles,
                             msg->handle_count, c->itx,
                             CAPSA_IPC_MAX_MESSAGE - 1024, why, sizeof why);
  if (n < 0)
    return capsa__core_refuse(c, n == -ENOENT ? -EINVAL : n, "%s", why);
  im->index = (uint32_t)idx;
  im->payload = (capsa_bytes_t){c->itx, (size_t)n};
  return 0;
}

void capsa__iface_note_request(const capsa__chan_core_t *c,
                               const capsa_msg_t *msg, capsa__pending_t *p) {
  p->iface_index1 = 0;
  p->iface_msg = 0;
  if (msg->type != CAPSA_MSG_INTERFACE) return;
  // Called before the send encodes it: the index from the descriptor, or
  // the one a pre-encoded message carries.
  int idx = msg->u.iface.value ? index_of(c, msg->u.iface.iface)
                               : (int)msg->u.iface.index;
  if (idx < 0) return;  // the send refuses it
  p->iface_index1 = (uint32_t)idx + 1;
  p->iface_msg = msg->u.iface.id;
}

#define BAD(...) capsa__bad(c->reason, sizeof c->reason, __VA_ARGS__)

int capsa__iface_accept(capsa__chan_core_t *c, capsa__rx_slot_t *s,
                        const capsa__pending_t *reply) {
  capsa_msg_t *m = &s->msg;
  if (m->type != CAPSA_MSG_INTERFACE) {
    // Only ERROR may answer an interface request besides its response.
    if (reply->id != 0 && reply->iface_index1 != 0 &&
        m->type != CAPSA_MSG_ERROR)
      return BAD("%s answers interface request %llu",
                 capsa_msg_type_name(m->type), (unsigned long long)reply->id);
    return 0;
  }
  capsa_msg_interface_t *im = &m->u.iface;
  if (im->index >= c->nifaces)
    return BAD("interface %u: the channel speaks %u", im->index, c->nifaces);
  const capsa_interface_t *f = c->ifaces[im->index];
  uint32_t answered = 0;
  if (m->flags & CAPSA_MSG_F_RESPONSE) {
    if (reply->iface_index1 != im->index + 1)
      return BAD(
          "%s: a response to request %llu, which was not of this "
          "interface",
          f->name, (unsigned long long)m->request_id);
    answered = reply->iface_msg;
  }
  char why[CAPSA_IPC_REASON_MAX];
  if (capsa_iface_check_envelope(f, im->id, c->peer.peer, m->flags, answered,
                                 why, sizeof why) < 0)
    return BAD("%s", why);
  const capsa_imessage_t *d = capsa_iface_message(f, im->id);
  // The payload sits at a 4-aligned offset of the receive buffer; the
  // decoder reads 8-byte scalars, so it gets an 8-aligned copy, after the
  // decoded struct in one allocation that lives as long as the message.
  size_t head = ((size_t)d->c_size + 7u) & ~(size_t)7u;
  size_t len = im->payload.len;
  void *mem = malloc(head + (len ? len : 1));
  if (mem == NULL) return BAD("%s.%s: out of memory", f->name, d->name);
  uint8_t *copy = (uint8_t *)mem + head;
  if (len) memcpy(copy, im->payload.data, len);
  if (capsa_iface_decode(f, im->id, copy, len, m->handles, m->handle_count, mem,
                         why, sizeof why) < 0) {
    free(mem);
    return BAD("%s", why);
  }
  s->iface_mem = mem;
  im->iface = f;
  im->value = mem;
  im->payload = (capsa_bytes_t){copy, len};
  return 0;
}

void capsa__iface_release(capsa__rx_slot_t *s) {
  free(s->iface_mem);
  s->iface_mem = NULL;
}
