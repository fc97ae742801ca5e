// PNG encoding of a renderer's frame. The frame's geometry is the renderer's
// claim and is checked against the real region size before libpng reads a
// row; libpng's errors come back through its longjmp and become -errno.
#include "host/png_writer.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <unistd.h>

// Compression settings (overridable for measurements).
#ifndef CAPSA_PNG_ZLEVEL
#define CAPSA_PNG_ZLEVEL 3
#endif
#ifndef CAPSA_PNG_FILTERS
#define CAPSA_PNG_FILTERS PNG_FILTER_NONE
#endif

static size_t bytes_per_pixel(enum capsa_png_format f) {
  switch (f) {
    case CAPSA_PNG_RGBA8:
    case CAPSA_PNG_RGB8:
      return 4;
    case CAPSA_PNG_GRAY8:
      return 1;
  }
  return 0;
}

int capsa_png_check(const struct capsa_png_image *img) {
  if (img == NULL || img->pixels == NULL) return -EINVAL;
  size_t bpp = bytes_per_pixel(img->format);
  if (bpp == 0) return -EINVAL;
  if (img->width == 0 || img->height == 0 || img->width > CAPSA_PNG_MAX_DIM ||
      img->height > CAPSA_PNG_MAX_DIM)
    return -EINVAL;
  size_t row = (size_t)img->width * bpp;  // no overflow: both are small
  if (img->stride < row) return -EINVAL;
  // The last row needs only `row` bytes, the others a whole stride.
  size_t before_last;
  if (__builtin_mul_overflow((size_t)(img->height - 1), img->stride,
                             &before_last))
    return -EINVAL;
  size_t need;
  if (__builtin_add_overflow(before_last, row, &need)) return -EINVAL;
  if (need > img->region_size) return -EINVAL;
  return 0;
}

// Where encoded bytes go, and the first error met writing them.
struct png_sink {
  int fd;   // >= 0: write(2) here
  FILE *f;  // else: fwrite here
  int err;  // 0 or -errno
};

static void sink_write(png_structp png, png_bytep data, size_t len) {
  struct png_sink *s = png_get_io_ptr(png);
  if (s->f != NULL) {
    if (fwrite(data, 1, len, s->f) != len) {
      s->err = ferror(s->f) && errno != 0 ? -errno : -EIO;
      png_error(png, "write failed");
    }
    return;
  }
  while (len > 0) {
    ssize_t n = write(s->fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s->err = n < 0 ? -errno : -EIO;
      png_error(png, "write failed");
    }
    data += n;
    len -= (size_t)n;
  }
}

static void sink_flush(png_structp png) {
  struct png_sink *s = png_get_io_ptr(png);
  if (s->f != NULL && fflush(s->f) != 0) {
    s->err = -errno;
    png_error(png, "flush failed");
  }
}

// libpng prints errors to stderr by default; the caller gets -errno instead.
static void png_quiet_error(png_structp png, png_const_charp msg) {
  (void)msg;
  png_longjmp(png, 1);
}
static void png_quiet_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static int write_png(const struct capsa_png_image *img, struct png_sink *sink) {
  int err = capsa_png_check(img);
  if (err < 0) return err;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL,
                                            png_quiet_error, png_quiet_warning);
  if (png == NULL) return -ENOMEM;
  png_infop info = png_create_info_struct(png);
  if (info == NULL) {
    png_destroy_write_struct(&png, NULL);
    return -ENOMEM;
  }
  if (setjmp(png_jmpbuf(png))) {
    // Only `sink` (not a local) is read after the jump.
    png_destroy_write_struct(&png, &info);
    return sink->err < 0 ? sink->err : -EIO;
  }
  png_set_write_fn(png, sink, sink_write, sink_flush);
  int color = PNG_COLOR_TYPE_RGBA;
  if (img->format == CAPSA_PNG_GRAY8) color = PNG_COLOR_TYPE_GRAY;
  if (img->format == CAPSA_PNG_RGB8) color = PNG_COLOR_TYPE_RGB;
  png_set_IHDR(png, info, img->width, img->height, 8, color, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // Pages are flat colour plus antialiased text, where row filters do not
  // pay: measured on the 800x1240 sample page, libpng's defaults (zlib 6,
  // adaptive filters) took ~80 ms for 140 KB; zlib 3 unfiltered ~34 ms for
  // 123 KB.
  png_set_compression_level(png, CAPSA_PNG_ZLEVEL);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, CAPSA_PNG_FILTERS);
  png_write_info(png, info);
  // RGB8: the rows in memory are RGBA; libpng strips the fourth byte.
  if (img->format == CAPSA_PNG_RGB8) png_set_filler(png, 0, PNG_FILLER_AFTER);
  for (uint32_t y = 0; y < img->height; y++)
    png_write_row(png, img->pixels + (size_t)y * img->stride);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return sink->err;
}

int capsa_png_write_fd(const struct capsa_png_image *img, int fd) {
  if (fd < 0) return -EBADF;
  struct png_sink sink = {.fd = fd, .f = NULL, .err = 0};
  return write_png(img, &sink);
}

int capsa_png_write_file(const struct capsa_png_image *img, FILE *f) {
  if (f == NULL) return -EINVAL;
  struct png_sink sink = {.fd = -1, .f = f, .err = 0};
  int err = write_png(img, &sink);
  if (err == 0 && fflush(f) != 0) err = -errno;
  return err;
}
