// Embedder-defined interfaces: typed, verified messages from the embedder's
// own flatbuffers schema (docs/interfaces.md).
//
//   // host/examples/thumb.fbs (the embedder's schema):
//   //   include "ipc/interface/capsa_attributes.fbs";
//   //   namespace thumb;
//   //   table Decode (capsa_request: "Done", capsa_from: "host") {
//   //     png: ubyte (capsa_handle: "shm", capsa_rights: "read,mmap_r",
//   //                 capsa_max_size: "16777216", capsa_required);
//   //     max_width: uint = 256 (capsa_min: "1", capsa_max: "4096");
//   //   }
//   //   table Done (capsa_response, capsa_from: "renderer") { status: int; }
//   //   union Messages (capsa_interface) { Decode, Done }
//   // BUILD.gn:  capsa_interface("thumb") { schema = "thumb.fbs" }
//   // generates thumb.capsa.h: thumb_decode_t, THUMB_DECODE, thumb_interface,
//   // thumb_decode_init(), thumb_decode_encode(), thumb_decode_decode() ...
//   #include "thumb.capsa.h"
//
//   // What a channel does on each send and receive (<capsa/channel.h>):
//   int round_trip(int png_fd, uint64_t size) {
//     capsa_handle_t h[1] = {
//         {.fd = png_fd, .kind = CAPSA_HANDLE_SHM, .size = size}};
//     capsa_rights_init(&h[0].rights, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R);
//     thumb_decode_t d;
//     thumb_decode_init(&d);  // schema defaults
//     d.png = 0;              // index into h
//     d.max_width = 128;
//     _Alignas(8) uint8_t buf[4096];
//     char why[CAPSA_IPC_REASON_MAX];
//     int n = thumb_decode_encode(&d, h, 1, buf, sizeof buf, why, sizeof why);
//     if (n < 0) return n;  // d breaks the schema: why says how
//     thumb_decode_t in;    // strings and bytes point into buf
//     if (thumb_decode_decode(buf, (size_t)n, h, 1, &in, why, sizeof why) < 0)
//       fprintf(stderr, "bad message: %s\n", why);  // kill the sender
//     return 0;
//   }
//
// What is generated and what is not: the generator (build/idl/capsa_idlc.cc,
// run by build/capsa_interface.gni) reads flatc's binary schema and emits
// plain C: the message structs, their ids and a descriptor table (fields,
// wire slots, limits, handle kinds and widest rights). This file's runtime
// (ipc/interface.cc, the only C++, the flatbuffers Verifier and Builder)
// encodes, verifies and checks any message from its descriptor, so an
// embedder's build compiles C only and every interface gets the same checks.
//
// Checks on every decode (and on encode: a sender never builds what its
// peer must refuse): the flatbuffers Verifier (bounds, alignment, depth,
// table count); each integer within its schema range (capsa_min/capsa_max,
// else its type); floats finite; strings within capsa_max_len (default
// CAPSA_IPC_MAX_STRING) with no NUL byte, and strings marked capsa_text
// valid UTF-8 with no control, C1, bidi, format or separator character
// (refused, not escaped: decoding is zero-copy, and such a character in a
// field the schema calls text is the sender breaking it, like an integer
// out of range); [ubyte] within capsa_max_len;
// `required` fields present; every handle field naming a distinct handle of
// the message, every handle named by a field, each of the schema's kind,
// writable only where the schema says capsa_writable, rights within
// capsa_rights, size within capsa_max_size. Direction and request/response
// pairing: capsa_iface_check_envelope.
#ifndef CAPSA_IPC_INTERFACE_H_
#define CAPSA_IPC_INTERFACE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/message.h"
#include "ipc/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Field types of interface messages and their C representation.
typedef enum capsa_ifield_type {
  CAPSA_IFIELD_BOOL = 1,  // bool
  CAPSA_IFIELD_I8,        // int8_t
  CAPSA_IFIELD_U8,        // uint8_t
  CAPSA_IFIELD_I16,       // int16_t
  CAPSA_IFIELD_U16,       // uint16_t
  CAPSA_IFIELD_I32,       // int32_t
  CAPSA_IFIELD_U32,       // uint32_t
  CAPSA_IFIELD_I64,       // int64_t
  CAPSA_IFIELD_U64,       // uint64_t
  CAPSA_IFIELD_F32,       // float
  CAPSA_IFIELD_F64,       // double
  CAPSA_IFIELD_STRING,    // const char * (NULL: absent)
  CAPSA_IFIELD_BYTES,     // capsa_bytes_t ([ubyte]; len 0: absent)
  CAPSA_IFIELD_HANDLE,    // int32_t index into the message's handles; -1
} capsa_ifield_type_t;

// One field of a message, as generated from the schema (never edit).
typedef struct capsa_ifield {
  const char *name;
  capsa_ifield_type_t type;
  uint16_t slot;    // flatbuffers vtable offset (4 + 2 * field id)
  uint32_t offset;  // offsetof() in the C struct
  bool required;    // schema `required` or capsa_required
  // Strings marked capsa_text: well-formed UTF-8 without controls, C1,
  // bidi, format characters or line separators (capsa_text_escape's list);
  // anything else is refused. In what was padding after `required`, so the
  // struct's size and every other offset are unchanged (descriptors
  // generated before it read as false: the ABI holds).
  bool text;
  int64_t min, max;  // integers (signed view; u64: see umax), inclusive
  uint64_t umax;     // unsigned types: largest value
  int64_t def;       // integer/bool default
  double fdef;       // float default
  uint32_t max_len;  // strings and bytes
  // Handles.
  capsa_handle_kind_t handle_kind;
  bool handle_writable;
  capsa_rights_t handle_rights;  // widest rights a sender may declare
  uint64_t handle_max_size;
} capsa_ifield_t;

