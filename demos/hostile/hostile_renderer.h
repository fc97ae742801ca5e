// The hostile demo renderer's handlers for the runtime (renderer/runtime.h):
// a compromised renderer trying to get out, on top of the attack list
// (demos/hostile/hostile.h, which stays with the test kinds).
//
//   capsa_kind_options_t k;                        // host/capsa_host.h
//   capsa_kind_options_init(&k, "hostile", capsa_renderer_main,
//                           (void *)&capsa_hostile_renderer);
//   k.interfaces = capsa_hostile_renderer.interfaces;  // what it speaks
//   k.ninterfaces = capsa_hostile_renderer.ninterfaces;
//
// It speaks capsa.demo.hostile (demos/hostile/hostile.fbs): an Attack
// with a read-only region whose text is "host-pid=N": runs the attack list
// from inside its sandbox, LOGs one line per attack and a summary, then
// sends the host garbage (which the host must answer by killing it).
#ifndef CAPSA_DEMOS_HOSTILE_HOSTILE_RENDERER_H_
#define CAPSA_DEMOS_HOSTILE_HOSTILE_RENDERER_H_

#include "renderer/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const capsa_renderer_handlers_t capsa_hostile_renderer;

// The hostile renderer's summary line starts with this.
#define CAPSA_HOSTILE_SUMMARY "hostile summary:"

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_DEMOS_HOSTILE_HOSTILE_RENDERER_H_
