// See ipc/inflight.h.
#include "ipc/inflight.h"

#include <errno.h>
#include <linux/sockios.h>
#include <stdlib.h>
#include <sys/ioctl.h>

int64_t capsa__inflight_unread(int fd) {
  int n = 0;
  if (ioctl(fd, SIOCOUTQ, &n) < 0) return -errno;
  return n;
}

static void reset(capsa__inflight_t *f) {
  f->sent = 0;
  f->head = 0;
  f->count = 0;
  f->fds = 0;
  f->untracked = 0;
}

size_t capsa__inflight_update(capsa__inflight_t *f, int64_t unread) {
  if (unread == 0) {
    reset(f);
    return 0;
  }
  if (unread < 0) return f->fds + f->untracked;  // unknown: keep counting
  // A record is received once what is unread fits in what was measured
  // after it. Compared as a sum, not as `end <= sent - unread`: when more is
  // unread than was measured (sends before the first record are not), a
  // difference clamped to 0 would take a record at position 0 for read.
  while (f->count > 0 && f->ring[f->head].end + (uint64_t)unread <= f->sent) {
    f->fds -= f->ring[f->head].nfds;
    f->head = (f->head + 1) % f->cap;
    f->count--;
  }
  return f->fds + f->untracked;
}

static int grow(capsa__inflight_t *f) {
  unsigned cap = f->cap ? f->cap * 2 : 16;
  if (cap > CAPSA__INFLIGHT_MAX_RECORDS) return -ENOBUFS;
  struct capsa__inflight_rec *r = malloc(sizeof *r * cap);
  if (r == NULL) return -ENOMEM;
  for (unsigned i = 0; i < f->count; i++)
    r[i] = f->ring[(f->head + i) % f->cap];
  free(f->ring);
  f->ring = r;
  f->cap = cap;
  f->head = 0;
  return 0;
}

void capsa__inflight_sent(capsa__inflight_t *f, int64_t before, int64_t after,
                          unsigned nfds) {
  if (before >= 0) capsa__inflight_update(f, before);
  if (before >= 0 && after > before) f->sent += (uint64_t)(after - before);
  if (nfds == 0) return;
  if (before < 0 || after < 0 || (f->count == f->cap && grow(f) < 0)) {
    f->untracked += nfds;  // until the socket is seen empty
    return;
  }
  f->ring[(f->head + f->count) % f->cap] =
      (struct capsa__inflight_rec){f->sent, nfds};
  f->count++;
  f->fds += nfds;
}

void capsa__inflight_free(capsa__inflight_t *f) {
  free(f->ring);
  f->ring = NULL;
  f->cap = 0;
  reset(f);
}
