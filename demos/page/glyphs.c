// FreeType glue: sizes, synthetic oblique, advances (cached for ASCII) and
// glyph rasterisation. Faces come from memory (FT_New_Memory_Face in page.c):
// nothing here touches a file.
#include <errno.h>

#include "demos/page/page_internal.h"

// Load flags used for both measuring and drawing, so that the advances
// layout computes are the ones drawing uses.
#define CAPSA__LOAD_FLAGS (FT_LOAD_TARGET_LIGHT)

// Emphasis has no italic face among the three fonts the host hands in:
// shear the regular face by ~12 degrees (0.21 in 16.16 fixed point).
static const FT_Matrix kOblique = {0x10000, 0x0366A, 0, 0x10000};

// Prepares the face for `st`: size and transform, only when they change.
static FT_Face face_for(capsa_page *p, const struct capsa__style *st) {
  unsigned f = st->font < CAPSA__NFONTS ? st->font : CAPSA__REGULAR;
  FT_Face face = p->face[f];
  // Faces may alias (no bold font given): the state is per FT_Face, so look
  // for the first slot holding this face.
  unsigned slot = f;
  for (unsigned i = 0; i < f; i++)
    if (p->face[i] == face) {
      slot = i;
      break;
    }
  if (p->face_px[slot] != st->px) {
    if (FT_Set_Pixel_Sizes(face, 0, st->px) == 0) p->face_px[slot] = st->px;
  }
  if (p->face_oblique[slot] != st->oblique) {
    FT_Matrix m = kOblique;
    FT_Set_Transform(face, st->oblique ? &m : NULL, NULL);
    p->face_oblique[slot] = st->oblique;
  }
  return face;
}

static int32_t *cache_entry(capsa_page *p, const struct capsa__style *st,
                            uint32_t cp) {
  if (cp >= 128) return NULL;
  unsigned f = st->font < CAPSA__NFONTS ? st->font : CAPSA__REGULAR;
  struct capsa__adv_cache *c = p->adv[f];
  for (unsigned i = 0; i < CAPSA__ADV_SLOTS; i++) {
    if (c[i].px == st->px) return &c[i].adv[cp];
    if (c[i].px == 0) {
      c[i].px = st->px;
      for (unsigned k = 0; k < 128; k++) c[i].adv[k] = -1;
      return &c[i].adv[cp];
    }
  }
  return NULL;  // more sizes than slots: uncached (never with our styles)
}

int32_t capsa__glyph_advance(capsa_page *p, const struct capsa__style *st,
                             uint32_t cp) {
  int32_t *e = cache_entry(p, st, cp);
  if (e != NULL && *e >= 0) return *e;
  FT_Face face = face_for(p, st);
  int32_t adv = 0;
  if (FT_Load_Char(face, cp, CAPSA__LOAD_FLAGS) == 0 &&
      face->glyph->advance.x > 0 && face->glyph->advance.x < (1 << 20))
    adv = (int32_t)face->glyph->advance.x;
  if (e != NULL) *e = adv;
  return adv;
}

void capsa__font_metrics(capsa_page *p, const struct capsa__style *st,
                         int *ascender, int *line_height) {
  FT_Face face = face_for(p, st);
  const FT_Size_Metrics *m = &face->size->metrics;
  int asc = (int)((m->ascender + 63) >> 6);
  int h = (int)((m->height + 63) >> 6);
  // A font with nonsense metrics must not collapse or explode the layout.
  if (asc <= 0 || asc > 4 * (int)st->px) asc = (int)st->px;
  if (h < (int)st->px || h > 4 * (int)st->px) h = (int)st->px * 5 / 4;
  *ascender = asc;
  *line_height = h;
}

int capsa__glyph_draw(capsa_page *p, const struct capsa__style *st, uint32_t cp,
                      int32_t x26, int32_t baseline,
                      const struct capsa_frame *frame) {
  FT_Face face = face_for(p, st);
  if (FT_Load_Char(face, cp, CAPSA__LOAD_FLAGS | FT_LOAD_RENDER) != 0) return 0;
  FT_GlyphSlot g = face->glyph;
  if (g->bitmap.pixel_mode != FT_PIXEL_MODE_GRAY) return 0;
  int64_t x = ((int64_t)x26 + 32) / 64 + g->bitmap_left;
  int64_t y = (int64_t)baseline - g->bitmap_top;
  capsa__blend_mask(frame, x, y, g->bitmap.buffer, (int)g->bitmap.rows,
                    (int)g->bitmap.width, g->bitmap.pitch, st->rgb);
  return 1;
}
