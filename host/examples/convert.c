// The README's interface example: an embedder-defined "convert" service on
// the embedder's own uv loop. Its messages are defined once, in
// convert.fbs; the build generates convert.capsa.h (structs, ids, the
// descriptor every message is checked against on both sides).
//
//   capsa_convert_example [TEXT]   prints the text converted to upper case
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <capsa/capsa.h>  // the SDK: pkg-config --cflags --libs capsa

#include "host/examples/convert.capsa.h"  // generated from convert.fbs

static const capsa_interface_t *const kConvert[] = {
    &capsa_example_convert_interface};

// Renderer side: in capability mode; holds only its channel and what each
// request delegates.
static int convert(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.id != CAPSA_EXAMPLE_CONVERT_CONVERT)
    return -EPROTO;
  // Verified against the schema before we see it: both handles present,
  // of the kinds and rights it allows, in_size within range.
  const capsa_example_convert_convert_t *q = m->u.iface.value;
  capsa_example_convert_converted_t res;
  capsa_example_convert_converted_init(&res);
  capsa_shm_region_t in, out;
  const capsa_handle_t *hin = &m->handles[q->input];
  const capsa_handle_t *hout = &m->handles[q->output];
  int in_fd = capsa_msg_take_handle(m, (uint32_t)q->input);
  int out_fd = capsa_msg_take_handle(m, (uint32_t)q->output);
  const uint8_t *src = NULL;
  uint8_t *dst = NULL;
  if (capsa_shm_map_fd(in_fd, hin->size, CAPSA_SHM_PEER_READS, &in) < 0) {
    res.status = -EBADF;
  } else if (capsa_shm_map_fd(out_fd, hout->size, CAPSA_SHM_PEER_READWRITE,
                              &out) < 0) {
    res.status = -EBADF;
    capsa_shm_close(&in);
  } else {
    if (capsa_shm_view(&in, 0, q->in_size, (const void **)&src) < 0 ||
        capsa_shm_view_mut(&out, 0, q->in_size, (void **)&dst) < 0) {
      res.status = -ERANGE;  // in_size beyond either region
    } else {
      for (uint64_t i = 0; i < q->in_size; i++)
        dst[i] =
            q->op == 1 ? (uint8_t)toupper(src[i]) : src[q->in_size - 1 - i];
      res.out_size = q->in_size;
    }
    capsa_shm_close(&in);
    capsa_shm_close(&out);
  }
  capsa_msg_t reply;
  capsa_msg_init_iface(&reply, &capsa_example_convert_interface,
                       CAPSA_EXAMPLE_CONVERT_CONVERTED, &res);
  return capsa_rctx_reply(r, m, &reply);
}
static const capsa_renderer_handlers_t kConverter = {.kind = "convert",
                                                     .on_message = convert,
                                                     .interfaces = kConvert,
                                                     .ninterfaces = 1};
CAPSA_RENDERER_KIND(converter, "convert", capsa_renderer_main, &kConverter)

// Host side.
static const char *g_text = "hello, capsa";
static capsa_shm_region_t g_out;
static int g_status = 1;

static void on_converted(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                         void *arg) {
  (void)arg;
  if (status < 0 || reply->type != CAPSA_MSG_INTERFACE) {
    fprintf(stderr, "convert: %s\n",
            status < 0 ? strerror(-status) : "renderer error");
  } else {
    const capsa_example_convert_converted_t *res = reply->u.iface.value;
    char text[256];
    // The renderer may write its region at any time: copy, then use.
    if (res->status == 0 && res->out_size < sizeof text &&
        capsa_shm_read(&g_out, 0, text, res->out_size) == 0) {
      text[res->out_size] = '\0';
      printf("converted: %s\n", text);
      g_status = 0;
    } else {
      fprintf(stderr, "convert: status %d\n", res->status);
    }
  }
  capsa_renderer_shutdown(r, 1000);
}

static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  if (ev->type == CAPSA_EV_READY) {
    size_t n = strlen(g_text);
    capsa_shm_region_t in;
    capsa_example_convert_convert_t q;
    capsa_example_convert_convert_init(&q);
    q.in_size = n;
    capsa_msg_t m;
    capsa_msg_init_iface(&m, &capsa_example_convert_interface,
                         CAPSA_EXAMPLE_CONVERT_CONVERT, &q);
    capsa_rights_t ro, rw;
    capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R, CAPSA_CAP_FSTAT);
    capsa_rights_init(&rw, CAPSA_CAP_READ, CAPSA_CAP_WRITE, CAPSA_CAP_MMAP_RW,
                      CAPSA_CAP_FSTAT);
    // Input: sealed against writes, then our own writable mapping dropped.
    if (capsa_shm_create(n ? n : 1, "input", CAPSA_SHM_CREATOR_WRITES, &in) <
            0 ||
        capsa_shm_write(&in, 0, g_text, n) < 0 || capsa_shm_unmap(&in) < 0 ||
        capsa_shm_create(n ? n : 1, "output", CAPSA_SHM_PEER_WRITES, &g_out) <
            0) {
      capsa_renderer_kill(ev->renderer);
      return;
    }
    q.input = capsa_msg_add_handle(&m, capsa_shm_release_fd(&in),
                                   CAPSA_HANDLE_SHM, &ro, in.size, false);
    q.output = capsa_msg_add_handle(&m, dup(g_out.fd), CAPSA_HANDLE_SHM, &rw,
                                    g_out.size, true);
    if (capsa_renderer_request(ev->renderer, &m, 5000, on_converted, NULL) <
        0) {
      capsa_msg_close_handles(&m);  // a failed send leaves them ours
      capsa_renderer_kill(ev->renderer);
    }
  } else if (ev->type == CAPSA_EV_BAD_MESSAGE) {
    fprintf(stderr, "convert: renderer killed: %s\n", ev->text);
  } else if (ev->type == CAPSA_EV_CLOSED) {
    capsa_shm_close(&g_out);
    capsa_host_close(host, NULL);
  }
}

int main(int argc, char **argv) {
  if (capsa_main(argc, argv) < 0) return 1;  // first: the zygote runs here
  if (argc > 1) g_text = argv[1];
  uv_loop_t *loop = uv_default_loop();
  capsa_host_t host;
  if (capsa_host_init(loop, &host, NULL, on_event) < 0) return 1;
  capsa_kind_options_t kind;
  capsa_kind_options_init(&kind, "convert", capsa_renderer_main,
                          (void *)&kConverter);
  kind.interfaces = kConvert;  // the same list as the renderer's handlers
  kind.ninterfaces = 1;
  int k = capsa_host_define_kind(&host, &kind);
  capsa_renderer_t *r;
  if (k < 0 || capsa_host_start(&host) < 0 ||
      capsa_host_spawn(&host, k, NULL, &r) < 0)
    return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  return g_status;
}
