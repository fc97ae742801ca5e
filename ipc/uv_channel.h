// A capsa channel on a libuv loop: the host side of a renderer's socket.
//
//   static void on_closed(capsa_channel_t *ch) {
//     free(ch);
//   }
//   static void on_msg(capsa_channel_t *ch, capsa_msg_t *m) {
//     (void)ch;  // m valid during the call
//     if (m->type == CAPSA_MSG_HELLO)
//       printf("hello from %d\n", m->u.hello.pid);
//   }
//   static void on_err(capsa_channel_t *ch, int err, const char *why) {
//     // -EBADMSG: bad message -> kill the renderer, never trust it again.
//     // -EPIPE: peer closed.  The channel has stopped reading either way.
//     if (err == -EBADMSG) fprintf(stderr, "renderer: %s\n", why);
//     capsa_channel_close(ch, on_closed);
//   }
//   static void on_pong(capsa_channel_t *ch, int status, capsa_msg_t *reply,
//                       void *arg) {
//     (void)ch, (void)reply, (void)arg;  // status: 0, -ETIMEDOUT, -ECANCELED
//     if (status < 0) fprintf(stderr, "no pong: %s\n", strerror(-status));
//   }
//   int serve(uv_loop_t *loop, int fd) {
//     capsa_channel_t *ch = malloc(sizeof *ch);  // until on_closed
//     if (!ch) return -ENOMEM;
//     int err =
//         capsa_channel_init(loop, ch, fd, NULL);  // ch owns fd from now on
//     if (err < 0) {
//       free(ch);
//       return err;
//     }
//     capsa_channel_start(ch, on_msg, on_err);
//     capsa_msg_t ping;
//     capsa_msg_init(&ping, CAPSA_MSG_PING);
//     return capsa_channel_request(ch, &ping, 1000, on_pong, NULL);
//   }
//
// The socket is one end of an AF_UNIX SOCK_SEQPACKET socketpair, made
// non-blocking by init. Every received message is verified (ipc/codec.h),
// its descriptors checked against their declarations (ipc/handle.h) and
// limited to the declared rights, and it must fit the peer's state machine
// (ipc/validate.h); a response must answer an outstanding request. Any
// failure reports -EBADMSG once through on_error, closes all descriptors of
// that message and stops reading for good.
//
// Limits: sends that the kernel cannot take now are queued up to
// max_queued_bytes (and 256 descriptors), after which capsa_channel_send
// returns -ENOBUFS; while
// the queue is above half of that the channel stops reading from the peer
// (backpressure: a peer that never reads cannot make us queue without
// bound). At most max_messages_per_wakeup messages are handled per loop
// iteration, so one flooding peer cannot starve the others on the loop.
// With max_busy_percent, the channel also rests (stops reading, a few
// milliseconds at a time) once handling its unasked messages has taken more
// than that share of the loop's time (ipc/busy_share.h): a flooding peer
// then leaves the loop idle, and the machine's cores, for everyone else.
#ifndef CAPSA_IPC_UV_CHANNEL_H_
#define CAPSA_IPC_UV_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "ipc/fastpath.h"
#include "ipc/message.h"
#include "ipc/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef struct capsa_channel capsa_channel_t;

// `msg` and everything it points to are valid only during the call. Its
// descriptors are closed after the callback unless taken with
// capsa_msg_take_handle(). A request (CAPSA_MSG_F_REQUEST) is answered with
// capsa_channel_reply().
typedef void (*capsa_channel_message_cb)(capsa_channel_t *ch, capsa_msg_t *msg);
// err: -EBADMSG (bad message; `reason` says why), -EPIPE (peer closed),
// other negative errno (socket error). Called at most once.
typedef void (*capsa_channel_error_cb)(capsa_channel_t *ch, int err,
                                       const char *reason);
// status: 0 with `reply` (valid during the call, as in message_cb),
// -ETIMEDOUT, or -ECANCELED (channel closed / broken) with reply NULL.
// Called exactly once per successful capsa_channel_request.
typedef void (*capsa_channel_reply_cb)(capsa_channel_t *ch, int status,
                                       capsa_msg_t *reply, void *arg);
