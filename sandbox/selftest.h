// Capability-mode self-test: a forked child enters capability mode and tries
// a list of escapes; each must be refused (and one thing must keep working).
// Used by `capsa doctor`; reusable by an escape matrix.
//
//   struct capsa_selftest_result res[CAPSA_SELFTEST_MAX];
//   size_t n = 0;
//   int err = capsa_capmode_selftest(res, CAPSA_SELFTEST_MAX, &n);
//   for (size_t i = 0; i < n; i++)
//     printf("%s: %s\n", res[i].name, res[i].passed ? "refused" : "ESCAPED");
//
// Escapes whose refusal needs a layer the kernel lacks are reported as
// skipped, never as passed.
#ifndef CAPSA_SANDBOX_SELFTEST_H_
#define CAPSA_SANDBOX_SELFTEST_H_

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA_SELFTEST_MAX 32

struct capsa_selftest_result {
  const char *name;         // static string: what was tried
  const char *layer;        // static string: the layer expected to refuse it
  int expected_errno;       // 0: must succeed (a "keeps working" check)
  int got_errno;            // errno seen (0: the call succeeded)
  bool skipped;             // the layer (or the attacked entry) is absent here
  const char *skip_reason;  // static: why skipped, e.g. "i386 entry: absent
                            // in this kernel (int 0x80 faults: SIGSEGV)"
  bool passed;              // refused with expected_errno (or succeeded if 0)
};

// Runs the escapes in a forked child (the caller is unaffected) with a
// 10-second limit. `out` (owned by the caller) receives up to `cap` results;
// *n the count. Returns the number of failed checks, skipped ones not
// counted (0: everything this kernel can refuse was refused as expected), or
// -errno when the child could not be run (-ETIMEDOUT, -ECHILD when it died, or
// the child's capsa_cap_enter() error).
int capsa_capmode_selftest(struct capsa_selftest_result *out, size_t cap,
                           size_t *n);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_SELFTEST_H_
