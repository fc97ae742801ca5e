// Layout of a cmark tree into lines of glyphs: block structure (indents,
// markers, quote bars, code boxes, rules) and greedy word wrapping. One pass
// does both measuring and drawing; with no frame it only measures. Every
// loop is bounded by the input size, max_glyphs and max_height, and the tree
// is walked with cmark's iterator (no recursion, whatever the nesting).
#include <cmark.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demos/page/page_internal.h"

// Colours (0xRRGGBB).
enum {
  kBackground = 0xFFFFFF,
  kText = 0x1F2328,
  kHeading = 0x0D1117,
  kLink = 0x0969DA,
  kCodeText = 0x24292F,
  kCodeBox = 0xEFF1F3,
  kQuoteText = 0x57606A,
  kQuoteBar = 0xD0D7DE,
  kRule = 0xD0D7DE,
  kRawHtml = 0x8250DF,
  kImage = 0x6E7781,
};

enum { kStackMax = 64, kGroupMax = 64 };

struct container {
  cmark_node_type type;
  int64_t left_before;  // content left edge to restore on exit
  int64_t y_start;      // block quote: top of its bar
  bool indented;        // this level moved the left edge
  bool ordered, tight, paren;
  int64_t number;  // ordered list: next item's number
};

// One piece of a word: text in one style (a word like "**bold**," spans
// two atoms that must stay on one line).
struct atom {
  const char *s;
  size_t len;
  struct capsa__style st;
};

struct layout {
  capsa_page *p;
  const struct capsa_frame *frame;  // NULL: measure only
  struct capsa_page_result *res;
  uint32_t font_px;
  int64_t left, right;  // content box, pixels
  int64_t y;            // top of the next line/block
  bool stop;            // a limit was hit: lay out nothing more
  bool dry;             // measuring a code block before drawing its box
  bool dry_overflow;

  uint32_t depth;  // container nesting (may exceed kStackMax)
  struct container stack[kStackMax];
  uint32_t quote_depth;

  bool marker_pending;
  char marker[24];  // UTF-8
  int64_t marker_right;

  // The current line.
  bool in_line;
  int64_t line_top;
  int ascender, line_h;
  int64_t x26, left26, right26;  // pen and limits, 26.6 pixels
  bool line_has_content;
  uint32_t col;  // code blocks: column for tab stops

  // The current word group.
  struct atom group[kGroupMax];
  unsigned ngroup;
  int64_t group_w26;
  bool group_space_before;
  bool pending_space;
  struct capsa__style last_st;  // style of the last group drawn on the line
  bool last_valid;
};

static bool halted(const struct layout *l) {
  return l->stop || (l->dry && l->dry_overflow);
}

static struct capsa__style base_style(const struct layout *l) {
  struct capsa__style st = {CAPSA__REGULAR, false, false, l->font_px,
                            l->quote_depth > 0 ? kQuoteText : kText};
  return st;
}

static bool line_visible(const struct layout *l) {
  return l->frame != NULL && !l->dry && l->line_top < l->frame->height &&
         l->line_top + l->line_h > 0;
}

// Draws UTF-8 `s` at (x26, baseline), not counted as content glyphs.
static void draw_string(struct layout *l, const struct capsa__style *st,
                        const char *s, int64_t x26, int64_t baseline) {
  size_t len = strlen(s);
  while (len > 0) {
    uint32_t cp;
    size_t n = capsa__utf8_next(s, len, &cp);
    if (capsa__glyph_draw(l->p, st, cp, (int32_t)x26, (int32_t)baseline,
                          l->frame))
      l->res->glyphs_drawn++;
    x26 += capsa__glyph_advance(l->p, st, cp);
    s += n;
    len -= n;
  }
}

static int64_t string_w26(struct layout *l, const struct capsa__style *st,
                          const char *s) {
  int64_t w = 0;
  size_t len = strlen(s);
  while (len > 0) {
    uint32_t cp;
    size_t n = capsa__utf8_next(s, len, &cp);
    w += capsa__glyph_advance(l->p, st, cp);
    s += n;
    len -= n;
  }
  return w;
}

