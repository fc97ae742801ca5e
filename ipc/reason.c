#include "ipc/reason.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int capsa__bad(char *buf, size_t n, const char *fmt, ...) {
  if (buf != NULL && n > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
  }
  return -EBADMSG;
}
