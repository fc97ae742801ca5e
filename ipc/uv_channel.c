// The libuv face of a channel: uv_poll for readiness, uv_timer for request
// deadlines, the core (channel_core.h) for everything else.
#include "ipc/uv_channel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/busy_share.h"
#include "ipc/channel_core.h"
#include "ipc/handle.h"

enum {
  F_STARTED = 0x1,
  F_PAUSED = 0x2,  // backpressure: our queue to the peer is too full
  F_ERROR_REPORTED = 0x4,
  F_CLOSING = 0x8,
  F_DISPATCHING = 0x10,
  F_RESTING = 0x20,     // used up its share of the loop (max_busy_percent)
  F_RESET_SEEN = 0x40,  // the peer's ECONNRESET was taken: read on to EOF
};

static void update_poll(capsa_channel_t *ch);
static void on_poll(uv_poll_t *p, int status, int events);

static void report(capsa_channel_t *ch, int err) {
  if (ch->flags & (F_ERROR_REPORTED | F_CLOSING)) return;
  ch->flags |= F_ERROR_REPORTED;
  ch->flags &= ~F_STARTED;
  update_poll(ch);
  if (ch->on_error) ch->on_error(ch, err, ch->core->reason);
}

static void on_timer(uv_timer_t *t);

static void rearm(capsa_channel_t *ch) {
  uint64_t d = capsa__core_next_deadline(ch->core);
  if (d == UINT64_MAX) {
    uv_timer_stop(&ch->timer);
    return;
  }
  uint64_t now = capsa__now_ms();
  uv_timer_start(&ch->timer, on_timer, d > now ? d - now : 0, 0);
}

static void on_timer(uv_timer_t *t) {
  capsa_channel_t *ch = t->data;
  capsa__pending_t p;
  uint64_t now = capsa__now_ms();
  while (!(ch->flags & F_CLOSING) && capsa__core_expire_one(ch->core, now, &p))
    ((capsa_channel_reply_cb)p.cb)(ch, -ETIMEDOUT, NULL, p.arg);
  if (!(ch->flags & F_CLOSING)) rearm(ch);
}

static void update_poll(capsa_channel_t *ch) {
  if (ch->flags & F_CLOSING) return;
  int ev = 0;
  if ((ch->flags & F_STARTED) && !(ch->flags & (F_PAUSED | F_RESTING)))
    ev |= UV_READABLE;
  if (ch->core->qhead != NULL && ch->core->broken != -EPIPE &&
      !ch->core->send_closed)
    ev |= UV_WRITABLE;
  if (ev == ch->poll_events) return;
  ch->poll_events = ev;
  if (ev == 0)
    uv_poll_stop(&ch->poll);
  else
    uv_poll_start(&ch->poll, ev, on_poll);
}

static void backpressure(capsa_channel_t *ch) {
  size_t q = ch->core->queued_bytes, max = ch->core->max_queued;
  if (q > max / 2)
    ch->flags |= F_PAUSED;
  else if (q <= max / 4)
    ch->flags &= ~F_PAUSED;
}

static void on_rest_over(uv_timer_t *t) {
  capsa_channel_t *ch = t->data;
  ch->flags &= ~F_RESTING;
  update_poll(ch);
}

