// Single-producer single-consumer message ring in a shared region, with
// futex wake-ups and bounded adaptive spinning. One ring per direction.
//
//   // Host: create the region, keep the producer side, send r.fd to the peer.
//   capsa_shm_region_t r;
//   capsa_shm_create(capsa_ring_region_size(64 * 1024), "ring",
//                    CAPSA_SHM_BOTH_WRITE, &r);
//   capsa_ring_t tx;
//   capsa_ring_init(&tx, &r, CAPSA_RING_PRODUCER);  // r still owns the mapping
//   capsa_ring_write(&tx, 7, "hello", 5, 1000);     // kind 7, wait <= 1 s
//
//   // Peer: capsa_shm_map_fd(fd, size, CAPSA_SHM_PEER_READWRITE, &r2), then
//   capsa_ring_t rx;
//   capsa_ring_init(&rx, &r2, CAPSA_RING_CONSUMER);
//   uint32_t kind;
//   char buf[CAPSA_RING_MAX_MESSAGE];
//   int n = capsa_ring_read(&rx, buf, sizeof buf, &kind, 1000);
//   if (n == -EBADMSG) { /* the peer corrupted the ring: a bad message */ }
//
// Both processes can write the whole region, so everything read from it is
// hostile: each side keeps its own position privately and only publishes it;
// every peer index and record length is bounds-checked against the capacity
// this side computed from the size it verified, and records are copied out
// before use. A corrupt ring is a sticky -EBADMSG (a bad message), never a
// crash, an out-of-bounds access or an unbounded wait: every wait takes a
// timeout.
//
// Waiting: spin up to a budget (checking the peer's index), then announce
// sleeping and FUTEX_WAIT on the peer's index word; the other side issues
// FUTEX_WAKE only when it sees that announcement, so the fast case makes no
// system call at all. The budget adapts: it doubles (to the maximum) after a
// wait that spinning satisfied and halves (to the minimum, 0 by default) after
// one that had to sleep, so an idle or same-CPU peer (which cannot run while
// we spin) stops costing spins; at 0, an occasional short probe spin finds
// out when spinning pays again. Futexes are
// shared (no FUTEX_PRIVATE_FLAG) on a MAP_SHARED mapping, so they work across
// processes and inside capability mode.
//
// Doorbells: a consumer that must wait for a ring *and* descriptors (a libuv
// loop, a renderer loop polling its socket) cannot sleep on a futex. It arms
// the ring (capsa_ring_arm: consumer_sleeping = 2) before blocking in
// poll/epoll on a doorbell descriptor (an eventfd) whose writing end the
// producer holds (capsa_ring_set_doorbell); the producer writes it only when
// it sees the ring armed. A hostile peer can only cause spurious wake-ups.
//
// Shared layout (the ABI between the two processes; all little-endian u32):
//   offset   0  tail: bytes ever published by the producer (futex word the
//                consumer sleeps on)
//   offset   4  producer_sleeping: the producer waits for space
//   offset  64  head: bytes ever consumed (futex word the producer sleeps on)
//   offset  68  consumer_sleeping: the consumer waits for data: 1 on the
//                futex, 2 in poll() on its doorbell (capsa_ring_arm)
//   offset 4096 data[capacity]: records of {u32 len, u32 kind, payload padded
//                to 8 bytes}; a record may wrap around the end of the area.
// Indices run freely modulo 2^32; capacity is a power of two.
#ifndef CAPSA_IPC_RING_H_
#define CAPSA_IPC_RING_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/shm.h"