typedef void (*capsa_channel_close_cb)(capsa_channel_t *ch);

typedef struct capsa_channel_options {
  capsa_peer_role_t peer;            // default CAPSA_PEER_RENDERER
  size_t max_queued_bytes;           // default 1 MiB
  unsigned max_messages_per_wakeup;  // default 16
  // Share of the loop's wall time (percent, 1..99) that handling what the
  // peer sends unasked may take, callbacks included (answers to our own
  // requests are not counted: that work was asked for). A token bucket of
  // percent x 0.4 ms: once spent, the channel rests (stops reading) until
  // it is positive again, at least 1 ms (ipc/busy_share.h). Default 0: no
  // cap (a channel alone on its loop should run flat out). The host sets
  // it per kind (capsa_kind_options_t host_share_percent).
  unsigned max_busy_percent;
  // A start-up allowance under max_busy_percent: the first
  // startup_free_messages unasked messages that arrive within
  // startup_free_ms of capsa_channel_init are not charged (a new peer's
  // hello and first requests are not held back by a share it has not used
  // yet). Both bound it: a flooding peer gets that many messages free
  // once. Default 0: everything is charged.
  unsigned startup_free_messages;
  unsigned startup_free_ms;
  // Apply each accepted handle's declared rights with capsa_rights_limit()
  // before delivering it. Default off on the host (its rights table is per
  // process and it re-delegates handles), on in renderers.
  int apply_rights;
  // The embedder interfaces the channel speaks, by wire index (ipc/
  // interface.h; borrowed generated descriptors, static). Their messages
  // are verified and decoded before on_message or a reply callback sees
  // them; one that fails is a bad message.
  const struct capsa_interface *const *interfaces;
  unsigned ninterfaces;  // <= CAPSA_IFACE_MAX_PER_CHANNEL
} capsa_channel_options_t;

struct capsa_channel {
  void *data;  // for the user
  // Private.
  uv_loop_t *loop;
  uv_poll_t poll;
  uv_timer_t timer;
  struct capsa__chan_core *core;
  capsa_channel_message_cb on_message;
  capsa_channel_error_cb on_error;
  capsa_channel_close_cb on_close;
  unsigned max_per_wakeup;
  uv_timer_t rest;  // ends a rest (max_busy_percent)
  struct capsa__busy_share {
    uint32_t percent;     // 1..99; 0 or >= 100: no cap
    int64_t tokens;       // ns it may still spend; negative: a debt
    uint64_t stamp;       // uv_hrtime() of the last refill
    uint64_t rests;       // how often it has rested (the host's heartbeat)
    uint32_t free_msgs;   // start-up allowance: messages left uncharged
    uint64_t free_until;  // ... while uv_hrtime() is below this
  } share;
  int poll_events;
  int handles_open;
  int flags;
};

// Binds `fd` to the loop. On success the channel owns `fd` (closed by
// capsa_channel_close); on error the caller still owns it. `opts` may be
// NULL (defaults) and is copied. Returns 0, -EINVAL (not a SOCK_SEQPACKET
// socket), -ENOMEM.
int capsa_channel_init(uv_loop_t *loop, capsa_channel_t *ch, int fd,
                       const capsa_channel_options_t *opts);

// Starts reading. Returns 0, -EINVAL, -EPIPE after a failure.
int capsa_channel_start(capsa_channel_t *ch, capsa_channel_message_cb on_msg,
                        capsa_channel_error_cb on_error);
// Stops reading (sends still flush). Returns 0.
int capsa_channel_stop(capsa_channel_t *ch);

