// A second transport beside a channel's socket: small messages without
// handles may travel through it (ipc/ring.h implements one over shared
// memory); messages with handles always take the socket.
//
//   #include <capsa/channel.h>
//
//   // A transport of your own (capsa's ring over shared memory is another).
//   static int my_send(void *ring, const uint8_t *buf, size_t len) {
//     (void)ring, (void)buf, (void)len;
//     return -EAGAIN;  // full: this message takes the socket
//   }
//   static ssize_t my_recv(void *ring, uint8_t *buf, size_t cap) {
//     (void)ring, (void)buf, (void)cap;
//     return 0;  // empty
//   }
//   void use_ring(capsa_channel_t *ch, void *ring) {  // ring outlives ch
//     capsa_fastpath_t fp = {.ctx = ring, .send = my_send, .recv = my_recv};
//     capsa_channel_set_fastpath(ch, &fp);
//   }
//   void on_ring_data(capsa_channel_t *ch) {  // when the ring signals data
//     capsa_channel_poll_fastpath(ch);
//   }
//
// Order: every envelope carries a per-direction sequence number. The sender
// numbers messages in the order of its send calls and never uses the fast
// path while socket sends are queued; the receiver delivers strictly in
// sequence order, reading the other transport when the next number is
// missing from one. A gap that neither transport fills is a bad message.
#ifndef CAPSA_IPC_FASTPATH_H_
#define CAPSA_IPC_FASTPATH_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef struct capsa_fastpath {
  void *ctx;  // owned by whoever set the fast path; passed back as is
  // Sends one encoded message (`buf`, `len` bytes, borrowed). Returns 0 when
  // sent, -EAGAIN when full (the channel then uses the socket), other
  // negative errno when broken.
  int (*send)(void *ctx, const uint8_t *buf, size_t len);
  // Copies the next message into `buf` (`cap` = CAPSA_IPC_MAX_MESSAGE bytes).
  // Returns its length, 0 when empty, negative errno when the ring is broken
  // or the peer wrote garbage (treated as a bad message).
  ssize_t (*recv)(void *ctx, uint8_t *buf, size_t cap);
  // Optional (NULL: none). A blocking loop calls it instead of poll(2) on
  // its socket `fd`, so that fast-path messages wake it too: waits up to
  // `timeout_ms` (< 0: no limit) and returns 1 (fast path has data), 2 (`fd`
  // readable or hung up), 0 (timeout) or a negative errno.
  // capsa_ring_fastpath_wait (ipc/ring_fastpath.h) is one.
  int (*wait)(void *ctx, int fd, int timeout_ms);
} capsa_fastpath_t;

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_FASTPATH_H_
