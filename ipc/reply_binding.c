// Channel core: a reply answers a request this channel received and has not
// answered yet. Request ids are the peer's own counter, from 1 on every
// channel, and a reply carries only the id: without this check an answer
// kept across a renderer's restart reaches the next incarnation as the
// answer to its own request 1 (issue 32, item 3).
#include <errno.h>
#include <string.h>

#include "ipc/channel_core.h"

static int find_open(const capsa__chan_core_t *c, uint64_t id) {
  for (unsigned i = 0; i < c->npeer_open; i++)
    if (c->peer_open[i] == id) return (int)i;
  return -1;
}

void capsa__core_open_peer_request(capsa__chan_core_t *c, uint64_t id) {
  if (id == 0 || find_open(c, id) >= 0) return;  // a repeated id: one answer
  if (c->npeer_open == CAPSA__MAX_PEER_OPEN) {
    // Full: the oldest is forgotten (an honest peer that gave up on
    // requests the embedder never answers must not be punished for it).
    memmove(&c->peer_open[0], &c->peer_open[1],
            (CAPSA__MAX_PEER_OPEN - 1) * sizeof c->peer_open[0]);
    c->npeer_open--;
  }
  c->peer_open[c->npeer_open++] = id;
}

void capsa__core_close_peer_request(capsa__chan_core_t *c, uint64_t id) {
  int i = find_open(c, id);
  if (i < 0) return;
  memmove(&c->peer_open[i], &c->peer_open[i + 1],
          (c->npeer_open - (unsigned)i - 1) * sizeof c->peer_open[0]);
  c->npeer_open--;
}

int capsa__core_check_reply(const capsa__chan_core_t *c,
                            const capsa_msg_t *request, capsa_msg_t *reply) {
  if (request == NULL || reply == NULL || request->request_id == 0 ||
      !(request->flags & CAPSA_MSG_F_REQUEST))
    return -EINVAL;
  if (c == NULL || request->origin != c->serial) return -ESTALE;
  if (find_open(c, request->request_id) < 0) return -ENOENT;
  reply->flags = CAPSA_MSG_F_RESPONSE;
  reply->request_id = request->request_id;
  return 0;
}
