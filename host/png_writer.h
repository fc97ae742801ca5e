// Writes a frame produced by a (hostile) renderer as a PNG file (libpng).
//
//   struct capsa_png_image img = {.pixels = map, .region_size = shm_size,
//                                 .width = w, .height = h, .stride = w * 4,
//                                 .format = CAPSA_PNG_RGBA8};
//   int out = open("page.png", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
//   int err = capsa_png_write_fd(&img, out);   // out stays the caller's
//   if (err < 0) fprintf(stderr, "png: %s\n", strerror(-err));
//
// The pixels come from a renderer that may be compromised: any content is
// fine, but width, height and stride are checked against the shared region
// they claim to describe before one byte is read, so a lying renderer gets
// -EINVAL, never an out-of-bounds read by the host.
#ifndef CAPSA_HOST_PNG_WRITER_H_
#define CAPSA_HOST_PNG_WRITER_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

// Largest width or height accepted (PNG itself allows 2^31-1; a page is far
// smaller, and this keeps width * height * 4 far from overflow).
#define CAPSA_PNG_MAX_DIM 32768u

enum capsa_png_format {
  CAPSA_PNG_RGBA8 = 0,  // 4 bytes per pixel, R G B A (written as RGBA)
  CAPSA_PNG_GRAY8 = 1,  // 1 byte per pixel
  CAPSA_PNG_RGB8 = 2,   // RGBA in memory, alpha dropped (opaque pages)
};

// A frame in memory. `pixels` is borrowed for the duration of the call and
// only read; `region_size` is the number of readable bytes at `pixels` (the
// shared-memory region's size, not the renderer's claim).
struct capsa_png_image {
  const uint8_t *pixels;
  size_t region_size;
  uint32_t width;
  uint32_t height;
  size_t stride;  // bytes per row, >= width * bytes per pixel
  enum capsa_png_format format;
};

// Checks an image description: 0, or -EINVAL (NULL pixels, zero or too large
// dimension, stride too small, rows beyond region_size, unknown format).
int capsa_png_check(const struct capsa_png_image *img);

// Encodes `img` (borrowed) as PNG and writes it to `fd` (owned by the
// caller, left open; written with write(2), EINTR/partial writes handled).
// Returns 0, -EINVAL (see capsa_png_check), the write error (-ENOSPC,
// -EPIPE, -EBADF, ...), -ENOMEM, or -EIO for an internal libpng error.
int capsa_png_write_fd(const struct capsa_png_image *img, int fd);

// Same, into a stdio stream (owned by the caller, flushed, not closed).
int capsa_png_write_file(const struct capsa_png_image *img, FILE *f);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_PNG_WRITER_H_
