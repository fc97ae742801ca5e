// Channel core, sending: numbering, the fast path, sendmsg with SCM_RIGHTS
// and the bounded queue of what the kernel could not take yet.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/channel_core.h"
#include "ipc/codec.h"
#include "ipc/handle.h"
#include "ipc/scm.h"

struct capsa__qent {
  struct capsa__qent *next;
  size_t len;
  int nfds;
  int fds[CAPSA_IPC_MAX_HANDLES];  // owned by the queue
  uint8_t bytes[];
};

// Non-blocking sendmsg of one record. Returns 0, -EAGAIN, or -errno.
static int send_record(int fd, const uint8_t *buf, size_t len, const int *fds,
                       int nfds) {
  ssize_t n =
      capsa_scm_send(fd, buf, len, fds, nfds, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n >= 0) return 0;  // SEQPACKET: all or nothing
  if (n == -EWOULDBLOCK) return -EAGAIN;
  if (n == -ECONNRESET || n == -ENOTCONN) return -EPIPE;
  return (int)n;
}

// send_record, measured for the in-flight count when the channel keeps one
// (only messages with descriptors, and every send while any is in flight).
static int send_counted(capsa__chan_core_t *c, const uint8_t *buf, size_t len,
                        const int *fds, int nfds) {
  int measure =
      c->count_inflight && (nfds > 0 || capsa__inflight_active(&c->inflight));
  int64_t before = measure ? capsa__inflight_unread(c->fd) : 0;
  int err = send_record(c->fd, buf, len, fds, nfds);
  if (err == 0 && measure)
    capsa__inflight_sent(&c->inflight, before, capsa__inflight_unread(c->fd),
                         (unsigned)nfds);
  return err;
}

static void close_fds(const int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

int capsa__core_flush(capsa__chan_core_t *c) {
  while (c->qhead != NULL) {
    capsa__qent_t *e = c->qhead;
    int err = send_counted(c, e->bytes, e->len, e->fds, e->nfds);
    if (err == -EAGAIN) return -EAGAIN;
    if (err == -EPIPE || err == -ECONNRESET) {
      c->send_closed = -EPIPE;  // read on: its last messages come first
      return -EPIPE;
    }
    if (err < 0) {
      if (!c->broken) c->broken = err;
      return err;
    }
    c->qhead = e->next;
    if (c->qhead == NULL) c->qtail = NULL;
    c->queued_bytes -= e->len;
    c->queued_fds -= (size_t)e->nfds;
    close_fds(e->fds, e->nfds);
    free(e);
  }
  return 0;
}

int capsa__core_refuse(capsa__chan_core_t *c, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->send_error, sizeof c->send_error, fmt, ap);
  va_end(ap);
  return err;
}

void capsa__core_free_queue(capsa__chan_core_t *c) {
  while (c->qhead != NULL) {
    capsa__qent_t *e = c->qhead;
    c->qhead = e->next;
    close_fds(e->fds, e->nfds);
    free(e);
  }
  c->qtail = NULL;
  c->queued_bytes = 0;
  c->queued_fds = 0;
}

int capsa__core_send(capsa__chan_core_t *c, capsa_msg_t *msg) {
  c->send_error[0] = '\0';
  if (c->broken == -EPIPE || c->fd < 0)
    return capsa__core_refuse(c, -EPIPE, "the channel is closed");
  if (c->broken != 0 && c->broken != -EBADMSG)
    return capsa__core_refuse(c, -EPIPE, "the channel failed earlier");
  if (c->send_closed) return capsa__core_refuse(c, -EPIPE, "the peer is gone");
  if (msg->handle_count > CAPSA_IPC_MAX_HANDLES)
    return capsa__core_refuse(c, -EINVAL, "%u handles: at most %d",
                              (unsigned)msg->handle_count,
                              CAPSA_IPC_MAX_HANDLES);
  int fds[CAPSA_IPC_MAX_HANDLES];
  for (uint32_t i = 0; i < msg->handle_count; i++) {
    if (msg->handles[i].fd < 0)
      return capsa__core_refuse(c, -EINVAL, "handle %u: no descriptor",
                                (unsigned)i);
    // The receiver's own check, on the sender's side: a descriptor wider
    // than its declaration (an O_RDWR file declared read-only, an unsealed
    // region declared read-only) never leaves, whoever would check it next.
    char why[CAPSA_IPC_REASON_MAX];
    if (capsa_handle_check(msg->handles[i].fd, &msg->handles[i],
                           capsa__core_self(c), why, sizeof why) < 0)
      return capsa__core_refuse(c, -EINVAL, "handle %u: %s", (unsigned)i, why);
    fds[i] = msg->handles[i].fd;
  }
  int nfds = (int)msg->handle_count;
  int ierr = capsa__iface_prepare_send(c, msg);  // ipc/channel_iface.c
  if (ierr < 0) return ierr;
  msg->seq = c->next_seq;
  int len = capsa_msg_encode(msg, c->tx, CAPSA_IPC_MAX_MESSAGE);
  if (len < 0)
    return capsa__core_refuse(c, len,
                              "encoding failed: %s (messages are at "
                              "most %d bytes)",
                              strerror(-len), CAPSA_IPC_MAX_MESSAGE);

  if (c->qhead == NULL) {
    // Nothing queued, so order holds whichever transport takes it.
    if (nfds == 0 && c->has_fastpath) {
      int err = c->fastpath.send(c->fastpath.ctx, c->tx, (size_t)len);
      if (err == 0) {
        c->next_seq++;
        return 0;
      }
      if (err != -EAGAIN) return err;
    }
    int err = send_counted(c, c->tx, (size_t)len, fds, nfds);
    if (err == 0) {
      c->next_seq++;
      close_fds(fds, nfds);  // the peer has its own copies now
      for (int i = 0; i < nfds; i++) msg->handles[i].fd = -1;
      return 0;
    }
    // ETOOMANYREFS: this user's descriptors in flight, on every socket, are
    // at RLIMIT_NOFILE: a refusal of this message, not of the channel.
    if (err == -ETOOMANYREFS) return err;
    if (err == -EPIPE || err == -ECONNRESET) {
      // The peer is gone; what it sent before is still to be read.
      c->send_closed = -EPIPE;
      return capsa__core_refuse(c, -EPIPE, "the peer is gone");
    }
    if (err != -EAGAIN) {
      c->broken = err;
      return err;
    }
  }
  // The kernel's buffer is full (the peer is not reading): queue, bounded.
  if (c->queued_bytes + (size_t)len > c->max_queued ||
      c->queued_fds + (size_t)nfds > CAPSA__MAX_QUEUED_FDS)
    return capsa__core_refuse(
        c, -ENOBUFS,
        "send queue full: %zu bytes and %zu descriptors wait "
        "for the peer to read",
        c->queued_bytes, c->queued_fds);
  capsa__qent_t *e = malloc(sizeof *e + (size_t)len);
  if (e == NULL) return -ENOMEM;
  e->next = NULL;
  e->len = (size_t)len;
  e->nfds = nfds;
  memcpy(e->fds, fds, sizeof(int) * (size_t)nfds);
  memcpy(e->bytes, c->tx, (size_t)len);
  if (c->qtail != NULL)
    c->qtail->next = e;
  else
    c->qhead = e;
  c->qtail = e;
  c->queued_bytes += (size_t)len;
  c->queued_fds += (size_t)nfds;
  c->next_seq++;
  for (int i = 0; i < nfds; i++) msg->handles[i].fd = -1;
  return 0;
}
