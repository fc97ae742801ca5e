// Internal to capsa (not installed): capsa_ns_available()'s cache
// (sandbox/launcher/namespaces.h), for the features probe and for tests.
//
//   unsigned avail;
//   if (capsa__ns_available_cached(&avail)) ...  // probed: no child forked
#ifndef CAPSA_SANDBOX_NS_PROBE_H_
#define CAPSA_SANDBOX_NS_PROBE_H_

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

// True and *avail set when this process has probed already (the cache of
// capsa_ns_available), false otherwise; never probes.
bool capsa__ns_available_cached(unsigned *avail);

// Tests: forgets the cached answer and probes again (what a fresh process
// would find here now). Not thread-safe; never needed in production.
unsigned capsa__ns_available_reprobe(void);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_NS_PROBE_H_
