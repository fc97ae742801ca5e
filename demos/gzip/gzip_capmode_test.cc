// The gzip workload inside capability mode, as a renderer runs it: its
// input read-only and its output write-only, both opened before
// capsa_cap_enter(). With CAPSA_TRACE=1 every refused syscall would print a
// violation line: the test captures stderr and requires only the one it
// provokes, so zlib needs nothing capability mode refuses.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "demos/gzip/gzip.h"
#include "sandbox/capmode/capmode.h"
#include "tests/harness/child.h"
#include "tests/workloads/capmode_util.h"
#include "tests/workloads/test_util.h"

using capsa_workloads::ReadFile;
using capsa_workloads::SkipWithoutCapmode;
using capsa_workloads::TempDir;
using capsa_workloads::TraceCapture;
using capsa_workloads::WriteFile;

namespace {

// Runs compress or gunzip in capability mode from a read-only input to a
// write-only output, both opened before entry.
void GzipInCapmode(bool compress, const std::string &in, const std::string &out,
                   int expect) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([&] {
        SkipWithoutCapmode();
        if (::testing::Test::IsSkipped()) return;
        int i = open(in.c_str(), O_RDONLY | O_CLOEXEC);
        int o =
            open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_GE(i, 0);
        ASSERT_GE(o, 0);
        TraceCapture trace;
        ASSERT_EQ(0, capsa_cap_enter());
        capsa_gzip_stats st;
        int rc = compress ? capsa_gzip_compress(i, o, nullptr, &st)
                          : capsa_gunzip(i, o, nullptr, &st);
        EXPECT_EQ(expect, rc);
        // The sandbox holds: the output path cannot be reopened.
        EXPECT_EQ(-1, open(out.c_str(), O_RDONLY));
        EXPECT_EQ(ECAPMODE, errno);
        std::string violations = trace.Violations();
        // The one deliberate violation above is the only one.
        EXPECT_EQ(1u, std::count(violations.begin(), violations.end(), '\n'))
            << violations;
      }),
      60000);
}

TEST(CapmodeWorkloads, GzipRoundTripWithSystemGzip) {
  // Decided here, not only in the children: the steps between them need
  // what the sandboxed ones wrote.
  SkipWithoutCapmode();
  if (::testing::Test::IsSkipped()) return;
  TempDir d;
  ASSERT_TRUE(d.ok());
  std::string data = capsa_workloads::MakeData(3 << 20, 21);
  ASSERT_TRUE(WriteFile(d.File("in"), data));
  GzipInCapmode(true, d.File("in"), d.File("ours.gz"), 0);
  // What the sandboxed gzip wrote, the system gzip reads.
  std::string cmd =
      "gzip -dc '" + d.File("ours.gz") + "' | cmp -s - '" + d.File("in") + "'";
  EXPECT_EQ(0, system(cmd.c_str()));
  // What the system gzip wrote, the sandboxed gunzip reads.
  cmd = "gzip -c '" + d.File("in") + "' > '" + d.File("sys.gz") + "'";
  ASSERT_EQ(0, system(cmd.c_str()));
  GzipInCapmode(false, d.File("sys.gz"), d.File("out"), 0);
  std::string back;
  ASSERT_TRUE(ReadFile(d.File("out"), &back));
  EXPECT_TRUE(back == data);
  // Corrupt input in the sandbox: a clear error, not a crash.
  std::string gz;
  ASSERT_TRUE(ReadFile(d.File("sys.gz"), &gz));
  ASSERT_TRUE(WriteFile(d.File("cut.gz"), gz.substr(0, gz.size() / 2)));
  GzipInCapmode(false, d.File("cut.gz"), d.File("out2"), -ENODATA);
}

}  // namespace
