// Live fuzzing of an embedder's interfaces and host-side handlers, from the
// install (<capsa/fuzz_live.h>, docs/interfaces.md "Fuzzing, live"): the
// embedder's own host code serves sandboxed fuzzing renderers that speak
// its interfaces from their generated descriptors; a host crash, sanitizer
// report or hang is a failure, saved with the exact messages it received.
//
//   #include <capsa/capsa.h>
//   #include <capsa/fuzz_live.h>
//   #include "host/examples/convert.capsa.h"  // capsa-idl convert.fbs
//
//   static const capsa_interface_t *const kSpeaks[] = {
//       &capsa_example_convert_interface};
//
//   // The code under test: the host's reply handler, as in its real host.
//   static void on_converted(capsa_renderer_t *r, int status,
//                            capsa_msg_t *reply, void *arg) {
//     (void)r, (void)arg;
//     if (status == 0 && reply->type == CAPSA_MSG_INTERFACE) {
//       const capsa_example_convert_converted_t *c = reply->u.iface.value;
//       (void)c;  // ... what the host does with c->status, c->out_size ...
//     }
//   }
//   // The host's side of the conversation: a request with its two regions,
//   // which the fuzzing renderer answers.
//   static void on_ready(capsa_renderer_t *r, void *arg) {
//     (void)arg;
//     capsa_shm_region_t in, out;
//     if (capsa_shm_create(64, "in", CAPSA_SHM_CREATOR_WRITES, &in) < 0)
//       return;
//     if (capsa_shm_unmap(&in) < 0 ||
//         capsa_shm_create(64, "out", CAPSA_SHM_PEER_WRITES, &out) < 0) {
//       capsa_shm_close(&in);
//       return;
//     }
//     capsa_rights_t ro, rw;
//     capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R,
//     CAPSA_CAP_FSTAT); capsa_rights_init(&rw, CAPSA_CAP_READ, CAPSA_CAP_WRITE,
//                       CAPSA_CAP_MMAP_RW, CAPSA_CAP_FSTAT);
//     capsa_example_convert_convert_t q;
//     capsa_example_convert_convert_init(&q);
//     capsa_msg_t m;
//     capsa_msg_init_iface(&m, &capsa_example_convert_interface,
//                          CAPSA_EXAMPLE_CONVERT_CONVERT, &q);
//     q.input = capsa_msg_add_handle(&m, capsa_shm_release_fd(&in),
//                                    CAPSA_HANDLE_SHM, &ro, in.size, false);
//     q.output = capsa_msg_add_handle(&m, dup(out.fd), CAPSA_HANDLE_SHM, &rw,
//                                     out.size, true);
//     capsa_shm_close(&out);
//     if (capsa_renderer_request(r, &m, 5000, on_converted, NULL) < 0)
//       capsa_msg_close_handles(&m);  // a failed send leaves them ours
//   }
//
//   int main(int argc, char **argv) {  // --seconds N, --replay FILE, ...
//     capsa_fuzz_live_options_t o;
//     capsa_fuzz_live_options_init(&o);
//     o.interfaces = kSpeaks;
//     o.ninterfaces = 1;
//     o.on_ready = on_ready;
//     return capsa_fuzz_live_main(argc, argv, &o);
//   }
//
// What the renderers send, per renderer a long sequence (o.rounds): each
// unasked event and request an interface lets a renderer send, written by
// the schema mutator of <capsa/fuzz.h> from the previous one of its kind
// (fields within and at the edges of their declarations, handles of the
// declared kinds and sizes made for real), and the declared response to
// every request the host sends; one mutation in sixteen leaves the schema
// and one message in thirty-two is damaged on the wire, so the checks'
// refusals (the renderer is killed, CAPSA_EV_BAD_MESSAGE) are met too.
// The host runs in a worker process a watcher restarts after a failure;
// the campaign goes on past it. Each failure is named by its stack and
// saved once per stack as OUT/crash-HASH.repro with every record the host
// received from the last renderers, in arrival order; `--replay FILE`
// sends them to a fresh host again (calling on_ready for each replaying
// renderer, so recorded responses meet the requests they answer), and
// `--minimize FILE` drops renderers and records while it still fails.
// Renderers come from a fork of the worker (no capsa_main() needed) and
// are sandboxed as the kind options' defaults say; under a sanitizer
// RLIMIT_AS is left off (host/capsa_host.h).
#ifndef CAPSA_HOST_FUZZ_CAPSA_FUZZ_LIVE_H_
#define CAPSA_HOST_FUZZ_CAPSA_FUZZ_LIVE_H_

#include <stddef.h>
#include <stdint.h>

