// Internal: the dispatch table, one row per message type (message_table.c).
#ifndef CAPSA_IPC_MESSAGE_TABLE_H_
#define CAPSA_IPC_MESSAGE_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/message.h"

#ifdef __cplusplus
extern "C" {
#endif

// Who may send a message type (bit per capsa_peer_role_t).
#define CAPSA__FROM_HOST 0x1u
#define CAPSA__FROM_RENDERER 0x2u
#define CAPSA__FROM_ANY (CAPSA__FROM_HOST | CAPSA__FROM_RENDERER)

// Envelope flags a message type may carry.
#define CAPSA__PLAIN 0x1u     // no flag
#define CAPSA__REQUEST 0x2u   // CAPSA_MSG_F_REQUEST
#define CAPSA__RESPONSE 0x4u  // CAPSA_MSG_F_RESPONSE

typedef struct capsa__msg_row {
  capsa_msg_type_t type;
  const char *name;
  unsigned from;   // CAPSA__FROM_*
  unsigned kinds;  // CAPSA__PLAIN | CAPSA__REQUEST | CAPSA__RESPONSE
  uint32_t min_handles, max_handles;
  // Ranges and cross-field rules of the body, handle kinds included (the
  // envelope, handle declarations and strings are checked before).
  int (*check)(const capsa_msg_t *m, char *reason, size_t n);
  const char *why;  // why this message exists (review aid)
} capsa__msg_row_t;

// The row of `type`, or NULL when unknown.
const capsa__msg_row_t *capsa__msg_row(uint32_t type);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_MESSAGE_TABLE_H_
