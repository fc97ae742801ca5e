// Frame chains: a renderer draws into shared buffers, the host reads the
// latest presented one in place, and neither side copies a frame.
//
//   // Host: make a chain, send the renderer the two descriptors and the
//   // count (in your own message), then, for each Frame message:
//   int host_show(capsa_frames_host_t *chain, const capsa_frame_desc_t *d) {
//     int err = capsa_frames_host_present(chain, d);  // d: from the message
//     if (err < 0) return err;  // a lying renderer: end it as a bad message
//     capsa_frame_view_t f;
//     if (capsa_frames_host_latest(chain, &f) < 0) return 0;
//     // f.pixels: f.len bytes, f.desc.height rows of f.desc.stride bytes,
//     // all inside the buffer; may tear, never fault. Done with it:
//     return capsa_frames_host_release(chain);
//   }
//   int host_setup(capsa_frames_host_t *chain, int *bufs, int *ctl) {
//     int err = capsa_frames_host_init(chain, 3, 1024 * 768 * 4, "tab");
//     if (err < 0) return err;
//     return capsa_frames_host_fds(chain, bufs, ctl);  // dups: send, close
//   }
//
//   // Renderer, with the descriptors (its own now) and the count:
//   int draw(capsa_frames_renderer_t *chain, uint32_t w, uint32_t h,
//            capsa_frame_desc_t *out) {  // out: what to send in a Frame
//     void *px;
//     size_t len;
//     int i = capsa_frames_renderer_acquire(chain, &px, &len);
//     if (i < 0) return i;  // -EAGAIN: the host has not let one go yet
//     if ((size_t)w * 4 * h > len) return -ERANGE;
//     memset(px, 0xff, (size_t)w * 4 * h);  // white, w x h
//     *out = (capsa_frame_desc_t){.width = w, .height = h, .stride = w * 4,
//                                 .format = CAPSA_FRAMES_RGBA8};
//     return capsa_frames_renderer_present(chain, out);  // sets buffer, seq
//   }
//
// One chain is N equally sized buffers (1..CAPSA_FRAMES_MAX_BUFFERS,
// default 3) in one sealed memfd, plus a one-page control area in another.
// The rules, and who enforces each (docs/frames.md has the whole story):
//
// - The renderer writes pixels; the host never writes them. Kernel: the
//   buffers are CAPSA_SHM_PEER_WRITES, mapped read-only in the host.
// - The host writes the control area; the renderer only reads it. Kernel:
//   CAPSA_SHM_CREATOR_WRITES (F_SEAL_FUTURE_WRITE), so nothing the renderer
//   does changes the host's own state. The renderer tells the host what it
//   presented in a message (capsa_frame_desc_t), which the host validates.
// - The renderer draws only into the buffer it acquired, and acquires only
//   a buffer the host neither holds (reads), nor has pending, nor has not
//   yet seen a present of. Protocol only: a renderer has a writable mapping
//   of every buffer, always, and may ignore this. Then it tears its own
//   frame, nothing more: the host derives every length and offset from its
//   own state and from a present it validated against the buffer size,
//   never from buffer contents, so its reads stay in bounds whatever is
//   written under them, and no size seal can be broken (no SIGBUS).
// - The host never waits for the renderer: present, latest and release
//   are a few loads and one store to the host's own control page.
// - What the host may read without copying: the held frame's f.len bytes,
//   for display or encoding that tolerates torn pixels. Code that reads a
//   byte twice and must see it the same (parsers, checksums) copies first:
//   capsa_frames_host_copy(). Immutable frames need F_SEAL_WRITE, i.e. a
//   new frozen region per frame (capsa_shm CAPSA_SHM_CREATOR_FREEZES);
//   docs/frames.md measures both against the chain.
#ifndef CAPSA_IPC_FRAMES_H_
#define CAPSA_IPC_FRAMES_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/shm.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define CAPSA_FRAMES_MAX_BUFFERS 16
#define CAPSA_FRAMES_DEFAULT_BUFFERS 3
// A frame's seq is 1..CAPSA_FRAMES_MAX_SEQ (48 bits: it shares the control
// word with two indices, so that word is read and written whole).
#define CAPSA_FRAMES_MAX_SEQ ((UINT64_C(1) << 48) - 1)

