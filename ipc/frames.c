// Frame chains. See ipc/frames.h for the API and docs/frames.md for the
// rules and the threat statement.
//
// The control area is one 64-bit word the host alone writes (the region is
// F_SEAL_FUTURE_WRITE, so the renderer cannot): seen seq in the top 48 bits,
// the pending index in bits 8..15 and the held index in bits 0..7 (0xff:
// none). One word, stored and loaded whole, so the renderer never sees a
// held index from one moment and a seen seq from another.
#include "ipc/frames.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define NONE 0xffu

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

static uint64_t pack(uint64_t seen, int pending, int held) {
  return seen << 16 | (uint64_t)(pending < 0 ? NONE : (unsigned)pending) << 8 |
         (uint64_t)(held < 0 ? NONE : (unsigned)held);
}

// The host's reads of a buffer it gives back happen before this store
// (release), so a renderer that loads the word (acquire) and then draws
// there cannot overwrite what the host is still reading.
static void publish(capsa_frames_host_t *h) {
  uint64_t *w = h->control.base;
  __atomic_store_n(w, pack(h->seen_seq, h->pending, h->held), __ATOMIC_RELEASE);
}

int capsa_frames_check(const capsa_frame_desc_t *d, size_t buffer_size) {
  if (!d) return -EINVAL;
  if (d->format != CAPSA_FRAMES_BGRA8 && d->format != CAPSA_FRAMES_RGBA8)
    return -EINVAL;
  if (d->width == 0 || d->height == 0) return -EINVAL;
  if ((uint64_t)d->stride < (uint64_t)d->width * 4) return -EINVAL;
  // stride and height are 32-bit: their product fits in 64 bits.
  uint64_t len = (uint64_t)d->stride * d->height;
  if (d->offset > buffer_size || len > buffer_size - d->offset) return -ERANGE;
  return 0;
}

int capsa_frames_host_init(capsa_frames_host_t *h, uint32_t count,
                           size_t buffer_size, const char *name) {
  if (!h) return -EINVAL;
  memset(h, 0, sizeof *h);
  h->buffers.fd = h->control.fd = -1;
  h->held = h->pending = -1;
  if (count == 0) count = CAPSA_FRAMES_DEFAULT_BUFFERS;
  if (count > CAPSA_FRAMES_MAX_BUFFERS) return -EINVAL;
  size_t ps = page_size();
  if (buffer_size == 0 || buffer_size > CAPSA_SHM_MAX_SIZE) return -EINVAL;
  buffer_size = (buffer_size + ps - 1) & ~(ps - 1);
  if (buffer_size > CAPSA_SHM_MAX_SIZE / count) return -EINVAL;
  int err = capsa_shm_create(buffer_size * count, name, CAPSA_SHM_PEER_WRITES,
                             &h->buffers);
  if (err == 0)
    err = capsa_shm_create(ps, name, CAPSA_SHM_CREATOR_WRITES, &h->control);
  if (err < 0) {
    capsa_frames_host_close(h);
    return err;
  }
  h->count = count;
  h->buffer_size = buffer_size;
  publish(h);
  return 0;
}

int capsa_frames_host_fds(const capsa_frames_host_t *h, int *buffers_fd,
                          int *control_fd) {
  if (!h || !buffers_fd || !control_fd || h->buffers.fd < 0 ||
      h->control.fd < 0)
    return -EINVAL;
  int b = fcntl(h->buffers.fd, F_DUPFD_CLOEXEC, 0);
  if (b < 0) return -errno;
  int c = fcntl(h->control.fd, F_DUPFD_CLOEXEC, 0);
  if (c < 0) {
    int err = -errno;
    close(b);
    return err;
  }
  *buffers_fd = b;
  *control_fd = c;
  return 0;
}

int capsa_frames_host_present(capsa_frames_host_t *h,
                              const capsa_frame_desc_t *d) {
  if (!h || !d || !h->control.base) return -EINVAL;
  // Copied once: `d` may point into a message buffer; everything below
  // looks at this copy only.
  capsa_frame_desc_t f = *d;
  if (f.buffer >= h->count) return -ERANGE;
  if ((int)f.buffer == h->held) return -EBUSY;
  if (f.seq <= h->seen_seq || f.seq > CAPSA_FRAMES_MAX_SEQ) return -EBADMSG;
  int err = capsa_frames_check(&f, h->buffer_size);
  if (err < 0) return err;
  if (h->pending >= 0) h->dropped++;
  h->pending = (int)f.buffer;
  h->pending_desc = f;
  h->seen_seq = f.seq;
  h->presented++;
  publish(h);
  return 0;
}

static void describe(const capsa_frames_host_t *h, capsa_frame_view_t *out) {
  const uint8_t *base = h->buffers.base;
  out->desc = h->held_desc;
  out->pixels = base + (size_t)h->held * h->buffer_size + h->held_desc.offset;
  out->len = (size_t)h->held_desc.stride * h->held_desc.height;
}

