// A channel's shared-memory fast path: two rings (one per direction) and two
// doorbells, plugged into a channel through ipc/fastpath.h.
//
//   // Host, before spawning the renderer:
//   capsa_ring_fastpath_t fp;
//   capsa_ring_fastpath_fds_t peer;                 // caller-owned fds
//   capsa_ring_fastpath_create(&fp, 64 * 1024, &peer);
//   ... hand peer.fd[0..3] to the renderer (inherit or SCM_RIGHTS), close ours
//   capsa_fastpath_t hook;
//   capsa_ring_fastpath_hook(&fp, &hook);
//   capsa_channel_set_fastpath(&ch, &hook);         // ipc/uv_channel.h
//   capsa_ring_watch_init(loop, &watch, &fp);       // ipc/ring_watch.h
//
//   // Renderer:
//   capsa_ring_fastpath_t fp;
//   capsa_ring_fastpath_attach(&fp, 64 * 1024, &received);  // takes the fds
//   capsa_ring_fastpath_hook(&fp, &hook);
//   capsa_rloop_set_fastpath(&loop, &hook);
//   // block with capsa_ring_fastpath_wait(&fp, sock, timeout) instead of
//   // poll(sock), so ring records wake the loop too.
//
// Small messages without descriptors take the ring (hook.send returns
// -EAGAIN when the ring is full or the message is over
// CAPSA_RING_MAX_MESSAGE, and the channel then uses its socket); the channel
// keeps order across both transports by sequence numbers (ipc/fastpath.h).
// Each side waits for the ring and its socket together by polling its
// doorbell, an eventfd the other side writes only when this side armed the
// ring before sleeping (ipc/ring.h).
//
// Descriptors: the host creates everything. What the peer gets:
//   fd[CAPSA_RFP_TO_PEER]      ring host -> peer (peer consumes)
//   fd[CAPSA_RFP_FROM_PEER]    ring peer -> host (peer produces)
//   fd[CAPSA_RFP_HOST_BELL]    eventfd the peer writes to wake the host
//   fd[CAPSA_RFP_PEER_BELL]    eventfd the peer polls
// Ring regions are memfds sealed against resizing (CAPSA_SHM_BOTH_WRITE); the
// peer verifies seals and sizes before mapping. A hostile peer can corrupt
// the rings (-> -EBADMSG, a bad message) and write the eventfds (spurious
// wake-ups), nothing else.
#ifndef CAPSA_IPC_RING_FASTPATH_H_
#define CAPSA_IPC_RING_FASTPATH_H_

#include <stddef.h>

#include "ipc/fastpath.h"
#include "ipc/ring.h"
#include "ipc/shm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CAPSA_RFP_TO_PEER = 0,
  CAPSA_RFP_FROM_PEER = 1,
  CAPSA_RFP_HOST_BELL = 2,
  CAPSA_RFP_PEER_BELL = 3,
  CAPSA_RFP_NFDS = 4,
};

// The record kind fast-path messages carry in the ring; anything else is a
// bad message.
#define CAPSA_RFP_KIND 0x43415053u  // "CAPS"

typedef struct capsa_ring_fastpath_fds {
  int fd[CAPSA_RFP_NFDS];
} capsa_ring_fastpath_fds_t;

// One side's fast path. Owns both regions and both doorbell descriptors.
typedef struct capsa_ring_fastpath {
  capsa_shm_region_t tx_region, rx_region;
  capsa_ring_t tx, rx;
  int my_bell;    // eventfd this side polls (non-blocking)
  int peer_bell;  // eventfd this side writes to wake the peer
} capsa_ring_fastpath_t;

// Host: creates two rings of `capacity` bytes each (see
// capsa_ring_region_size) and two eventfds. On success *fp owns its side and
// *peer holds the peer's four descriptors, owned by the caller (send or
// inherit them, then close them). On failure nothing is left open.
int capsa_ring_fastpath_create(capsa_ring_fastpath_t *fp, size_t capacity,
                               capsa_ring_fastpath_fds_t *peer);

// Peer: verifies (memfd, seals, exact size, read-write; eventfds by fstat
// type) and maps the four descriptors. On success *fp owns them all; on
// failure the caller still owns every one. Returns 0, or the
// capsa_shm_verify error, or -EINVAL (a bell is not an eventfd).
int capsa_ring_fastpath_attach(capsa_ring_fastpath_t *fp, size_t capacity,
                               const capsa_ring_fastpath_fds_t *fds);

// Fills *hook (send/recv over the rings; ctx = fp, which must outlive every
// channel the hook is installed in).
void capsa_ring_fastpath_hook(capsa_ring_fastpath_t *fp,
                              capsa_fastpath_t *hook);

// Blocking wait for the simple renderer loop: spins on the ring briefly, then
// arms it and polls the doorbell together with `sock` (borrowed; -1 for
// none). Returns 1 when the ring holds a record, 2 when `sock` is readable
// or hung up (both may hold: ring first), 0 on timeout (`timeout_ms` < 0:
// none), -EBADMSG (corrupt ring), or -errno of poll.
int capsa_ring_fastpath_wait(capsa_ring_fastpath_t *fp, int sock,
                             int timeout_ms);

// The doorbell to poll in an event loop, with arm/disarm around blocking
// (capsa_ring_watch does this for libuv). arm drains the doorbell first.
int capsa_ring_fastpath_bell_fd(const capsa_ring_fastpath_t *fp);
int capsa_ring_fastpath_arm(capsa_ring_fastpath_t *fp);
void capsa_ring_fastpath_disarm(capsa_ring_fastpath_t *fp);

// Unmaps and closes everything *fp owns. Idempotent.
void capsa_ring_fastpath_close(capsa_ring_fastpath_t *fp);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_RING_FASTPATH_H_
