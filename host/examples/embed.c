// The README's embedding example, built as a GN target so it cannot rot:
// a host on the default libuv loop, one renderer kind, one renderer that
// answers a page of text with a log line, then everything closes.
#include <stdio.h>
#include <string.h>

#include <capsa/capsa.h>  // the SDK: pkg-config --cflags --libs capsa

// Renderer side: runs in capability mode, in its own namespaces.
static int on_message(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_LOAD_CONTENT) return -1;
  return capsa_rctx_log(r, CAPSA_LOG_INFO, "got %zu bytes",
                        m->u.load_content.data.len);
}
static const capsa_renderer_handlers_t kEcho = {.kind = "echo",
                                                .on_message = on_message};
// Found by name in the zygote, a fresh exec of this binary.
CAPSA_RENDERER_KIND(echo, "echo", capsa_renderer_main, &kEcho)

// Host side: every event of every renderer arrives here.
static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  if (ev->type == CAPSA_EV_READY) {  // sandbox verified from outside
    capsa_msg_t m;
    capsa_msg_init(&m, CAPSA_MSG_LOAD_CONTENT);
    m.u.load_content.data = (capsa_bytes_t){(const uint8_t *)"hello", 5};
    capsa_renderer_send(ev->renderer, &m);
  } else if (ev->type == CAPSA_EV_LOG) {
    printf("renderer %d says: %s\n", (int)capsa_renderer_pid(ev->renderer),
           ev->text);
    capsa_renderer_kill(ev->renderer);
  } else if (ev->type == CAPSA_EV_CLOSED) {
    capsa_host_close(host, NULL);
  }
}

int main(int argc, char **argv) {
  if (capsa_main(argc, argv) < 0) return 1;  // first: the zygote runs here
  uv_loop_t *loop = uv_default_loop();
  capsa_host_t host;
  capsa_host_options_t opts;
  capsa_host_options_init(&opts);  // all namespaces where the kernel allows
  if (capsa_host_init(loop, &host, &opts, on_event) < 0) return 1;
  capsa_kind_options_t kind;
  capsa_kind_options_init(&kind, "echo", capsa_renderer_main, (void *)&kEcho);
  int echo = capsa_host_define_kind(&host, &kind);
  if (echo < 0 || capsa_host_start(&host) < 0) return 1;  // execs the zygote
  capsa_renderer_t *r;
  if (capsa_host_spawn(&host, echo, NULL, &r) < 0) return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
