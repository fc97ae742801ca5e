// Public entry points of the page renderer: options, FreeType faces from
// memory, frame checks, parsing with cmark.
#include "demos/page/page.h"

#include <cmark.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "demos/page/page_internal.h"

// Defaults (see capsa_page_options).
enum {
  kDefaultFontPx = 16,
  kDefaultMarginPx = 40,
  kDefaultMaxInput = 4 << 20,
  kDefaultMaxDepth = 8,
  kDefaultMaxHeight = 32768,
  kDefaultMaxGlyphs = 400000,
  kMaxDim = 32768,  // widest/tallest frame accepted
};

int capsa_frame_check(const struct capsa_frame *f) {
  if (f == NULL || f->pixels == NULL) return -EINVAL;
  size_t bpp;
  if (f->format == CAPSA_FRAME_RGBA8)
    bpp = 4;
  else if (f->format == CAPSA_FRAME_GRAY8)
    bpp = 1;
  else
    return -EINVAL;
  if (f->width == 0 || f->height == 0 || f->width > kMaxDim ||
      f->height > kMaxDim)
    return -EINVAL;
  size_t row = (size_t)f->width * bpp;
  if (f->stride < row) return -EINVAL;
  size_t before_last, need;
  if (__builtin_mul_overflow((size_t)(f->height - 1), f->stride,
                             &before_last) ||
      __builtin_add_overflow(before_last, row, &need) || need > f->size)
    return -EINVAL;
  return 0;
}

static int open_face(FT_Library lib, const struct capsa_font_blob *b,
                     FT_Face *out) {
  if (b->data == NULL || b->len == 0 || b->len > (size_t)LONG_MAX)
    return -EINVAL;
  FT_Error e = FT_New_Memory_Face(lib, (const FT_Byte *)b->data,
                                  (FT_Long)b->len, 0, out);
  if (e == FT_Err_Out_Of_Memory) return -ENOMEM;
  if (e != 0) return -EBADMSG;
  // Only scalable Unicode fonts: a bitmap-only font has no sizes we chose.
  if (!FT_IS_SCALABLE(*out) ||
      FT_Select_Charmap(*out, FT_ENCODING_UNICODE) != 0) {
    FT_Done_Face(*out);
    *out = NULL;
    return -EBADMSG;
  }
  return 0;
}

int capsa_page_new(const struct capsa_page_fonts *fonts,
                   const struct capsa_page_options *opts, capsa_page **out) {
  if (out == NULL) return -EINVAL;
  *out = NULL;
  if (fonts == NULL || fonts->regular.data == NULL) return -EINVAL;
  struct capsa_page_options o = {0};
  if (opts != NULL) o = *opts;
  if (o.font_px == 0) o.font_px = kDefaultFontPx;
  if (o.margin_px == 0) o.margin_px = kDefaultMarginPx;
  if (o.max_input_bytes == 0) o.max_input_bytes = kDefaultMaxInput;
  if (o.max_depth == 0) o.max_depth = kDefaultMaxDepth;
  if (o.max_height == 0) o.max_height = kDefaultMaxHeight;
  if (o.max_glyphs == 0) o.max_glyphs = kDefaultMaxGlyphs;
  if (o.font_px < 6 || o.font_px > 200 || o.margin_px > 4096 ||
      o.max_depth > 64 || o.max_height > kMaxDim)
    return -EINVAL;

  capsa_page *p = calloc(1, sizeof *p);
  if (p == NULL) return -ENOMEM;
  p->opt = o;
  if (FT_Init_FreeType(&p->lib) != 0) {
    free(p);
    return -ENOMEM;
  }
  const struct capsa_font_blob *blobs[CAPSA__NFONTS] = {
      &fonts->regular, &fonts->bold, &fonts->mono};
  int err = 0;
  for (int i = 0; i < CAPSA__NFONTS && err == 0; i++) {
    if (i > 0 && blobs[i]->data == NULL) {
      p->face[i] = p->face[CAPSA__REGULAR];  // stand-in, not owned twice
      continue;
    }
    err = open_face(p->lib, blobs[i], &p->face[i]);
  }
  if (err < 0) {
    capsa_page_free(p);
    return err;
  }
  *out = p;
  return 0;
}

void capsa_page_free(capsa_page *p) {
  if (p == NULL) return;
  // FT_Done_FreeType releases every face of the library, aliases included.
  if (p->lib != NULL) FT_Done_FreeType(p->lib);
  free(p);
}

// Parses with cmark. Invalid UTF-8 is replaced by cmark itself; raw HTML is
// kept as text nodes we draw literally (nothing is ever interpreted).
static int parse(capsa_page *p, const char *md, size_t len, cmark_node **doc) {
  if (md == NULL && len > 0) return -EINVAL;
  if (len > p->opt.max_input_bytes) return -E2BIG;
  *doc = cmark_parse_document(md != NULL ? md : "", len,
                              CMARK_OPT_VALIDATE_UTF8 | CMARK_OPT_SMART);
  return *doc != NULL ? 0 : -ENOMEM;
}

int capsa_page_measure(capsa_page *p, const char *md, size_t len,
                       uint32_t width, uint32_t *height) {
  if (p == NULL || height == NULL || width < 16 || width > kMaxDim)
    return -EINVAL;
  cmark_node *doc;
  int err = parse(p, md, len, &doc);
  if (err < 0) return err;
  struct capsa_page_result res;
  err = capsa__layout(p, doc, width, NULL, &res);
  cmark_node_free(doc);
  if (err < 0) return err;
  *height = res.needed_height;
  return 0;
}

int capsa_page_render(capsa_page *p, const char *md, size_t len,
                      const struct capsa_frame *frame,
                      struct capsa_page_result *res) {
  struct capsa_page_result local;
  if (res == NULL) res = &local;
  memset(res, 0, sizeof *res);
  if (p == NULL) return -EINVAL;
  int err = capsa_frame_check(frame);
  if (err < 0) return err;
  if (frame->width < 16) return -EINVAL;
  cmark_node *doc;
  err = parse(p, md, len, &doc);
  if (err < 0) return err;
  err = capsa__layout(p, doc, frame->width, frame, res);
  cmark_node_free(doc);
  return err;
}
