// Internal: the transport-independent heart of a channel, shared by the libuv
// channel (uv_channel.c) and the renderer loop (loop.c). Non-blocking only;
// the wrappers decide when to wait (uv_poll or poll(2)).
//
// Sending: encode, number (seq), then fast path (no handles, nothing queued)
// or sendmsg with SCM_RIGHTS; what the kernel cannot take now is queued with
// its descriptors, up to a byte cap.
// Receiving: recvmsg with MSG_CMSG_CLOEXEC into an aligned buffer, every
// descriptor checked against its declaration, the message decoded and
// verified, delivered strictly in sequence order across both transports,
// accepted by the peer state machine and, for responses, matched to an
// outstanding request.
#ifndef CAPSA_IPC_CHANNEL_CORE_H_
#define CAPSA_IPC_CHANNEL_CORE_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/fastpath.h"
#include "ipc/inflight.h"
#include "ipc/interface.h"
#include "ipc/message.h"
#include "ipc/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__MAX_PENDING 64
#define CAPSA__DEFAULT_MAX_QUEUED (1u << 20)
// Descriptors held by a send queue: a peer that never reads must not make us
// run out of descriptor numbers either.
#define CAPSA__MAX_QUEUED_FDS 256
// Requests of the peer not answered yet that the channel remembers (the
// oldest is forgotten past this: its answer is then refused, -ENOENT). The
// peer's own table holds CAPSA__MAX_PENDING; more room for requests it
// gave up on and the embedder never answers.
#define CAPSA__MAX_PEER_OPEN 256

typedef struct capsa__pending {
  uint64_t id;           // 0: free slot
  uint64_t deadline_ms;  // CLOCK_MONOTONIC
  void *cb;              // the wrapper's callback, opaque here
  void *arg;
  // An interface request: its interface index + 1 (0: a core message) and
  // message id, which the reply must answer (ipc/channel_iface.c).
  uint32_t iface_index1;
  uint32_t iface_msg;
} capsa__pending_t;

typedef struct capsa__qent capsa__qent_t;

typedef struct capsa__rx_slot {
  int full;
  size_t len;    // bytes of the encoded message in buf
  uint8_t *buf;  // CAPSA_IPC_MAX_MESSAGE + 1 bytes, 8-aligned
  capsa_msg_t msg;
  void *iface_mem;  // an interface message's decoded struct + payload copy
} capsa__rx_slot_t;

typedef struct capsa__chan_core {
  int fd;
  int apply_rights;
  capsa_peer_state_t peer;
  uint64_t next_seq;         // outgoing
  uint64_t next_request_id;  // outgoing requests
  capsa__qent_t *qhead, *qtail;
  size_t queued_bytes, max_queued;
  size_t queued_fds;
  // Descriptors sent but not yet received (ipc/inflight.h), when counted.
  int count_inflight;
  capsa__inflight_t inflight;
  capsa__pending_t pending[CAPSA__MAX_PENDING];
  unsigned npending;
  // Ids of requests that timed out recently: their late replies are dropped,
  // not treated as bad messages.
  uint64_t expired[16];
  unsigned expired_next;
  // This channel's number, unique in the process (stamped on every received
  // message as msg->origin), and the ids of the peer's requests it has
  // received and not answered, oldest first: a reply must answer one of
  // them, once (capsa__core_check_reply).
  uint64_t serial;
  uint64_t peer_open[CAPSA__MAX_PEER_OPEN];
  unsigned npeer_open;
  int has_fastpath;
  capsa_fastpath_t fastpath;
  capsa__rx_slot_t rx[2];  // [0] socket, [1] fast path
  uint8_t *tx;             // encode scratch, CAPSA_IPC_MAX_MESSAGE bytes
  int broken;              // sticky error once bad or closed
  // A send found the peer gone (EPIPE, ECONNRESET): no more sends, but what
  // it sent before it went is still read, to EOF, before the close.
  int send_closed;
  char reason[CAPSA_IPC_REASON_MAX];
  // Why the last send this side tried was refused ("" after one that went):
  // the sender's own mistake (a handle wider than its declaration, a
  // message of an interface the channel does not speak), never the peer's.
  char send_error[CAPSA_IPC_REASON_MAX];
  // The embedder interfaces this channel speaks, by wire index.
  const capsa_interface_t *ifaces[CAPSA_IFACE_MAX_PER_CHANNEL];
  unsigned nifaces;
  uint8_t *itx;  // interface payload scratch, allocated on first use
  // CAPSA_IPC_DUMP (ipc/ipc_dump.h): 0 not yet known, 1 recording to
  // dump_fd, -1 not recording.
  int dump_state;
  int dump_fd;
} capsa__chan_core_t;

// What capsa__core_recv delivers.
typedef struct capsa__rx {
  capsa_msg_t *msg;        // in a slot; release with capsa__core_release
  capsa__pending_t reply;  // id != 0: msg answers this request
} capsa__rx_t;

