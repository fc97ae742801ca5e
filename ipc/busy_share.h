// A channel's share of its loop's time: a token bucket of nanoseconds that
// fills at `percent` of wall time and is drained by the time the channel
// spends handling its peer's messages (decoding, checks and the user's
// callbacks). When it runs dry the channel rests (stops reading) until it
// is positive again; the peer's unread messages wait in its socket, so
// nothing is lost and a flooding sender blocks instead of running.
//
// Why a rest and not only a per-wakeup batch: a peer that floods cheap
// messages keeps the loop busy on one core and itself busy on the other;
// a batch bound is fair within the loop, but on a small machine both cores
// are then taken by the flood, and every other peer waits a scheduler slice
// (milliseconds) for a core to answer at all. A loop that rests sleeps,
// and its flooder with it (blocked on a full socket).
//
// Why short bursts (percent x 0.4 ms): the siblings' latency is set by how
// long the loop and the flooder keep both cores busy at a stretch, not by
// the average share (measured with capsa bench host: a 100 us burst at 25%
// left the siblings' PING p99 at 3.2-3.4x the run without the flooder, a
// 40 us one at 10% at 1.43-1.97x over nine runs, 20 us at 5% at 1.69x).
// Burst and debt are both bounded by one burst, so a rest lasts at most one
// window (CAPSA__BUSY_WINDOW_NS) plus the timer's rounding (libuv timers
// count whole milliseconds, so at least 1 ms), whatever one slow callback
// cost. Only
// messages the peer sent unasked are charged (ipc/uv_channel.c). `rests`
// counts the rests, so that a watchdog can tell a reply that came late
// because this side held it back from one that never came (host/heartbeat.c).
#ifndef CAPSA_IPC_BUSY_SHARE_H_
#define CAPSA_IPC_BUSY_SHARE_H_

#include <stdbool.h>
#include <stdint.h>

// struct capsa__busy_share is laid out in ipc/uv_channel.h: it is a member
// of the caller-allocated capsa_channel_t.
#include "ipc/uv_channel.h"

#define CAPSA__BUSY_WINDOW_NS 400000ull  // 0.4 ms: see above

typedef struct capsa__busy_share capsa__busy_share_t;

void capsa__busy_share_init(capsa__busy_share_t *b, unsigned percent,
                            uint64_t now_ns);
static inline bool capsa__busy_share_capped(const capsa__busy_share_t *b) {
  return b->percent > 0 && b->percent < 100;
}
// Refills for the time since the last call; true when the channel may read.
bool capsa__busy_share_may_run(capsa__busy_share_t *b, uint64_t now_ns);
// Charges `spent_ns`; true while the channel may go on reading.
bool capsa__busy_share_charge(capsa__busy_share_t *b, uint64_t spent_ns);
// The start-up allowance (capsa_channel_options_t.startup_free_*): the
// next `msgs` charges until `until_ns` are waived.
void capsa__busy_share_allow(capsa__busy_share_t *b, uint32_t msgs,
                             uint64_t until_ns);
// Charges `spent_ns` for a message handled at `now_ns`, unless the
// start-up allowance waives it; true while the channel may go on reading.
bool capsa__busy_share_charge_at(capsa__busy_share_t *b, uint64_t spent_ns,
                                 uint64_t now_ns);
// Milliseconds until the bucket is positive again (>= 1).
uint64_t capsa__busy_share_rest_ms(const capsa__busy_share_t *b);

#endif  // CAPSA_IPC_BUSY_SHARE_H_
