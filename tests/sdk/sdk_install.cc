// Helpers of the SDK tests: a staged install (tests/sdk/sdk_install.h).
#include "tests/sdk/sdk_install.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace capsa_sdk {

const std::string kRoot = CAPSA_SOURCE_ROOT;
const std::string kBuild = CAPSA_BUILD_DIR;
const char kAsNobody[] =
    "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all ";

int Sh(const std::string &cmd, std::string *out) {
  FILE *p = popen(("(" + cmd + ") 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string Q(const std::string &s) {
  return "'" + s + "'";
}

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string &s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) v.push_back(l);
  return v;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/capsa-sdk-XXXXXX";
  if (mkdtemp(tmpl)) {
    path = tmpl;
    chmod(tmpl, 0755);
  }
}

TempDir::~TempDir() {
  std::string out;
  if (!path.empty()) Sh("rm -rf " + Q(path), &out);
}

std::string MissingForSdkTests() {
  std::string out;
  if (access((kRoot + "/dev").c_str(), X_OK) != 0 ||
      access((kBuild + "/build.ninja").c_str(), F_OK) != 0)
    return "source or build tree not reachable: " + kRoot;
  for (const char *tool : {"cc", "pkg-config", "nm", "readelf"})
    if (Sh(std::string("command -v ") + tool, &out) != 0)
      return std::string(tool) + " not installed";
  return "";
}

bool StageInstall(const std::string &work, const std::string &prefix,
                  std::string *why) {
  std::string stage = work + "/stage", out;
  // A packager's install: staged under DESTDIR, from the built tree.
  std::string cmd = "DESTDIR=" + Q(stage) + " CAPSA_OUT=" + Q(kBuild) + " " +
                    Q(kRoot + "/dev") + " install " + Q(prefix);
  if (Sh(cmd, &out) != 0) {
    *why = cmd + "\n" + out;
    return false;
  }
  // Nothing lands outside DESTDIR/PREFIX; then "unpack" it at PREFIX.
  if (Sh("cd " + Q(stage) + " && find . -mindepth 1 -maxdepth 64 ! -path " +
             Q("." + prefix + "*") + " ! -type d | grep . && exit 1; mv " +
             Q(stage + prefix) + " " + Q(prefix),
         &out) != 0) {
    *why = "installed outside DESTDIR/PREFIX:\n" + out;
    return false;
  }
  return true;
}

std::string PkgConfig(const std::string &prefix) {
  return "PKG_CONFIG_PATH=" + Q(prefix + "/lib/pkgconfig") + " pkg-config ";
}

}  // namespace capsa_sdk
