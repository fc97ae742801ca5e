// Text from a renderer is data: before the host hands it to an embedder or
// prints it, every byte that could act on a terminal or a log reader is made
// visible instead, and the length is bounded.
//
//   char safe[CAPSA__TEXT_MAX];
//   capsa__text_escape(m->u.log.text, strlen(m->u.log.text), safe, sizeof
//   safe); ev.text = safe;   // one line, printable, valid UTF-8, <= 1 KiB
//
// Escaped: C0 controls (newline, carriage return, tab as \n \r \t, others
// and ESC as \xNN), DEL, the C1 controls U+0080..U+009F (8-bit CSI/OSC) as
// \u{NN}, the Unicode format characters and separators (bidi overrides and
// isolates U+202A..U+202E, U+2066..U+2069, zero-width U+200B..U+200F,
// U+2060.., U+FEFF, U+2028, U+2029, tags; ipc/utf8.h's
// capsa__utf8_is_control) as \u{NNNN}, the backslash itself (\\), and
// every byte that is not part of well-formed UTF-8 (overlong forms,
// surrogates, beyond U+10FFFF, truncated sequences) as \xNN. So a forged
// "demo: all renderers behaved" line, a screen clear, an OSC 52 clipboard
// write or a right-to-left override that reorders what follows arrives as
// inert text. capsa_text_escape (host/capsa_text.h) is its public name.
#ifndef CAPSA_HOST_TEXT_H_
#define CAPSA_HOST_TEXT_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The longest escaped text the host passes on, bytes including the NUL,
// and the smallest buffer capsa__text_escape takes.
#define CAPSA__TEXT_MAX 1024
#define CAPSA__TEXT_MIN 64

// Escapes `len` bytes of `in` (borrowed; NULs in it are escaped too) into
// `out` (owned by the caller, `out_size` >= CAPSA__TEXT_MIN; smaller: only
// "" is written and len returned), always NUL-terminated.
// Text that does not fit is cut at a character boundary and ends in
// "...[+N bytes]". Returns the number of input bytes left out (0: whole).
size_t capsa__text_escape(const char *in, size_t len, char *out,
                          size_t out_size);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_TEXT_H_
