// Flatbuffers wire format of capsa messages, behind a C API (the only C++ in
// ipc/ is ipc/codec.cc and the code flatc generates).
//
//   uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
//   int n = capsa_msg_encode(&msg, buf, sizeof buf);   // n < 0: -errno
//   ...
//   capsa_msg_t in;
//   char why[CAPSA_IPC_REASON_MAX];
//   if (capsa_msg_decode(buf, n, &in, why, sizeof why) < 0) bad_message(why);
//
// Decoding runs the flatbuffers Verifier (depth, table count and size
// limits) and then the semantic checks of ipc/validate.h; a decoded message
// is structurally valid and within every limit of ipc/message.h. Handle
// descriptors are not part of the bytes: decode leaves every fd at -1 and
// the channel fills them in after checking them (ipc/handle.h).
#ifndef CAPSA_IPC_CODEC_H_
#define CAPSA_IPC_CODEC_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/message.h"

#ifdef __cplusplus
extern "C" {
#endif

// Encodes `msg` (borrowed) into `buf` (caller's, `cap` bytes). Returns the
// encoded length, -EMSGSIZE when it exceeds `cap` or CAPSA_IPC_MAX_MESSAGE,
// -EINVAL when `msg` itself breaks a rule (same checks as decoding), -ENOMEM.
int capsa_msg_encode(const capsa_msg_t *msg, uint8_t *buf, size_t cap);

// Decodes `len` bytes at `buf` (borrowed; *out points into it, so keep `buf`
// alive while using *out). Returns 0, or -EBADMSG with a reason in `reason`
// (`reason_size` bytes incl. NUL; may be NULL). Never crashes or reads
// outside [buf, buf + len) whatever the bytes.
int capsa_msg_decode(const uint8_t *buf, size_t len, capsa_msg_t *out,
                     char *reason, size_t reason_size);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_CODEC_H_
