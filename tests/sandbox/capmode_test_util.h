// Helpers shared by the capability-mode tests.
#ifndef CAPSA_TESTS_SANDBOX_CAPMODE_TEST_UTIL_H_
#define CAPSA_TESTS_SANDBOX_CAPMODE_TEST_UTIL_H_

#include <errno.h>
#include <string.h>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/errors.h"
#include "sandbox/features.h"

// `call` must fail with -1 and errno `err`.
#define EXPECT_ERRNO(err, call)                                              \
  do {                                                                       \
    errno = 0;                                                               \
    long capsa_rv_ = (long)(call);                                           \
    int capsa_e_ = errno;                                                    \
    EXPECT_EQ(-1, capsa_rv_) << #call;                                       \
    EXPECT_EQ((err), capsa_e_) << #call << ": " << capsa_strerror(capsa_e_); \
  } while (0)

// `call` must succeed (>= 0).
#define EXPECT_OK(call)                                                \
  do {                                                                 \
    errno = 0;                                                         \
    long capsa_rv_ = (long)(call);                                     \
    EXPECT_LE(0, capsa_rv_) << #call << ": " << capsa_strerror(errno); \
  } while (0)

// Inside a child: enter capability mode or fail the test.
#define ENTER_CAPMODE() ASSERT_EQ(0, capsa_cap_enter())

// Skip (in the child) when the kernel lacks what a test needs.
#define REQUIRE_SECCOMP()                               \
  do {                                                  \
    if (!capsa_features_get()->seccomp_filter)          \
      GTEST_SKIP() << "kernel without seccomp filters"; \
  } while (0)
#define REQUIRE_LANDLOCK(abi)                                            \
  do {                                                                   \
    if (capsa_features_get()->landlock_abi < (abi))                      \
      GTEST_SKIP() << "Landlock ABI " << (abi) << " needed, kernel has " \
                   << capsa_features_get()->landlock_abi;                \
  } while (0)

#endif  // CAPSA_TESTS_SANDBOX_CAPMODE_TEST_UTIL_H_
