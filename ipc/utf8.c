#include "ipc/utf8.h"

size_t capsa_utf8_decode(const char *s, size_t len, uint32_t *cp) {
  if (!s || len == 0 || !cp) return 0;
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
    return 0;
  }
  if (len < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((u[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (u[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// Unicode 15's general category Cf (format characters), as ranges. A
// character added to Cf later is shown as itself until this list grows;
// the ranges that matter for spoofing (bidi, zero-width, tags) are here.
// U+2065, unassigned, is taken with its block U+2060..U+206F.
static const uint32_t k_format[][2] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},
    {0x06DD, 0x06DD},   {0x070F, 0x070F},   {0x0890, 0x0891},
    {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},
    {0x202A, 0x202E},   {0x2060, 0x206F},   {0xFEFF, 0xFEFF},
    {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
};

bool capsa__utf8_is_control(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return true;
  if (cp == 0x2028 || cp == 0x2029) return true;  // Zl, Zp: line breaks
  for (size_t i = 0; i < sizeof k_format / sizeof k_format[0]; i++)
    if (cp >= k_format[i][0] && cp <= k_format[i][1]) return true;
  return false;
}

size_t capsa__utf8_text_span(const char *s, size_t len, uint32_t *cp) {
  uint32_t dummy;
  if (!cp) cp = &dummy;
  if (!s) return 0;
  for (size_t i = 0; i < len;) {
    uint32_t c = 0;
    size_t k = capsa_utf8_decode(s + i, len - i, &c);
    if (k == 0) {
      *cp = UINT32_MAX;
      return i;
    }
    if (capsa__utf8_is_control(c)) {
      *cp = c;
      return i;
    }
    i += k;
  }
  return len;
}