// A list item's bullet or number, right-aligned before the content edge, on
// the baseline of the item's first line.
static void draw_marker(struct layout *l, int64_t top) {
  l->marker_pending = false;
  if (l->dry) return;
  // Markers count against the glyph budget like text, in both passes so
  // measuring and drawing agree: "1. 1. 1. ..." is a million nested items.
  for (size_t i = 0, len = strlen(l->marker); i < len;) {
    uint32_t cp;
    i += capsa__utf8_next(l->marker + i, len - i, &cp);
    l->res->glyphs++;
  }
  if (l->res->glyphs > l->p->opt.max_glyphs) {
    l->stop = true;
    l->res->limited = true;
    return;
  }
  if (l->frame == NULL) return;
  struct capsa__style st = base_style(l);
  int asc, h;
  capsa__font_metrics(l->p, &st, &asc, &h);
  if (top >= l->frame->height || top + h <= 0) return;
  int64_t x26 = l->marker_right * 64 - string_w26(l, &st, l->marker);
  draw_string(l, &st, l->marker, x26, top + asc);
}

static void line_begin(struct layout *l, const struct capsa__style *st) {
  capsa__font_metrics(l->p, st, &l->ascender, &l->line_h);
  l->line_h = l->line_h * 9 / 8;  // a little leading reads better
  l->line_top = l->y;
  l->x26 = l->left26;
  l->line_has_content = false;
  l->last_valid = false;
  l->col = 0;
  l->in_line = true;
  if (l->marker_pending && !l->dry) draw_marker(l, l->line_top);
}

static void check_height(struct layout *l) {
  if (l->y <= (int64_t)l->p->opt.max_height) return;
  if (l->dry) {
    l->dry_overflow = true;
  } else {
    l->stop = true;
    l->res->limited = true;
  }
}

static void line_end(struct layout *l) {
  if (!l->in_line) return;
  l->y += l->line_h;
  l->in_line = false;
  check_height(l);
}

static void newline(struct layout *l, const struct capsa__style *st) {
  line_end(l);
  if (!halted(l)) line_begin(l, st);
}

// Places one glyph at the pen, wrapping first when it would overflow a line
// that already has something on it (so every line makes progress).
static void emit(struct layout *l, const struct capsa__style *st, uint32_t cp,
                 bool wrap) {
  if (halted(l)) return;
  int32_t adv = capsa__glyph_advance(l->p, st, cp);
  if (wrap && l->x26 + adv > l->right26 && l->x26 > l->left26) {
    newline(l, st);
    if (halted(l)) return;
  }
  if (!l->dry) {
    if (++l->res->glyphs > l->p->opt.max_glyphs) {
      l->stop = true;
      l->res->limited = true;
      return;
    }
    if (line_visible(l)) {
      int64_t baseline = l->line_top + l->ascender;
      if (capsa__glyph_draw(l->p, st, cp, (int32_t)l->x26, (int32_t)baseline,
                            l->frame))
        l->res->glyphs_drawn++;
      if (st->underline)
        capsa__fill_rect(l->frame, l->x26 / 64, baseline + 2, (adv + 63) / 64,
                         1, st->rgb);
    }
  }
  l->x26 += adv;
  l->line_has_content = true;
  l->col++;
}

static int64_t text_w26(struct layout *l, const struct capsa__style *st,
                        const char *s, size_t len, int64_t cap) {
  int64_t w = 0;
  while (len > 0 && w <= cap) {
    uint32_t cp;
    size_t n = capsa__utf8_next(s, len, &cp);
    w += capsa__glyph_advance(l->p, st, cp);
    s += n;
    len -= n;
  }
  return w;
}

static void draw_atom(struct layout *l, const struct atom *a, bool wrap) {
  const char *s = a->s;
  size_t len = a->len;
  // Inline code sits on a light box, as on a web page.
  if (a->st.font == CAPSA__MONO && !wrap && line_visible(l)) {
    int64_t w = text_w26(l, &a->st, s, len, INT64_MAX / 2);
    capsa__fill_rect(l->frame, l->x26 / 64 - 1, l->line_top + 1,
                     (w + 63) / 64 + 2, l->line_h - 2, kCodeBox);
  }
  while (len > 0 && !halted(l)) {
    uint32_t cp;
    size_t n = capsa__utf8_next(s, len, &cp);
    if (cp >= 0x20 && cp != 0x7F) emit(l, &a->st, cp, wrap);
    s += n;
    len -= n;
  }
}

