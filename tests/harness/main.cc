// gtest main for every capsa test binary. Adds a per-test watchdog: a test
// that runs longer than CAPSA_TEST_TIMEOUT seconds (default 120) fails and
// ends the process instead of hanging the suite. The runner
// (tests/run_tests.py) also bounds each test from outside.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "host/kind_registry.h"

namespace {

char g_current_test[512];

void OnAlarm(int) {
  static const char kMsg[] = "\n[  TIMEOUT ] test exceeded its time limit: ";
  ssize_t ignored = write(2, kMsg, sizeof(kMsg) - 1);
  ignored = write(2, g_current_test, strlen(g_current_test));
  ignored = write(2, "\n", 1);
  (void)ignored;
  _exit(124);
}

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit Watchdog(unsigned seconds) : seconds_(seconds) {}
  void OnTestStart(const ::testing::TestInfo &info) override {
    snprintf(g_current_test, sizeof(g_current_test), "%s.%s",
             info.test_suite_name(), info.name());
    alarm(seconds_);
  }
  void OnTestEnd(const ::testing::TestInfo &) override {
    alarm(0);
  }

 private:
  unsigned seconds_;
};

}  // namespace

int main(int argc, char **argv) {
  // First, as every embedding binary does (host/kind_registry.h): the test
  // binary is also what a zygote image would exec.
  if (capsa_main(argc, argv) < 0) {
    perror("capsa_main");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  unsigned seconds = 120;
  if (const char *s = getenv("CAPSA_TEST_TIMEOUT")) seconds = atoi(s);
  signal(SIGALRM, OnAlarm);
  ::testing::UnitTest::GetInstance()->listeners().Append(new Watchdog(seconds));
  return RUN_ALL_TESTS();
}
