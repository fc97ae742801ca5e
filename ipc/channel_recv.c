// Channel core, receiving: recvmsg with descriptor checks, decoding, order
// across the two transports, the peer state machine and reply matching.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/channel_core.h"
#include "ipc/codec.h"
#include "ipc/handle.h"
#include "ipc/ipc_dump.h"
#include "ipc/reason.h"
#include "sandbox/rights/rights.h"

enum { SOCK = 0, FAST = 1 };

static int fail(capsa__chan_core_t *c, int err) {
  if (c->broken == 0) c->broken = err;
  return c->broken;
}

static void close_all(int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

// Reads one record from the socket into the socket slot. 1: slot filled;
// 0: nothing to read; < 0: error (sticky).
static int read_socket(capsa__chan_core_t *c) {
  capsa__rx_slot_t *s = &c->rx[SOCK];
  struct iovec iov = {.iov_base = s->buf, .iov_len = CAPSA_IPC_MAX_MESSAGE + 1};
  // Room for exactly the allowed number of descriptors: more arrive as
  // MSG_CTRUNC (the kernel closes the excess), which is a bad message.
  union {
    char buf[CMSG_SPACE(sizeof(int) * CAPSA_IPC_MAX_HANDLES)];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = ctl.buf,
                      .msg_controllen = sizeof ctl.buf};
  ssize_t n;
  int resets = 0;
  // ECONNRESET: the peer closed with our messages unread. The kernel says so
  // once, ahead of what the peer sent before it went: read on, to EOF, so
  // that its last messages are not lost.
  do {
    n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ == 0)));
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    if (errno == ECONNRESET) {
      snprintf(c->reason, sizeof c->reason, "peer closed");
      return fail(c, -EPIPE);
    }
    snprintf(c->reason, sizeof c->reason, "recvmsg: errno %d", errno);
    return fail(c, -errno);
  }
  // Collect every received descriptor first, so that any failure below
  // closes all of them.
  int fds[CAPSA_IPC_MAX_HANDLES];
  int nfds = 0, foreign_cmsg = 0;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL;
       cm = CMSG_NXTHDR(&mh, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const unsigned char *p = CMSG_DATA(cm);
      for (size_t i = 0; i < k; i++) {
        int fd;
        memcpy(&fd, p + i * sizeof(int), sizeof fd);
        if (nfds < CAPSA_IPC_MAX_HANDLES)
          fds[nfds++] = fd;
        else
          close(fd);  // cannot happen with our buffer size; stay safe
      }
    } else {
      foreign_cmsg = 1;
    }
  }
  // Recorded as it came, before any check (CAPSA_IPC_DUMP).
  if (n > 0) capsa__dump_record(c, s->buf, (size_t)n, fds, nfds);
  int err = 0;
  if (mh.msg_flags & MSG_CTRUNC)
    err = capsa__bad(c->reason, sizeof c->reason,
                     "control data truncated (more than %d descriptors)",
                     CAPSA_IPC_MAX_HANDLES);
  else if (foreign_cmsg)
    err = capsa__bad(c->reason, sizeof c->reason,
                     "control message other than SCM_RIGHTS");
  else if (mh.msg_flags & MSG_TRUNC || n > CAPSA_IPC_MAX_MESSAGE)
    err = capsa__bad(c->reason, sizeof c->reason,
                     "message larger than %d bytes", CAPSA_IPC_MAX_MESSAGE);
  else if (n == 0 && nfds > 0)
    err = capsa__bad(c->reason, sizeof c->reason,
                     "empty record carrying descriptors");
  if (err < 0) {
    close_all(fds, nfds);
    return fail(c, err);
  }
  if (n == 0) {
    // End of stream (or an empty record, which no capsa sender produces).
    snprintf(c->reason, sizeof c->reason, "peer closed");
    return fail(c, -EPIPE);
  }
  err =
      capsa_msg_decode(s->buf, (size_t)n, &s->msg, c->reason, sizeof c->reason);
  if (err == 0 && s->msg.handle_count != (uint32_t)nfds)
    err =
        capsa__bad(c->reason, sizeof c->reason,
                   "%s: %u handles declared, %d descriptors attached",
                   capsa_msg_type_name(s->msg.type), s->msg.handle_count, nfds);
  for (int i = 0; err == 0 && i < nfds; i++) {
    char why[CAPSA_IPC_REASON_MAX];
    err = capsa_handle_check(fds[i], &s->msg.handles[i], c->peer.peer, why,
                             sizeof why);
    if (err < 0)
      capsa__bad(c->reason, sizeof c->reason, "%s: handle %d: %s",
                 capsa_msg_type_name(s->msg.type), i, why);
  }
  if (err < 0) {
    close_all(fds, nfds);
    capsa_msg_init(&s->msg, CAPSA_MSG_NONE);
    return fail(c, err);
  }
  for (int i = 0; i < nfds; i++) s->msg.handles[i].fd = fds[i];
  s->len = (size_t)n;
  s->full = 1;
  return 1;
}

