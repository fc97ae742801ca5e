// The demo renderers' handlers for the runtime (renderer/runtime.h): the
// glue between capsa messages and the workloads in renderer/gzip,
// renderer/page and renderer/hostile.
//
//   capsa_kind_options_t k;                        // host/capsa_host.h
//   capsa_kind_options_init(&k, "gzip", capsa_renderer_main,
//                           (void *)&capsa_gzip_renderer);
//
// Each speaks its own interface (the same list in its handlers'
// .interfaces, which a host copies into its kind options):
// gzip     (entry: capsa_renderer_main_limited, so its handles get their
//          declared rights) capsa.demo.gzip (renderer/gzip/gzip.fbs): a Job
//          with a read-only input region (in_size bytes of it are input)
//          and a write-only output region; answers Result {status,
//          out_size}.
// page     fetches fonts from the broker ("font:regular|bold|mono") at
//          start; capsa.demo.page (renderer/page/page.fbs): Load (inline
//          Markdown or a read-only file) then Resize {width, max height,
//          writable frame region}; draws the page and sends Frame {width,
//          height, stride, RGBA}, which the host checks against the region.
// hostile  capsa.demo.hostile (renderer/hostile/hostile.fbs): an Attack
//          with a read-only region whose text is "host-pid=N": runs the
//          attack list (renderer/hostile/hostile.h) from inside its sandbox,
//          LOGs one line per attack and a summary, then sends the host
//          garbage (which the host must answer by killing it).
#ifndef CAPSA_RENDERER_KINDS_H_
#define CAPSA_RENDERER_KINDS_H_

#include "renderer/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const capsa_renderer_handlers_t capsa_gzip_renderer;
extern const capsa_renderer_handlers_t capsa_page_renderer;
extern const capsa_renderer_handlers_t capsa_hostile_renderer;

// The page kind's warm-up (CAPSA_RENDERER_WARM_UP, host/kind_registry.h):
// `fds` are the regular, bold and mono font files (read-only; 0 to 3 of
// them, in that order), mapped and parsed once in the zygote so that page
// renderers start without asking the broker for fonts or loading faces.
// With none given page renderers fetch "font:*" at start, as before.
int capsa_page_renderer_warm_up(const int *fds, unsigned nfds);

// gzip.fbs Job.op, page.fbs Frame.format.
enum { CAPSA_GZIP_OP_COMPRESS = 1, CAPSA_GZIP_OP_GUNZIP = 2 };
enum { CAPSA_PAGE_FORMAT_BGRA8888 = 1, CAPSA_PAGE_FORMAT_RGBA8888 = 2 };

// The hostile renderer's summary line starts with this.
#define CAPSA_HOSTILE_SUMMARY "hostile summary:"

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_RENDERER_KINDS_H_
