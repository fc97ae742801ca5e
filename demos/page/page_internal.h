// Internals shared by the page renderer's files (not installed, not public).
#ifndef CAPSA_DEMOS_PAGE_PAGE_INTERNAL_H_
#define CAPSA_DEMOS_PAGE_PAGE_INTERNAL_H_

#include <ft2build.h>
#include FT_FREETYPE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "demos/page/page.h"

enum capsa__font {
  CAPSA__REGULAR = 0,
  CAPSA__BOLD,
  CAPSA__MONO,
  CAPSA__NFONTS
};

// How a run of text looks.
struct capsa__style {
  uint8_t font;    // enum capsa__font
  bool oblique;    // synthetic italic (shear), for emphasis
  bool underline;  // links, underlined headings
  uint32_t px;     // pixel size
  uint32_t rgb;    // 0xRRGGBB
};

// Advances of ASCII glyphs per (font, size): layout measures far more text
// than it draws (everything below the frame), and FT_Load_Char per glyph
// would dominate.
enum { CAPSA__ADV_SLOTS = 8 };
struct capsa__adv_cache {
  uint32_t px;       // 0: slot unused
  int32_t adv[128];  // 26.6 advance, -1 when not yet known
};

struct capsa_page {
  FT_Library lib;
  FT_Face face[CAPSA__NFONTS];       // bold/mono may alias regular
  uint32_t face_px[CAPSA__NFONTS];   // size currently set, 0 = none
  bool face_oblique[CAPSA__NFONTS];  // transform currently set
  struct capsa_page_options opt;
  struct capsa__adv_cache adv[CAPSA__NFONTS][CAPSA__ADV_SLOTS];
};

// utf8.c: decodes one code point at s[0..len) (len > 0) into *cp and returns
// the bytes consumed (>= 1). Invalid or truncated sequences, overlongs and
// surrogates decode as U+FFFD consuming one byte.
size_t capsa__utf8_next(const char *s, size_t len, uint32_t *cp);

// glyphs.c: font metrics and glyph drawing through FreeType.
// Advance of `cp` in 26.6 pixels (>= 0).
int32_t capsa__glyph_advance(capsa_page *p, const struct capsa__style *st,
                             uint32_t cp);
// Ascender and line height (pixels) of a style's font at its size.
void capsa__font_metrics(capsa_page *p, const struct capsa__style *st,
                         int *ascender, int *line_height);
// Draws `cp` with its origin at (x26 / 64, baseline) into `frame` (checked
// by the caller), clipped to the frame. Returns 1 when a pixel could be
// touched, 0 otherwise.
int capsa__glyph_draw(capsa_page *p, const struct capsa__style *st, uint32_t cp,
                      int32_t x26, int32_t baseline,
                      const struct capsa_frame *frame);

// raster.c: bounds-checked pixel operations; every coordinate is clipped to
// the frame, so callers may pass anything.
void capsa__frame_clear(const struct capsa_frame *f, uint32_t rgb);
void capsa__fill_rect(const struct capsa_frame *f, int64_t x, int64_t y,
                      int64_t w, int64_t h, uint32_t rgb);
// Blends an 8-bit coverage mask (`rows` x `cols`, `pitch` >= cols bytes per
// row, top-down) in colour `rgb` at (x, y).
void capsa__blend_mask(const struct capsa_frame *f, int64_t x, int64_t y,
                       const uint8_t *mask, int rows, int cols, int pitch,
                       uint32_t rgb);

// layout.c: lays out the parsed document at `width`; draws into `frame`
// when it is not NULL. Fills *res.
struct cmark_node;
int capsa__layout(capsa_page *p, struct cmark_node *doc, uint32_t width,
                  const struct capsa_frame *frame,
                  struct capsa_page_result *res);

#endif  // CAPSA_DEMOS_PAGE_PAGE_INTERNAL_H_
