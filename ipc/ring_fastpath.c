// Two rings and two doorbells as a channel's fast path (ipc/ring_fastpath.h).
#include "ipc/ring_fastpath.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void fp_reset(capsa_ring_fastpath_t *fp) {
  memset(fp, 0, sizeof *fp);
  fp->tx_region.fd = fp->rx_region.fd = -1;
  fp->my_bell = fp->peer_bell = -1;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Binds the rings once the regions are mapped; both sides use this.
static int bind_rings(capsa_ring_fastpath_t *fp) {
  int err = capsa_ring_init(&fp->tx, &fp->tx_region, CAPSA_RING_PRODUCER);
  if (err == 0)
    err = capsa_ring_init(&fp->rx, &fp->rx_region, CAPSA_RING_CONSUMER);
  if (err == 0) capsa_ring_set_doorbell(&fp->tx, fp->peer_bell);
  return err;
}

int capsa_ring_fastpath_create(capsa_ring_fastpath_t *fp, size_t capacity,
                               capsa_ring_fastpath_fds_t *peer) {
  if (!fp || !peer) return -EINVAL;
  fp_reset(fp);
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) peer->fd[i] = -1;
  size_t size = capsa_ring_region_size(capacity);
  if (size == 0) return -EINVAL;
  int err = capsa_shm_create(size, "capsa-ring-tx", CAPSA_SHM_BOTH_WRITE,
                             &fp->tx_region);
  if (err == 0)
    err = capsa_shm_create(size, "capsa-ring-rx", CAPSA_SHM_BOTH_WRITE,
                           &fp->rx_region);
  if (err == 0) {
    // Non-blocking for both holders (the flag is on the shared open file):
    // a full counter must never block a writer.
    fp->my_bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    fp->peer_bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fp->my_bell < 0 || fp->peer_bell < 0) err = -errno;
  }
  if (err == 0) err = bind_rings(fp);
  if (err == 0) {
    // The peer's view is the mirror image of ours.
    peer->fd[CAPSA_RFP_TO_PEER] = fcntl(fp->tx_region.fd, F_DUPFD_CLOEXEC, 0);
    peer->fd[CAPSA_RFP_FROM_PEER] = fcntl(fp->rx_region.fd, F_DUPFD_CLOEXEC, 0);
    peer->fd[CAPSA_RFP_HOST_BELL] = fcntl(fp->my_bell, F_DUPFD_CLOEXEC, 0);
    peer->fd[CAPSA_RFP_PEER_BELL] = fcntl(fp->peer_bell, F_DUPFD_CLOEXEC, 0);
    for (int i = 0; i < CAPSA_RFP_NFDS; i++)
      if (peer->fd[i] < 0) err = -EMFILE;
  }
  if (err < 0) {
    for (int i = 0; i < CAPSA_RFP_NFDS; i++) close_fd(&peer->fd[i]);
    capsa_ring_fastpath_close(fp);
    return err;
  }
  return 0;
}

// A doorbell the host made: an anonymous inode (eventfd), non-blocking.
static int check_bell(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) return -EBADF;
  if ((st.st_mode & S_IFMT) != 0) return -EINVAL;
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || !(fl & O_NONBLOCK) || (fl & O_ACCMODE) != O_RDWR)
    return -EINVAL;
  return 0;
}

int capsa_ring_fastpath_attach(capsa_ring_fastpath_t *fp, size_t capacity,
                               const capsa_ring_fastpath_fds_t *fds) {
  if (!fp || !fds) return -EINVAL;
  fp_reset(fp);
  size_t size = capsa_ring_region_size(capacity);
  if (size == 0) return -EINVAL;
  int err = check_bell(fds->fd[CAPSA_RFP_HOST_BELL]);
  if (err == 0) err = check_bell(fds->fd[CAPSA_RFP_PEER_BELL]);
  if (err == 0)
    err = capsa_shm_verify(fds->fd[CAPSA_RFP_TO_PEER], size,
                           CAPSA_SHM_PEER_READWRITE);
  if (err >= 0)
    err = capsa_shm_verify(fds->fd[CAPSA_RFP_FROM_PEER], size,
                           CAPSA_SHM_PEER_READWRITE);
  if (err >= 0)
    err = capsa_shm_map_fd(fds->fd[CAPSA_RFP_TO_PEER], size,
                           CAPSA_SHM_PEER_READWRITE, &fp->rx_region);
  if (err == 0) {
    err = capsa_shm_map_fd(fds->fd[CAPSA_RFP_FROM_PEER], size,
                           CAPSA_SHM_PEER_READWRITE, &fp->tx_region);
    if (err < 0) {
      // Give the first descriptor back to the caller, unmap the rest.
      capsa_shm_release_fd(&fp->rx_region);
      capsa_shm_close(&fp->rx_region);
    }
  }
  if (err < 0) {
    fp_reset(fp);
    return err;
  }
  fp->my_bell = fds->fd[CAPSA_RFP_PEER_BELL];
  fp->peer_bell = fds->fd[CAPSA_RFP_HOST_BELL];
  err = bind_rings(fp);  // sizes were verified: cannot fail
  return err;
}

