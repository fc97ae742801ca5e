// The page demo renderer's handlers for the runtime (renderer/runtime.h):
// the glue between capsa messages and the workload (demos/page/page.h).
//
//   capsa_kind_options_t k;                        // host/capsa_host.h
//   capsa_kind_options_init(&k, "page", capsa_renderer_main,
//                           (void *)&capsa_page_renderer);
//   k.interfaces = capsa_page_renderer.interfaces;  // what it speaks
//   k.ninterfaces = capsa_page_renderer.ninterfaces;
//   k.allow_fonts = true;
//
// It fetches fonts from the broker ("font:regular|bold|mono") at start
// unless its warm-up ran; capsa.demo.page (demos/page/page.fbs): Load
// (inline Markdown or a read-only file) then Resize {width, max height,
// writable frame region}; draws the page and sends Frame {width, height,
// stride, RGBA}, which the host checks against the region.
#ifndef CAPSA_DEMOS_PAGE_PAGE_RENDERER_H_
#define CAPSA_DEMOS_PAGE_PAGE_RENDERER_H_

#include "renderer/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const capsa_renderer_handlers_t capsa_page_renderer;

// The page kind's warm-up (CAPSA_RENDERER_WARM_UP, host/kind_registry.h):
// `fds` are the regular, bold and mono font files (read-only; 0 to 3 of
// them, in that order), mapped and parsed once in the zygote so that page
// renderers start without asking the broker for fonts or loading faces.
// With none given page renderers fetch "font:*" at start, as before.
int capsa_page_renderer_warm_up(const int *fds, unsigned nfds);

// page.fbs Frame.format.
enum { CAPSA_PAGE_FORMAT_BGRA8888 = 1, CAPSA_PAGE_FORMAT_RGBA8888 = 2 };

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_DEMOS_PAGE_PAGE_RENDERER_H_
