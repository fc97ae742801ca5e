// Escaping renderer text for terminals and logs (host/text.h).
#include "host/text.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "host/capsa_text.h"
#include "ipc/utf8.h"

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
  size_t k = capsa_utf8_decode((const char *)s, n, &cp);
  if (k == 0) {
    *rep_len = (size_t)snprintf(rep, 16, "\\x%02x", c);
    return 1;
  }
  // C1 controls (8-bit CSI, OSC), bidi overrides, zero-width and other
  // format characters, line separators: shown by their code point.
  if (capsa__utf8_is_control(cp)) {
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

_Static_assert(CAPSA_TEXT_ESCAPE_MIN == CAPSA__TEXT_MIN,
               "the public minimum is the escaper's");

// The public name (host/capsa_text.h): the same escaper, with the
// library's error convention.
int capsa_text_escape(const char *in, size_t len, char *out, size_t out_size) {
  if (!out || out_size < CAPSA_TEXT_ESCAPE_MIN) {
    if (out && out_size) out[0] = '\0';
    return -EINVAL;
  }
  return capsa__text_escape(in, len, out, out_size) ? 1 : 0;
}
