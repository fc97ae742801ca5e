// The crash record: what a renderer's fatal-signal handler
// (host/crash_handler.c) writes to its stderr pipe for the host
// (host/renderer_stderr.c collects it, host/crash_report.c reads it). One
// fixed layout, one write() of less than PIPE_BUF bytes, so that it is never
// interleaved with another writer's bytes. Everything in it is the
// renderer's word: the host bounds-checks every field and never takes the
// signal from it (that comes from waitid).
#ifndef CAPSA_HOST_CRASH_RECORD_H_
#define CAPSA_HOST_CRASH_RECORD_H_

#include <stdint.h>

// Starts the record on the pipe. Begins with a byte no text line starts with
// in practice (RS), and is long enough that text matching it by accident
// does not happen; text that does is still forwarded as text unless the
// whole magic matched.
#define CAPSA__CRASH_MAGIC \
  "\x1e"                   \
  "capsa-crash-v1\x1e"
#define CAPSA__CRASH_MAGIC_LEN 16

#define CAPSA__CRASH_FRAMES 48
#define CAPSA__CRASH_MODULES 24
#define CAPSA__CRASH_MODNAME 40

// A loaded object, as the renderer's dynamic loader saw it when the handler
// was installed (before capability mode): where its segments lie and its
// load bias (runtime address - link-time address).
struct capsa__crash_module {
  uint64_t lo, hi;  // [lo, hi): its code (executable segment), at run time
  uint64_t bias;
  char name[CAPSA__CRASH_MODNAME];  // basename; "" for the main executable
};

struct capsa__crash_record {
  char magic[CAPSA__CRASH_MAGIC_LEN];
  uint32_t size;  // sizeof(struct capsa__crash_record)
  int32_t signo;
  int32_t code;      // si_code
  uint32_t nframes;  // frames[0] is the interrupted pc; then return addresses
  uint64_t addr;     // si_addr
  uint32_t nmodules;
  uint32_t flags;  // CAPSA__CRASH_F_*
  uint64_t frames[CAPSA__CRASH_FRAMES];
  struct capsa__crash_module modules[CAPSA__CRASH_MODULES];
};

// The walk stopped at the frame limit (more frames were there).
#define CAPSA__CRASH_F_TRUNCATED 1u
// The second frame was found by scanning the stack (the crash was in code
// without frame pointers), not by the frame chain.
#define CAPSA__CRASH_F_SCANNED 4u
// The crash was not on the stack the handler knows the bounds of (another
// thread): frames hold only the pc.
#define CAPSA__CRASH_F_OTHER_STACK 2u

#ifdef __cplusplus
static_assert(sizeof(struct capsa__crash_record) < 4096, "PIPE_BUF");
#else
_Static_assert(sizeof(struct capsa__crash_record) < 4096,
               "one atomic pipe write (PIPE_BUF)");
#endif

#endif  // CAPSA_HOST_CRASH_RECORD_H_
