// The renderer side of a channel: a blocking loop usable in capability mode.
//
//   static int on_msg(capsa_rloop_t *l, capsa_msg_t *m) {
//     if (m->type == CAPSA_MSG_SHUTDOWN) return 1;  // leave capsa_rloop_run
//     if (m->type == CAPSA_MSG_PING) {
//       capsa_msg_t pong;
//       capsa_msg_init(&pong, CAPSA_MSG_PONG);
//       pong.u.ping = m->u.ping;
//       return capsa_rloop_reply(l, m, &pong);
//     }
//     return 0;
//   }
//   int serve(int fd, capsa_msg_t *hello) {
//     capsa_rloop_t l;
//     int r = capsa_rloop_init(&l, fd, on_msg, NULL);  // l owns fd
//     if (r < 0) return r;                             // fd is still ours
//     r = capsa_rloop_send(&l, hello);
//     if (r == 0) r = capsa_rloop_run(&l);  // 1: the handler asked to stop
//     capsa_rloop_close(&l);
//     return r;
//   }
//
// Only read-side syscalls a capability-mode process keeps are used: poll,
// recvmsg, sendmsg, close, fcntl(F_GETFL/F_GET_SEALS), fstat, getsockopt,
// getsockname, getpeername, clock_gettime (vDSO), and malloc's mmap/munmap.
// No epoll, no eventfd, no threads. Received messages get the same checks as
// on the host (ipc/uv_channel.h): a renderer does not trust its peer either.
#ifndef CAPSA_IPC_LOOP_H_
#define CAPSA_IPC_LOOP_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/fastpath.h"
#include "ipc/message.h"
#include "ipc/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef struct capsa_rloop capsa_rloop_t;

// Messages a call may see arrive (and keeps) while it waits for its reply.
#define CAPSA_RLOOP_MAX_DEFERRED 1024

// Called for every message except replies to capsa_rloop_call. `msg` as in
// ipc/uv_channel.h (valid during the call; untaken fds closed after). Never
// called inside another handler: what arrives while capsa_rloop_call waits
// for its reply is kept, in order, and handed over by capsa_rloop_run /
// _run_once after the caller returns (PING alone is handed over at once, so
// that a long call does not look like a hang).
// Return 0 to go on, > 0 to make capsa_rloop_run return that value, < 0 (an
// errno) to make it fail with it.
typedef int (*capsa_rloop_message_cb)(capsa_rloop_t *l, capsa_msg_t *msg);

struct capsa_rloop {
  void *data;  // for the user
  // Private.
  struct capsa__chan_core *core;
  capsa_rloop_message_cb on_message;
  int in_call;
  int stop_value;  // a handler's non-zero answer during a call
  int send_timeout_ms;
  uint8_t *reply_buf;  // holds the last reply of capsa_rloop_call
  void *reply_iface;   // and its decoded interface message, if it was one
  // Messages that arrived during a call, oldest first (ipc/loop.c).
  struct capsa__deferred *deferred, *deferred_tail;
  unsigned ndeferred;
  struct capsa__dispatching *current;  // the message a handler has now
  char reason[CAPSA_IPC_REASON_MAX];
};

typedef struct capsa_rloop_options {
  capsa_peer_role_t peer;  // default CAPSA_PEER_HOST
  // Re-apply each handle's declared rights on receipt (capsa_rights_limit).
  // Default 0: each limit is a seccomp layer keyed on a descriptor number
  // that outlives the descriptor (docs/rights.md), so a long-lived renderer
  // opts in per kind. Without it, what the kernel object enforces still
  // holds: read-only files are O_RDONLY and read-only regions sealed, both
  // checked on receipt (ipc/handle.h).
  int apply_rights;
  int send_timeout_ms;  // blocking sends give up after; default 5000
  // The embedder interfaces the loop speaks, by wire index (ipc/
  // interface.h; borrowed generated descriptors, static). Their messages
  // are verified and decoded before on_message sees them.
  const struct capsa_interface *const *interfaces;
  unsigned ninterfaces;  // <= CAPSA_IFACE_MAX_PER_CHANNEL
} capsa_rloop_options_t;

// On success `l` owns `fd` (closed by capsa_rloop_close); on error the
// caller keeps it. `opts` may be NULL. Returns 0, -EINVAL, -ENOMEM.
int capsa_rloop_init(capsa_rloop_t *l, int fd, capsa_rloop_message_cb on_msg,
                     const capsa_rloop_options_t *opts);

// Sends `msg`, blocking (poll) until the kernel takes it or the send timeout
// passes (-ETIMEDOUT). Handle ownership as capsa_channel_send: owned by the
// loop (closed after sending) on success, by the caller on error.
int capsa_rloop_send(capsa_rloop_t *l, capsa_msg_t *msg);
// Answers `request` as capsa_rloop_send sends: each request of the peer
// once; refused as capsa_channel_reply refuses (-EINVAL, -ESTALE, -ENOENT).
int capsa_rloop_reply(capsa_rloop_t *l, const capsa_msg_t *request,
                      capsa_msg_t *reply);

// Sends `msg` as a request and waits up to `timeout_ms` for its response,
// dispatching other messages to the handler meanwhile (a non-zero handler
// answer is kept and returned by the next capsa_rloop_run). On 0, *reply's
// strings and bytes stay valid until the next capsa_rloop_call, and the
// caller owns its handle descriptors. Returns 0, -ETIMEDOUT, -EBADMSG
// (l->reason says why), -EPIPE, -EBUSY (nested call), -ENOBUFS (more than
// CAPSA_RLOOP_MAX_DEFERRED messages arrived while it waited). A reply
// arriving after the timeout is dropped silently. Safe from inside a
// handler: nothing else is dispatched until it returns.
int capsa_rloop_call(capsa_rloop_t *l, capsa_msg_t *msg, int timeout_ms,
                     capsa_msg_t *reply);

// Dispatches messages until the handler returns non-zero. Returns the
// handler's value, -EPIPE when the peer closed, -EBADMSG (l->reason).
int capsa_rloop_run(capsa_rloop_t *l);

// Waits up to `timeout_ms` (-1: forever) for one message and dispatches it.
// Returns the handler's value, or -ETIMEDOUT / -EPIPE / -EBADMSG.
int capsa_rloop_run_once(capsa_rloop_t *l, int timeout_ms);

int capsa_rloop_set_fastpath(capsa_rloop_t *l, const capsa_fastpath_t *fp);

// Closes the socket and frees everything.
void capsa_rloop_close(capsa_rloop_t *l);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_LOOP_H_
