// The page renderer: untrusted Markdown (cmark) drawn with FreeType into a
// frame buffer the caller supplies. Needs no ambient authority: fonts arrive
// as memory buffers, the frame is caller memory (e.g. a shared-memory
// mapping), nothing is opened, so it runs unchanged in capability mode.
//
//   struct capsa_page_fonts fonts = {
//       .regular = {reg_ptr, reg_len},   // e.g. mmap of a read-only memfd
//       .bold = {bold_ptr, bold_len},
//       .mono = {mono_ptr, mono_len}};
//   capsa_page *page;
//   int err = capsa_page_new(&fonts, NULL, &page);   // NULL: default options
//   if (err < 0) return err;
//   uint32_t h;
//   err = capsa_page_measure(page, md, md_len, 800, &h);  // optional pass
//   struct capsa_frame frame = {.pixels = shm, .size = shm_size,
//                               .width = 800, .height = h,
//                               .stride = 800 * 4,
//                               .format = CAPSA_FRAME_RGBA8};
//   struct capsa_page_result res;
//   err = capsa_page_render(page, md, md_len, &frame, &res);
//   if (res.truncated) ...;               // content continued below height
//   capsa_page_free(page);
//
// Rendering: headings (sizes 2.0/1.6/1.3/1.15/1.0/1.0 x base, bold, h1/h2
// underlined), paragraphs with word wrapping, bullet and numbered lists
// (nested), block quotes (bar, grey text), code blocks (monospace on a shaded
// box, wrapped per character), inline code, emphasis (synthetic oblique),
// strong (bold face), links (blue, underlined), images (their alt text),
// thematic breaks, hard and soft line breaks, raw HTML shown as text.
//
// Hostile input is bounded: input larger than max_input_bytes is refused
// (-E2BIG); nesting deeper than max_depth stops indenting; words wider than a
// line break per character; invalid UTF-8 draws U+FFFD; layout stops after
// max_glyphs glyphs or max_height pixels (reported as truncated/limited).
// Every pixel store is bounds-checked against the frame's declared size.
#ifndef CAPSA_DEMOS_PAGE_PAGE_H_
#define CAPSA_DEMOS_PAGE_PAGE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// One font file held in memory (TrueType/OpenType). Borrowed: the bytes must
// stay valid and unchanged until capsa_page_free() (FreeType reads them
// lazily).
struct capsa_font_blob {
  const void *data;
  size_t len;
};

// Fonts for the three faces. `regular` is required; `bold` and `mono` may be
// {NULL, 0}, in which case `regular` stands in for them.
struct capsa_page_fonts {
  struct capsa_font_blob regular;
  struct capsa_font_blob bold;
  struct capsa_font_blob mono;
};

// Layout options. Zero in any field means its default.
struct capsa_page_options {
  uint32_t font_px;        // body text size in pixels (default 16)
  uint32_t margin_px;      // page margin on every side (default 40)
  size_t max_input_bytes;  // larger Markdown is refused (default 4 MiB)
  uint32_t max_depth;      // indentation stops growing here (default 8)
  uint32_t max_height;     // layout stops at this y (default, and most, 32768)
  uint64_t max_glyphs;     // layout stops after this many (default 400000)
};

// Pixel formats of a frame.
enum capsa_frame_format {
  CAPSA_FRAME_RGBA8 = 0,  // 4 bytes per pixel: R, G, B, A (A = 255)
  CAPSA_FRAME_GRAY8 = 1,  // 1 byte per pixel
};

// A frame buffer, owned by the caller. `size` is how many bytes are
// addressable at `pixels`: the renderer checks height * stride <= size and
// stride >= width * bytes-per-pixel before drawing, and never writes outside.
struct capsa_frame {
  uint8_t *pixels;
  size_t size;
  uint32_t width;
  uint32_t height;
  size_t stride;  // bytes per row
  enum capsa_frame_format format;
};

// What a render did.
struct capsa_page_result {
  uint32_t needed_height;  // pixels the whole page needs at this width
  bool truncated;          // needed_height > frame height: content cut off
  bool limited;            // layout stopped at max_height or max_glyphs
  uint32_t blocks;         // block-level nodes laid out
  uint64_t glyphs;         // glyphs laid out (drawn or measured)
  uint64_t glyphs_drawn;   // glyphs that touched the frame
};

// A renderer instance: FreeType library, faces and caches. Not thread-safe:
// use one per thread (each costs ~0.1 ms to create).
typedef struct capsa_page capsa_page;

// Creates a renderer: initialises FreeType and opens the faces from memory.
// `fonts` is copied (its buffers are borrowed, see capsa_font_blob);
// `opts` (may be NULL) is copied. On success *out (owned by the caller,
// release with capsa_page_free) is set and 0 returned; otherwise -EINVAL
// (NULL arguments, no regular font, option out of range), -EBADMSG (a font
// FreeType cannot parse), -ENOMEM.
int capsa_page_new(const struct capsa_page_fonts *fonts,
                   const struct capsa_page_options *opts, capsa_page **out);

// Lays out `md` (`len` bytes, borrowed, need not be NUL-terminated; any
// bytes) at page width `width` and stores in *height the frame height that
// holds all of it (margins included, at most max_height). Returns 0, -EINVAL,
// -E2BIG (input over max_input_bytes), -ENOMEM.
int capsa_page_measure(capsa_page *page, const char *md, size_t len,
                       uint32_t width, uint32_t *height);

// Clears `frame` to the page background and draws `md` into it; content
// below the frame's height is cut off and reported in *res (may be NULL;
// owned by the caller). Returns 0; -EINVAL for a NULL argument or a frame
// whose width/height/stride/size do not fit together (nothing is written
// then); -E2BIG; -ENOMEM.
int capsa_page_render(capsa_page *page, const char *md, size_t len,
                      const struct capsa_frame *frame,
                      struct capsa_page_result *res);

// Releases FreeType and the faces. NULL is a no-op. The font buffers may be
// unmapped afterwards.
void capsa_page_free(capsa_page *page);

// Checks that a frame description is self-consistent: 0 or -EINVAL.
int capsa_frame_check(const struct capsa_frame *frame);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_DEMOS_PAGE_PAGE_H_
