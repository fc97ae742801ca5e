// Descriptors sent on a unix socket that the peer has not received yet.
//
// Why: a descriptor in flight is held by the kernel, not by the sender's
// table, so the sender's own queue budget does not see it; yet the kernel
// charges every one to the sending user (at most RLIMIT_NOFILE of them in
// flight, unless CAP_SYS_RESOURCE). A few peers that never read could then
// take that whole allowance, and the next descriptor sent to any peer fails
// with ETOOMANYREFS.
//
// How: the kernel tells how many bytes of what we sent are still unread
// (SIOCOUTQ), and SOCK_SEQPACKET is read in order. Each message that
// carries descriptors is recorded at its end position in the stream of
// bytes charged since the record was last empty (the SIOCOUTQ rise over its
// sendmsg); while anything is recorded, every other send is measured too.
// A record is received once fewer unread bytes remain than were sent after
// it. The rise can only under-read a send (the peer may read meanwhile), so
// the count errs toward "still in flight", never the other way; it is exact
// again whenever the peer has read everything (SIOCOUTQ 0).
//
// Internal to the channels (ipc/channel_send.c, capsa_channel_inflight_fds);
// public to the build only for its unit test:
//
//   int64_t before = capsa__inflight_unread(fd);
//   sendmsg(fd, ...);  // a message with 2 descriptors
//   capsa__inflight_sent(&f, before, capsa__inflight_unread(fd), 2);
//   ...
//   size_t unread_fds = capsa__inflight_update(&f, capsa__inflight_unread(fd));
#ifndef CAPSA_IPC_INFLIGHT_H_
#define CAPSA_IPC_INFLIGHT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Records beyond this are counted (as in flight) until the socket is empty.
#define CAPSA__INFLIGHT_MAX_RECORDS 1024u

struct capsa__inflight_rec {
  uint64_t end;  // position just after the message
  uint32_t nfds;
};

typedef struct capsa__inflight {
  uint64_t sent;  // bytes charged since the record was last empty
  struct capsa__inflight_rec *ring;
  unsigned cap, head, count;
  size_t fds;        // descriptors in the records
  size_t untracked;  // sent while the ring was full
} capsa__inflight_t;

// Unread bytes of what was sent on `fd` (SIOCOUTQ), or -errno.
int64_t capsa__inflight_unread(int fd);

// Whether the next send must be measured (something is recorded).
static inline int capsa__inflight_active(const capsa__inflight_t *f) {
  return f->count > 0 || f->untracked > 0;
}

// A message of `nfds` descriptors (0: none) was sent; `before` and `after`
// are capsa__inflight_unread around its sendmsg (negative: unknown).
void capsa__inflight_sent(capsa__inflight_t *f, int64_t before, int64_t after,
                          unsigned nfds);

// Drops what the peer has read, given `unread` now; returns the
// descriptors still in flight.
size_t capsa__inflight_update(capsa__inflight_t *f, int64_t unread);

void capsa__inflight_free(capsa__inflight_t *f);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_INFLIGHT_H_