// What a message is.
typedef enum capsa_imessage_kind {
  CAPSA_IMSG_EVENT = 1,     // no flags; no answer
  CAPSA_IMSG_REQUEST = 2,   // CAPSA_MSG_F_REQUEST; answered by `reply`
  CAPSA_IMSG_RESPONSE = 3,  // CAPSA_MSG_F_RESPONSE
} capsa_imessage_kind_t;

// Who may send it (bits).
#define CAPSA_IFROM_HOST 0x1u
#define CAPSA_IFROM_RENDERER 0x2u

typedef struct capsa_imessage {
  const char *name;  // the schema's table name
  uint32_t id;       // its value in the interface union (>= 1)
  capsa_imessage_kind_t kind;
  unsigned from;      // CAPSA_IFROM_*
  uint32_t reply;     // requests: id of the response message
  uint32_t c_size;    // sizeof the C struct
  uint32_t nfields;   // <= CAPSA_IFACE_MAX_FIELDS
  uint32_t nhandles;  // handle fields among them
  const capsa_ifield_t *fields;
} capsa_imessage_t;

// The part of right `r` (a CAPSA_CAP_* constant) that belongs in rights word
// `w` (0 or 1): the generated descriptors build their widest rights with it.
#define CAPSA_IFACE_RIGHT_WORD(r, w) \
  ((((r) >> 57) & 0x1fULL) == (1ULL << (w)) ? (r) : 0ULL)

#define CAPSA_IFACE_MAX_FIELDS 64
#define CAPSA_IFACE_MAX_PER_CHANNEL 8  // interfaces a kind / channel speaks
#define CAPSA_IFACE_MAX_NAME 64

typedef struct capsa_interface {
  const char *name;  // the schema namespace, e.g. "capsa.test.thumbnail"
  uint32_t nmessages;
  const capsa_imessage_t *messages;  // ids 1..nmessages, in order
} capsa_interface_t;

// The message `id` of `iface`, or NULL.
const capsa_imessage_t *capsa_iface_message(const capsa_interface_t *iface,
                                            uint32_t id);

// Encodes message `id` from its C struct at `msg` (borrowed, c_size bytes)
// into `buf` (caller's, `cap` bytes). `handles` (borrowed; may be NULL when
// nhandles is 0) are the handles that will travel with it, indexed by the
// struct's handle fields. Returns the encoded length; -EINVAL with a reason
// when `msg` breaks a rule of the schema (decode would refuse it); -EMSGSIZE
// when it does not fit `cap` or CAPSA_IPC_MAX_MESSAGE; -ENOENT for an
// unknown id.
int capsa_iface_encode(const capsa_interface_t *iface, uint32_t id,
                       const void *msg, const capsa_handle_t *handles,
                       uint32_t nhandles, uint8_t *buf, size_t cap,
                       char *reason, size_t reason_size);

// Verifies and decodes `len` bytes at `buf` (borrowed: strings and bytes of
// *out point into it) as message `id` into the C struct at `out` (c_size
// bytes, caller's; zeroed first). `handles` are the declarations that came
// with it (kind, rights, size, writable as the sender declared them; their
// descriptors are checked against the declarations by ipc/handle.h). Returns
// 0, or -EBADMSG with a reason (the sender is to be treated as hostile),
// -ENOENT for an unknown id, -EINVAL when `buf` is not 8-byte aligned. Never
// reads outside [buf, buf + len).
int capsa_iface_decode(const capsa_interface_t *iface, uint32_t id,
                       const uint8_t *buf, size_t len,
                       const capsa_handle_t *handles, uint32_t nhandles,
                       void *out, char *reason, size_t reason_size);

// The envelope rules: `from` may send message `id`, and `flags`
// (CAPSA_MSG_F_*) fit its kind. For a response, `request_id_of` is the id of
// the interface message the answered request was (0: unknown), which must
// name `id` as its reply. Returns 0, -EBADMSG with a reason, -ENOENT.
int capsa_iface_check_envelope(const capsa_interface_t *iface, uint32_t id,
                               capsa_peer_role_t from, uint32_t flags,
                               uint32_t request_id_of, char *reason,
                               size_t reason_size);

// The version of an interface: a hash of all its descriptor makes the
// runtime check (names, ids, kinds, senders, pairing, every field's type,
// slot, limits and handle rules; not comments or C layout). 0 for NULL.
uint64_t capsa_iface_hash(const capsa_interface_t *iface);
// Of an ordered list (what HELLO carries; 0 when n is 0).
uint64_t capsa_iface_list_hash(const capsa_interface_t *const *list,
                               unsigned n);
// Their names joined by ',' into `buf` (`cap` bytes, NUL-terminated).
// Returns the length, or -1 when it does not fit.
int capsa_iface_list_names(const capsa_interface_t *const *list, unsigned n,
                           char *buf, size_t cap);

// Checks a generated descriptor once (ids in order, fields in bounds, rights
// valid, names short): 0 or -EINVAL with a reason. Registration calls it.
int capsa_iface_check_descriptor(const capsa_interface_t *iface, char *reason,
                                 size_t reason_size);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_INTERFACE_H_
