// Making text from a renderer safe to show: the escaping capsa applies to a
// renderer's LOG lines and stderr, for every other string an embedder
// prints, logs or puts on a screen (docs/interfaces.md lists which fields
// reach the embedder raw).
//
//   // A title from a renderer's reply, in a string field not marked
//   // capsa_text: anything a hostile renderer chose, byte for byte.
//   void show_title(const char *title) {
//     char safe[256];
//     capsa_text_escape(title, strlen(title), safe, sizeof safe);
//     printf("title: %s\n", safe);  // one printable line of valid UTF-8
//   }
//
// Escaped: newline, carriage return and tab as \n \r \t; other C0 controls,
// ESC and DEL as \xNN; the C1 controls (8-bit CSI, OSC), the Unicode format
// characters (bidi overrides and isolates such as U+202E and U+2066,
// zero-width characters, U+FEFF, tags) and the separators U+2028, U+2029 as
// \u{NNNN}; the backslash as \\; every byte that is not well-formed UTF-8 as
// \xNN. So an OSC 52 clipboard write, a screen clear, a forged "[capsa] ..."
// log line or a right-to-left override arrives as inert, visible text.
#ifndef CAPSA_HOST_CAPSA_TEXT_H_
#define CAPSA_HOST_CAPSA_TEXT_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// The smallest `out_size` capsa_text_escape takes (room for the tail that
// says how much was cut).
#define CAPSA_TEXT_ESCAPE_MIN 64

// Escapes `len` bytes of `in` (borrowed; may hold NULs, which are escaped
// too; NULL: empty) into `out` (the caller's, `out_size` bytes), always
// NUL-terminated. Text whose escaped form does not fit is cut at a
// character boundary and ends in "...[+N bytes]" (N input bytes left out).
// Returns 0 when all of `in` is in `out`, 1 when it was cut, -EINVAL when
// `out` is NULL or `out_size` < CAPSA_TEXT_ESCAPE_MIN (`out`, if any, then
// holds "").
int capsa_text_escape(const char *in, size_t len, char *out, size_t out_size);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_CAPSA_TEXT_H_
