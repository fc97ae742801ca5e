// A program written against FreeBSD's <sys/capsicum.h> and <sys/procdesc.h>
// (tests/compat/freebsd_prog.c) builds with nothing but
//   cc prog.c $(pkg-config --cflags --libs capsa)
// against this build tree's capsa-uninstalled.pc, and runs correctly.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/harness/paths.h"

namespace {

// Runs `cmd` with /bin/sh; returns its exit status (-1 if it did not exit)
// and its combined output in *out.
int RunShell(const std::string &cmd, std::string *out) {
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool Have(const char *tool) {
  std::string out;
  return RunShell(std::string("command -v ") + tool, &out) == 0;
}

TEST(Compat, FreeBsdProgramBuildsWithPkgConfigAndRuns) {
  if (!Have("pkg-config") || !Have(CAPSA_TEST_CC))
    GTEST_SKIP() << "pkg-config or " << CAPSA_TEST_CC << " not installed";
  // The build directory, or the runner's staged copy of what this test
  // needs from it (capsa-uninstalled.pc names its files relative to itself).
  std::string build = capsa_test::BuildDir();
  std::string src = capsa_test::SourceFile("tests/compat/freebsd_prog.c");
  ASSERT_TRUE(capsa_test::Present(src));
  ASSERT_TRUE(capsa_test::Present(build + "/capsa-uninstalled.pc"));
  char tmpl[] = "/tmp/capsa-compat-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(tmpl));
  std::string dir = tmpl;
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      unlink((d + "/prog").c_str());
      rmdir(d.c_str());
    }
  } cleanup{dir};
  // Exported: the $(pkg-config ...) substitution needs it too.
  std::string env = "export PKG_CONFIG_PATH='" + build + "'; ";
  std::string out;

  // pkg-config resolves "capsa" to the build tree's -uninstalled file.
  ASSERT_EQ(0, RunShell(env + "pkg-config --variable=builddir capsa", &out))
      << out;
  EXPECT_EQ(build + "\n", out);

  std::string cc = "cd '" + dir + "' && " + env + CAPSA_TEST_CC + " '" + src +
                   "' $(pkg-config --cflags --libs capsa) -o prog";
  ASSERT_EQ(0, RunShell(cc, &out)) << cc << "\n" << out;

  // A sanitizer runtime's exit-time leak check would be refused in
  // capability mode; the program exits normally, as FreeBSD code does.
  std::string run = "ASAN_OPTIONS=detect_leaks=0 '" + dir + "/prog'";
  int rc = RunShell(run, &out);
  EXPECT_EQ(0, rc) << out;
  EXPECT_NE(std::string::npos, out.find("freebsd_prog: ok")) << out;
}

}  // namespace
