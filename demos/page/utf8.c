// UTF-8 decoding that never fails: the renderer draws U+FFFD for any byte
// that is not part of a valid sequence, one byte at a time, so a hostile
// input cannot make it skip past the end or loop.
#include "ipc/utf8.h"
#include "demos/page/page_internal.h"

enum { kReplacement = 0xFFFD };

size_t capsa__utf8_next(const char *s, size_t len, uint32_t *cp) {
  size_t n = capsa_utf8_decode(s, len, cp);
  if (n > 0) return n;
  *cp = kReplacement;
  return 1;
}