// Sends `msg` (borrowed; the channel sets its seq). On success the channel
// owns every handle fd in `msg` (they are closed once sent; the receiver
// gets copies), and the bytes are copied. On error the caller keeps them.
// Returns 0, -ENOBUFS (queue full), -EINVAL / -EMSGSIZE (bad message,
// including a handle whose descriptor is wider than its declaration, by the
// receiver's own check: capsa_handle_check), -EPIPE (closed or broken),
// -ETOOMANYREFS (this user already has RLIMIT_NOFILE descriptors in flight
// on unix sockets: this message is refused, the channel goes on).
int capsa_channel_send(capsa_channel_t *ch, capsa_msg_t *msg);

// Why the last capsa_channel_send / _request / _reply on `ch` was refused,
// one line owned by the channel ("handle 0: a FIFO, not a regular file"),
// or "" when it went (or failed only because the peer is gone). Valid until
// the next send.
const char *capsa_channel_send_error(const capsa_channel_t *ch);

// Sends `msg` as a request (sets CAPSA_MSG_F_REQUEST and a fresh
// request_id) and calls `cb` once: with the reply, or -ETIMEDOUT after
// `timeout_ms`, or -ECANCELED. Ownership as capsa_channel_send. Returns 0,
// -EAGAIN (too many outstanding requests), or as capsa_channel_send (then
// `cb` is never called).
int capsa_channel_request(capsa_channel_t *ch, capsa_msg_t *msg,
                          uint64_t timeout_ms, capsa_channel_reply_cb cb,
                          void *arg);

// Answers `request` (borrowed: a request this channel delivered, or a copy
// of its header with `origin` kept) with `reply` (sets CAPSA_MSG_F_RESPONSE
// and the request's id). Ownership as capsa_channel_send. Each request of
// the peer is answered once; refused, and nothing sent: -EINVAL (not a
// request), -ESTALE (delivered by another channel, e.g. a renderer's
// earlier incarnation: its ids are reused by the next one), -ENOENT (no
// request of the peer open with that id: already answered, never made, or
// the oldest of more than 256 left unanswered, which the channel forgot).
int capsa_channel_reply(capsa_channel_t *ch, const capsa_msg_t *request,
                        capsa_msg_t *reply);

// Installs a second transport (ipc/fastpath.h); `fp` is copied, its ctx
// stays owned by the caller and must outlive the channel. Returns 0.
int capsa_channel_set_fastpath(capsa_channel_t *ch, const capsa_fastpath_t *fp);
// Delivers what the fast path holds (call when it signals data). Returns 0
// or the error also reported through on_error.
int capsa_channel_poll_fastpath(capsa_channel_t *ch);

// Bytes waiting in the send queue.
size_t capsa_channel_queued_bytes(const capsa_channel_t *ch);
// Descriptors held by the send queue (each one a number of this process's
// descriptor table until the peer reads far enough for it to be sent).
size_t capsa_channel_queued_fds(const capsa_channel_t *ch);
// Descriptors sent that the peer has not received yet: the kernel holds
// them, charged to this process's user (ETOOMANYREFS past RLIMIT_NOFILE of
// them without CAP_SYS_RESOURCE). Counted from the kernel's unread bytes
// (SIOCOUTQ; see ipc/inflight.h); it may over-count while the peer reads,
// never under-count.
size_t capsa_channel_inflight_fds(capsa_channel_t *ch);

// 1 when the channel is reading from its peer now (started, not paused by
// backpressure, not resting after its busy share, not failed), else 0. A
// fast-path watch should not wake the loop for ring data the channel will not
// read yet.
int capsa_channel_reading(const capsa_channel_t *ch);

// Calls every outstanding request's callback now with -ECANCELED (reply
// NULL), as capsa_channel_close would later: a supervisor that learns its
// peer is gone answers the waiting requests before it reports why. The
// channel stays usable. Returns how many were cancelled.
int capsa_channel_cancel_requests(capsa_channel_t *ch);

// Closes the socket and every queued descriptor, cancels outstanding
// requests (-ECANCELED), then calls `cb` (may be NULL) from the loop. The
// memory of *ch must stay valid until then.
void capsa_channel_close(capsa_channel_t *ch, capsa_channel_close_cb cb);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_UV_CHANNEL_H_
