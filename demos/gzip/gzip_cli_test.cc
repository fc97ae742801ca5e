// `capsa gzip` / `capsa gunzip` end to end: the real binary and renderers,
// checked against gzip(1); errors name the file they are about.
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/host/cli_fixture.h"

namespace {

using capsa_cli_test::Capsa;
using capsa_cli_test::CliTest;
using capsa_cli_test::Sh;
using capsa_cli_test::Slurp;

TEST_F(CliTest, GzipInterchangeableWithSystemGzipBothWays) {
  if (Sh("command -v gzip >/dev/null") != 0) GTEST_SKIP() << "no gzip(1)";
  std::string in = dir_ + "/in.bin";
  ASSERT_EQ(0, Sh("head -c 200000 /dev/urandom | od -x > '" + in + "'"));
  // ours -> gzip -d
  ASSERT_EQ(0, Sh(Capsa() + " gzip < '" + in + "' > '" + dir_ + "/a.gz'"));
  ASSERT_EQ(0, Sh("gzip -dc '" + dir_ + "/a.gz' > '" + dir_ + "/a.out'"));
  EXPECT_EQ(Slurp(in), Slurp(dir_ + "/a.out"));
  // gzip -c -> ours
  ASSERT_EQ(0, Sh("gzip -c '" + in + "' | " + Capsa() + " gunzip > '" + dir_ +
                  "/b.out'"));
  EXPECT_EQ(Slurp(in), Slurp(dir_ + "/b.out"));
  // FILE -> FILE.gz -> -c back, original kept.
  ASSERT_EQ(0, Sh(Capsa() + " gzip '" + in + "'"));
  EXPECT_EQ(0, access((in + ".gz").c_str(), R_OK));
  EXPECT_EQ(0, access(in.c_str(), R_OK));
  ASSERT_EQ(0,
            Sh(Capsa() + " gunzip -c '" + in + ".gz' > '" + dir_ + "/c.out'"));
  EXPECT_EQ(Slurp(in), Slurp(dir_ + "/c.out"));
}

TEST_F(CliTest, GunzipOfGarbageFailsWithAReason) {
  std::string err = dir_ + "/err";
  EXPECT_EQ(1, Sh("echo 'not gzip at all' | " + Capsa() +
                  " gunzip > /dev/null 2>'" + err + "'"));
  EXPECT_NE(std::string::npos, Slurp(err).find("not in gzip format"))
      << Slurp(err);
  EXPECT_EQ(2, Sh(Capsa() + " gzip --bogus 2>/dev/null"));
}

TEST_F(CliTest, GzipOfEmptyInputIsAValidEmptyGzipAsGzip1Writes) {
  if (Sh("command -v gzip >/dev/null") != 0) GTEST_SKIP() << "no gzip(1)";
  std::string in = dir_ + "/empty";
  ASSERT_EQ(0, Sh(": > '" + in + "'"));
  ASSERT_EQ(0, Sh(Capsa() + " gzip '" + in + "'"));
  EXPECT_EQ(0, Sh("gzip -t '" + in + ".gz'"));
  EXPECT_EQ(0, Sh("gzip -dc '" + in + ".gz' > '" + dir_ + "/a.out'"));
  EXPECT_EQ(0u, Slurp(dir_ + "/a.out").size());
  // Through pipes, and back through our own gunzip.
  ASSERT_EQ(0, Sh("printf '' | " + Capsa() + " gzip -c | " + Capsa() +
                  " gunzip -c > '" + dir_ + "/b.out'"));
  EXPECT_EQ(0u, Slurp(dir_ + "/b.out").size());
  // gzip(1)'s own empty file decompresses to nothing with ours.
  ASSERT_EQ(0, Sh("gzip -c < /dev/null | " + Capsa() + " gunzip -c > '" + dir_ +
                  "/c.out'"));
  EXPECT_EQ(0u, Slurp(dir_ + "/c.out").size());
}

TEST_F(CliTest, ErrorsNameTheFileTheyAreAbout) {
  std::string bad = dir_ + "/bad.gz", err = dir_ + "/err";
  ASSERT_EQ(0, Sh("echo garbage > '" + bad + "'"));
  EXPECT_EQ(1, Sh(Capsa() + " gunzip '" + bad + "' 2>'" + err + "'"));
  EXPECT_NE(std::string::npos, Slurp(err).find(bad + ": not in gzip format"))
      << Slurp(err);
  EXPECT_NE(0, access((dir_ + "/bad").c_str(), F_OK));  // nothing written
  EXPECT_EQ(1, Sh("echo garbage | " + Capsa() + " gunzip 2>'" + err +
                  "' >/dev/null"));
  EXPECT_NE(std::string::npos, Slurp(err).find("stdin: not in gzip format"))
      << Slurp(err);
  if (access("/dev/full", W_OK) == 0) {
    EXPECT_EQ(
        1, Sh("echo x | " + Capsa() + " gzip -c 2>'" + err + "' >/dev/full"));
    EXPECT_NE(std::string::npos, Slurp(err).find("stdout: write: "))
        << Slurp(err);
  }
  EXPECT_EQ(1, Sh(Capsa() + " gzip '" + dir_ + "/missing' 2>'" + err + "'"));
  EXPECT_NE(std::string::npos,
            Slurp(err).find(dir_ + "/missing: No such file or directory"))
      << Slurp(err);
}

}  // namespace
