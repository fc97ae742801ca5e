// The README's embedding example, built as a GN target so it cannot rot:
// a host on the default libuv loop, one renderer kind, one renderer that
// tries what a compromised one would and says what happened, then
// everything closes. (Messages of your own: the convert example below.)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include <capsa/capsa.h>  // the SDK: pkg-config --cflags --libs capsa

// Renderer side: runs in capability mode, in its own namespaces, holding
// only its channel to the host.
static int on_start(capsa_rctx_t *r) {
  int fd = open("/etc/passwd", O_RDONLY);  // no ambient authority
  return capsa_rctx_log(r, CAPSA_LOG_INFO, "open(/etc/passwd): %s",
                        fd < 0 ? capsa_errno_name(errno) : "opened?!");
}
static const capsa_renderer_handlers_t kProbe = {.kind = "probe",
                                                 .on_start = on_start};
// Found by name in the zygote, a fresh exec of this binary.
CAPSA_RENDERER_KIND(probe, "probe", capsa_renderer_main, &kProbe)

// Host side: every event of every renderer arrives here.
static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  if (ev->type == CAPSA_EV_LOG) {  // after READY: sandbox verified outside
    printf("renderer %d says: %s\n", (int)capsa_renderer_pid(ev->renderer),
           ev->text);
    capsa_renderer_shutdown(ev->renderer, 1000);
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
  capsa_kind_options_init(&kind, "probe", capsa_renderer_main, (void *)&kProbe);
  int probe = capsa_host_define_kind(&host, &kind);
  if (probe < 0 || capsa_host_start(&host) < 0) return 1;  // execs the zygote
  capsa_renderer_t *r;
  if (capsa_host_spawn(&host, probe, NULL, &r) < 0) return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
