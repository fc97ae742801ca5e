// The heartbeat: a PING every heartbeat_ms to a READY renderer, and the
// HUNG verdict when its PONG does not come within heartbeat_timeout_ms.
// The state machine (host/incarnation.c) owns the timer and the reply
// callback; this file decides when a PING is due and what a missing PONG
// means. It never ends a renderer.
#include <errno.h>
#include <poll.h>

#include "host/host_internal.h"

static bool unread_input(const struct capsa_host_renderer *r) {
  struct pollfd p = {.fd = r->chan_fd, .events = POLLIN};
  return r->chan_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

void capsa__heartbeat_reset(struct capsa_host_renderer *r) {
  r->hb.ping_outstanding = false;
  r->hb.ping_excused = false;
}

bool capsa__heartbeat_due(struct capsa_host_renderer *r) {
  if (r->state != R_READY || r->hb.ping_outstanding || r->kill_reason ||
      r->deadline_requests > 0)
    return false;
  // After an excused timeout: the next PING once what it sent is read.
  if (r->hb.ping_excused && unread_input(r)) return false;
  r->hb.ping_excused = false;
  return true;
}

int capsa__heartbeat_ping(struct capsa_host_renderer *r,
                          capsa_channel_reply_cb cb) {
  capsa_msg_t ping;
  capsa_msg_init(&ping, CAPSA_MSG_PING);
  ping.u.ping.seq = uv_now(r->h->loop);
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  int err =
      capsa_channel_request(&r->ch, &ping, k->heartbeat_timeout_ms, cb, NULL);
  if (err == 0) {
    r->hb.ping_outstanding = true;
    r->hb.ping_rests = r->ch.share.rests;
  }
  return err;
}

const char *capsa__heartbeat_pong_verdict(struct capsa_host_renderer *r,
                                          int status) {
  r->hb.ping_outstanding = false;
  r->hb.ping_excused = false;
  // Busy on a request with a deadline: PINGs wait behind it, and that
  // deadline, not the heartbeat, judges the renderer. A channel that
  // rested meanwhile had its messages held back by the host's share
  // (ipc/busy_share.h): the PONG may be among them, so the next heartbeat
  // asks again. A renderer that stops sending is judged once the host has
  // read what it sent (no more rests); one that floods stays held to its
  // share and its budgets.
  // Likewise while what it sent is still unread in its socket (however
  // the host came to be behind: a start-up allowance spent without rests,
  // a loop slowed by its other work, an emulated machine): its PONG may be
  // there too.
  bool held_back = r->ch.share.rests != r->hb.ping_rests;
  if (status != -ETIMEDOUT || r->state != R_READY || r->deadline_requests)
    return NULL;
  if (held_back || unread_input(r)) {
    // Excused: no new PING while its input stays unread (each would expire
    // in turn, and the channel remembers only the last 16 expired requests:
    // the late PONG to an older one would be a bad message).
    r->hb.ping_excused = true;
    return NULL;
  }
  return "no pong within the heartbeat timeout";
}