#include "host/capsa_host.h"
#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef struct capsa_fuzz_live_options {
  // What the fuzzing renderers speak (borrowed for the call; at most
  // CAPSA_IFACE_MAX_PER_CHANNEL - 1: the driver adds its own).
  const capsa_interface_t *const *interfaces;
  unsigned ninterfaces;
  // The embedder's host code. on_ready: a renderer is READY (start the
  // host's side of a conversation: its requests get fuzzed responses);
  // on_message: each message the host accepted from it (CAPSA_EV_MESSAGE,
  // decoded and checked against the schema). Both may be NULL; the message
  // is borrowed for the call.
  void (*on_ready)(capsa_renderer_t *r, void *arg);
  void (*on_message)(capsa_renderer_t *r, const capsa_msg_t *m, void *arg);
  void *arg;
  // The campaign; each is also a flag of capsa_fuzz_live_main's argv.
  uint64_t seed;                 // --seed (default 1)
  unsigned seconds;              // --seconds (default 60)
  unsigned hang_seconds;         // --hang-seconds: no progress (default 15)
  unsigned parallel;             // --parallel: renderers at a time (2)
  unsigned rounds;               // --rounds: messages per renderer (256)
  unsigned stop_after_unique;    // --stop-after-unique N (0: run `seconds`)
  unsigned stop_after_failures;  // --stop-after-failures N (0: no bound)
  const char *out_dir;           // --out: reproducers (default ".")
} capsa_fuzz_live_options_t;

// Defaults as above; interfaces and handlers empty.
void capsa_fuzz_live_options_init(capsa_fuzz_live_options_t *o);

// Runs what `argv` asks, its flags over `o`'s values (borrowed): a campaign,
// `--replay FILE` or `--minimize FILE [--seconds N]`; `--help` prints them.
// Progress goes to stdout, failures to stderr. Returns the exit code: 0
// (the host survived; a replay that did not fail), 1 (a failure found or
// reproduced), 2 (bad flags or options: the message names which).
int capsa_fuzz_live_main(int argc, char **argv,
                         const capsa_fuzz_live_options_t *o);

// --- coverage-guided: libFuzzer's process is the host

// One libFuzzer input (`data`, `size` borrowed) against the host `o`
// describes (borrowed for the process's life; its campaign fields unused):
// the first call starts that host (a forked zygote, renderers sandboxed as
// the kind defaults say); each call spawns one renderer that sends the
// input's messages in order (an answer goes to the host's oldest request
// it has not answered; none yet: it waits 20 ms for one), lingers 5 ms and
// exits; the call returns when the host closed it, so the input is the
// renderer's whole conversation and a saved crash input replays alone.
// on_ready and on_message run as in a campaign. Returns 0 (libFuzzer's
// convention); a host that cannot start aborts with the reason.
int capsa_fuzz_live_one(const capsa_fuzz_live_options_t *o, const uint8_t *data,
                        size_t size);

// libFuzzer's custom mutator for capsa_fuzz_live_one's inputs: inserts,
// drops, swaps and changes messages, each within the schema (an unasked
// event or request, or a response), as <capsa/fuzz.h>'s mutator writes
// them; now and then libFuzzer's own byte mutations. Returns the new size
// (<= max_size).
size_t capsa_fuzz_live_mutate(const capsa_fuzz_live_options_t *o, uint8_t *data,
                              size_t size, size_t max_size, unsigned seed);

#pragma GCC visibility pop

// The two libFuzzer entry points for the host that `setup` (a function
// taking a capsa_fuzz_live_options_t *, already initialised) describes.
#ifdef __cplusplus
#define CAPSA__FUZZ_LIVE_EXTERN extern "C"
#else
#define CAPSA__FUZZ_LIVE_EXTERN
#endif
#define CAPSA_FUZZ_LIVE_TARGET(setup)                                     \
  static const capsa_fuzz_live_options_t *capsa_fuzz_live_target_(void) { \
    static capsa_fuzz_live_options_t o;                                   \
    static int ready;                                                     \
    if (!ready) {                                                         \
      capsa_fuzz_live_options_init(&o);                                   \
      setup(&o);                                                          \
      ready = 1;                                                          \
    }                                                                     \
    return &o;                                                            \
  }                                                                       \
  CAPSA__FUZZ_LIVE_EXTERN int LLVMFuzzerTestOneInput(const uint8_t *data, \
                                                     size_t size);        \
  CAPSA__FUZZ_LIVE_EXTERN size_t LLVMFuzzerCustomMutator(                 \
      uint8_t *data, size_t size, size_t max_size, unsigned int seed);    \
  CAPSA__FUZZ_LIVE_EXTERN int LLVMFuzzerTestOneInput(const uint8_t *data, \
                                                     size_t size) {       \
    return capsa_fuzz_live_one(capsa_fuzz_live_target_(), data, size);    \
  }                                                                       \
  CAPSA__FUZZ_LIVE_EXTERN size_t LLVMFuzzerCustomMutator(                 \
      uint8_t *data, size_t size, size_t max_size, unsigned int seed) {   \
    return capsa_fuzz_live_mutate(capsa_fuzz_live_target_(), data, size,  \
                                  max_size, seed);                        \
  }

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_CAPSA_FUZZ_LIVE_H_
