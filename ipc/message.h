// capsa IPC messages as plain C structs: what the codec encodes and decodes.
//
//   #include <capsa/channel_loop.h>
//
//   int log_frame(capsa_rloop_t *l, int frame) {  // a renderer's loop
//     char text[64];
//     snprintf(text, sizeof text, "frame %d painted", frame);
//     capsa_msg_t m;
//     capsa_msg_init(&m, CAPSA_MSG_LOG);
//     m.u.log.level = CAPSA_LOG_INFO;
//     m.u.log.text = text;  // borrowed, not copied
//     return capsa_rloop_send(l, &m);
//   }
//
// Strings and byte arrays are borrowed pointers. In a message you build they
// point to your memory until the send call returns; in a received message
// they point into the channel's receive buffer and are valid only during the
// callback that delivered it (copy what you keep).
//
// Adding a message: a table in ipc/schema/capsa_ipc.fbs (appended to the Body
// union, whose order is the numbering below), a struct and enum value here,
// and one row in the dispatch table ipc/message_table.c (direction, handles,
// semantic check); the codec's encode/decode switch in ipc/codec.cc follows.
#ifndef CAPSA_IPC_MESSAGE_H_
#define CAPSA_IPC_MESSAGE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/rights/rights.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Wire protocol version carried in every envelope; a mismatch is a bad
// message.
#define CAPSA_IPC_VERSION 2

// Limits. A peer exceeding any of them sent a bad message.
#define CAPSA_IPC_MAX_MESSAGE 65536        // encoded envelope, bytes
#define CAPSA_IPC_MAX_HANDLES 8            // descriptors per message
#define CAPSA_IPC_MAX_STRING 4096          // any string field, bytes
#define CAPSA_IPC_MAX_REGION (1ULL << 32)  // declared shm / file size
#define CAPSA_IPC_REASON_MAX 160           // reason buffers, bytes incl. NUL

// Numbering = the flatbuffers Body union values (checked at compile time).
typedef enum capsa_msg_type {
  CAPSA_MSG_NONE = 0,
  CAPSA_MSG_HELLO = 1,  // renderer -> host, first message
  // 2-5: retired (the demos' LOAD_CONTENT, FRAME_READY, RESIZE,
  // INPUT_EVENT are interfaces now: demos/page/page.fbs); never reused.
  CAPSA_MSG_RESOURCE_REQUEST = 6,   // renderer -> host, request
  CAPSA_MSG_RESOURCE_RESPONSE = 7,  // host -> renderer, response
  CAPSA_MSG_LOG = 8,                // renderer -> host
  CAPSA_MSG_PING = 9,               // either way, request
  CAPSA_MSG_PONG = 10,              // either way, response
  CAPSA_MSG_SHUTDOWN = 11,          // host -> renderer
  CAPSA_MSG_ERROR = 12,             // either way; may answer a request
  // 13-14: retired (GZIP_JOB / GZIP_RESULT: demos/gzip/gzip.fbs).
  CAPSA_MSG_OPEN_CHANNEL = 15,  // host -> renderer, one channel handle
  CAPSA_MSG_INTERFACE = 16,     // either way: an embedder interface's
  CAPSA_MSG_TYPE_COUNT
} capsa_msg_type_t;

// Envelope flags.
#define CAPSA_MSG_F_REQUEST 0x1u   // expects a response with the same id
#define CAPSA_MSG_F_RESPONSE 0x2u  // answers request_id
#define CAPSA_MSG_F_ALL (CAPSA_MSG_F_REQUEST | CAPSA_MSG_F_RESPONSE)

// What a handle is; checked against the received descriptor (ipc/handle.h).
typedef enum capsa_handle_kind {
  CAPSA_HANDLE_NONE = 0,
  CAPSA_HANDLE_SHM = 1,      // sealed memfd (ipc/shm.h)
  CAPSA_HANDLE_CHANNEL = 2,  // unnamed AF_UNIX SOCK_SEQPACKET endpoint
  CAPSA_HANDLE_FILE = 3,     // regular file opened read-only
} capsa_handle_kind_t;

// A descriptor travelling with a message, and what the sender declares about
// it. Ownership of `fd`: see capsa_channel_send (sending) and
// capsa_msg_take_handle (receiving).
typedef struct capsa_handle {
  int fd;
  capsa_handle_kind_t kind;
  capsa_rights_t rights;  // applied by the receiver; never wider than kind
  uint64_t size;          // shm: region size; file: file size; channel: 0
  bool writable;          // shm only: the receiver may map it writable
} capsa_handle_t;

typedef struct capsa_bytes {
  const uint8_t *data;  // borrowed; NULL when len == 0
  size_t len;
} capsa_bytes_t;

// Namespaces in capsa_sandbox_report.namespaces.
#define CAPSA_NS_USER 0x01u
#define CAPSA_NS_PID 0x02u
#define CAPSA_NS_IPC 0x04u
#define CAPSA_NS_MOUNT 0x08u
#define CAPSA_NS_NET 0x10u

// The renderer's own account of its confinement (the host double-checks
// what it can; a compromised renderer can lie here).
typedef struct capsa_sandbox_report {
  bool capmode;  // capability mode entered (seccomp policy loaded)
  bool no_new_privs;
  int32_t landlock_abi;  // 0: Landlock not enforced
  uint32_t namespaces;   // CAPSA_NS_* bits
  const char *detail;    // free text, may be NULL
} capsa_sandbox_report_t;

