// CAPSA_IPC_DUMP=DIR: the host's side of every channel to a renderer
// records what arrives, in arrival order, each record with the kinds and
// sizes of the descriptors attached, as an input of the fuzz_host harness
// (tests/fuzz/fuzz_host.h): real traffic becomes a corpus, and a campaign's
// failure (`capsa fuzz`) leaves the exact messages that led to it. One file
// per channel, DIR/ipc-<pid>-<n>.in, written as records arrive (before any
// check), so a crash of the host still leaves them. The renderer's HELLO
// is left out and the file says "HELLO made by the replayer" instead: a
// recorded HELLO names a pid and a sandbox that are not the replayer's.
//
// Layout (version 1, fuzz_host.h says the same):
//   u8 flags (CAPSA__DUMP_AUTO_HELLO), then per record:
//   u8 handle count (0-3; a record with more keeps its first three),
//   per handle u8 kind (CAPSA__DUMP_*), u8 size / 256 (at most 255),
//   u16 length (little endian; at most 65535), the record's bytes.
//
// Internal (capsa__): the variable is read in the host process only.
#ifndef CAPSA_IPC_IPC_DUMP_H_
#define CAPSA_IPC_IPC_DUMP_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/channel_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__DUMP_AUTO_HELLO 1u
#define CAPSA__DUMP_MAX_HANDLES 3

// Descriptor kinds of a record (a regular file or directory, which no
// replaying renderer can open, is recorded as an unsealed memfd).
enum {
  CAPSA__DUMP_SHM_READONLY = 0,  // memfd, F_SEAL_FUTURE_WRITE
  CAPSA__DUMP_SHM_SHARED = 1,    // memfd, size sealed, writable
  CAPSA__DUMP_SHM_UNSEALED = 2,  // memfd without seals; other files
  CAPSA__DUMP_PIPE_READ = 3,
  CAPSA__DUMP_PIPE_WRITE = 4,
  CAPSA__DUMP_CHANNEL = 5,     // SOCK_SEQPACKET
  CAPSA__DUMP_STREAM = 6,      // any other socket
  CAPSA__DUMP_SHM_FROZEN = 7,  // memfd, F_SEAL_WRITE
  CAPSA__DUMP_KINDS = 8,
};

// The kind of descriptor `fd` (borrowed), as above.
unsigned capsa__dump_kind(int fd);

// Appends one received record (`buf`, `n` bytes; `fds`, borrowed) of `c`
// when CAPSA_IPC_DUMP is set and `c` is a host's channel to a renderer;
// opens the channel's file at its first record. Never fails the channel: a
// write that fails stops that channel's dump.
void capsa__dump_record(capsa__chan_core_t *c, const uint8_t *buf, size_t n,
                        const int *fds, int nfds);

// Closes `c`'s file, if any.
void capsa__dump_close(capsa__chan_core_t *c);

// The record header of the layout above for a record of `n` bytes with
// `fds` (borrowed) attached: written to head (at least
// CAPSA__DUMP_HEAD_MAX bytes); returns its length.
#define CAPSA__DUMP_HEAD_MAX (1 + 2 * CAPSA__DUMP_MAX_HANDLES + 2)
size_t capsa__dump_head(uint8_t *head, size_t n, const int *fds, int nfds);

// A process-wide second destination of the same records, with or without
// CAPSA_IPC_DUMP (`capsa fuzz` keeps the last channels' records in memory
// its watcher shares, so a crash of the host leaves them without a file per
// channel): called on the receiving thread for every record a host's
// channel to a renderer receives, the channel's first (its HELLO) included,
// with the channel's serial (never reused in a process), the record's
// header (capsa__dump_head) and its bytes (at most 65535 of them), all
// borrowed for the call. NULL: none (the default). Not thread-safe: set it
// before any channel exists.
typedef void (*capsa__dump_sink_fn)(void *arg, uint64_t channel_serial,
                                    const uint8_t *head, size_t head_len,
                                    const uint8_t *buf, size_t len);
void capsa__dump_set_sink(capsa__dump_sink_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_IPC_DUMP_H_
