// The live fuzzing renderer of <capsa/fuzz_live.h>: compromised code that
// speaks the embedder's interfaces from their generated descriptors.
//
//   static capsa__fz_generic_t g;                 // before the zygote forks
//   capsa__fz_generic_init(&g, "capsa-fuzz-live", ifaces, n);
//   capsa_kind_options_init(&k, "capsa-fuzz-live", capsa__fz_generic_main,
//                           &g);                  // a forked zygote
//   k.interfaces = g.ifaces;                      // n + 1: the Seed's last
//   k.ninterfaces = g.nifaces;
//   ... on READY: a capsa.fuzz_live Seed (fuzz_live.fbs) ...
//
// After HELLO it waits for its Seed, then sends up to `rounds` messages,
// each written by the schema mutator (ipc/fuzz_internal.h) from the last
// one of its kind, so a renderer's messages are a long sequence of mostly
// valid ones that drift through every field: unasked events and requests
// of every interface that lets a renderer send them, with descriptors of
// the declared kinds and sizes made for real (ipc/fuzz_internal.h), and an
// answer of the declared response to every request the host sends it. One
// mutation in sixteen leaves the schema (a broken declaration), one message
// in thirty-two is damaged on the wire (a payload bit flipped, a response
// to no request), so the host's refusals are met too, late in a sequence
// as well as early. It exits after the last round, when the host hangs up
// (a bad message gets it killed), or after 2 s with nothing to do.
#ifndef CAPSA_HOST_FUZZ_GENERIC_H_
#define CAPSA_HOST_FUZZ_GENERIC_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "host/capsa_host.h"
#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

// A coverage-guided run's input (capsa_fuzz_live_one): shared with every
// process the zygote forks, written by the host before each spawn.
// `data`: records of u8 interface index (modulo the embedder's count),
// u8 flags (bit 0: answers the oldest unanswered request of the host),
// u16 length (little-endian), then that many bytes: one input of
// <capsa/fuzz.h>'s layout for that interface.
#define CAPSA__FZ_TOLD_MAX_RECORDS 64
typedef struct capsa__fz_told {
  // The renderer the input is for (0: none yet): a spare forked ahead
  // waits for its pid here, on a futex, before it reads anything.
  _Atomic int target;
  size_t len;
  uint8_t data[1 << 20];
} capsa__fz_told_t;

typedef struct capsa__fz_generic {
  // The embedder's interfaces, then the driver's own (Seed): the kind's.
  const capsa_interface_t *ifaces[CAPSA_IFACE_MAX_PER_CHANNEL];
  unsigned nifaces;
  char kind[64];
  capsa__fz_told_t *told;  // capsa__fz_told_main's input
} capsa__fz_generic_t;

// -EINVAL when `n` leaves no room for the driver's interface or `kind` is
// too long. `ifaces` borrowed for the renderers' lives.
int capsa__fz_generic_init(capsa__fz_generic_t *g, const char *kind,
                           const capsa_interface_t *const *ifaces, unsigned n);

// The renderer (capsa_renderer_entry_fn; arg: the capsa__fz_generic_t).
int capsa__fz_generic_main(int channel_fd,
                           const capsa_sandbox_report_t *sandbox, void *arg);

// The told renderer (capsa_renderer_entry_fn; arg: the capsa__fz_generic_t
// with `told` set): waits for its turn, says HELLO, sends the input's
// records in order (an answer record answers the host's oldest request;
// none yet: waits kToldWaitMs for one), lingers 5 ms and exits. It answers
// nothing on its own and damages nothing: the input is all it sends.
int capsa__fz_told_main(int channel_fd, const capsa_sandbox_report_t *sandbox,
                        void *arg);

// Sends renderer `r` its Seed (0 or capsa_renderer_send's error).
int capsa__fz_generic_send_seed(capsa_renderer_t *r, uint64_t seed,
                                unsigned rounds);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_GENERIC_H_
