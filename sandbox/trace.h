// Violation tracing for capability mode: see capmode.h (CAPSA_TRACE=1).
// trace.c holds the SIGSYS handler (declared in
// sandbox/capmode/capmode_internal.h); trace_args.c decodes a violation's
// arguments. Not a public header.
#ifndef CAPSA_SANDBOX_TRACE_H_
#define CAPSA_SANDBOX_TRACE_H_

#include <stddef.h>
#include <stdint.h>

#include "sandbox/capmode/capmode_internal.h"

// One violation line, formatted without allocation (signal handler).
struct capsa__trace_line {
  char buf[1024];
  size_t len;
};
void capsa__trace_put(struct capsa__trace_line *l, const char *s);
void capsa__trace_put_char(struct capsa__trace_line *l, char c);
void capsa__trace_put_hex(struct capsa__trace_line *l, uint64_t v);
void capsa__trace_put_dec(struct capsa__trace_line *l, int64_t v);

// "(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC, 0)": the arguments of x86_64
// syscall `nr` in the form its row in trace_args.c gives, path strings read
// from the calling process's memory; six hex registers for a syscall with
// no row. Async-signal-safe.
void capsa__trace_put_args(struct capsa__trace_line *l, unsigned nr,
                           const uint64_t args[6]);
// "(0x.., ..)": six registers, for i386 and x32 calls.
void capsa__trace_put_hex_args(struct capsa__trace_line *l,
                               const uint64_t args[6]);

#endif  // CAPSA_SANDBOX_TRACE_H_
