#include "tests/harness/memory.h"

#include <sys/mman.h>
#include <unistd.h>

namespace capsa_test {

bool TouchMemory(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  volatile char *c = static_cast<volatile char *>(p);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t i = 0; i < bytes; i += page) c[i] = 1;
  munmap(p, bytes);
  return true;
}

}  // namespace capsa_test