static bool same_style(const struct capsa__style *a,
                       const struct capsa__style *b) {
  return a->font == b->font && a->underline == b->underline && a->px == b->px &&
         a->rgb == b->rgb;
}

// A space between two words of one link stays underlined, and between two
// words of one inline code span stays on the code box.
static void fill_space(struct layout *l, int64_t sp) {
  const struct capsa__style *next = &l->group[0].st;
  if (!l->last_valid || !same_style(&l->last_st, next) || !line_visible(l))
    return;
  if (next->underline)
    capsa__fill_rect(l->frame, l->x26 / 64, l->line_top + l->ascender + 2,
                     (sp + 63) / 64 + 1, 1, next->rgb);
  else if (next->font == CAPSA__MONO)
    capsa__fill_rect(l->frame, l->x26 / 64, l->line_top + 1, (sp + 63) / 64 + 1,
                     l->line_h - 2, kCodeBox);
}

static void flush_group(struct layout *l) {
  if (l->ngroup == 0) return;
  int64_t avail = l->right26 - l->x26;
  int64_t line = l->right26 - l->left26;
  int64_t sp = 0;
  if (l->group_space_before && l->line_has_content)
    sp = capsa__glyph_advance(l->p, &l->group[0].st, ' ');
  bool wrap = false;
  if (l->line_has_content && sp + l->group_w26 <= avail) {
    fill_space(l, sp);
    l->x26 += sp;
  } else if (l->group_w26 <= line) {
    if (l->line_has_content) newline(l, &l->group[0].st);
  } else {
    // Wider than a whole line (a hostile 10 000-character word): break it
    // per character, starting on the current line when there is room.
    if (l->line_has_content) l->x26 += sp;
    wrap = true;
  }
  for (unsigned i = 0; i < l->ngroup && !halted(l); i++)
    draw_atom(l, &l->group[i], wrap);
  l->last_st = l->group[l->ngroup - 1].st;
  l->last_valid = true;
  l->ngroup = 0;
  l->group_w26 = 0;
}

