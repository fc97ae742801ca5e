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
// \u{NN}, the backslash itself (\\), and every byte that is not part of
// well-formed UTF-8 (overlong forms, surrogates, beyond U+10FFFF,
// truncated sequences) as \xNN. So a forged "demo: all renderers behaved"
// line, a screen clear or an OSC 52 clipboard write arrives as inert text.
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