typedef struct capsa_msg_hello {
  uint32_t protocol_version;  // CAPSA_IPC_VERSION
  int32_t pid;                // in the renderer's pid namespace
  const char *renderer_kind;  // "html", "image", "gzip"...; may be NULL
  capsa_sandbox_report_t sandbox;
  // The embedder interfaces it speaks (ipc/interface.h): their names joined
  // by ',' (NULL: none) and capsa_iface_list_hash() of them, which the host
  // compares with its kind's.
  const char *interfaces;
  uint64_t interfaces_hash;
} capsa_msg_hello_t;

// The renderer asks the broker for a resource (a request).
typedef struct capsa_msg_resource_request {
  const char *url;  // required, non-empty
} capsa_msg_resource_request_t;

// The broker's answer: inline data or one read-only handle (file or shm).
typedef struct capsa_msg_resource_response {
  int32_t status;  // 0 or a negative errno
  const char *mime;
  capsa_bytes_t data;
} capsa_msg_resource_response_t;

enum { CAPSA_LOG_DEBUG = 0, CAPSA_LOG_INFO, CAPSA_LOG_WARN, CAPSA_LOG_ERROR };
typedef struct capsa_msg_log {
  uint32_t level;  // CAPSA_LOG_*
  const char *text;
} capsa_msg_log_t;

typedef struct capsa_msg_ping {  // PING (request) and PONG (response)
  uint64_t seq;
  capsa_bytes_t payload;
} capsa_msg_ping_t;

typedef struct capsa_msg_shutdown {
  const char *reason;  // may be NULL
} capsa_msg_shutdown_t;

typedef struct capsa_msg_error {
  int32_t code;  // negative errno
  const char *message;
} capsa_msg_error_t;

// Hands the renderer a new channel endpoint (handle 0, kind CHANNEL).
typedef struct capsa_msg_open_channel {
  uint32_t channel_id;  // the host's name for it, non-zero
  const char *purpose;  // may be NULL
} capsa_msg_open_channel_t;

struct capsa_interface;  // ipc/interface.h

// A message of an embedder interface (ipc/interface.h, docs/interfaces.md).
// To send: capsa_msg_init_iface(); the channel encodes `value` with the
// interface's generated descriptor when it sends (its handle fields index
// msg->handles). Received: the channel has verified and decoded it, with
// every check of the schema, before anyone sees it; `value` points to the
// generated struct (e.g. thumb_decode_t), valid during the callback.
typedef struct capsa_msg_interface {
  const struct capsa_interface *iface;  // which one (received: the channel's)
  uint32_t id;                          // message id within the interface
  const void *value;                    // the generated C struct (borrowed)
  // Wire form, set by the channel: `index` of `iface` among the channel's
  // interfaces and the encoded payload. A sender that fills `payload`
  // itself with `value` NULL sends those bytes as they are (fuzzing, tests).
  uint32_t index;
  capsa_bytes_t payload;
} capsa_msg_interface_t;

typedef struct capsa_msg {
  capsa_msg_type_t type;
  uint32_t flags;       // CAPSA_MSG_F_*
  uint64_t request_id;  // requests and responses; set by the channel
  uint64_t seq;         // per-direction order; set by the channel
  // Received messages: which channel delivered it, a number unique in this
  // process for the channel's life (a renderer's incarnation has a channel
  // of its own). Set by the channel; 0 in a message you build. A reply
  // carries only request_id, and every channel numbers its requests from
  // 1, so capsa_channel_reply checks this to refuse (-ESTALE) answering a
  // request of another channel or an earlier incarnation. Keep it when
  // copying a request to answer it later.
  uint64_t origin;
  uint32_t handle_count;
  capsa_handle_t handles[CAPSA_IPC_MAX_HANDLES];
  union {
    capsa_msg_hello_t hello;
    capsa_msg_resource_request_t resource_request;
    capsa_msg_resource_response_t resource_response;
    capsa_msg_log_t log;
    capsa_msg_ping_t ping;  // PING and PONG
    capsa_msg_shutdown_t shutdown;
    capsa_msg_error_t error;
    capsa_msg_open_channel_t open_channel;
    capsa_msg_interface_t iface;
  } u;
} capsa_msg_t;

// Zeroes *msg, sets its type and marks every handle slot empty (fd -1).
void capsa_msg_init(capsa_msg_t *msg, capsa_msg_type_t type);

// capsa_msg_init(msg, CAPSA_MSG_INTERFACE) for message `id` of `iface`
// (borrowed: a generated descriptor, static) with the C struct at `value`
// (borrowed until the send returns). Handles: capsa_msg_add_handle, in the
// order the struct's handle fields name them.
void capsa_msg_init_iface(capsa_msg_t *msg, const struct capsa_interface *iface,
                          uint32_t id, const void *value);

// Appends a handle declaration. `fd` stays owned by the caller until a send
// succeeds. Returns the handle index, or -E2BIG when the message is full,
// -EINVAL for a bad kind or fd.
int capsa_msg_add_handle(capsa_msg_t *msg, int fd, capsa_handle_kind_t kind,
                         const capsa_rights_t *rights, uint64_t size,
                         bool writable);

// In a received message: takes ownership of handle `i`'s descriptor (the
// channel no longer closes it) and returns it, or -EBADF when the slot is
// empty or was already taken.
int capsa_msg_take_handle(capsa_msg_t *msg, uint32_t i);

// Closes every descriptor still held by a received message (fd -> -1). The
// channels call this after the callback returns.
void capsa_msg_close_handles(capsa_msg_t *msg);

// "hello", "ping", ...; "?" for unknown values. Static string.
const char *capsa_msg_type_name(uint32_t type);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_MESSAGE_H_
