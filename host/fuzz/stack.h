// Which failures of a `capsa fuzz` campaign are the same bug: a signature
// of how the worker (the host) ended, and its hash, which names the saved
// reproducer (crash-HASH.repro) so each is saved once.
//
//   char key[512];
//   uint64_t h = capsa__fz_signature(log, log_len, crash, "host crash: ...",
//                                    key, sizeof key);
//
// The key, in this order of preference:
//  1. A sanitizer report in the worker's stderr: "asan KIND" (the word after
//     "ERROR: AddressSanitizer: ", e.g. heap-buffer-overflow or SEGV), "leak"
//     (LeakSanitizer) or "ubsan FILE:LINE" (the first "runtime error"), then
//     the top CAPSA__FZ_TOP_FRAMES frames of its first stack that are not in
//     the allocator or the sanitizer runtime, each "FUNC FILE:LINE" as the
//     symbolizer printed it (the column dropped) or "MODULE+0xOFFSET".
//  2. What the worker's own crash handler recorded (fuzz_repro.h; builds
//     without ASan, and SIGABRT/SIGILL/SIGTRAP under it): "signal N", then
//     the faulting pc and the return addresses above it, the top
//     CAPSA__FZ_TOP_FRAMES outside libc (abort, raise, memcpy: their
//     caller tells bugs apart), each "MODULE+0xOFFSET" (dladdr: the worker is a
//     fork of this process, so its addresses are this process's), with
//     "(FUNC)" when the module exports the name.
//     A hang (`fallback` "hang") is ended with SIGABRT first, so its key is
//     "hang" and the frames where the host was stuck.
//  3. Otherwise the failure's class: "hang", "exit N", "signal N".
// Offsets are within a module, so a key holds across runs of one build,
// not across builds. The hash is 64-bit FNV-1a of the key.
#ifndef CAPSA_HOST_FUZZ_STACK_H_
#define CAPSA_HOST_FUZZ_STACK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__FZ_TOP_FRAMES 3
#define CAPSA__FZ_MAX_FRAMES 32

// What the worker's crash handler leaves (not under ASan's own handlers).
typedef struct capsa__fz_crash {
  volatile int sig;  // 0: none
  volatile int nframes;
  uintptr_t frames[CAPSA__FZ_MAX_FRAMES];  // [0]: the faulting pc
} capsa__fz_crash_t;

// Installs, in the worker, a handler of SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT and SIGTRAP (under ASan only those ASan leaves alone: SIGABRT,
// SIGILL, SIGTRAP) that writes the signal, the faulting pc and the return
// addresses above it into *c (shared with the watcher; borrowed for the
// process's life), then lets the signal end the process as it would have.
void capsa__fz_crash_handler_install(capsa__fz_crash_t *c);

// `log` (log_len bytes, borrowed): the worker's stderr; `crash`: its crash
// record or NULL; `fallback`: the class when neither says more. Writes the
// key into key (cap bytes) and returns its hash.
uint64_t capsa__fz_signature(const char *log, size_t log_len,
                             const capsa__fz_crash_t *crash,
                             const char *fallback, char *key, size_t cap);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_STACK_H_
