// The fuzzing renderer: compromised code that speaks just enough of the
// protocol to be served, then sends the host structure-aware mutations of
// real messages, chosen by a deterministic PRNG from a seed the host gives.
//
//   capsa_kind_options_t k;                           // host/capsa_host.h
//   capsa_kind_options_init(&k, "fuzz", capsa_fuzz_renderer_main, NULL);
//   k.interfaces = capsa_fuzz_interfaces;
//   k.ninterfaces = 1;
//   k.heartbeat_ms = 0;
//   ... on READY: a capsa.fuzz Seed (demos/fuzz/fuzz.fbs) ...
//
// After HELLO it waits for that Seed, then sends `rounds` records, each
// built through the codec (LOG, RESOURCE_REQUEST, PONG, ERROR, a second
// HELLO, and its interface's Noise, encoded by the generated encoder or as
// raw bytes, under a right or wrong interface index and message id) with
// random field values, then maybe broken: a wrong sequence number or flags,
// descriptors
// of the wrong kind or too many, the bytes truncated, extended or bit-
// flipped. The same seed gives the same records (capsa fuzz --replay). It
// exits when the host hangs up (a bad message gets it killed) or after the
// last record.
#ifndef CAPSA_RENDERER_FUZZ_FUZZ_RENDERER_H_
#define CAPSA_RENDERER_FUZZ_FUZZ_RENDERER_H_

#include <stddef.h>
#include <stdint.h>

#include "demos/fuzz/fuzz.capsa.h"
#include "ipc/message.h"

#ifdef __cplusplus
extern "C" {
#endif

// The interfaces the fuzzing renderer speaks (its kind's list too).
extern const capsa_interface_t *const capsa_fuzz_interfaces[1];

// Records a renderer sends for one seed.
#define CAPSA_FUZZ_ROUNDS 48

// Deterministic PRNG (splitmix64). *state owned by the caller.
uint64_t capsa_fuzz_next(uint64_t *state);

// The renderer seed of the index-th renderer of a campaign seeded `seed`.
uint64_t capsa_fuzz_renderer_seed(uint64_t seed, uint64_t index);

// Builds record number `round` for `seed` into buf (cap bytes, owned by the
// caller) and says which descriptors to attach: *nfds of kind codes in
// fd_kinds (0 pipe, 1 socketpair end, 2 unsealed memfd, 3 the same pipe
// again), owned by the caller. Returns the record length (>= 0) or -errno.
// Pure: no I/O, so the host side can print what a seed sends.
int capsa_fuzz_build(uint64_t seed, unsigned round, uint8_t *buf, size_t cap,
                     int *fd_kinds, int *nfds, int max_fds);

// The renderer's main (capsa_renderer_entry_fn). `channel_fd` owned;
// `sandbox` borrowed (sent in HELLO); `arg` unused.
int capsa_fuzz_renderer_main(int channel_fd,
                             const capsa_sandbox_report_t *sandbox, void *arg);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_RENDERER_FUZZ_FUZZ_RENDERER_H_
