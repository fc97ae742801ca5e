// Test builds only (//sandbox:testing is testonly; nothing in libcapsa or
// the capsa command links it): simulate a kernel that lacks a layer.
//
//   CAPSA_EXPECT_CHILD_OK([] {                // in a forked child: for good
//     struct capsa_features f = *capsa_features_get();
//     f.landlock_abi = 0;                     // "no Landlock"
//     capsa__features_override_for_test(&f);
//     ...                                     // host, capmode: as there
//   });
//
// There is no environment variable or option for this on purpose: a
// production process cannot be talked into a weaker sandbox.
#ifndef CAPSA_SANDBOX_TESTING_H_
#define CAPSA_SANDBOX_TESTING_H_

#include "sandbox/features.h"

#ifdef __cplusplus
extern "C" {
#endif

// Replaces what capsa_features_get() returns from now on (probing first if
// it has not yet) with *f. Only weakens what the process uses where the
// field says "absent" (capability-mode layers are then reported unavailable
// and not installed); claiming a feature the kernel lacks makes the calls
// that need it fail. Not thread-safe: call before starting threads.
void capsa__features_override_for_test(const struct capsa_features *f);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_TESTING_H_
