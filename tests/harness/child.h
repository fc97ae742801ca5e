// Runs a test body in a forked child, so that anything irreversible it does
// (entering capability mode, installing seccomp filters, dropping privileges)
// never leaks into the test runner.
//
//   TEST(CapMode, OpenByPathRefused) {
//     CAPSA_EXPECT_CHILD_OK([] {
//       ASSERT_EQ(0, capsa_cap_enter());
//       EXPECT_EQ(-1, open("/etc/passwd", O_RDONLY));
//       EXPECT_EQ(ECAPMODE, errno);
//     });
//   }
//
// The child's gtest assertions print as usual; a failed assertion, a crash, a
// signal or a timeout becomes a failure of the test in the parent. GTEST_SKIP()
// inside the child skips the test.
#ifndef CAPSA_TESTS_HARNESS_CHILD_H_
#define CAPSA_TESTS_HARNESS_CHILD_H_

#include <functional>
#include <string>

#include <gtest/gtest.h>

namespace capsa_test {

// Exit code a child uses to report that it skipped.
constexpr int kChildSkipped = 77;

struct ChildResult {
  bool timed_out = false;
  bool exited = false;  // true: exit_code is valid; false: term_signal is
  int exit_code = -1;
  int term_signal = 0;
  std::string Describe() const;
};

// Forks, runs `body` in the child in a new session (setsid: no controlling
// terminal), and waits at most `timeout_ms`; on timeout the child's whole
// process group is killed. The child exits 0 if the body recorded no gtest
// failure, 1 if it did, kChildSkipped if it skipped.
ChildResult RunInChild(const std::function<void()> &body,
                       int timeout_ms = 10000);

}  // namespace capsa_test

#define CAPSA_EXPECT_CHILD_OK_T(body, timeout_ms)                             \
  do {                                                                        \
    ::capsa_test::ChildResult capsa_r_ =                                      \
        ::capsa_test::RunInChild((body), (timeout_ms));                       \
    if (capsa_r_.exited && capsa_r_.exit_code == ::capsa_test::kChildSkipped) \
      GTEST_SKIP() << "skipped in child";                                     \
    EXPECT_TRUE(capsa_r_.exited &&capsa_r_.exit_code == 0)                    \
        << "child: " << capsa_r_.Describe();                                  \
  } while (0)

#define CAPSA_EXPECT_CHILD_OK(body) CAPSA_EXPECT_CHILD_OK_T(body, 10000)

// The child must be killed by `sig` (e.g. SIGSYS from a seccomp kill rule).
#define CAPSA_EXPECT_CHILD_SIGNALED(body, sig)                                \
  do {                                                                        \
    ::capsa_test::ChildResult capsa_r_ = ::capsa_test::RunInChild(body);      \
    EXPECT_TRUE(!capsa_r_.timed_out && !capsa_r_.exited &&                    \
                capsa_r_.term_signal == (sig))                                \
        << "expected signal " << (sig) << ", child: " << capsa_r_.Describe(); \
  } while (0)

#endif  // CAPSA_TESTS_HARNESS_CHILD_H_
