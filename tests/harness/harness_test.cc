// Tests of the test harness itself: the child runner must report success,
// assertion failures, signals and timeouts faithfully, or every sandbox test
// built on it could pass vacuously.
#include <signal.h>
#include <unistd.h>

#include "tests/harness/child.h"

namespace {

TEST(Harness, ChildSuccessIsReported) {
  capsa_test::ChildResult r = capsa_test::RunInChild([] { EXPECT_EQ(1, 1); });
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(0, r.exit_code);
}

TEST(Harness, ChildAssertionFailureIsReported) {
  capsa_test::ChildResult r = capsa_test::RunInChild([] {
    // The failure is recorded in the child only; the parent sees exit 1.
    ADD_FAILURE() << "deliberate failure inside a child (expected output)";
  });
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(1, r.exit_code);
}

TEST(Harness, ChildSignalIsReported) {
  capsa_test::ChildResult r = capsa_test::RunInChild([] { raise(SIGTERM); });
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(SIGTERM, r.term_signal);
}

TEST(Harness, ChildTimeoutKillsIt) {
  capsa_test::ChildResult r = capsa_test::RunInChild(
      [] {
        for (;;) pause();
      },
      200);
  EXPECT_TRUE(r.timed_out);
}

TEST(Harness, ChildSkipIsReported) {
  capsa_test::ChildResult r =
      capsa_test::RunInChild([] { GTEST_SKIP() << "deliberate skip"; });
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(capsa_test::kChildSkipped, r.exit_code);
}

TEST(Harness, ChildStateDoesNotLeakIntoParent) {
  pid_t parent = getpid();
  CAPSA_EXPECT_CHILD_OK([parent] { EXPECT_NE(parent, getpid()); });
  EXPECT_EQ(parent, getpid());
}

}  // namespace