int capsa_frames_host_latest(capsa_frames_host_t *h, capsa_frame_view_t *out) {
  if (!h || !out || !h->control.base) return -EINVAL;
  memset(out, 0, sizeof *out);
  if (h->pending >= 0) {
    h->held = h->pending;
    h->held_desc = h->pending_desc;
    h->pending = -1;
    publish(h);
    describe(h, out);
    return 1;
  }
  if (h->held < 0) return -EAGAIN;
  describe(h, out);
  return 0;
}

int capsa_frames_host_release(capsa_frames_host_t *h) {
  if (!h || !h->control.base) return -EINVAL;
  if (h->held < 0) return -ENOENT;
  h->held = -1;
  publish(h);
  return 0;
}

long capsa_frames_host_copy(const capsa_frames_host_t *h, void *dst,
                            size_t cap) {
  if (!h || !dst || !h->buffers.base) return -EINVAL;
  if (h->held < 0) return -ENOENT;
  capsa_frame_view_t f;
  describe(h, &f);
  if (cap < f.len) return -ENOSPC;
  memcpy(dst, f.pixels, f.len);
  return (long)f.len;
}

void capsa_frames_host_close(capsa_frames_host_t *h) {
  if (!h) return;
  capsa_shm_close(&h->buffers);
  capsa_shm_close(&h->control);
  h->held = h->pending = -1;
  h->count = 0;
}

int capsa_frames_renderer_map(capsa_frames_renderer_t *r, int buffers_fd,
                              int control_fd, uint32_t count,
                              size_t buffer_size, size_t control_size) {
  if (!r) return -EINVAL;
  memset(r, 0, sizeof *r);
  r->buffers.fd = r->control.fd = -1;
  r->acquired = -1;
  if (count == 0 || count > CAPSA_FRAMES_MAX_BUFFERS || buffer_size == 0 ||
      buffer_size % page_size() != 0 ||
      buffer_size > CAPSA_SHM_MAX_SIZE / count || control_size < 8)
    return -EINVAL;
  int err = capsa_shm_map_fd(buffers_fd, buffer_size * count,
                             CAPSA_SHM_PEER_READWRITE, &r->buffers);
  if (err < 0) return err;
  err = capsa_shm_map_fd(control_fd, control_size, CAPSA_SHM_PEER_READS,
                         &r->control);
  if (err < 0) {
    // The caller keeps buffers_fd: take it back from the region.
    capsa_shm_release_fd(&r->buffers);
    capsa_shm_close(&r->buffers);
    return err;
  }
  r->count = count;
  r->buffer_size = buffer_size;
  return 0;
}

int capsa_frames_renderer_acquire(capsa_frames_renderer_t *r, void **pixels,
                                  size_t *len) {
  if (!r || !pixels || !len || !r->control.base) return -EINVAL;
  if (r->acquired >= 0) return -EBUSY;
  uint64_t w =
      __atomic_load_n((const uint64_t *)r->control.base, __ATOMIC_ACQUIRE);
  uint64_t seen = w >> 16;
  unsigned pending = (unsigned)(w >> 8) & 0xffu, held = (unsigned)w & 0xffu;
  for (uint32_t k = 1; k <= r->count; k++) {
    // Start after the last presented one: round robin, so an idle host
    // does not see its buffers reused out of order.
    uint32_t i = (uint32_t)((r->seq + k) % r->count);
    if (i == held || i == pending || r->presented_seq[i] > seen) continue;
    r->acquired = (int)i;
    *pixels = (uint8_t *)r->buffers.base + (size_t)i * r->buffer_size;
    *len = r->buffer_size;
    return (int)i;
  }
  return -EAGAIN;
}

int capsa_frames_renderer_present(capsa_frames_renderer_t *r,
                                  capsa_frame_desc_t *d) {
  if (!r || !d) return -EINVAL;
  if (r->acquired < 0) return -ENOENT;
  if (r->seq >= CAPSA_FRAMES_MAX_SEQ) return -EBADMSG;
  int err = capsa_frames_check(d, r->buffer_size);
  if (err < 0) return err;
  d->buffer = (uint32_t)r->acquired;
  d->seq = ++r->seq;
  r->presented_seq[r->acquired] = d->seq;
  r->acquired = -1;
  return 0;
}

int capsa_frames_renderer_cancel(capsa_frames_renderer_t *r) {
  if (!r) return -EINVAL;
  if (r->acquired < 0) return -ENOENT;
  r->acquired = -1;
  return 0;
}

void capsa_frames_renderer_close(capsa_frames_renderer_t *r) {
  if (!r) return;
  capsa_shm_close(&r->buffers);
  capsa_shm_close(&r->control);
  r->acquired = -1;
  r->count = 0;
}
