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

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_UTF8_H_
