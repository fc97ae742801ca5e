// The live fuzzing driver behind `capsa fuzz` (host/cli/cmd_fuzz.c): a
// real host, in a worker process a watcher restarts, serving fuzzing
// renderers, with the host-side handler of whoever calls it. Everything the
// host receives is recorded (fuzz_repro.h); a crash or hang is a failure,
// named by its stack (fuzz_stack.h) and saved once per stack; replay and
// minimisation run the saved records against fresh hosts.
//
//   capsa__fz_live_options_t o;
//   capsa__fz_live_options_init(&o);
//   o.kind = "fuzz";                        // registered: CAPSA_RENDERER_KIND
//   o.renderer_main = capsa_fuzz_renderer_main;
//   o.interfaces = capsa_fuzz_interfaces;   // what its HELLO names
//   o.ninterfaces = 1;
//   o.renderer_seed = capsa_fuzz_renderer_seed;
//   o.on_ready = send_seed;                 // hands each renderer its seed
//   o.on_message = on_noise;                // the host-side handler
//   return capsa__fz_live_campaign(&o);     // or _replay, _minimize
//
// An embedder's campaign is this driver too: <capsa/fuzz_live.h> (api.c)
// fills these options with the generic renderer (generic.h), its own Seed
// interface after the embedder's, and the embedder's host code.
#ifndef CAPSA_HOST_FUZZ_LIVE_H_
#define CAPSA_HOST_FUZZ_LIVE_H_

#include <stdbool.h>
#include <stdint.h>

#include "host/capsa_host.h"
#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct capsa__fz_live_options {
  // The fuzzing renderers: a registered kind (CAPSA_RENDERER_KIND) and
  // its entry, and the interfaces their HELLO names (the kind's list).
  const char *kind;
  capsa_renderer_entry_fn renderer_main;
  void *renderer_arg;  // its `arg`
  bool forked_zygote;  // the kind is not registered: fork this process
  const capsa_interface_t *const *interfaces;
  unsigned ninterfaces;
  unsigned parallel;  // renderers at a time (default 2)
  unsigned rounds;    // messages per renderer (0: its default)
  // The seed of the index-th renderer of a campaign seeded `seed`.
  uint64_t (*renderer_seed)(uint64_t seed, uint64_t index);
  // A fuzzing renderer is READY (not called for replaying ones): hand it
  // its seed. NULL: nothing is sent.
  void (*on_ready)(capsa_renderer_t *r, uint64_t seed, uint64_t index,
                   void *arg);
  // A replaying renderer is READY (NULL: nothing): the host's part of a
  // conversation starts again, so recorded responses meet their requests.
  void (*on_replay_ready)(capsa_renderer_t *r, void *arg);
  // The host-side handler: every message the host accepted (campaign and
  // replay alike, so a bug it has is reached again by a replay).
  void (*on_message)(capsa_renderer_t *r, const capsa_msg_t *m, void *arg);
  void *arg;
  uint64_t seed;          // the campaign's
  unsigned long seconds;  // the campaign's length (default 10)
  unsigned hang_seconds;  // no progress this long is a hang (default 15)
  // End the campaign once this many failures of different stacks were
  // found (0: run for `seconds`): a bound by findings, not by time, for
  // slow machines (an emulated kernel runs a few renderers a second).
  unsigned stop_after_unique;
  // End it after this many failures, the same stack or not (0: no bound).
  unsigned stop_after_failures;
  const char *out_dir;  // reproducers (default ".")
  const char *prog;     // messages begin "PROG: " (default "capsa fuzz")
} capsa__fz_live_options_t;

void capsa__fz_live_options_init(capsa__fz_live_options_t *o);

// Each prints as it goes and returns the exit code: 0 (no failure), 1 (a
// failure; a replay that failed; a minimisation that could not run).
int capsa__fz_live_campaign(const capsa__fz_live_options_t *o);
int capsa__fz_live_replay(const capsa__fz_live_options_t *o, const char *path);
// Writes PATH.min; `seconds`: its time budget.
int capsa__fz_live_minimize(const capsa__fz_live_options_t *o, const char *path,
                            unsigned long seconds);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_LIVE_H_