#ifdef __cplusplus
extern "C" {
#endif

// Largest payload capsa_ring_write accepts, whatever the ring's capacity.
#define CAPSA_RING_MAX_MESSAGE 4096u
// Bytes of the region before the data area (indices, one cache line each).
#define CAPSA_RING_HEADER 4096u
#define CAPSA_RING_OFF_TAIL 0u
#define CAPSA_RING_OFF_PRODUCER_SLEEPING 4u
#define CAPSA_RING_OFF_HEAD 64u
#define CAPSA_RING_OFF_CONSUMER_SLEEPING 68u
// Bytes a record of `len` payload bytes takes in the data area.
#define CAPSA_RING_RECORD_SIZE(len) (8u + (((uint32_t)(len) + 7u) & ~7u))
// Default spin budget bounds (pause iterations, ~30-40 ns each here).
#define CAPSA_RING_SPIN_MIN 0u
#define CAPSA_RING_SPIN_MAX 20000u
// Once the budget has fallen to 0, one wait in CAPSA_RING_PROBE_EVERY spins
// this much to find out whether spinning pays again.
#define CAPSA_RING_SPIN_PROBE 256u
#define CAPSA_RING_PROBE_EVERY 32u

typedef enum capsa_ring_role {
  CAPSA_RING_PRODUCER = 1,
  CAPSA_RING_CONSUMER = 2,
} capsa_ring_role_t;

struct capsa__ring_shared;

// Counters for benchmarks and tests (this side only, never shared).
typedef struct capsa_ring_stats {
  uint64_t spin_hits;  // waits satisfied while spinning
  uint64_t sleeps;     // FUTEX_WAIT calls
  uint64_t wakes;      // FUTEX_WAKE calls
  uint64_t doorbells;  // doorbell writes
} capsa_ring_stats_t;

// Values of the sleeping words.
#define CAPSA_RING_AWAKE 0u
#define CAPSA_RING_SLEEP_FUTEX 1u
#define CAPSA_RING_SLEEP_DOORBELL 2u

// One side of a ring. Fields are private; the struct is public only so that it
// can live inside other objects without an allocation.
typedef struct capsa_ring {
  struct capsa__ring_shared *sh;  // in the region; not owned
  uint8_t *data;                  // sh + CAPSA_RING_HEADER; not owned
  uint32_t capacity;              // power of two, from the verified size
  uint32_t pos;  // private: our tail (producer) or head (consumer)
  capsa_ring_role_t role;
  bool broken;  // sticky: the peer corrupted the ring
  uint32_t spin, spin_min, spin_max;
  uint32_t waits;  // counts waits, for the probes
  int doorbell;    // producer: descriptor to ring, borrowed; -1 if none
  capsa_ring_stats_t stats;
} capsa_ring_t;

// Region size for a ring whose data area holds `capacity` bytes (a power of
// two, 4096 .. 2^30); 0 if `capacity` is not acceptable.
size_t capsa_ring_region_size(size_t capacity);

// Binds one side of a ring to a mapped, writable region of
// capsa_ring_region_size(capacity) bytes. The region (and its mapping) stays
// owned by the caller and must outlive the ring; the ring itself owns nothing
// and needs no cleanup. Both sides start at position 0 on a fresh (zeroed)
// region. Errors: -EINVAL (size not ring-shaped, bad role), -EACCES
// (read-only mapping).
int capsa_ring_init(capsa_ring_t *ring, capsa_shm_region_t *region,
                    capsa_ring_role_t role);

// Sets the adaptive spin bounds (0, 0 disables spinning: sleep at once).
void capsa_ring_set_spin(capsa_ring_t *ring, uint32_t min, uint32_t max);

// Producer: appends one record of `len` bytes (<= CAPSA_RING_MAX_MESSAGE and
// fitting the capacity) tagged with `kind` (opaque to the ring). Waits for
// space up to `timeout_ms` (0: never wait, < 0: no limit -- only for a
// trusted peer). `msg` stays owned by the caller. Returns 0 or -EAGAIN (full,
// timeout 0), -ETIMEDOUT, -EMSGSIZE, -EBADMSG (the consumer corrupted its
// index), -EINVAL.
int capsa_ring_write(capsa_ring_t *ring, uint32_t kind, const void *msg,
                     size_t len, int timeout_ms);

// Consumer: copies the next record into `buf` (caller-owned, `cap` bytes) and
// its kind into *kind; returns its length (>= 0). Waits up to `timeout_ms` as
// above. Errors: -EAGAIN (empty, timeout 0), -ETIMEDOUT, -EMSGSIZE (`cap` too
// small: the record stays queued), -EBADMSG (corrupt index or record),
// -EINVAL.
int capsa_ring_read(capsa_ring_t *ring, void *buf, size_t cap, uint32_t *kind,
                    int timeout_ms);

// Consumer: 1 if a record is visible now, 0 if not, -EBADMSG if the ring is
// corrupt. Never waits.
int capsa_ring_poll(capsa_ring_t *ring);

// Consumer: waits (spin, then futex) up to `timeout_ms` until a record is
// visible, without taking it. Returns 0, -EAGAIN, -ETIMEDOUT, -EBADMSG.
int capsa_ring_wait(capsa_ring_t *ring, int timeout_ms);

// Consumer: spins (adaptive budget, no system call) until a record is
// visible. Returns 1 (visible), 0 (budget spent), -EBADMSG.
int capsa_ring_spin(capsa_ring_t *ring);

// Producer: `fd` (borrowed, must stay open while set; -1 to unset) receives an
// 8-byte write of 1 (eventfd semantics) after a publish that finds the
// consumer armed. Make it non-blocking: a full counter then costs nothing.
void capsa_ring_set_doorbell(capsa_ring_t *ring, int fd);

// Consumer about to block in poll() on its doorbell: announces it and
// re-checks. Returns 0 (armed and empty: block), 1 (a record is already
// visible: do not block, drain first; the ring stays armed), -EBADMSG.
int capsa_ring_arm(capsa_ring_t *ring);
// Consumer woke up: withdraws the announcement (cheaper publishes again).
void capsa_ring_disarm(capsa_ring_t *ring);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_RING_H_