// The channel has had its share of the loop: stop reading until the bucket
// is positive again. The peer's messages wait in its socket.
static void rest(capsa_channel_t *ch) {
  if (ch->flags & F_CLOSING) return;
  ch->flags |= F_RESTING;
  ch->share.rests++;
  uv_timer_start(&ch->rest, on_rest_over, capsa__busy_share_rest_ms(&ch->share),
                 0);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  capsa_channel_t *ch = p->data;
  if (status < 0) {
    // libuv reports POLLERR as UV_EBADF; on a unix socket that is the peer
    // gone with our messages unread (ECONNRESET). What it sent before it
    // went is still queued behind that error (the kernel reports the error
    // first, then the data, then EOF): take the error (SO_ERROR) and watch
    // again, so that its last messages are read before the close, as on a
    // plain EOF. Only once: a second error is a close.
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (status == UV_EBADF && !(ch->flags & F_RESET_SEEN) &&
        getsockopt(ch->core->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0) {
      ch->flags |= F_RESET_SEEN;
      ch->poll_events = 0;  // libuv stopped the watcher: start it again
      update_poll(ch);
      return;
    }
    if (status == UV_EBADF) {
      snprintf(ch->core->reason, sizeof ch->core->reason,
               "peer closed with messages unread");
      report(ch, -EPIPE);
      return;
    }
    snprintf(ch->core->reason, sizeof ch->core->reason, "poll: %s",
             uv_strerror(status));
    report(ch, status);
    return;
  }
  if (events & UV_WRITABLE) {
    int err = capsa__core_flush(ch->core);
    if (err < 0 && err != -EAGAIN) {
      snprintf(ch->core->reason, sizeof ch->core->reason, "send: errno %d",
               -err);
      report(ch, err);
    }
    backpressure(ch);
  }
  bool capped = capsa__busy_share_capped(&ch->share);
  uint64_t t0 = capped ? uv_hrtime() : 0;
  if (capped && (events & (UV_READABLE | UV_DISCONNECT)) &&
      !(ch->flags & F_RESTING) && !capsa__busy_share_may_run(&ch->share, t0))
    rest(ch);
  if ((events & (UV_READABLE | UV_DISCONNECT)) && (ch->flags & F_STARTED) &&
      !(ch->flags & (F_PAUSED | F_RESTING))) {
    // Fairness: a bounded number per wakeup; libuv's level-triggered poll
    // brings us back on the next iteration after the other peers had theirs.
    for (unsigned i = 0; i < ch->max_per_wakeup; i++) {
      if (!(ch->flags & F_STARTED) ||
          (ch->flags & (F_PAUSED | F_CLOSING | F_RESTING)))
        break;
      capsa__rx_t rx = {0};
      int r = capsa__core_recv(ch->core, &rx);
      if (r < 0) {
        // A reply that failed its checks was taken from the outstanding
        // requests before they failed: its requester still gets its one
        // call (the channel is broken: -ECANCELED), or it and whatever
        // its arg holds would never be released.
        if (rx.reply.id != 0)
          ((capsa_channel_reply_cb)rx.reply.cb)(ch, -ECANCELED, NULL,
                                                rx.reply.arg);
        report(ch, r);
        break;
      }
      if (r == 0) break;
      ch->flags |= F_DISPATCHING;
      bool was_reply = rx.reply.id != 0;
      if (was_reply) {
        ((capsa_channel_reply_cb)rx.reply.cb)(ch, 0, rx.msg, rx.reply.arg);
        if (!(ch->flags & F_CLOSING)) rearm(ch);
      } else if (ch->on_message) {
        ch->on_message(ch, rx.msg);
      }
      ch->flags &= ~F_DISPATCHING;
      capsa__core_release(ch->core, &rx);
      // Only what the peer sent unasked is charged: an answer to our own
      // request is work this side chose (and bounded by its requests).
      if (capped) {
        uint64_t t = uv_hrtime();
        if (!was_reply && !capsa__busy_share_charge_at(&ch->share, t - t0, t))
          rest(ch);
        t0 = t;
      }
    }
  }
  update_poll(ch);
}

int capsa_channel_init(uv_loop_t *loop, capsa_channel_t *ch, int fd,
                       const capsa_channel_options_t *opts) {
  if (loop == NULL || ch == NULL) return -EINVAL;
  capsa_channel_options_t o = {.peer = CAPSA_PEER_RENDERER,
                               .max_messages_per_wakeup = 16};
  if (opts != NULL) o = *opts;
  if (o.peer == 0) o.peer = CAPSA_PEER_RENDERER;
  if (o.max_messages_per_wakeup == 0) o.max_messages_per_wakeup = 16;
  memset(ch, 0, sizeof *ch);
  int err = capsa__core_new(fd, o.peer, o.max_queued_bytes, o.apply_rights,
                            &ch->core);
  if (err < 0) return err;
  err = capsa__core_set_interfaces(ch->core, o.interfaces, o.ninterfaces);
  if (err == 0) err = uv_poll_init(loop, &ch->poll, fd);
  if (err < 0) {
    ch->core->fd = -1;  // the caller keeps fd
    capsa__core_free(ch->core);
    ch->core = NULL;
    return err;
  }
  uv_timer_init(loop, &ch->timer);
  uv_timer_init(loop, &ch->rest);
  ch->loop = loop;
  ch->poll.data = ch;
  ch->timer.data = ch;
  ch->rest.data = ch;
  ch->max_per_wakeup = o.max_messages_per_wakeup;
  ch->core->count_inflight = 1;
  uint64_t now = uv_hrtime();
  capsa__busy_share_init(&ch->share, o.max_busy_percent, now);
  if (o.startup_free_messages && o.startup_free_ms)
    capsa__busy_share_allow(&ch->share, o.startup_free_messages,
                            now + (uint64_t)o.startup_free_ms * 1000000u);
  ch->handles_open = 3;
  return 0;
}

int capsa_channel_start(capsa_channel_t *ch, capsa_channel_message_cb on_msg,
                        capsa_channel_error_cb on_error) {
  if (ch == NULL || ch->core == NULL || (ch->flags & F_CLOSING)) return -EINVAL;
  if (ch->flags & F_ERROR_REPORTED) return -EPIPE;
  ch->on_message = on_msg;
  ch->on_error = on_error;
  ch->flags |= F_STARTED;
  update_poll(ch);
  return 0;
}

int capsa_channel_stop(capsa_channel_t *ch) {
  if (ch == NULL || ch->core == NULL) return -EINVAL;
  ch->flags &= ~F_STARTED;
  update_poll(ch);
  return 0;
}

// Files and regions leave as descriptions of their own (reopened through
// /proc/self/fd, as narrow as declared): a peer's lseek or F_SETFL never
// moves the sender's offset or a sibling's. Checked first, so a descriptor
// wider than its declaration is refused, not silently narrowed. On success
// the originals are closed (the channel owns them); on failure the copies.
static int reopen_handles(capsa__chan_core_t *c, capsa_msg_t *msg, int *orig) {
  for (uint32_t i = 0; i < msg->handle_count; i++) orig[i] = -1;
  for (uint32_t i = 0; i < msg->handle_count; i++) {
    capsa_handle_t *h = &msg->handles[i];
    if (h->kind != CAPSA_HANDLE_FILE && h->kind != CAPSA_HANDLE_SHM) continue;
    char why[CAPSA_IPC_REASON_MAX];
    int nfd =
        capsa_handle_check(h->fd, h, capsa__core_self(c), why, sizeof why) < 0
            ? capsa__core_refuse(c, -EINVAL, "handle %u: %s", (unsigned)i, why)
            : capsa_handle_reopen(h->fd, h->writable);
    if (nfd < 0) {
      if (c->send_error[0] == '\0')
        capsa__core_refuse(c, nfd, "handle %u: reopening it narrowed: %s",
                           (unsigned)i, strerror(-nfd));
      for (uint32_t j = 0; j < i; j++) {
        if (orig[j] < 0) continue;
        close(msg->handles[j].fd);
        msg->handles[j].fd = orig[j];
      }
      return nfd;
    }
    orig[i] = h->fd;
    h->fd = nfd;
  }
  return 0;
}

int capsa_channel_send(capsa_channel_t *ch, capsa_msg_t *msg) {
  if (ch == NULL || msg == NULL || ch->core == NULL) return -EINVAL;
  if (ch->flags & F_CLOSING) return -EPIPE;
  ch->core->send_error[0] = '\0';
  if (msg->handle_count > CAPSA_IPC_MAX_HANDLES)
    return capsa__core_refuse(ch->core, -EINVAL, "%u handles: at most %d",
                              (unsigned)msg->handle_count,
                              CAPSA_IPC_MAX_HANDLES);
  for (uint32_t i = 0; i < msg->handle_count; i++)
    if (msg->handles[i].fd < 0)
      return capsa__core_refuse(ch->core, -EINVAL, "handle %u: no descriptor",
                                (unsigned)i);
  int orig[CAPSA_IPC_MAX_HANDLES];
  int err = reopen_handles(ch->core, msg, orig);
  if (err < 0) return err;
  err = capsa__core_send(ch->core, msg);
  for (uint32_t i = 0; i < msg->handle_count; i++) {
    if (orig[i] < 0) continue;
    if (err == 0) {
      close(orig[i]);
    } else {
      close(msg->handles[i].fd);
      msg->handles[i].fd = orig[i];
    }
  }
  if (err == 0) {
    backpressure(ch);
    update_poll(ch);
  }
  return err;
}

const char *capsa_channel_send_error(const capsa_channel_t *ch) {
  return ch && ch->core ? ch->core->send_error : "";
}

int capsa_channel_request(capsa_channel_t *ch, capsa_msg_t *msg,
                          uint64_t timeout_ms, capsa_channel_reply_cb cb,
                          void *arg) {
  if (ch == NULL || msg == NULL || cb == NULL || ch->core == NULL)
    return -EINVAL;
  if (ch->flags & F_CLOSING) return -EPIPE;
  int err = capsa__core_add_pending(ch->core, msg, timeout_ms, (void *)cb, arg);
  if (err < 0) return err;
  err = capsa_channel_send(ch, msg);
  if (err < 0) {
    capsa__core_drop_pending(ch->core, msg->request_id);
    return err;
  }
  rearm(ch);
  return 0;
}

int capsa_channel_reply(capsa_channel_t *ch, const capsa_msg_t *request,
                        capsa_msg_t *reply) {
  if (ch == NULL) return -EINVAL;
  int err = capsa__core_check_reply(ch->core, request, reply);
  if (err == 0) err = capsa_channel_send(ch, reply);
  if (err == 0) capsa__core_close_peer_request(ch->core, request->request_id);
  return err;
}

int capsa_channel_set_fastpath(capsa_channel_t *ch,
                               const capsa_fastpath_t *fp) {
  if (ch == NULL || ch->core == NULL) return -EINVAL;
  return capsa__core_set_fastpath(ch->core, fp);
}

int capsa_channel_poll_fastpath(capsa_channel_t *ch) {
  if (ch == NULL || ch->core == NULL || (ch->flags & F_CLOSING)) return -EINVAL;
  if (ch->core->broken) return ch->core->broken;
  // Same path as a readable socket: delivers what is in order on either.
  on_poll(&ch->poll, 0, UV_READABLE);
  return ch->core->broken == -EPIPE ? 0 : ch->core->broken;
}

size_t capsa_channel_queued_bytes(const capsa_channel_t *ch) {
  return ch != NULL && ch->core != NULL ? ch->core->queued_bytes : 0;
}

size_t capsa_channel_queued_fds(const capsa_channel_t *ch) {
  return ch != NULL && ch->core != NULL ? ch->core->queued_fds : 0;
}

size_t capsa_channel_inflight_fds(capsa_channel_t *ch) {
  if (ch == NULL || ch->core == NULL || ch->core->fd < 0) return 0;
  capsa__chan_core_t *c = ch->core;
  if (!capsa__inflight_active(&c->inflight)) return 0;
  return capsa__inflight_update(&c->inflight, capsa__inflight_unread(c->fd));
}

int capsa_channel_reading(const capsa_channel_t *ch) {
  if (ch == NULL || ch->core == NULL || ch->core->broken) return 0;
  return (ch->flags & F_STARTED) &&
         !(ch->flags & (F_PAUSED | F_RESTING | F_CLOSING));
}

static void on_handle_closed(uv_handle_t *h) {
  capsa_channel_t *ch = h->data;
  if (--ch->handles_open > 0) return;
  capsa__core_free(ch->core);  // closes the socket after libuv let go of it
  ch->core = NULL;
  if (ch->on_close) ch->on_close(ch);
}

int capsa_channel_cancel_requests(capsa_channel_t *ch) {
  if (ch == NULL || ch->core == NULL) return 0;
  int n = 0;
  capsa__pending_t p;
  while (capsa__core_take_any(ch->core, &p)) {
    ((capsa_channel_reply_cb)p.cb)(ch, -ECANCELED, NULL, p.arg);
    n++;
  }
  return n;
}

void capsa_channel_close(capsa_channel_t *ch, capsa_channel_close_cb cb) {
  if (ch == NULL || ch->core == NULL || (ch->flags & F_CLOSING)) return;
  ch->flags |= F_CLOSING;
  ch->on_close = cb;
  uv_poll_stop(&ch->poll);
  uv_timer_stop(&ch->timer);
  uv_timer_stop(&ch->rest);
  capsa_channel_cancel_requests(ch);
  uv_close((uv_handle_t *)&ch->poll, on_handle_closed);
  uv_close((uv_handle_t *)&ch->timer, on_handle_closed);
  uv_close((uv_handle_t *)&ch->rest, on_handle_closed);
}
