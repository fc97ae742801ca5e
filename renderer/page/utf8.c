// UTF-8 decoding that never fails: the renderer draws U+FFFD for any byte
// that is not part of a valid sequence, one byte at a time, so a hostile
// input cannot make it skip past the end or loop.
#include "renderer/page/page_internal.h"

enum { kReplacement = 0xFFFD };

size_t capsa__utf8_next(const char *s, size_t len, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  unsigned char c = u[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t v, min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, v = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, v = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    *cp = kReplacement;  // continuation byte, 0xC0/0xC1, 0xF5..0xFF
    return 1;
  }
  if (len < n) {
    *cp = kReplacement;
    return 1;
  }
  for (size_t i = 1; i < n; i++) {
    if ((u[i] & 0xC0) != 0x80) {
      *cp = kReplacement;
      return 1;
    }
    v = (v << 6) | (u[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *cp = kReplacement;
    return 1;
  }
  *cp = v;
  return n;
}
