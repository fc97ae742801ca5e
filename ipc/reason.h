// Internal: formatting "bad message" reasons. Not part of ipc's public API.
#ifndef CAPSA_IPC_REASON_H_
#define CAPSA_IPC_REASON_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Writes the formatted reason into `buf` (`n` bytes; either may be 0/NULL)
// and returns -EBADMSG, so that checks read `return capsa__bad(...)`.
int capsa__bad(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_REASON_H_
