// The SDK as an embedder outside the tree meets it, for the tests of
// tests/sdk: `./dev install` with DESTDIR into a temporary directory, the
// staged tree moved to the prefix it was installed for (as a package manager
// unpacks a package), then nothing but those files and pkg-config.
//
//   TempDir tmp;
//   std::string prefix = tmp.path + "/prefix", why;
//   if (!StageInstall(tmp.path, prefix, &why)) FAIL() << why;
//   std::string cflags;
//   Sh(PkgConfig(prefix) + "--cflags capsa", &cflags);
#ifndef CAPSA_TESTS_SDK_SDK_INSTALL_H_
#define CAPSA_TESTS_SDK_SDK_INSTALL_H_

#include <string>
#include <vector>

namespace capsa_sdk {

// The source tree and the build directory the tests were built in.
extern const std::string kRoot;
extern const std::string kBuild;

// Runs `cmd` with /bin/sh; its exit status (-1 if it did not exit) and its
// combined output in *out.
int Sh(const std::string &cmd, std::string *out);

// `s` quoted for /bin/sh (no single quotes in the paths used here).
std::string Q(const std::string &s);

std::string ReadFile(const std::string &path);

// The non-empty lines of `s`.
std::vector<std::string> Lines(const std::string &s);

// A temporary directory every user can read (uid 65534 runs the programs; a
// zygote of a root host runs as 65534 and loads libcapsa.so from here),
// removed with its contents. `path` is empty when it could not be made.
struct TempDir {
  std::string path;
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

// Empty when the source and build trees and the tools the SDK tests need
// (cc, pkg-config, nm, readelf) are here; else why not (a reason to skip:
// the kernel matrix's guests have neither tree nor compiler).
std::string MissingForSdkTests();

// `./dev install PREFIX` of what kBuild built, staged in `work`/stage and
// moved to `prefix`. False with the reason in *why when the install failed
// or put a file outside DESTDIR/PREFIX.
bool StageInstall(const std::string &work, const std::string &prefix,
                  std::string *why);

// "PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config ": a command prefix.
std::string PkgConfig(const std::string &prefix);

// The setpriv prefix that runs a command as uid/gid 65534, as
// tests/run_tests.py runs unprivileged passes.
extern const char kAsNobody[];

}  // namespace capsa_sdk

#endif  // CAPSA_TESTS_SDK_SDK_INSTALL_H_
