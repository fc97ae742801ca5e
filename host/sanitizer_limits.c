// RLIMIT_AS and sanitizer runtimes, decided at run time
// (host/sanitizer_limits.h).
#include "host/sanitizer_limits.h"

#include <stdio.h>

#include "host/host_internal.h"

// Each runtime's initialiser: defined (non-NULL) only when that runtime is
// linked into the process, statically or as a shared library.
extern void __asan_init(void) __attribute__((weak));
extern void __msan_init(void) __attribute__((weak));
extern void __tsan_init(void) __attribute__((weak));
extern void __hwasan_init(void) __attribute__((weak));
extern void __lsan_init(void) __attribute__((weak));

const char *capsa__sanitizer_runtime(void) {
  if (__asan_init) return "AddressSanitizer";
  if (__msan_init) return "MemorySanitizer";
  if (__tsan_init) return "ThreadSanitizer";
  if (__hwasan_init) return "HWAddressSanitizer";
  if (__lsan_init) return "LeakSanitizer";
  return NULL;
}

bool capsa__rlimit_as_applies(void) {
  return capsa__sanitizer_runtime() == NULL;
}

int capsa__sanitizer_limits_note(const struct capsa__host_impl *h, char *buf,
                                 size_t len) {
  const char *rt = capsa__sanitizer_runtime();
  // Only where RLIMIT_AS would have held a kind (the host keeps it where
  // no memory cgroup replaces it, and for spares until they are claimed).
  bool wanted = false;
  for (unsigned i = 0; rt && i < h->nkinds; i++)
    if (h->zkinds[i].limit_as) wanted = true;
  if (!wanted) return snprintf(buf, len, "%s", "");
  if (h->limits.cg_active)
    return snprintf(buf, len,
                    "; RLIMIT_AS not applied (%s runtime in this process): "
                    "memory.max holds renderers once claimed, nothing holds "
                    "a spare's memory before",
                    rt);
  return snprintf(buf, len,
                  "; RLIMIT_AS not applied (%s runtime in this process): "
                  "renderer memory not limited (memfds still by "
                  "RLIMIT_FSIZE)",
                  rt);
}
