// The dispatch table: for every message type, who may send it, whether it
// is a request or a response, how many handles it carries and the semantic
// rules of its body: the core protocol only (an embedder's messages and the
// demos' are interfaces, checked by ipc/channel_iface.c against their
// generated descriptors). Adding a core message adds one row here (and its
// schema table, struct and codec cases). The retired numbers have no row,
// so they are unknown types.
#include "ipc/message_table.h"

#include <errno.h>

#include "ipc/reason.h"

#define BAD(...) return capsa__bad(r, n, __VA_ARGS__)

static int max_errno_ok(int32_t v) {
  return v <= 0 && v >= -4095;
}

// A read-only data handle: a file, or a shm region not writable.
static int check_readonly_data_handle(const capsa_handle_t *h, char *r,
                                      size_t n) {
  if (h->kind == CAPSA_HANDLE_FILE) return 0;
  if (h->kind == CAPSA_HANDLE_SHM && !h->writable) return 0;
  BAD("handle 0 must be a read-only file or read-only shm region");
}

static int check_hello(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_hello_t *h = &m->u.hello;
  if (h->protocol_version != CAPSA_IPC_VERSION)
    BAD("hello: protocol version %u, expected %u", h->protocol_version,
        CAPSA_IPC_VERSION);
  if (h->pid <= 0) BAD("hello: pid %d", h->pid);
  if (h->sandbox.landlock_abi < 0 || h->sandbox.landlock_abi > 64)
    BAD("hello: landlock abi %d", h->sandbox.landlock_abi);
  if (h->sandbox.namespaces & ~0x1fu)
    BAD("hello: unknown namespace bits 0x%x", h->sandbox.namespaces);
  return 0;
}

static int check_resource_request(const capsa_msg_t *m, char *r, size_t n) {
  const char *url = m->u.resource_request.url;
  if (url == NULL || url[0] == '\0') BAD("resource_request: empty url");
  return 0;
}

static int check_resource_response(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_resource_response_t *p = &m->u.resource_response;
  if (!max_errno_ok(p->status)) BAD("resource_response: status %d", p->status);
  if (m->handle_count == 1) {
    if (p->data.len != 0) BAD("resource_response: both data and a handle");
    return check_readonly_data_handle(&m->handles[0], r, n);
  }
  return 0;
}

static int check_log(const capsa_msg_t *m, char *r, size_t n) {
  if (m->u.log.level > CAPSA_LOG_ERROR) BAD("log: level %u", m->u.log.level);
  if (m->u.log.text == NULL) BAD("log: no text");
  return 0;
}

static int check_none(const capsa_msg_t *m, char *r, size_t n) {
  return 0;
}

static int check_error(const capsa_msg_t *m, char *r, size_t n) {
  if (m->u.error.code >= 0 || !max_errno_ok(m->u.error.code))
    BAD("error: code %d is not a negative errno", m->u.error.code);
  return 0;
}

static int check_open_channel(const capsa_msg_t *m, char *r, size_t n) {
  if (m->u.open_channel.channel_id == 0) BAD("open_channel: channel id 0");
  if (m->handles[0].kind != CAPSA_HANDLE_CHANNEL)
    BAD("open_channel: handle 0 must be a channel endpoint");
  return 0;
}

// The envelope of an interface message; its payload, handles, direction and
// pairing are checked against the interface's descriptor by the channel
// (ipc/channel_iface.c), which knows the interfaces it speaks.
static int check_interface(const capsa_msg_t *m, char *r, size_t n) {
  if (m->u.iface.id == 0) BAD("interface: message id 0");
  if (m->u.iface.payload.len == 0 && m->u.iface.value == NULL)
    BAD("interface: no payload");
  return 0;
}

#define H CAPSA__FROM_HOST
#define R CAPSA__FROM_RENDERER
#define ANY CAPSA__FROM_ANY
#define PLAIN CAPSA__PLAIN
#define REQ CAPSA__REQUEST
#define RESP CAPSA__RESPONSE

static const capsa__msg_row_t kRows[CAPSA_MSG_TYPE_COUNT] = {
    [CAPSA_MSG_HELLO] = {CAPSA_MSG_HELLO, "hello", R, PLAIN, 0, 0, check_hello,
                         "first message; the renderer's sandbox report"},
    [CAPSA_MSG_RESOURCE_REQUEST] = {CAPSA_MSG_RESOURCE_REQUEST,
                                    "resource_request", R, REQ, 0, 0,
                                    check_resource_request,
                                    "the broker fetches on the renderer's "
                                    "behalf"},
    [CAPSA_MSG_RESOURCE_RESPONSE] = {CAPSA_MSG_RESOURCE_RESPONSE,
                                     "resource_response", H, RESP, 0, 1,
                                     check_resource_response,
                                     "the broker's answer"},
    [CAPSA_MSG_LOG] = {CAPSA_MSG_LOG, "log", R, PLAIN, 0, 0, check_log,
                       "renderers have no stderr of their own"},
    [CAPSA_MSG_PING] = {CAPSA_MSG_PING, "ping", ANY, REQ, 0, 0, check_none,
                        "liveness and latency"},
    [CAPSA_MSG_PONG] = {CAPSA_MSG_PONG, "pong", ANY, RESP, 0, 0, check_none,
                        "answers ping"},
    [CAPSA_MSG_SHUTDOWN] = {CAPSA_MSG_SHUTDOWN, "shutdown", H, PLAIN, 0, 0,
                            check_none, "orderly exit"},
    [CAPSA_MSG_ERROR] = {CAPSA_MSG_ERROR, "error", ANY, PLAIN | RESP, 0, 0,
                         check_error, "failure report or failed request"},
    [CAPSA_MSG_OPEN_CHANNEL] = {CAPSA_MSG_OPEN_CHANNEL, "open_channel", H,
                                PLAIN, 1, 1, check_open_channel,
                                "a further channel (service, other renderer)"},
    [CAPSA_MSG_INTERFACE] = {CAPSA_MSG_INTERFACE, "interface", ANY,
                             PLAIN | REQ | RESP, 0, CAPSA_IPC_MAX_HANDLES,
                             check_interface,
                             "the embedder's own messages (its schema)"},
};

const capsa__msg_row_t *capsa__msg_row(uint32_t type) {
  if (type == CAPSA_MSG_NONE || type >= CAPSA_MSG_TYPE_COUNT) return NULL;
  return kRows[type].name != NULL ? &kRows[type] : NULL;  // retired: unknown
}
