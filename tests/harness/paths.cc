#include "tests/harness/paths.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

namespace capsa_test {

std::string BuildDir() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return ".";
  exe[n] = 0;
  std::string s(exe);
  return s.substr(0, s.rfind('/'));
}

std::string SourceRoot() {
  // "../../" for out/default: gn's rebase_path("//", root_build_dir).
  std::string rel = CAPSA_TEST_SOURCE_FROM_BUILD;
  while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
  return BuildDir() + "/" + rel;
}

std::string BuildProduct(const std::string &name) {
  return BuildDir() + "/" + name;
}

std::string SourceFile(const std::string &path) {
  return SourceRoot() + "/" + path;
}

::testing::AssertionResult Present(const std::string &path, int mode) {
  if (access(path.c_str(), mode) == 0) return ::testing::AssertionSuccess();
  int err = errno;
  return ::testing::AssertionFailure()
         << path << ": " << strerror(err)
         << (mode & X_OK ? " (wanted: executable)" : " (wanted: readable)")
         << ". A file of capsa's own that this test needs: build it "
            "(./dev build), and declare it in the test's BUILD.gn (data_deps "
            "for a build product, data for a source file) so that "
            "tests/run_tests.py stages it for the uid 65534 pass";
}

}  // namespace capsa_test
