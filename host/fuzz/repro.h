// Reproducers of `capsa fuzz` (host/cli/cmd_fuzz.c): what the host received
// from each renderer, recorded as it arrived, saved and loaded.
//
//   capsa__fz_recorder_t *rec = capsa__fz_recorder_new();  // before fork
//   ... worker: capsa__fz_recorder_attach(rec); run the host ...
//   ... watcher, after the worker failed:
//   capsa__fz_repro_t r;
//   capsa__fz_recorder_collect(rec, &r);
//   capsa__fz_repro_save(&r, "crash-0123456789abcdef.repro");
//
// Recording. The worker's host hands every record each channel to a
// renderer receives to capsa__dump_set_sink (ipc/ipc_dump.h), before any
// check; the sink appends it, with its arrival number, to one of
// CAPSA__FZ_SLOTS slots of memory shared with the watcher (a slot per
// channel; a new channel takes the slot written to least recently). A crash
// of the host leaves every record up to the one it crashed on, so the
// watcher saves the last channels' exact records, their descriptors' kinds
// and sizes, and the order they arrived in across channels.
//
// Reproducer files (version 2). FILE is a text manifest:
//   capsa-fuzz-repro 2
//   why host crash: signal 11
//   stack 0123456789abcdef SIGSEGV capsa+0x1a2b3 | ...   (cmd_fuzz.c)
//   channel FILE.c0.in            (one line per channel, in order of first
//   channel FILE.c1.in             record; paths relative to FILE's dir)
//   order 0 0 1 0 1 1             (the channel of each record, in arrival
//                                  order)
// and each FILE.cN.in is that channel's records in CAPSA_IPC_DUMP's layout
// (ipc/ipc_dump.h), a fuzz_host input as it is. `capsa fuzz --replay` also
// takes such an .in file alone (one channel: a CAPSA_IPC_DUMP recording or
// a fuzz_host input) and version 1 manifests (renderer seeds).
//
// Replaying: fuzz_replay.h.
#ifndef CAPSA_HOST_FUZZ_REPRO_H_
#define CAPSA_HOST_FUZZ_REPRO_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/capsa_host.h"
#include "host/fuzz/stack.h"
#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__FZ_SLOTS 8  // channels a reproducer keeps
#define CAPSA__FZ_SLOT_BYTES (512u << 10)
#define CAPSA__FZ_MAX_CHANNELS CAPSA__FZ_SLOTS
#define CAPSA__FZ_MAX_RECORDS 4096

// One received record, in a reproducer.
typedef struct capsa__fz_rec {
  uint8_t channel;  // index into the reproducer's channels
  uint8_t nh;       // descriptors (at most 3)
  uint8_t kind[3];  // CAPSA__DUMP_* kinds
  uint8_t size[3];  // size / 256
  uint16_t len;
  const uint8_t *data;  // into the reproducer's storage
} capsa__fz_rec_t;

typedef struct capsa__fz_repro {
  int version;  // 2: records; 1: renderer seeds only
  unsigned nch;
  uint8_t flags[CAPSA__FZ_MAX_CHANNELS];  // each channel's CAPSA__DUMP_ flags
  size_t nrec;
  capsa__fz_rec_t *rec;  // arrival order; owned
  uint8_t *store;        // owned
  char why[128];
  char stack[640];  // "HASH KEY" of the failure, or ""
  // Version 1: the campaign seed and up to two renderer seeds.
  uint64_t seed, seeds[2];
  int nseeds;
} capsa__fz_repro_t;

// Frees what `r` owns and zeroes it.
void capsa__fz_repro_free(capsa__fz_repro_t *r);

// Reads a manifest (version 1 or 2) or a lone .in file into *r (zeroed
// first). Returns 0 or -errno with err (cap bytes) saying what is wrong:
// -EINVAL "not a capsa fuzz reproducer" / a malformed line.
int capsa__fz_repro_load(const char *path, capsa__fz_repro_t *r, char *err,
                         size_t cap);

// Writes `r` (version 2) as the manifest `path` and path.cN.in. Returns 0
// or -errno.
int capsa__fz_repro_save(const capsa__fz_repro_t *r, const char *path);

// Copies the records of `src` whose keep[i] is true (all when keep is
// NULL) into *dst, dropping channels left without records.
int capsa__fz_repro_subset(const capsa__fz_repro_t *src, const bool *keep,
                           capsa__fz_repro_t *dst);

// --- recording (worker) and collecting (watcher)

typedef struct capsa__fz_recorder capsa__fz_recorder_t;

// Channels whose first record (the HELLO) a sink has seen, the latest
// CAPSA__FZ_SEEN of them: a channel's serial is given when it is made, at
// spawn, but renderers say HELLO in any order. Zeroed: none.
#define CAPSA__FZ_SEEN 256
typedef struct capsa__fz_seen {
  uint64_t serial[CAPSA__FZ_SEEN];
  unsigned next;
} capsa__fz_seen_t;
// Whether `serial` is new to `s`; remembers it.
bool capsa__fz_first_sight(capsa__fz_seen_t *s, uint64_t serial);

// Shared memory (MAP_SHARED, inherited across fork). NULL on failure.
capsa__fz_recorder_t *capsa__fz_recorder_new(void);
// Empties it (the watcher, before each worker).
void capsa__fz_recorder_reset(capsa__fz_recorder_t *rec);
// In the worker: records what its host receives from now on, and installs
// the crash handler (fuzz_stack.h) writing into the recorder.
void capsa__fz_recorder_attach(capsa__fz_recorder_t *rec);
// Records its host received since the last reset (HELLOs too).
uint64_t capsa__fz_recorder_arrivals(const capsa__fz_recorder_t *rec);
// In the watcher, after the worker ended: the records into *r (version 2).
int capsa__fz_recorder_collect(capsa__fz_recorder_t *rec, capsa__fz_repro_t *r);
const capsa__fz_crash_t *capsa__fz_recorder_crash(
    const capsa__fz_recorder_t *rec);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_REPRO_H_
