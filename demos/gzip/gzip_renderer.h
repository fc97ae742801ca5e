// The gzip demo renderer's handlers for the runtime (renderer/runtime.h):
// the glue between capsa messages and the workload (demos/gzip/gzip.h).
//
//   capsa_kind_options_t k;                        // host/capsa_host.h
//   capsa_kind_options_init(&k, "gzip", capsa_renderer_main_limited,
//                           (void *)&capsa_gzip_renderer);
//   k.interfaces = capsa_gzip_renderer.interfaces;  // what it speaks
//   k.ninterfaces = capsa_gzip_renderer.ninterfaces;
//
// Entry: capsa_renderer_main_limited, so its handles get their declared
// rights. It speaks capsa.demo.gzip (demos/gzip/gzip.fbs): a Job with a
// read-only input region (in_size bytes of it are input) and a write-only
// output region; answers Result {status, out_size}.
#ifndef CAPSA_DEMOS_GZIP_GZIP_RENDERER_H_
#define CAPSA_DEMOS_GZIP_GZIP_RENDERER_H_

#include "renderer/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const capsa_renderer_handlers_t capsa_gzip_renderer;

// gzip.fbs Job.op.
enum { CAPSA_GZIP_OP_COMPRESS = 1, CAPSA_GZIP_OP_GUNZIP = 2 };

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_DEMOS_GZIP_GZIP_RENDERER_H_
