// Strict UTF-8 decoding, shared by every place that reads renderer text.
//
//   uint32_t cp;
//   size_t k = capsa_utf8_decode(s, len, &cp);
//   if (k == 0) { /* not UTF-8 here: escape or replace one byte */ }
//   else s += k;
//
// Renderer text is attacker-controlled: one decoder, with every rejection
// rule in one place (overlong forms, surrogates, > U+10FFFF, truncation),
// so the host's escaping and a renderer's drawing agree on what a character
// is.
#ifndef CAPSA_IPC_UTF8_H_
#define CAPSA_IPC_UTF8_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Decodes the well-formed sequence at s[0..len) (s is the caller's, read
// only): returns its length (1..4) and stores its code point in *cp, or
// returns 0 and leaves *cp alone when s does not start with one (len 0, a
// continuation byte, 0xC0/0xC1/0xF5..0xFF, an overlong form, a surrogate,
// a value above U+10FFFF, a sequence cut short).
size_t capsa_utf8_decode(const char *s, size_t len, uint32_t *cp);

// Whether code point `cp` acts on a terminal or a reader instead of being
// shown: the C0 controls, DEL, the C1 controls (8-bit CSI, OSC), the
// Unicode format characters (general category Cf: bidi embeddings,
// overrides and isolates such as U+202E and U+2066, zero-width characters
// such as U+200B, the byte order mark U+FEFF, the soft hyphen, the tag
// characters U+E0000..U+E007F that hide text from a reader) and the line
// and paragraph separators U+2028, U+2029. Text is what has none of these.
bool capsa__utf8_is_control(uint32_t cp);

// Checks that s[0..len) (the caller's, read only) is text: well-formed
// UTF-8 without a character capsa__utf8_is_control names. Returns len when
// it is, else the offset of the first byte that is not, and stores in *cp
// the offending code point (or UINT32_MAX for a byte that is not UTF-8).
size_t capsa__utf8_text_span(const char *s, size_t len, uint32_t *cp);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_UTF8_H_
