// The capsa CLI end to end: the real binary (next to the test binary, a
// data_dep of the test), run through the shell in a fresh directory. For
// tests/host/cli_test.cc and the demo kinds' CLI tests (//demos/<kind>).
#ifndef CAPSA_TESTS_HOST_CLI_FIXTURE_H_
#define CAPSA_TESTS_HOST_CLI_FIXTURE_H_

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/harness/paths.h"

namespace capsa_cli_test {

inline std::string Capsa() {
  return capsa_test::BuildProduct("capsa");
}

inline std::string Slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a shell command line; returns its exit status (-1 if it died).
inline int Sh(const std::string &cmd) {
  int st = system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(capsa_test::Present(Capsa(), X_OK));
    char tmpl[] = "/tmp/capsa-cli-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) Sh("rm -rf '" + dir_ + "'");
  }
  std::string dir_;
};

}  // namespace capsa_cli_test

#endif  // CAPSA_TESTS_HOST_CLI_FIXTURE_H_
