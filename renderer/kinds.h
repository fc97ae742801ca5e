// The demo renderers' handlers for the runtime (renderer/runtime.h): the
// glue between capsa messages and the workloads in renderer/gzip,
// renderer/page and renderer/hostile.
//
//   capsa_kind_options_t k;                        // host/capsa_host.h
//   capsa_kind_options_init(&k, "gzip", capsa_renderer_main,
//                           (void *)&capsa_gzip_renderer);
//
// gzip     (entry: capsa_renderer_main_limited, so its handles get their
//          declared rights) GZIP_JOB with two shm handles, [0] the input
//          (read-only, exactly in_size bytes) and [1] the output (writable,
//          declared with write rights only); answers GZIP_RESULT {status,
//          out_size}.
// page     fetches fonts from the broker ("font:regular|bold|mono") at
//          start; LOAD_CONTENT (inline Markdown or a read-only handle) then
//          RESIZE {width, max height, writable frame region}; draws the page
//          and answers FRAME_READY {width, height, stride, RGBA}.
// hostile  LOAD_CONTENT with a read-only shm handle whose text is
//          "host-pid=N": runs the attack list (renderer/hostile/hostile.h)
//          from inside its sandbox, LOGs one line per attack and a summary,
//          then sends the host garbage (which the host must answer by
//          killing it).
#ifndef CAPSA_RENDERER_KINDS_H_
#define CAPSA_RENDERER_KINDS_H_

#include "renderer/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const capsa_renderer_handlers_t capsa_gzip_renderer;
extern const capsa_renderer_handlers_t capsa_page_renderer;
extern const capsa_renderer_handlers_t capsa_hostile_renderer;

// The hostile renderer's summary line starts with this.
#define CAPSA_HOSTILE_SUMMARY "hostile summary:"

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_RENDERER_KINDS_H_