// Takes `fd` (AF_UNIX SOCK_SEQPACKET; made non-blocking) on success only.
// Returns 0, -EINVAL, -ENOMEM.
int capsa__core_new(int fd, capsa_peer_role_t peer, size_t max_queued,
                    int apply_rights, capsa__chan_core_t **out);
// Closes the socket, queued and held descriptors; frees everything.
void capsa__core_free(capsa__chan_core_t *c);

// Sends or queues `msg` (ownership as capsa_channel_send). Returns 0,
// -ENOBUFS, -EINVAL, -EMSGSIZE, -EPIPE, other -errno.
int capsa__core_send(capsa__chan_core_t *c, capsa_msg_t *msg);
// Records why this side's send is refused (c->send_error) and returns err.
int capsa__core_refuse(capsa__chan_core_t *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Closes the descriptors of queued messages and frees the queue.
void capsa__core_free_queue(capsa__chan_core_t *c);
// Writes queued messages until the kernel refuses. Returns 0 (queue empty),
// -EAGAIN (still queued), or a send error (the channel is then broken).
int capsa__core_flush(capsa__chan_core_t *c);

// Registers an outstanding request: sets msg's flag and id. Returns 0 or
// -EAGAIN (table full).
int capsa__core_add_pending(capsa__chan_core_t *c, capsa_msg_t *msg,
                            uint64_t timeout_ms, void *cb, void *arg);
// Forgets a pending request (e.g. its send failed).
void capsa__core_drop_pending(capsa__chan_core_t *c, uint64_t id);
// Removes and returns in *out one request whose deadline <= now; 1 if found.
int capsa__core_expire_one(capsa__chan_core_t *c, uint64_t now_ms,
                           capsa__pending_t *out);
// Removes any one pending request (cancellation); 1 if found.
int capsa__core_take_any(capsa__chan_core_t *c, capsa__pending_t *out);
// Removes and returns in *out the request `id` answers; 1 if found.
int capsa__core_take_reply(capsa__chan_core_t *c, uint64_t id,
                           capsa__pending_t *out);
// Whether `request` (received) may be answered on this channel now: 0, or
// -EINVAL (not a request), -ESTALE (delivered by another channel: an
// earlier incarnation's), -ENOENT (not a request of this peer still open:
// never made, already answered, or forgotten as the oldest of more than
// CAPSA__MAX_PEER_OPEN). Sets reply's flags and id when it may.
int capsa__core_check_reply(const capsa__chan_core_t *c,
                            const capsa_msg_t *request, capsa_msg_t *reply);
// After a reply to `id` went: the request is no longer open.
void capsa__core_close_peer_request(capsa__chan_core_t *c, uint64_t id);
// On receipt of a request of the peer: remembers it as open.
void capsa__core_open_peer_request(capsa__chan_core_t *c, uint64_t id);

// Who sends on this channel: the role opposite to its peer's (which write
// seal a read-only region we send needs: ipc/handle.h).
capsa_peer_role_t capsa__core_self(const capsa__chan_core_t *c);

// Earliest deadline, or UINT64_MAX when nothing is pending.
uint64_t capsa__core_next_deadline(const capsa__chan_core_t *c);

// Next message in order (late replies to expired requests are dropped
// silently): 1 with *rx filled, 0 when nothing is ready, or
// -EBADMSG (reason in c->reason), -EPIPE (peer closed), -errno. Errors are
// sticky: every later call returns the same.
int capsa__core_recv(capsa__chan_core_t *c, capsa__rx_t *rx);
// Closes the descriptors the receiver did not take and frees the slot.
void capsa__core_release(capsa__chan_core_t *c, capsa__rx_t *rx);

int capsa__core_set_fastpath(capsa__chan_core_t *c, const capsa_fastpath_t *fp);

// Interfaces (ipc/channel_iface.c). Sets the interfaces the channel speaks
// (borrowed generated descriptors, checked here; at most
// CAPSA_IFACE_MAX_PER_CHANNEL): 0, -EINVAL, -E2BIG.
int capsa__core_set_interfaces(capsa__chan_core_t *c,
                               const capsa_interface_t *const *list,
                               unsigned n);
// Before sending an interface message with a `value`: its index on this
// channel, the envelope rules for our side, and the payload encoded (and
// checked, as the receiver will) into c->itx. 0, -EINVAL, -EMSGSIZE,
// -ENOMEM. Other messages: 0.
int capsa__iface_prepare_send(capsa__chan_core_t *c, capsa_msg_t *msg);
// Records in `p` which interface request `msg` is (nothing for others).
void capsa__iface_note_request(const capsa__chan_core_t *c,
                               const capsa_msg_t *msg, capsa__pending_t *p);
// On delivery: an interface message is checked against its descriptor and
// decoded into slot memory (m->u.iface.value); a reply to an interface
// request must be its response (or ERROR). 0 or -EBADMSG (reason in c).
int capsa__iface_accept(capsa__chan_core_t *c, capsa__rx_slot_t *s,
                        const capsa__pending_t *reply);
// Frees what capsa__iface_accept decoded into the slot.
void capsa__iface_release(capsa__rx_slot_t *s);

uint64_t capsa__now_ms(void);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_CHANNEL_CORE_H_
