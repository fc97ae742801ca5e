// Violation tracing for capability mode: see capmode.h (CAPSA_TRACE=1). The
// functions are declared in sandbox/capmode_internal.h; trace.c holds them.
#ifndef CAPSA_SANDBOX_TRACE_H_
#define CAPSA_SANDBOX_TRACE_H_
#include "sandbox/capmode_internal.h"
#endif  // CAPSA_SANDBOX_TRACE_H_