static void add_atom(struct layout *l, const struct capsa__style *st,
                     const char *s, size_t len) {
  if (l->pending_space || l->ngroup == kGroupMax) flush_group(l);
  if (l->ngroup == 0) l->group_space_before = l->pending_space;
  l->pending_space = false;
  struct atom *a = &l->group[l->ngroup++];
  a->s = s;
  a->len = len;
  a->st = *st;
  // Measuring stops just past a line: a longer group wraps per character.
  int64_t cap = l->right26 - l->left26;
  if (l->group_w26 <= cap)
    l->group_w26 += text_w26(l, st, s, len, cap - l->group_w26);
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

static void add_text(struct layout *l, const struct capsa__style *st,
                     const char *s) {
  if (s == NULL) return;
  size_t len = strlen(s), i = 0;
  while (i < len && !halted(l)) {
    if (is_space(s[i])) {
      l->pending_space = true;
      i++;
      continue;
    }
    size_t j = i;
    while (j < len && !is_space(s[j])) j++;
    add_atom(l, st, s + i, j - i);
    i = j;
  }
}

// Lays out a paragraph's or heading's inline content.
static void layout_inlines(struct layout *l, cmark_node *block,
                           struct capsa__style base) {
  l->ngroup = 0;
  l->group_w26 = 0;
  l->pending_space = false;
  line_begin(l, &base);
  int strong = 0, emph = 0, link = 0, image = 0;
  cmark_iter *it = cmark_iter_new(block);
  if (it == NULL) {
    l->stop = true;
    return;
  }
  cmark_event_type ev;
  while (!halted(l) && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
    cmark_node *n = cmark_iter_get_node(it);
    if (n == block) continue;
    int d = ev == CMARK_EVENT_ENTER ? 1 : -1;
    struct capsa__style st = base;
    switch (cmark_node_get_type(n)) {
      case CMARK_NODE_STRONG:
        strong += d;
        continue;
      case CMARK_NODE_EMPH:
        emph += d;
        continue;
      case CMARK_NODE_LINK:
        link += d;
        continue;
      case CMARK_NODE_IMAGE: {
        // No image is fetched (no authority to): show its alt text.
        struct capsa__style is = base;
        is.rgb = kImage;
        if (d > 0) add_text(l, &is, "[image: ");
        if (d < 0) add_atom(l, &is, "]", 1);
        image += d;
        continue;
      }
      case CMARK_NODE_SOFTBREAK:
        l->pending_space = true;
        continue;
      case CMARK_NODE_LINEBREAK:
        flush_group(l);
        newline(l, &base);
        l->pending_space = false;
        continue;
      case CMARK_NODE_CODE:
        st.font = CAPSA__MONO;
        st.rgb = kCodeText;
        st.px = st.px * 15 / 16;
        add_text(l, &st, cmark_node_get_literal(n));
        continue;
      case CMARK_NODE_HTML_INLINE:  // shown, never interpreted
        st.font = CAPSA__MONO;
        st.rgb = kRawHtml;
        add_text(l, &st, cmark_node_get_literal(n));
        continue;
      case CMARK_NODE_TEXT:
        if (strong > 0) st.font = CAPSA__BOLD;
        st.oblique = emph > 0;
        if (link > 0) {
          st.underline = true;
          st.rgb = kLink;
        }
        if (image > 0) st.rgb = kImage;
        add_text(l, &st, cmark_node_get_literal(n));
        continue;
      default:
        continue;  // custom nodes (never produced by the parser)
    }
  }
  cmark_iter_free(it);
  flush_group(l);
  line_end(l);
}

// Code and raw HTML blocks: monospace, per-character wrapping, tab stops of
// 4. Runs dry first to size the shaded box, then draws.
static void layout_code_lines(struct layout *l, const char *s,
                              const struct capsa__style *st) {
  size_t len = s != NULL ? strlen(s) : 0;
  // The literal ends with the block's last newline: not an empty line.
  if (len > 0 && s[len - 1] == '\n') len--;
  line_begin(l, st);
  while (len > 0 && !halted(l)) {
    uint32_t cp;
    size_t n = capsa__utf8_next(s, len, &cp);
    s += n;
    len -= n;
    if (cp == '\n') {
      newline(l, st);
    } else if (cp == '\t') {
      do emit(l, st, ' ', true);
      while (l->col % 4 != 0 && !halted(l));
    } else if (cp >= 0x20 && cp != 0x7F) {
      emit(l, st, cp, true);
    }
  }
  line_end(l);
}

static void layout_code(struct layout *l, const char *literal, uint32_t rgb) {
  struct capsa__style st = {CAPSA__MONO, false, false, l->font_px * 15 / 16,
                            rgb};
  int64_t pad = l->font_px / 2;
  int64_t top = l->y;
  int64_t save_l26 = l->left26, save_r26 = l->right26;
  l->left26 = (l->left + pad) * 64;
  l->right26 = (l->right - pad) * 64;
  if (l->right26 <= l->left26) l->right26 = l->left26 + 64;
  if (l->frame != NULL) {
    l->dry = true;
    l->dry_overflow = false;
    l->y = top + pad;
    layout_code_lines(l, literal, &st);
    int64_t bottom = l->y + pad;
    l->dry = false;
    capsa__fill_rect(l->frame, l->left, top, l->right - l->left, bottom - top,
                     kCodeBox);
  }
  l->y = top + pad;
  layout_code_lines(l, literal, &st);
  l->y += pad;
  l->left26 = save_l26;
  l->right26 = save_r26;
}

static void rule(struct layout *l, int64_t thickness) {
  if (l->frame != NULL)
    capsa__fill_rect(l->frame, l->left, l->y, l->right - l->left, thickness,
                     kRule);
  l->y += thickness;
}

static const uint32_t kHeadingScale[6] = {200, 160, 130, 115, 100, 90};

static bool in_tight_list(const struct layout *l) {
  if (l->depth == 0 || l->depth > kStackMax) return false;
  for (uint32_t i = l->depth; i > 0; i--) {
    const struct container *c = &l->stack[i - 1];
    if (c->type == CMARK_NODE_LIST) return c->tight;
    if (c->type == CMARK_NODE_BLOCK_QUOTE) return false;
  }
  return false;
}

// Whether an enclosing container below `level` is a tight list.
static bool in_tight_list_above(const struct layout *l, uint32_t level) {
  for (uint32_t i = level; i > 0; i--) {
    const struct container *c = &l->stack[i - 1];
    if (c->type == CMARK_NODE_LIST) return c->tight;
    if (c->type == CMARK_NODE_BLOCK_QUOTE) return false;
  }
  return false;
}

static void leaf(struct layout *l, cmark_node *n) {
  int64_t gap = l->font_px * 3 / 4;
  if (in_tight_list(l)) gap = l->font_px / 4;
  l->left26 = l->left * 64;
  l->right26 = l->right * 64;
  l->res->blocks++;
  switch (cmark_node_get_type(n)) {
    case CMARK_NODE_PARAGRAPH:
      layout_inlines(l, n, base_style(l));
      break;
    case CMARK_NODE_HEADING: {
      int level = cmark_node_get_heading_level(n);
      if (level < 1 || level > 6) level = 1;
      struct capsa__style st = base_style(l);
      st.font = CAPSA__BOLD;
      st.px = l->font_px * kHeadingScale[level - 1] / 100;
      if (l->quote_depth == 0) st.rgb = kHeading;
      if (l->y > (int64_t)l->p->opt.margin_px) l->y += l->font_px / 2;
      layout_inlines(l, n, st);
      if (level <= 2) {
        l->y += 4;
        rule(l, 1);
        l->y += 2;
      }
      break;
    }
    case CMARK_NODE_CODE_BLOCK:
      layout_code(l, cmark_node_get_literal(n), kCodeText);
      break;
    case CMARK_NODE_HTML_BLOCK:
      // Raw HTML is shown, never interpreted.
      layout_code(l, cmark_node_get_literal(n), kRawHtml);
      break;
    case CMARK_NODE_THEMATIC_BREAK:
      l->y += gap / 2;
      rule(l, 2);
      break;
    default:
      return;
  }
  if (l->marker_pending) draw_marker(l, l->y);  // an item of an empty block
  l->y += gap;
  check_height(l);
}

static void set_marker(struct layout *l, struct container *list) {
  if (l->marker_pending) draw_marker(l, l->y);  // "- - x": both on one line
  // Past max_depth lists no longer indent: their markers would print over
  // each other, so they get none.
  if (l->depth > l->p->opt.max_depth) return;
  static const char *const kBullets[3] = {"\u2022", "\u25E6", "\u25AA"};
  if (list != NULL && list->ordered) {
    snprintf(l->marker, sizeof l->marker, "%lld%c", (long long)list->number,
             list->paren ? ')' : '.');
    if (list->number < 1000000000) list->number++;
  } else {
    unsigned lists = 0;
    for (uint32_t i = 0; i < l->depth && i < kStackMax; i++)
      if (l->stack[i].type == CMARK_NODE_LIST) lists++;
    snprintf(l->marker, sizeof l->marker, "%s",
             kBullets[(lists > 0 ? lists - 1 : 0) % 3]);
  }
  l->marker_right = l->left - l->font_px / 2;
  l->marker_pending = true;
}

static void enter_container(struct layout *l, cmark_node *n,
                            cmark_node_type t) {
  l->res->blocks++;
  uint32_t level = l->depth++;
  if (t == CMARK_NODE_BLOCK_QUOTE) l->quote_depth++;
  if (level >= kStackMax) return;  // deeper: laid out without indentation
  struct container *c = &l->stack[level];
  memset(c, 0, sizeof *c);
  c->type = t;
  c->left_before = l->left;
  c->y_start = l->y;
  bool indent = level < l->p->opt.max_depth;
  int64_t by = 0;
  if (t == CMARK_NODE_BLOCK_QUOTE) by = l->font_px * 3 / 2;
  if (t == CMARK_NODE_LIST) {
    by = l->font_px * 2;
    c->ordered = cmark_node_get_list_type(n) == CMARK_ORDERED_LIST;
    c->tight = cmark_node_get_list_tight(n) != 0;
    c->paren = cmark_node_get_list_delim(n) == CMARK_PAREN_DELIM;
    c->number = cmark_node_get_list_start(n);
  }
  // Keep at least a few characters of room, however deep the nesting.
  if (indent && l->right - (l->left + by) >= (int64_t)l->font_px * 4) {
    l->left += by;
    c->indented = true;
  }
}

static void exit_container(struct layout *l, cmark_node_type t) {
  if (l->depth == 0) return;
  uint32_t level = --l->depth;
  if (t == CMARK_NODE_BLOCK_QUOTE && l->quote_depth > 0) l->quote_depth--;
  if (level >= kStackMax) return;
  struct container *c = &l->stack[level];
  // A tight list's items are close together; the list as a whole is
  // separated from what follows like a paragraph.
  if (c->type == CMARK_NODE_LIST && c->tight && !in_tight_list_above(l, level))
    l->y += l->font_px / 2;
  if (c->type == CMARK_NODE_BLOCK_QUOTE && l->frame != NULL) {
    int64_t bottom = l->y - l->font_px / 2;
    capsa__fill_rect(l->frame, c->left_before + 2, c->y_start, 4,
                     bottom - c->y_start, kQuoteBar);
  }
  l->left = c->left_before;
}

int capsa__layout(capsa_page *p, cmark_node *doc, uint32_t width,
                  const struct capsa_frame *frame,
                  struct capsa_page_result *res) {
  memset(res, 0, sizeof *res);
  struct layout *l = calloc(1, sizeof *l);
  if (l == NULL) return -ENOMEM;
  l->p = p;
  l->frame = frame;
  l->res = res;
  l->font_px = p->opt.font_px;
  // A narrow page shrinks the margin rather than failing.
  int64_t margin = p->opt.margin_px;
  if (margin > (int64_t)width / 8) margin = width / 8;
  l->left = margin;
  l->right = (int64_t)width - margin;
  l->y = margin;
  if (frame != NULL) capsa__frame_clear(frame, kBackground);

  cmark_iter *it = cmark_iter_new(doc);
  if (it == NULL) {
    free(l);
    return -ENOMEM;
  }
  cmark_event_type ev;
  while (!l->stop && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
    cmark_node *n = cmark_iter_get_node(it);
    cmark_node_type t = cmark_node_get_type(n);
    switch (t) {
      case CMARK_NODE_DOCUMENT:
        break;
      case CMARK_NODE_BLOCK_QUOTE:
      case CMARK_NODE_LIST:
        if (ev == CMARK_EVENT_ENTER)
          enter_container(l, n, t);
        else
          exit_container(l, t);
        break;
      case CMARK_NODE_ITEM:
        if (ev == CMARK_EVENT_ENTER) {
          struct container *list = NULL;
          if (l->depth > 0 && l->depth <= kStackMax &&
              l->stack[l->depth - 1].type == CMARK_NODE_LIST)
            list = &l->stack[l->depth - 1];
          set_marker(l, list);
        } else if (l->marker_pending) {
          draw_marker(l, l->y);  // an empty item: "-" alone
          l->y += l->font_px * 3 / 2;
        }
        break;
      default:
        // A leaf block: lay it out whole, then skip its inline children.
        if (ev == CMARK_EVENT_ENTER) {
          leaf(l, n);
          cmark_iter_reset(it, n, CMARK_EVENT_EXIT);
        }
        break;
    }
  }
  cmark_iter_free(it);
  int64_t needed = l->y + margin;
  if (needed > (int64_t)p->opt.max_height) {
    needed = p->opt.max_height;
    res->limited = true;
  }
  if (needed < 1) needed = 1;
  res->needed_height = (uint32_t)needed;
  if (frame != NULL) res->truncated = needed > (int64_t)frame->height;
  free(l);
  return 0;
}
