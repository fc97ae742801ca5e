// Internal parts of the schema mutator (ipc/fuzz.h) for capsa's live
// fuzzing renderer (host/fuzz/generic.h), which sends what the mutator
// writes over a real channel: messages of one id or one sender only, the
// input's parts, and descriptors made as the declarations say.
//
//   uint8_t in[CAPSA_IPC_MAX_MESSAGE];
//   size_t n = capsa__fuzz_mutate_as(iface, 0, CAPSA_IFROM_RENDERER, in, 0,
//                                    sizeof in, seed);
//   uint32_t id, nh;
//   capsa_handle_t h[CAPSA_IPC_MAX_HANDLES];
//   const uint8_t *payload;
//   size_t len;
//   capsa__fuzz_parse(iface, in, n, &id, h, &nh, &payload, &len);
#ifndef CAPSA_IPC_FUZZ_INTERNAL_H_
#define CAPSA_IPC_FUZZ_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

// capsa_fuzz_mutate, writing only message `want_id` (0: any) or, with
// `from` (CAPSA_IFROM_* bits; 0: any), only a message that sender may send
// unasked (no response), or with CAPSA__FUZZ_RESPONSES added only one of
// its responses. Returns `size` unchanged when the interface has no such
// message.
#define CAPSA__FUZZ_RESPONSES 0x100u
size_t capsa__fuzz_mutate_as(const capsa_interface_t *iface, uint32_t want_id,
                             unsigned from, uint8_t *data, size_t size,
                             size_t max_size, unsigned seed);

// The parts of an input (ipc/fuzz.h's layout): its message id, handle
// declarations (fd -1; `handles` has room for CAPSA_IPC_MAX_HANDLES) and
// payload (borrowed from `data`). 0, or -EINVAL for an empty interface.
int capsa__fuzz_parse(const capsa_interface_t *iface, const uint8_t *data,
                      size_t size, uint32_t *id, capsa_handle_t *handles,
                      uint32_t *nhandles, const uint8_t **payload, size_t *len);

// A descriptor as declaration `h` says (capsa_fuzz_handler_fn): a memfd of
// its size, sealed against writes unless writable, or a SEQPACKET end for a
// channel. Owned by the caller; -1 when the kernel refused.
int capsa__fuzz_make_fd(const capsa_handle_t *h);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_FUZZ_INTERNAL_H_
