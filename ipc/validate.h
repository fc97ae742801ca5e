// Semantic checks of capsa messages and the per-peer protocol state machine.
//
//   void new_peer(capsa_peer_state_t *st) {
//     capsa_peer_state_init(st, CAPSA_PEER_RENDERER);  // who is on the far end
//   }
//   int accept(capsa_peer_state_t *st, const capsa_msg_t *msg) {
//     char why[CAPSA_IPC_REASON_MAX];
//     int err = capsa_peer_state_accept(st, msg, why, sizeof why);
//     if (err < 0)  // -EBADMSG: kill the renderer, never trust that peer again
//       fprintf(stderr, "renderer: %s\n", why);
//     return err;
//   }
//
// capsa_msg_validate() is stateless (ranges, sizes, string lengths, handle
// counts and kinds per message type); the codec runs it on every decode and
// encode. The state machine adds what depends on history: nothing before
// HELLO, no second HELLO, the message type must be one this peer may send,
// envelope sequence numbers strictly in order. Response ids are matched by
// the channels against their outstanding requests.
#ifndef CAPSA_IPC_VALIDATE_H_
#define CAPSA_IPC_VALIDATE_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/message.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Who sends the messages being checked.
typedef enum capsa_peer_role {
  CAPSA_PEER_HOST = 1,      // we are a renderer; the peer is the host
  CAPSA_PEER_RENDERER = 2,  // we are the host; the peer is a renderer
} capsa_peer_role_t;

// Stateless checks. Returns 0 or -EBADMSG with a reason.
int capsa_msg_validate(const capsa_msg_t *msg, char *reason,
                       size_t reason_size);

// true when `from` may send messages of `type` (the dispatch table's
// direction column).
int capsa_msg_allowed_from(uint32_t type, capsa_peer_role_t from);

typedef struct capsa_peer_state {
  capsa_peer_role_t peer;
  int hello_seen;
  int shutdown_seen;
  uint64_t next_seq;  // sequence number the next message must carry
  uint64_t messages;  // accepted so far
} capsa_peer_state_t;

void capsa_peer_state_init(capsa_peer_state_t *st, capsa_peer_role_t peer);

// Checks `msg` (already decoded and validated) against the state and, when
// it is acceptable, advances the state. Returns 0 or -EBADMSG with a reason.
int capsa_peer_state_accept(capsa_peer_state_t *st, const capsa_msg_t *msg,
                            char *reason, size_t reason_size);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_VALIDATE_H_