// Reads one message from the fast path. Same results as read_socket.
static int read_fast(capsa__chan_core_t *c) {
  capsa__rx_slot_t *s = &c->rx[FAST];
  ssize_t n = c->fastpath.recv(c->fastpath.ctx, s->buf, CAPSA_IPC_MAX_MESSAGE);
  if (n == 0) return 0;
  if (n < 0 || n > CAPSA_IPC_MAX_MESSAGE)
    return fail(c, capsa__bad(c->reason, sizeof c->reason,
                              "fast path: broken (%zd)", n));
  int err =
      capsa_msg_decode(s->buf, (size_t)n, &s->msg, c->reason, sizeof c->reason);
  if (err == 0 && s->msg.handle_count != 0)
    err = capsa__bad(c->reason, sizeof c->reason,
                     "fast path: %s declares handles",
                     capsa_msg_type_name(s->msg.type));
  if (err < 0) return fail(c, err);
  s->len = (size_t)n;
  s->full = 1;
  return 1;
}

// Accepts the slot's message: state machine, rights, reply matching.
static int deliver(capsa__chan_core_t *c, int slot, capsa__rx_t *rx) {
  capsa_msg_t *m = &c->rx[slot].msg;
  int err = capsa_peer_state_accept(&c->peer, m, c->reason, sizeof c->reason);
  memset(&rx->reply, 0, sizeof rx->reply);
  if (err == 0 && (m->flags & CAPSA_MSG_F_RESPONSE) &&
      !capsa__core_take_reply(c, m->request_id, &rx->reply)) {
    for (unsigned i = 0; i < 16; i++)
      if (c->expired[i] == m->request_id) {
        capsa_msg_close_handles(m);  // late: the requester gave up
        c->rx[slot].full = 0;
        return 0;
      }
    err = capsa__bad(c->reason, sizeof c->reason,
                     "%s answers request %llu, which is not outstanding",
                     capsa_msg_type_name(m->type),
                     (unsigned long long)m->request_id);
  }
  if (err == 0) err = capsa__iface_accept(c, &c->rx[slot], &rx->reply);
  for (uint32_t i = 0; err == 0 && c->apply_rights && i < m->handle_count;
       i++) {
    // Number-keyed rights do not travel with the descriptor: re-apply what
    // the sender declared.
    int r = capsa_rights_limit(m->handles[i].fd, &m->handles[i].rights);
    if (r < 0) {
      snprintf(c->reason, sizeof c->reason,
               "%s: handle %u: cannot apply rights (%d)",
               capsa_msg_type_name(m->type), i, r);
      err = r;
    }
  }
  if (err < 0) {
    capsa_msg_close_handles(m);
    capsa__iface_release(&c->rx[slot]);
    c->rx[slot].full = 0;
    return fail(c, err);
  }
  m->origin = c->serial;
  if (m->flags & CAPSA_MSG_F_REQUEST)
    capsa__core_open_peer_request(c, m->request_id);
  rx->msg = m;
  return 1;
}

int capsa__core_recv(capsa__chan_core_t *c, capsa__rx_t *rx) {
  if (c->broken) return c->broken;
  for (;;) {
    int slot = -1;
    for (int t = SOCK; t <= FAST; t++)
      if (c->rx[t].full && c->rx[t].msg.seq == c->peer.next_seq) slot = t;
    if (slot < 0 && c->rx[SOCK].full && !c->has_fastpath)
      slot = SOCK;  // out of order: the state machine says so
    if (slot >= 0) {
      int r = deliver(c, slot, rx);
      if (r != 0) return r;
      continue;  // a late reply was dropped
    }
    int progress = 0;
    if (!c->rx[SOCK].full) {
      int r = read_socket(c);
      if (r < 0) return r;
      progress |= r;
    }
    if (c->has_fastpath && !c->rx[FAST].full) {
      int r = read_fast(c);
      if (r < 0) return r;
      progress |= r;
    }
    if (!progress) {
      // A later message is here but the next one is on neither transport.
      // The sender finishes each send before the next begins, so it never
      // will be: the peer broke the order.
      for (int t = SOCK; t <= FAST; t++)
        if (c->rx[t].full)
          return fail(c, capsa__bad(c->reason, sizeof c->reason,
                                    "sequence %llu missing, got %llu",
                                    (unsigned long long)c->peer.next_seq,
                                    (unsigned long long)c->rx[t].msg.seq));
      return 0;
    }
  }
}

void capsa__core_release(capsa__chan_core_t *c, capsa__rx_t *rx) {
  if (rx->msg == NULL) return;
  capsa_msg_close_handles(rx->msg);
  for (int t = SOCK; t <= FAST; t++)
    if (rx->msg == &c->rx[t].msg) {
      c->rx[t].full = 0;
      capsa__iface_release(&c->rx[t]);
    }
  rx->msg = NULL;
}
