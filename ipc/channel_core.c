// Channel core: lifecycle and the table of outstanding requests.
#include "ipc/channel_core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc_dump.h"

uint64_t capsa__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int capsa__core_new(int fd, capsa_peer_role_t peer, size_t max_queued,
                    int apply_rights, capsa__chan_core_t **out) {
  int type = -1, domain = -1;
  socklen_t len = sizeof type;
  if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
      type != SOCK_SEQPACKET)
    return -EINVAL;
  len = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
      domain != AF_UNIX)
    return -EINVAL;
  if (peer != CAPSA_PEER_HOST && peer != CAPSA_PEER_RENDERER) return -EINVAL;
  capsa__chan_core_t *c = calloc(1, sizeof *c);
  if (c == NULL) return -ENOMEM;
  c->tx = malloc(CAPSA_IPC_MAX_MESSAGE);
  // +8: one byte more than the limit, to see oversized records as MSG_TRUNC
  // rather than mistaking them for maximum-sized ones; 8-aligned by malloc.
  c->rx[0].buf = malloc(CAPSA_IPC_MAX_MESSAGE + 8);
  c->rx[1].buf = malloc(CAPSA_IPC_MAX_MESSAGE + 8);
  if (c->tx == NULL || c->rx[0].buf == NULL || c->rx[1].buf == NULL) {
    free(c->tx);
    free(c->rx[0].buf);
    free(c->rx[1].buf);
    free(c);
    return -ENOMEM;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    int err = -errno;
    free(c->tx);
    free(c->rx[0].buf);
    free(c->rx[1].buf);
    free(c);
    return err;
  }
  c->fd = fd;
  c->apply_rights = apply_rights;
  capsa_peer_state_init(&c->peer, peer);
  c->next_seq = 1;
  c->next_request_id = 1;
  // Never 0 (a message built by hand) and never reused, unlike the address
  // of a freed core: an earlier incarnation's request stays foreign.
  static _Atomic uint64_t serials;
  c->serial = ++serials;
  c->max_queued = max_queued ? max_queued : CAPSA__DEFAULT_MAX_QUEUED;
  for (int i = 0; i < 2; i++) capsa_msg_init(&c->rx[i].msg, CAPSA_MSG_NONE);
  *out = c;
  return 0;
}

void capsa__core_free(capsa__chan_core_t *c) {
  if (c == NULL) return;
  capsa__core_free_queue(c);
  for (int i = 0; i < 2; i++) {
    capsa_msg_close_handles(&c->rx[i].msg);
    capsa__iface_release(&c->rx[i]);
    free(c->rx[i].buf);
  }
  free(c->tx);
  free(c->itx);
  capsa__inflight_free(&c->inflight);
  capsa__dump_close(c);
  if (c->fd >= 0) close(c->fd);
  free(c);
}

int capsa__core_set_fastpath(capsa__chan_core_t *c,
                             const capsa_fastpath_t *fp) {
  if (fp == NULL || fp->send == NULL || fp->recv == NULL) return -EINVAL;
  c->fastpath = *fp;
  c->has_fastpath = 1;
  return 0;
}

int capsa__core_add_pending(capsa__chan_core_t *c, capsa_msg_t *msg,
                            uint64_t timeout_ms, void *cb, void *arg) {
  if (c->npending >= CAPSA__MAX_PENDING) return -EAGAIN;
  for (unsigned i = 0; i < CAPSA__MAX_PENDING; i++) {
    capsa__pending_t *p = &c->pending[i];
    if (p->id != 0) continue;
    p->id = c->next_request_id++;
    uint64_t now = capsa__now_ms();
    p->deadline_ms =
        timeout_ms > UINT64_MAX - now ? UINT64_MAX : now + timeout_ms;
    p->cb = cb;
    p->arg = arg;
    capsa__iface_note_request(c, msg, p);
    c->npending++;
    msg->flags = CAPSA_MSG_F_REQUEST;
    msg->request_id = p->id;
    return 0;
  }
  return -EAGAIN;
}

static int take(capsa__chan_core_t *c, unsigned i, capsa__pending_t *out) {
  *out = c->pending[i];
  memset(&c->pending[i], 0, sizeof c->pending[i]);
  c->npending--;
  return 1;
}

void capsa__core_drop_pending(capsa__chan_core_t *c, uint64_t id) {
  capsa__pending_t dummy;
  for (unsigned i = 0; i < CAPSA__MAX_PENDING; i++)
    if (id != 0 && c->pending[i].id == id) take(c, i, &dummy);
}

int capsa__core_take_reply(capsa__chan_core_t *c, uint64_t id,
                           capsa__pending_t *out) {
  for (unsigned i = 0; i < CAPSA__MAX_PENDING; i++)
    if (id != 0 && c->pending[i].id == id) return take(c, i, out);
  return 0;
}

int capsa__core_expire_one(capsa__chan_core_t *c, uint64_t now_ms,
                           capsa__pending_t *out) {
  for (unsigned i = 0; i < CAPSA__MAX_PENDING; i++)
    if (c->pending[i].id != 0 && c->pending[i].deadline_ms <= now_ms) {
      c->expired[c->expired_next++ % 16] = c->pending[i].id;
      return take(c, i, out);
    }
  return 0;
}

int capsa__core_take_any(capsa__chan_core_t *c, capsa__pending_t *out) {
  for (unsigned i = 0; i < CAPSA__MAX_PENDING; i++)
    if (c->pending[i].id != 0) return take(c, i, out);
  return 0;
}

uint64_t capsa__core_next_deadline(const capsa__chan_core_t *c) {
  uint64_t d = UINT64_MAX;
  for (unsigned i = 0; i < CAPSA__MAX_PENDING; i++)
    if (c->pending[i].id != 0 && c->pending[i].deadline_ms < d)
      d = c->pending[i].deadline_ms;
  return d;
}

capsa_peer_role_t capsa__core_self(const capsa__chan_core_t *c) {
  return c->peer.peer == CAPSA_PEER_HOST ? CAPSA_PEER_RENDERER
                                         : CAPSA_PEER_HOST;
}
