// Escaping renderer text for terminals and logs (host/text.h).
#include "host/text.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

// Length of the well-formed UTF-8 sequence at s (n bytes available), or 0.
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned char c = s[0];
  size_t k;
  uint32_t v, min;
  if (c >= 0xC2 && c <= 0xDF) {
    k = 2, v = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    k = 3, v = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    k = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (n < k) return 0;
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return k;
}

// The escaped form of the character at s into rep; returns the input bytes
// it covers.
static size_t escape_one(const unsigned char *s, size_t n, char rep[16],
                         size_t *rep_len) {
  unsigned char c = s[0];
  if (c == '\\') {
    memcpy(rep, "\\\\", 2), *rep_len = 2;
    return 1;
  }
  if (c == '\n' || c == '\r' || c == '\t') {
    rep[0] = '\\', rep[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    *rep_len = 2;
    return 1;
  }
  if (c < 0x20 || c == 0x7F) {
    *rep_len = (size_t)snprintf(rep, 16, "\\x%02x", c);
    return 1;
  }
  if (c < 0x80) {
    rep[0] = (char)c, *rep_len = 1;
    return 1;
  }
  uint32_t cp = 0;
  size_t k = utf8_len(s, n, &cp);
  if (k == 0) {
    *rep_len = (size_t)snprintf(rep, 16, "\\x%02x", c);
    return 1;
  }
  if (cp <= 0x9F) {  // C1 controls: 8-bit CSI, OSC, ...
    *rep_len = (size_t)snprintf(rep, 16, "\\u{%02x}", (unsigned)cp);
    return k;
  }
  memcpy(rep, s, k), *rep_len = k;
  return k;
}

// Bytes the escaped form of all of s takes.
static size_t escaped_size(const unsigned char *s, size_t len) {
  size_t total = 0;
  for (size_t i = 0; i < len;) {
    char rep[16];
    size_t rep_len = 0;
    i += escape_one(s + i, len - i, rep, &rep_len);
    total += rep_len;
  }
  return total;
}

size_t capsa__text_escape(const char *in, size_t len, char *out,
                          size_t out_size) {
  if (!out || out_size < CAPSA__TEXT_MIN) {
    if (out && out_size) out[0] = '\0';
    return len;
  }
  if (!in) len = 0;
  const unsigned char *s = (const unsigned char *)in;
  // All of it when it fits; else as much as leaves room for the tail
  // "...[+N bytes]" (3 + 2 + 20 digits + 7 = 32 bytes at most).
  size_t room = out_size - 1;
  if (escaped_size(s, len) > room) room -= 32;
  size_t used = 0, i = 0;
  while (i < len) {
    char rep[16];
    size_t rep_len = 0;
    size_t k = escape_one(s + i, len - i, rep, &rep_len);
    if (used + rep_len > room) break;
    memcpy(out + used, rep, rep_len);
    used += rep_len;
    i += k;
  }
  size_t left = len - i;
  if (left > 0)
    used +=
        (size_t)snprintf(out + used, out_size - used, "...[+%zu bytes]", left);
  out[used] = '\0';
  return left;
}
