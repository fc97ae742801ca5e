// The renderer's blocking loop: poll(2) for readiness, the channel core for
// everything else. No epoll, eventfd or threads, so it keeps working inside
// capability mode.
#include "ipc/loop.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/channel_core.h"
#include "ipc/codec.h"

// A marker for the pending entry of capsa_rloop_call (the core stores
// callbacks opaquely; the loop has none).
static char kCallMarker;

static int remaining_ms(uint64_t deadline) {
  if (deadline == UINT64_MAX) return -1;
  uint64_t now = capsa__now_ms();
  if (now >= deadline) return 0;
  uint64_t left = deadline - now;
  return left > INT_MAX ? INT_MAX : (int)left;
}

static uint64_t deadline_after(int timeout_ms) {
  return timeout_ms < 0 ? UINT64_MAX : capsa__now_ms() + (uint64_t)timeout_ms;
}

// Waits for `events` on the socket until `deadline`. 1 ready, 0 timeout,
// < 0 error.
static int wait_fd(capsa_rloop_t *l, short events, uint64_t deadline) {
  const capsa_fastpath_t *fp = &l->core->fastpath;
  if (events == POLLIN && l->core->has_fastpath && fp->wait != NULL) {
    // The fast path's own wait also watches the socket.
    int r = fp->wait(fp->ctx, l->core->fd, remaining_ms(deadline));
    return r > 0 ? 1 : r;
  }
  for (;;) {
    struct pollfd p = {.fd = l->core->fd, .events = events};
    int r = poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return -errno;
  }
}

// The receive slot (socket or fast path) a delivered message sits in.
static capsa__rx_slot_t *slot_of(capsa_rloop_t *l, const capsa_msg_t *m) {
  return m == &l->core->rx[0].msg ? &l->core->rx[0] : &l->core->rx[1];
}

// A message that arrived while a call waited: its bytes, decoded again into
// `msg` (core messages point into `bytes`), with its descriptors and its
// decoded interface struct moved here from the receive slot.
struct capsa__deferred {
  struct capsa__deferred *next;
  capsa_msg_t msg;
  void *iface_mem;
  uint8_t bytes[];  // 8-aligned (follows pointers)
};

static void free_deferred(struct capsa__deferred *d) {
  capsa_msg_close_handles(&d->msg);
  free(d->iface_mem);
  free(d);
}

// Keeps rx's message for later; -ENOBUFS past the bound, -ENOMEM.
static int defer(capsa_rloop_t *l, capsa__rx_t *rx) {
  if (l->ndeferred >= CAPSA_RLOOP_MAX_DEFERRED) {
    snprintf(l->reason, sizeof l->reason,
             "more than %d messages arrived during one call",
             CAPSA_RLOOP_MAX_DEFERRED);
    return -ENOBUFS;
  }
  capsa__rx_slot_t *s = slot_of(l, rx->msg);
  struct capsa__deferred *d = malloc(sizeof *d + s->len);
  if (d == NULL) return -ENOMEM;
  memset(d, 0, sizeof *d);
  memcpy(d->bytes, s->buf, s->len);
  // The same bytes the core verified: decoding them again cannot fail.
  capsa_msg_decode(d->bytes, s->len, &d->msg, NULL, 0);
  // Not on the wire: which channel delivered it. Without it a request kept
  // here could never be answered (capsa_rloop_reply: -ESTALE).
  d->msg.origin = rx->msg->origin;
  if (rx->msg->type == CAPSA_MSG_INTERFACE) {
    d->iface_mem = s->iface_mem;
    s->iface_mem = NULL;
    d->msg.u.iface = rx->msg->u.iface;
  }
  for (uint32_t i = 0; i < CAPSA_IPC_MAX_HANDLES; i++) {
    d->msg.handles[i].fd =
        i < rx->msg->handle_count ? rx->msg->handles[i].fd : -1;
    if (i < rx->msg->handle_count) rx->msg->handles[i].fd = -1;
  }
  if (l->deferred_tail)
    l->deferred_tail->next = d;
  else
    l->deferred = d;
  l->deferred_tail = d;
  l->ndeferred++;
  return 0;
}

// Hands the oldest kept message to the handler. Returns its value.
static int run_deferred(capsa_rloop_t *l) {
  struct capsa__deferred *d = l->deferred;
  l->deferred = d->next;
  if (l->deferred == NULL) l->deferred_tail = NULL;
  l->ndeferred--;
  struct capsa__dispatching *outer = l->current;
  l->current = NULL;  // its own copy: nothing to detach for a nested call
  int ret = l->on_message != NULL ? l->on_message(l, &d->msg) : 0;
  l->current = outer;
  free_deferred(d);
  return ret;
}

