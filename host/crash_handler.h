// A renderer's fatal-signal handler: on SIGSEGV, SIGBUS, SIGFPE, SIGILL and
// SIGABRT it writes a crash record (host/crash_record.h) to fd 2, the
// renderer's stderr pipe, which the host already reads, then lets the
// signal end the process as it would have without the handler.
#ifndef CAPSA_HOST_CRASH_HANDLER_H_
#define CAPSA_HOST_CRASH_HANDLER_H_

#include <stdbool.h>

// In the renderer, right after its fork from the zygote and before
// capability mode (it reads the loader's module list, which needs no
// syscall, and sets an alternate signal stack). `pid1`: the renderer is pid
// 1 of its pid namespace, where a self-sent SIGABRT's default action is
// ignored: the handler then exits with CAPSA__EXIT_ABORTED as the zygote's
// own SIGABRT handler did. Returns 0 or -errno (no handler then; the
// renderer runs on without crash reports).
int capsa__crash_handler_install(bool pid1);

// In the zygote, before each fork (only the first call does anything): the
// module list and the stack's top, so that renderers inherit them instead
// of each looking them up.
void capsa__crash_handler_prepare(void);

#endif  // CAPSA_HOST_CRASH_HANDLER_H_