// Pixel formats, 4 bytes a pixel (the values of demos/page/page.fbs).
typedef enum capsa_frames_format {
  CAPSA_FRAMES_BGRA8 = 1,
  CAPSA_FRAMES_RGBA8 = 2,
} capsa_frames_format_t;

// One presented frame as the renderer describes it: carried in a message,
// hostile on the host side until capsa_frames_host_present() accepts it.
typedef struct capsa_frame_desc {
  uint64_t seq;     // strictly increasing per chain, 1..CAPSA_FRAMES_MAX_SEQ
  uint32_t buffer;  // index of the buffer drawn, < count
  uint32_t width;   // pixels, >= 1
  uint32_t height;  // rows, >= 1
  uint32_t stride;  // bytes from one row to the next, >= width * 4
  uint32_t format;  // capsa_frames_format_t
  uint64_t offset;  // of the first row within the buffer
} capsa_frame_desc_t;

// A frame the host holds. pixels points into the host's read-only mapping
// (owned by the chain) and is valid until the next capsa_frames_host_latest,
// capsa_frames_host_release or capsa_frames_host_close on the chain.
typedef struct capsa_frame_view {
  const uint8_t *pixels;  // row 0; [pixels, pixels + len) is in the buffer
  size_t len;             // desc.stride * desc.height
  capsa_frame_desc_t desc;
} capsa_frame_view_t;

// Host side. Fields are read-only for users.
typedef struct capsa_frames_host {
  capsa_shm_region_t buffers;  // count * buffer_size, read-only here
  capsa_shm_region_t control;  // one page, written only here
  uint32_t count;
  size_t buffer_size;  // page-rounded
  int held;            // buffer the host reads, -1 none
  int pending;         // latest accepted present not yet taken, -1 none
  uint64_t seen_seq;   // seq of the last accepted present
  capsa_frame_desc_t held_desc, pending_desc;
  uint64_t presented, dropped;  // accepted presents; never taken
} capsa_frames_host_t;

// Renderer side. Fields are read-only for users.
typedef struct capsa_frames_renderer {
  capsa_shm_region_t buffers;  // read-write here
  capsa_shm_region_t control;  // read-only here (sealed)
  uint32_t count;
  size_t buffer_size;
  int acquired;  // -1 none
  uint64_t seq;  // of the last present
  uint64_t presented_seq[CAPSA_FRAMES_MAX_BUFFERS];
} capsa_frames_renderer_t;

// Creates a chain of `count` (1..CAPSA_FRAMES_MAX_BUFFERS; 0 means
// CAPSA_FRAMES_DEFAULT_BUFFERS) buffers of at least `buffer_size` bytes
// each (rounded up to the page size; count * size at most
// CAPSA_SHM_MAX_SIZE). `name` labels the memfds, may be NULL, is not kept.
// *h owns both regions; on failure nothing is left open. Returns 0, -EINVAL
// (count or size out of range) or capsa_shm_create()'s -errno.
int capsa_frames_host_init(capsa_frames_host_t *h, uint32_t count,
                           size_t buffer_size, const char *name);

// New descriptors of the two regions for the renderer: *buffers_fd (send it
// writable, size h->count * h->buffer_size) and *control_fd (send it
// read-only, size h->control.size). Both are the caller's (close them once
// sent). Returns 0 or -errno; on failure neither is open.
int capsa_frames_host_fds(const capsa_frames_host_t *h, int *buffers_fd,
                          int *control_fd);