// The message a handler is given: a copy of the slot's struct, so that a
// call inside the handler can take the slot's buffer away from it (detach)
// and receive into the slot again while the handler still reads its own.
struct capsa__dispatching {
  capsa__rx_t *rx;
  capsa_msg_t msg;
  bool detached;
  uint8_t *buf;     // detached: the slot's old buffer the message points into
  void *iface_mem;  // and its decoded interface struct
};

// A call from inside a handler: the handler's message keeps its bytes, the
// slot gets a fresh buffer and is free for the call's reply.
static int detach_current(capsa_rloop_t *l) {
  struct capsa__dispatching *d = l->current;
  if (d == NULL || d->detached) return 0;
  capsa__rx_slot_t *s = slot_of(l, d->rx->msg);
  uint8_t *fresh = malloc(CAPSA_IPC_MAX_MESSAGE + 8);
  if (fresh == NULL) return -ENOMEM;
  d->buf = s->buf;
  d->iface_mem = s->iface_mem;
  s->buf = fresh;
  s->iface_mem = NULL;
  for (uint32_t i = 0; i < CAPSA_IPC_MAX_HANDLES; i++)
    s->msg.handles[i].fd = -1;  // the handler's copy owns them
  s->full = 0;
  d->rx->msg = NULL;
  d->detached = true;
  return 0;
}

// Hands rx's message to the handler (through a copy of its struct), then
// gives back what the handler did not take.
static int dispatch(capsa_rloop_t *l, capsa__rx_t *rx) {
  struct capsa__dispatching d = {.rx = rx, .msg = *rx->msg};
  struct capsa__dispatching *outer = l->current;
  l->current = &d;
  int ret = l->on_message(l, &d.msg);
  l->current = outer;
  if (d.detached) {
    capsa_msg_close_handles(&d.msg);
    free(d.buf);
    free(d.iface_mem);
  } else {
    for (uint32_t i = 0; i < CAPSA_IPC_MAX_HANDLES; i++)
      rx->msg->handles[i].fd = d.msg.handles[i].fd;  // -1 where taken
  }
  return ret;
}

static void copy_reason(capsa_rloop_t *l) {
  memcpy(l->reason, l->core->reason, sizeof l->reason);
}

int capsa_rloop_init(capsa_rloop_t *l, int fd, capsa_rloop_message_cb on_msg,
                     const capsa_rloop_options_t *opts) {
  if (l == NULL) return -EINVAL;
  capsa_rloop_options_t o = {.peer = CAPSA_PEER_HOST, .send_timeout_ms = 5000};
  if (opts != NULL) o = *opts;
  if (o.peer == 0) o.peer = CAPSA_PEER_HOST;
  if (o.send_timeout_ms <= 0) o.send_timeout_ms = 5000;
  memset(l, 0, sizeof *l);
  l->reply_buf = malloc(CAPSA_IPC_MAX_MESSAGE + 8);
  if (l->reply_buf == NULL) return -ENOMEM;
  int err = capsa__core_new(fd, o.peer, 0, o.apply_rights, &l->core);
  if (err == 0) {
    err = capsa__core_set_interfaces(l->core, o.interfaces, o.ninterfaces);
    if (err < 0) {
      l->core->fd = -1;  // the caller keeps fd
      capsa__core_free(l->core);
      l->core = NULL;
    }
  }
  if (err < 0) {
    free(l->reply_buf);
    l->reply_buf = NULL;
    return err;
  }
  l->on_message = on_msg;
  l->send_timeout_ms = o.send_timeout_ms;
  return 0;
}

int capsa_rloop_send(capsa_rloop_t *l, capsa_msg_t *msg) {
  if (l == NULL || l->core == NULL || msg == NULL) return -EINVAL;
  int err = capsa__core_send(l->core, msg);
  if (err < 0) return err;
  uint64_t deadline = deadline_after(l->send_timeout_ms);
  while ((err = capsa__core_flush(l->core)) == -EAGAIN) {
    int r = wait_fd(l, POLLOUT, deadline);
    if (r < 0) return r;
    if (r == 0) return -ETIMEDOUT;  // stays queued; flushed by later sends
  }
  return err;
}

int capsa_rloop_reply(capsa_rloop_t *l, const capsa_msg_t *request,
                      capsa_msg_t *reply) {
  if (l == NULL) return -EINVAL;
  int err = capsa__core_check_reply(l->core, request, reply);
  if (err == 0) err = capsa_rloop_send(l, reply);
  // -ETIMEDOUT: queued, sent by a later send; answered all the same.
  if (err == 0 || err == -ETIMEDOUT)
    capsa__core_close_peer_request(l->core, request->request_id);
  return err;
}

