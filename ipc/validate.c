// Stateless message checks and the per-peer protocol state machine.
#include "ipc/validate.h"

#include <errno.h>

#include "ipc/handle.h"
#include "ipc/message_table.h"
#include "ipc/reason.h"

int capsa_msg_allowed_from(uint32_t type, capsa_peer_role_t from) {
  const capsa__msg_row_t *row = capsa__msg_row(type);
  if (row == NULL) return 0;
  unsigned bit = from == CAPSA_PEER_HOST       ? CAPSA__FROM_HOST
                 : from == CAPSA_PEER_RENDERER ? CAPSA__FROM_RENDERER
                                               : 0;
  return (row->from & bit) != 0;
}

int capsa_msg_validate(const capsa_msg_t *m, char *r, size_t n) {
  const capsa__msg_row_t *row = capsa__msg_row(m->type);
  if (row == NULL) return capsa__bad(r, n, "unknown message type %u", m->type);
  if (m->flags & ~CAPSA_MSG_F_ALL)
    return capsa__bad(r, n, "%s: unknown flags 0x%x", row->name, m->flags);
  unsigned kind = m->flags == 0                      ? CAPSA__PLAIN
                  : m->flags == CAPSA_MSG_F_REQUEST  ? CAPSA__REQUEST
                  : m->flags == CAPSA_MSG_F_RESPONSE ? CAPSA__RESPONSE
                                                     : 0;
  if ((row->kinds & kind) == 0)
    return capsa__bad(r, n, "%s: flags 0x%x not allowed for this type",
                      row->name, m->flags);
  if ((kind == CAPSA__PLAIN) != (m->request_id == 0))
    return capsa__bad(r, n, "%s: request id %llu with flags 0x%x", row->name,
                      (unsigned long long)m->request_id, m->flags);
  if (m->handle_count < row->min_handles || m->handle_count > row->max_handles)
    return capsa__bad(r, n, "%s: %u handles, allowed %u..%u", row->name,
                      m->handle_count, row->min_handles, row->max_handles);
  for (uint32_t i = 0; i < m->handle_count; i++) {
    int err = capsa_handle_check_decl(&m->handles[i], r, n);
    if (err < 0) return err;
  }
  return row->check(m, r, n);
}

void capsa_peer_state_init(capsa_peer_state_t *st, capsa_peer_role_t peer) {
  st->peer = peer;
  st->hello_seen = 0;
  st->shutdown_seen = 0;
  st->next_seq = 1;
  st->messages = 0;
}

int capsa_peer_state_accept(capsa_peer_state_t *st, const capsa_msg_t *m,
                            char *r, size_t n) {
  const char *name = capsa_msg_type_name(m->type);
  if (!capsa_msg_allowed_from(m->type, st->peer))
    return capsa__bad(r, n, "%s may not be sent by the %s", name,
                      st->peer == CAPSA_PEER_HOST ? "host" : "renderer");
  if (m->seq != st->next_seq)
    return capsa__bad(r, n, "%s: sequence %llu, expected %llu", name,
                      (unsigned long long)m->seq,
                      (unsigned long long)st->next_seq);
  // A renderer introduces itself before anything else, exactly once.
  if (st->peer == CAPSA_PEER_RENDERER) {
    if (!st->hello_seen && m->type != CAPSA_MSG_HELLO)
      return capsa__bad(r, n, "%s before hello", name);
    if (st->hello_seen && m->type == CAPSA_MSG_HELLO)
      return capsa__bad(r, n, "second hello");
  }
  if (st->shutdown_seen) return capsa__bad(r, n, "%s after shutdown", name);
  if (m->type == CAPSA_MSG_HELLO) st->hello_seen = 1;
  if (m->type == CAPSA_MSG_SHUTDOWN) st->shutdown_seen = 1;
  st->next_seq++;
  st->messages++;
  return 0;
}
