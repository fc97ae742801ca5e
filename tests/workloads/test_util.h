// Helpers shared by the workload tests: temporary files, whole-file reads,
// running a shell command.
#ifndef CAPSA_TESTS_WORKLOADS_TEST_UTIL_H_
#define CAPSA_TESTS_WORKLOADS_TEST_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace capsa_workloads {

// A private temporary directory, removed (with its files) on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/capsa-workloads-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::string cmd = "rm -rf '" + path_ + "'";
      if (system(cmd.c_str()) != 0) {
      }
    }
  }
  bool ok() const {
    return !path_.empty();
  }
  std::string File(const std::string &name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

inline bool WriteFile(const std::string &path, const std::string &data) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n <= 0) {
      close(fd);
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return close(fd) == 0;
}

inline bool ReadFd(int fd, std::string *out) {
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

inline bool ReadFile(const std::string &path, std::string *out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ReadFd(fd, out);
  close(fd);
  return ok;
}

// Deterministic test data: mixed text and pseudo-random bytes, so that the
// compressor sees both compressible and incompressible stretches.
inline std::string MakeData(size_t n, unsigned seed) {
  std::string s;
  s.reserve(n);
  unsigned x = seed * 2654435761u + 1;
  while (s.size() < n) {
    x = x * 1103515245u + 12345u;
    if ((x >> 16) % 3 == 0) {
      s += "capability mode refuses every global namespace. ";
    } else {
      for (int i = 0; i < 64 && s.size() < n; i++) {
        x = x * 1103515245u + 12345u;
        s.push_back(static_cast<char>(x >> 24));
      }
    }
  }
  s.resize(n);
  return s;
}

}  // namespace capsa_workloads

#endif  // CAPSA_TESTS_WORKLOADS_TEST_UTIL_H_
