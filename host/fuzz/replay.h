// Replaying a reproducer (fuzz_repro.h) in a `capsa fuzz` worker.
//
//   capsa__fz_replay_t *rp = capsa__fz_replay_new(&repro);  // before start
//   capsa__fz_replay_set_hello(rp, "capsa-fuzz-replay", ifaces, n);
//   o.allow_forked_zygote = true;
//   capsa_kind_options_init(&k, "capsa-fuzz-replay",
//                           capsa__fz_replay_renderer_main, rp);
//   k.pid_namespace = false;
//   ... spawn capsa__fz_replay_channels(rp) renderers; on each renderer's
//   BAD_MESSAGE, KILLED, EXITED, CRASHED, CLOSED:
//   capsa__fz_replay_closed(rp, capsa_renderer_pid(ev->renderer));
//
// A fresh host of a forked zygote (the records reach the
// renderers in memory the zygote inherits) spawns a renderer per channel;
// each sends its HELLO just before its first record, then its records with
// descriptors of the recorded kinds and sizes, each only once every record
// before it in the arrival order has been received by the host (the host's
// sink counts them), so the host receives them in the recorded order.
// Descriptors are made afresh: the same kind and size, never the same file.
#ifndef CAPSA_HOST_FUZZ_REPLAY_H_
#define CAPSA_HOST_FUZZ_REPLAY_H_

#include <sys/types.h>

#include "host/capsa_host.h"
#include "host/fuzz/repro.h"
#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct capsa__fz_replay capsa__fz_replay_t;

// Shared memory holding `r`'s records for the replaying renderers; installs
// the host-side sink that paces them. Call before capsa_host_start (the
// forked zygote inherits it). NULL on failure.
capsa__fz_replay_t *capsa__fz_replay_new(const capsa__fz_repro_t *r);
// The replaying renderer (capsa_renderer_entry_fn; arg: the replay).
int capsa__fz_replay_renderer_main(int channel_fd,
                                   const capsa_sandbox_report_t *sandbox,
                                   void *arg);
// What its HELLO says: the kind's name (copied) and interfaces (borrowed
// for the call).
void capsa__fz_replay_set_hello(capsa__fz_replay_t *rp, const char *kind_name,
                                const capsa_interface_t *const *ifaces,
                                unsigned nifaces);
// The host saw renderer `pid` end: its channel's remaining turns are
// skipped.
void capsa__fz_replay_closed(capsa__fz_replay_t *rp, pid_t pid);
unsigned capsa__fz_replay_channels(const capsa__fz_replay_t *rp);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_REPLAY_H_
