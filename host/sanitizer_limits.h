// Internal: whether renderers may be held by RLIMIT_AS, decided at run time
// from the sanitizer runtime in the process.
//
// A sanitizer runtime (AddressSanitizer, MemorySanitizer, ThreadSanitizer,
// HWAddressSanitizer, LeakSanitizer) reserves terabytes of address space for
// its shadow and allocator when the process starts. A renderer forked from
// such a process under RLIMIT_AS = limit_memory fails its first allocation
// ("Failed to mmap") and dies before READY. What decides is the runtime in
// the process, not how libcapsa was compiled: the SDK's uninstrumented
// libcapsa linked into an embedder built with -fsanitize=address has the
// runtime all the same. With one, RLIMIT_AS is not applied to renderers
// (RLIMIT_FSIZE for memfds and a memory cgroup still are), and
// capsa_host_limits_summary() says so.
#ifndef CAPSA_HOST_SANITIZER_LIMITS_H_
#define CAPSA_HOST_SANITIZER_LIMITS_H_

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct capsa__host_impl;

// The sanitizer runtime in this process that reserves address space
// ("AddressSanitizer", ...), or NULL: looked up through weak references to
// each runtime's initialiser (the runtimes export them to the dynamic
// symbol table, so libcapsa.so sees an executable's static runtime too). No
// system call: usable in a renderer in capability mode.
const char *capsa__sanitizer_runtime(void);

// true: RLIMIT_AS may be applied to renderers; false: a sanitizer runtime
// (above) would make every renderer die at its first allocation.
bool capsa__rlimit_as_applies(void);

// What capsa_host_limits_summary() appends about it: "" when RLIMIT_AS
// applies or no kind asked for it, else "; RLIMIT_AS not applied
// (AddressSanitizer runtime in this process): ...". Returns the length as
// snprintf does.
int capsa__sanitizer_limits_note(const struct capsa__host_impl *h, char *buf,
                                 size_t len);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_SANITIZER_LIMITS_H_