// Receives and dispatches one message, waiting until `deadline`. Returns the
// handler's value (0 to go on), or -ETIMEDOUT, -EPIPE, -EBADMSG. When
// `want_id` is non-zero and the reply to it arrives, stores it in *reply and
// returns 1.
static int step(capsa_rloop_t *l, uint64_t deadline, uint64_t want_id,
                capsa_msg_t *reply) {
  for (;;) {
    capsa__rx_t rx = {0};
    int r = capsa__core_recv(l->core, &rx);
    if (r < 0) {
      copy_reason(l);
      return r;
    }
    if (r == 0) {
      int w = wait_fd(l, POLLIN, deadline);
      if (w < 0) return w;
      if (w == 0) return -ETIMEDOUT;
      continue;
    }
    int ret = 0;
    if (rx.reply.id != 0 && rx.reply.id == want_id) {
      // Re-decode from a copy the loop keeps, so the slot can be reused.
      capsa__rx_slot_t *s =
          rx.msg == &l->core->rx[0].msg ? &l->core->rx[0] : &l->core->rx[1];
      memcpy(l->reply_buf, s->buf, s->len);
      capsa_msg_decode(l->reply_buf, s->len, reply, NULL, 0);
      if (rx.msg->type == CAPSA_MSG_INTERFACE) {
        // The decoded struct moves to the loop with the reply.
        free(l->reply_iface);
        l->reply_iface = s->iface_mem;
        s->iface_mem = NULL;
        reply->u.iface = rx.msg->u.iface;
      }
      for (uint32_t i = 0; i < rx.msg->handle_count; i++) {
        reply->handles[i].fd = rx.msg->handles[i].fd;  // to the caller
        rx.msg->handles[i].fd = -1;
      }
      ret = 1;
    } else if (rx.reply.id != 0) {
      ret = 0;  // cannot happen: only capsa_rloop_call registers requests
    } else if (want_id != 0 && rx.msg->type != CAPSA_MSG_PING &&
               l->on_message != NULL) {
      // A call waits: no handler runs inside the one that called.
      ret = defer(l, &rx);
    } else if (l->on_message != NULL) {
      ret = dispatch(l, &rx);
    }
    capsa__core_release(l->core, &rx);  // nothing when detached
    return ret;
  }
}

int capsa_rloop_call(capsa_rloop_t *l, capsa_msg_t *msg, int timeout_ms,
                     capsa_msg_t *reply) {
  if (l == NULL || l->core == NULL || msg == NULL || reply == NULL)
    return -EINVAL;
  if (l->in_call) return -EBUSY;
  int derr = detach_current(l);
  if (derr < 0) return derr;
  uint64_t t = timeout_ms < 0 ? UINT64_MAX / 2 : (uint64_t)timeout_ms;
  int err = capsa__core_add_pending(l->core, msg, t, &kCallMarker, NULL);
  if (err < 0) return err;
  uint64_t id = msg->request_id;
  err = capsa_rloop_send(l, msg);
  if (err < 0 && err != -ETIMEDOUT) {
    capsa__core_drop_pending(l->core, id);
    return err;
  }
  l->in_call = 1;
  uint64_t deadline = deadline_after(timeout_ms);
  for (;;) {
    int r = step(l, deadline, id, reply);
    if (r == 1) break;
    if (r > 0) {
      if (l->stop_value == 0) l->stop_value = r;
      continue;
    }
    if (r < 0) {
      if (r == -ETIMEDOUT) {
        capsa__pending_t p;
        // Expire it so a late reply is dropped, not a bad message.
        while (capsa__core_expire_one(l->core, UINT64_MAX, &p)) {
        }
      } else {
        capsa__core_drop_pending(l->core, id);
      }
      l->in_call = 0;
      return r;
    }
  }
  l->in_call = 0;
  return 0;
}

int capsa_rloop_run_once(capsa_rloop_t *l, int timeout_ms) {
  if (l == NULL || l->core == NULL) return -EINVAL;
  if (l->stop_value != 0) {
    int v = l->stop_value;
    l->stop_value = 0;
    return v;
  }
  if (l->deferred != NULL) return run_deferred(l);  // in arrival order
  return step(l, deadline_after(timeout_ms), 0, NULL);
}

int capsa_rloop_run(capsa_rloop_t *l) {
  for (;;) {
    int r = capsa_rloop_run_once(l, -1);
    if (r != 0) return r;
  }
}

int capsa_rloop_set_fastpath(capsa_rloop_t *l, const capsa_fastpath_t *fp) {
  if (l == NULL || l->core == NULL) return -EINVAL;
  return capsa__core_set_fastpath(l->core, fp);
}

void capsa_rloop_close(capsa_rloop_t *l) {
  if (l == NULL) return;
  while (l->deferred != NULL) {
    struct capsa__deferred *d = l->deferred;
    l->deferred = d->next;
    free_deferred(d);
  }
  l->deferred_tail = NULL;
  l->ndeferred = 0;
  capsa__core_free(l->core);
  l->core = NULL;
  free(l->reply_buf);
  l->reply_buf = NULL;
  free(l->reply_iface);
  l->reply_iface = NULL;
}