static int hook_send(void *ctx, const uint8_t *buf, size_t len) {
  capsa_ring_fastpath_t *fp = ctx;
  if (len > CAPSA_RING_MAX_MESSAGE) return -EAGAIN;  // the socket takes it
  int err = capsa_ring_write(&fp->tx, CAPSA_RFP_KIND, buf, len, 0);
  return err == -EMSGSIZE ? -EAGAIN : err;
}

static ssize_t hook_recv(void *ctx, uint8_t *buf, size_t cap) {
  capsa_ring_fastpath_t *fp = ctx;
  uint32_t kind = 0;
  int n = capsa_ring_read(&fp->rx, buf, cap, &kind, 0);
  if (n == -EAGAIN) return 0;
  if (n < 0) return n == -EMSGSIZE ? -EBADMSG : n;
  // 0 bytes would read as "empty" to the channel; no envelope is that short.
  if (kind != CAPSA_RFP_KIND || n == 0) {
    fp->rx.broken = true;
    return -EBADMSG;
  }
  return n;
}

static int hook_wait(void *ctx, int fd, int timeout_ms) {
  return capsa_ring_fastpath_wait(ctx, fd, timeout_ms);
}

void capsa_ring_fastpath_hook(capsa_ring_fastpath_t *fp,
                              capsa_fastpath_t *hook) {
  if (!hook) return;
  hook->ctx = fp;
  hook->send = hook_send;
  hook->recv = hook_recv;
  hook->wait = hook_wait;
}

int capsa_ring_fastpath_bell_fd(const capsa_ring_fastpath_t *fp) {
  return fp ? fp->my_bell : -EBADF;
}

int capsa_ring_fastpath_arm(capsa_ring_fastpath_t *fp) {
  if (!fp || fp->my_bell < 0) return -EBADF;
  uint64_t count;
  // Drain stale rings first, so that poll() only returns for new ones.
  while (read(fp->my_bell, &count, sizeof count) == (ssize_t)sizeof count) {
  }
  return capsa_ring_arm(&fp->rx);
}

void capsa_ring_fastpath_disarm(capsa_ring_fastpath_t *fp) {
  if (fp) capsa_ring_disarm(&fp->rx);
}

int capsa_ring_fastpath_wait(capsa_ring_fastpath_t *fp, int sock,
                             int timeout_ms) {
  if (!fp || !fp->rx.sh) return -EINVAL;
  // Spin first (bounded, adaptive) -- the fast case makes no syscall. A
  // socket message is found by the poll below at worst one spin later.
  int r = timeout_ms == 0 ? capsa_ring_poll(&fp->rx) : capsa_ring_spin(&fp->rx);
  if (r != 0) return r;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    r = capsa_ring_fastpath_arm(fp);
    if (r != 0) {
      capsa_ring_fastpath_disarm(fp);
      return r < 0 ? r : 1;
    }
    int left = timeout_ms;
    if (timeout_ms > 0) {
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      int64_t spent = (int64_t)(now.tv_sec - start.tv_sec) * 1000 +
                      (now.tv_nsec - start.tv_nsec) / 1000000;
      left = spent >= timeout_ms ? 0 : timeout_ms - (int)spent;
    }
    struct pollfd p[2] = {{fp->my_bell, POLLIN, 0}, {sock, POLLIN, 0}};
    int n = poll(p, sock >= 0 ? 2 : 1, left);
    int err = n < 0 && errno != EINTR ? -errno : 0;
    capsa_ring_fastpath_disarm(fp);
    if (err < 0) return err;
    int ring = capsa_ring_poll(&fp->rx);
    if (ring != 0) return ring < 0 ? ring : 1;
    if (sock >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) return 2;
    if (n == 0) return 0;  // poll's own timeout
    // A late ring from an earlier publish (the producer saw us armed just
    // before we disarmed) or a peer ringing for nothing: wait again.
  }
}

void capsa_ring_fastpath_close(capsa_ring_fastpath_t *fp) {
  if (!fp) return;
  capsa_shm_close(&fp->tx_region);
  capsa_shm_close(&fp->rx_region);
  close_fd(&fp->my_bell);
  close_fd(&fp->peer_bell);
  memset(&fp->tx, 0, sizeof fp->tx);
  memset(&fp->rx, 0, sizeof fp->rx);
}
