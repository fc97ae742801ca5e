// The dispatch table: for every message type, who may send it, whether it
// is a request or a response, how many handles it carries and the semantic
// rules of its body. Adding a message adds one row here (and its schema
// table, struct and codec cases).
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

static int check_load_content(const capsa_msg_t *m, char *r, size_t n) {
  if (m->handle_count == 1) {
    if (m->u.load_content.data.len != 0)
      BAD("load_content: both inline data and a handle");
    return check_readonly_data_handle(&m->handles[0], r, n);
  }
  return 0;
}

static int check_frame_ready(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_frame_ready_t *f = &m->u.frame_ready;
  if (f->width == 0 || f->width > CAPSA_IPC_MAX_DIMENSION || f->height == 0 ||
      f->height > CAPSA_IPC_MAX_DIMENSION)
    BAD("frame_ready: size %ux%u out of range", f->width, f->height);
  if ((uint64_t)f->stride < (uint64_t)f->width * 4 ||
      f->stride > CAPSA_IPC_MAX_DIMENSION * 4u)
    BAD("frame_ready: stride %u for width %u", f->stride, f->width);
  if (f->format != CAPSA_PIXEL_BGRA8888 && f->format != CAPSA_PIXEL_RGBA8888)
    BAD("frame_ready: pixel format %u", f->format);
  // 64-bit: stride * height < 2^32, offset checked against the region by the
  // host; here only that the end cannot wrap.
  uint64_t bytes = (uint64_t)f->stride * f->height;
  if (f->offset > CAPSA_IPC_MAX_REGION ||
      f->offset + bytes > CAPSA_IPC_MAX_REGION)
    BAD("frame_ready: offset %llu + %llu bytes beyond any region",
        (unsigned long long)f->offset, (unsigned long long)bytes);
  return 0;
}

static int check_resize(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_resize_t *z = &m->u.resize;
  if (z->width == 0 || z->width > CAPSA_IPC_MAX_DIMENSION || z->height == 0 ||
      z->height > CAPSA_IPC_MAX_DIMENSION)
    BAD("resize: size %ux%u out of range", z->width, z->height);
  if (z->scale_milli == 0 || z->scale_milli > 16000)
    BAD("resize: scale %u", z->scale_milli);
  if (m->handle_count == 1) {
    const capsa_handle_t *h = &m->handles[0];
    if (h->kind != CAPSA_HANDLE_SHM || !h->writable)
      BAD("resize: handle 0 must be a writable shm region");
    if (h->size < (uint64_t)z->width * z->height * 4)
      BAD("resize: frame region of %llu bytes too small for %ux%u",
          (unsigned long long)h->size, z->width, z->height);
  }
  return 0;
}

static int check_input_event(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_input_event_t *e = &m->u.input_event;
  if (e->kind < CAPSA_INPUT_KEY_DOWN || e->kind > CAPSA_INPUT_KIND_MAX)
    BAD("input_event: kind %u", e->kind);
  if (e->text != NULL && e->kind != CAPSA_INPUT_TEXT)
    BAD("input_event: text on a non-text event");
  if (e->x < -CAPSA_IPC_MAX_DIMENSION || e->x > CAPSA_IPC_MAX_DIMENSION ||
      e->y < -CAPSA_IPC_MAX_DIMENSION || e->y > CAPSA_IPC_MAX_DIMENSION)
    BAD("input_event: position %d,%d out of range", e->x, e->y);
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

static int check_gzip_job(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_gzip_job_t *j = &m->u.gzip_job;
  if (j->op != CAPSA_GZIP_COMPRESS && j->op != CAPSA_GZIP_DECOMPRESS)
    BAD("gzip_job: op %u", j->op);
  if (j->level < 0 || j->level > 9) BAD("gzip_job: level %d", j->level);
  if (m->handle_count == 0) {
    if (j->in_size != j->data.len)
      BAD("gzip_job: in_size %llu but %zu inline bytes",
          (unsigned long long)j->in_size, j->data.len);
    return 0;
  }
  if (m->handle_count != 2)
    BAD("gzip_job: %u handles, expected 0 or 2", m->handle_count);
  const capsa_handle_t *in = &m->handles[0], *out = &m->handles[1];
  if (j->data.len != 0) BAD("gzip_job: both inline data and handles");
  if (in->kind != CAPSA_HANDLE_SHM || in->writable)
    BAD("gzip_job: handle 0 (input) must be a read-only shm region");
  if (out->kind != CAPSA_HANDLE_SHM || !out->writable)
    BAD("gzip_job: handle 1 (output) must be a writable shm region");
  if (j->in_size > in->size)
    BAD("gzip_job: in_size %llu beyond the %llu-byte input region",
        (unsigned long long)j->in_size, (unsigned long long)in->size);
  return 0;
}

static int check_gzip_result(const capsa_msg_t *m, char *r, size_t n) {
  const capsa_msg_gzip_result_t *g = &m->u.gzip_result;
  if (!max_errno_ok(g->status)) BAD("gzip_result: status %d", g->status);
  if (g->data.len != 0 && g->out_size != g->data.len)
    BAD("gzip_result: out_size %llu but %zu inline bytes",
        (unsigned long long)g->out_size, g->data.len);
  if (g->out_size > CAPSA_IPC_MAX_REGION)
    BAD("gzip_result: out_size %llu", (unsigned long long)g->out_size);
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
    [CAPSA_MSG_LOAD_CONTENT] = {CAPSA_MSG_LOAD_CONTENT, "load_content", H,
                                PLAIN, 0, 1, check_load_content,
                                "content to render, inline or by handle"},
    [CAPSA_MSG_FRAME_READY] = {CAPSA_MSG_FRAME_READY, "frame_ready", R, PLAIN,
                               0, 0, check_frame_ready,
                               "pixels are in the frame region"},
    [CAPSA_MSG_RESIZE] = {CAPSA_MSG_RESIZE, "resize", H, PLAIN, 0, 1,
                          check_resize, "viewport and its frame region"},
    [CAPSA_MSG_INPUT_EVENT] = {CAPSA_MSG_INPUT_EVENT, "input_event", H, PLAIN,
                               0, 0, check_input_event,
                               "keyboard and mouse input"},
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
    [CAPSA_MSG_GZIP_JOB] = {CAPSA_MSG_GZIP_JOB, "gzip_job", H, REQ, 0, 2,
                            check_gzip_job,
                            "demo workload: (de)compress untrusted data"},
    [CAPSA_MSG_GZIP_RESULT] = {CAPSA_MSG_GZIP_RESULT, "gzip_result", R, RESP, 0,
                               0, check_gzip_result, "answers gzip_job"},
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
  return &kRows[type];
}