// Accepts a present the renderer sent (`d`, the caller's, copied). Checked
// against the host's own state only: buffer < count and not the held one,
// seq above every earlier one, a known format, width and height >= 1,
// stride >= width * 4 and offset + stride * height within buffer_size
// (overflow-safe). The frame becomes pending (a pending one not yet taken
// is dropped) and the control area says the host has seen it. Returns 0,
// or, state unchanged: -ERANGE (buffer index or geometry outside the
// buffer), -EBUSY (the held buffer), -EBADMSG (seq not increasing, or
// above CAPSA_FRAMES_MAX_SEQ), -EINVAL (format, width, height, stride).
// Any error means the renderer broke the protocol.
int capsa_frames_host_present(capsa_frames_host_t *h,
                              const capsa_frame_desc_t *d);

// The latest frame: takes the pending one if any (the previously held
// buffer goes back to the renderer) and returns 1, else returns 0 with the
// one still held, or -EAGAIN when nothing was ever presented (or all was
// released). *out (the caller's) describes it as capsa_frame_view_t says.
int capsa_frames_host_latest(capsa_frames_host_t *h, capsa_frame_view_t *out);

// Gives the held buffer back (its pixels pointer is dead). 0, or -ENOENT
// when nothing is held.
int capsa_frames_host_release(capsa_frames_host_t *h);

// Copies the held frame (f.len bytes) into `dst` (the caller's, `cap`
// bytes): a private snapshot later writes cannot change. It is as torn as
// the renderer made it while copying; it is stable. Returns the bytes
// copied, -ENOENT (nothing held) or -ENOSPC (cap < len).
long capsa_frames_host_copy(const capsa_frames_host_t *h, void *dst,
                            size_t cap);

// Unmaps and closes both regions. Idempotent.
void capsa_frames_host_close(capsa_frames_host_t *h);

// Renderer side: maps what the host sent. `buffers_fd` must be a writable
// region of count * buffer_size bytes, `control_fd` a read-only (sealed)
// region of `control_size` bytes. On success *r owns both descriptors; on
// failure the caller still owns both and *r is closed. Returns 0, -EINVAL
// (count 0 or above CAPSA_FRAMES_MAX_BUFFERS, buffer_size 0 or not a
// multiple of the page size, count * buffer_size above CAPSA_SHM_MAX_SIZE,
// control_size below 8) or capsa_shm_map_fd()'s
// -errno (a descriptor without the seals or size it must have).
int capsa_frames_renderer_map(capsa_frames_renderer_t *r, int buffers_fd,
                              int control_fd, uint32_t count,
                              size_t buffer_size, size_t control_size);

// A free back buffer: one the host does not hold, has not pending and has
// seen every present of, as the control area says now (read once, never
// waited on). *pixels (owned by the chain) gets its start and *len its
// size. Returns the buffer index, -EAGAIN (none free: try again once the
// host has taken or dropped a frame; the library never blocks) or -EBUSY
// (one is acquired already: present or cancel it first).
int capsa_frames_renderer_acquire(capsa_frames_renderer_t *r, void **pixels,
                                  size_t *len);

// Presents the acquired buffer: fills d->buffer and d->seq (the caller
// sets the geometry and format), checks d as the host will, and forgets
// the acquisition. Send *d to the host afterwards. Returns 0, -ENOENT
// (nothing acquired) or the host's error for this d (nothing presented).
int capsa_frames_renderer_present(capsa_frames_renderer_t *r,
                                  capsa_frame_desc_t *d);

// Drops an acquisition without presenting. 0 or -ENOENT.
int capsa_frames_renderer_cancel(capsa_frames_renderer_t *r);

// Unmaps and closes both regions. Idempotent.
void capsa_frames_renderer_close(capsa_frames_renderer_t *r);

// The check capsa_frames_host_present() makes of d's geometry against a
// buffer of buffer_size bytes: 0, -EINVAL or -ERANGE.
int capsa_frames_check(const capsa_frame_desc_t *d, size_t buffer_size);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_FRAMES_H_
