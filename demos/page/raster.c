// Pixel stores into the caller's frame. The frame's geometry was checked by
// capsa_frame_check(); here every coordinate is clipped to [0, width) x
// [0, height), so no caller mistake and no glyph metric can write outside.
#include "demos/page/page_internal.h"

static uint8_t gray_of(uint32_t rgb) {
  uint32_t r = (rgb >> 16) & 0xFF, g = (rgb >> 8) & 0xFF, b = rgb & 0xFF;
  return (uint8_t)((r * 77 + g * 150 + b * 29) >> 8);  // Rec. 601 luma
}

// Clips [*a, *a + *len) to [0, limit); false when nothing is left.
static bool clip(int64_t *a, int64_t *len, int64_t limit) {
  if (*a < 0) {
    *len += *a;
    *a = 0;
  }
  if (*a >= limit) return false;
  if (*len > limit - *a) *len = limit - *a;
  return *len > 0;
}

void capsa__fill_rect(const struct capsa_frame *f, int64_t x, int64_t y,
                      int64_t w, int64_t h, uint32_t rgb) {
  if (!clip(&x, &w, f->width) || !clip(&y, &h, f->height)) return;
  for (int64_t j = y; j < y + h; j++) {
    uint8_t *row = f->pixels + (size_t)j * f->stride;
    if (f->format == CAPSA_FRAME_GRAY8) {
      for (int64_t i = x; i < x + w; i++) row[i] = gray_of(rgb);
    } else {
      for (int64_t i = x; i < x + w; i++) {
        uint8_t *px = row + (size_t)i * 4;
        px[0] = (uint8_t)(rgb >> 16);
        px[1] = (uint8_t)(rgb >> 8);
        px[2] = (uint8_t)rgb;
        px[3] = 0xFF;
      }
    }
  }
}

void capsa__frame_clear(const struct capsa_frame *f, uint32_t rgb) {
  capsa__fill_rect(f, 0, 0, f->width, f->height, rgb);
}

static uint8_t mix(uint8_t dst, uint8_t src, unsigned a) {
  return (uint8_t)((dst * (255 - a) + src * a + 127) / 255);
}

void capsa__blend_mask(const struct capsa_frame *f, int64_t x, int64_t y,
                       const uint8_t *mask, int rows, int cols, int pitch,
                       uint32_t rgb) {
  // FreeType renders gray glyphs top-down (pitch >= width); anything else
  // is not ours to interpret.
  if (mask == NULL || rows <= 0 || cols <= 0 || pitch < cols) return;
  uint8_t r = (uint8_t)(rgb >> 16), g = (uint8_t)(rgb >> 8), b = (uint8_t)rgb;
  uint8_t gray = gray_of(rgb);
  for (int j = 0; j < rows; j++) {
    int64_t fy = y + j;
    if (fy < 0 || fy >= f->height) continue;
    const uint8_t *m = mask + (int64_t)j * pitch;
    uint8_t *row = f->pixels + (size_t)fy * f->stride;
    for (int i = 0; i < cols; i++) {
      int64_t fx = x + i;
      unsigned a = m[i];
      if (a == 0 || fx < 0 || fx >= f->width) continue;
      if (f->format == CAPSA_FRAME_GRAY8) {
        row[fx] = mix(row[fx], gray, a);
      } else {
        uint8_t *px = row + (size_t)fx * 4;
        px[0] = mix(px[0], r, a);
        px[1] = mix(px[1], g, a);
        px[2] = mix(px[2], b, a);
        px[3] = 0xFF;
      }
    }
  }
}
