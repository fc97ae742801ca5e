// Where a test finds capsa's own files: build products next to the test
// binary, source files under the checkout the build directory belongs to.
// Both are found from the running binary (/proc/self/exe), never from a path
// compiled in, so that tests/run_tests.py can run the uid 65534 pass from a
// staged copy (build products and data at the same relative places, where
// that user can reach them) when the checkout itself is not reachable.
//
// A file a test needs is declared in its BUILD.gn: a build product in
// data_deps, a source file or directory in data. GN writes the list
// (write_runtime_deps, build/capsa_test.gni) and the runner stages exactly
// that list. A missing one is a failure, never a skip:
//
//   ASSERT_TRUE(capsa_test::Present(capsa_test::BuildProduct("capsa"), X_OK));
#ifndef CAPSA_TESTS_HARNESS_PATHS_H_
#define CAPSA_TESTS_HARNESS_PATHS_H_

#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

namespace capsa_test {

// The directory of the running test binary: the build directory (or its
// staged copy).
std::string BuildDir();

// The checkout the build directory belongs to (its staged copy when the
// binary runs from there), as BuildDir() + a relative path fixed by gn.
std::string SourceRoot();

// BuildDir()/name, SourceRoot()/path.
std::string BuildProduct(const std::string &name);
std::string SourceFile(const std::string &path);

// Success when access(path, mode) succeeds; otherwise a failure that says
// which file is missing, why, and what makes it present.
::testing::AssertionResult Present(const std::string &path, int mode = R_OK);

}  // namespace capsa_test

#endif  // CAPSA_TESTS_HARNESS_PATHS_H_
