// `capsa render` end to end: the real binary and renderer, the sample page
// to a PNG.
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/harness/paths.h"
#include "tests/host/cli_fixture.h"

namespace {

using capsa_cli_test::Capsa;
using capsa_cli_test::CliTest;
using capsa_cli_test::Sh;
using capsa_cli_test::Slurp;

TEST_F(CliTest, RenderWritesAPng) {
  std::string md = capsa_test::SourceFile("demos/page/samples/page.md");
  ASSERT_TRUE(capsa_test::Present(md));
  std::string png = dir_ + "/page.png", out = dir_ + "/out";
  ASSERT_EQ(0, Sh(Capsa() + " render '" + md + "' -o '" + png +
                  "' --width 640 > '" + out + "'"));
  std::string bytes = Slurp(png);
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(std::string("\x89PNG\r\n\x1a\n", 8), bytes.substr(0, 8));
  EXPECT_EQ(0u, Slurp(out).find(png + ": 640x")) << Slurp(out);
  // A missing page: clear error, nothing written.
  EXPECT_EQ(1, Sh(Capsa() + " render /nonexistent.md -o '" + dir_ +
                  "/x.png' 2>/dev/null"));
}

}  // namespace
