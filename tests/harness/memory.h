// Memory that is really used, for tests of memory limits.
//
//   if (!capsa_test::TouchMemory(256u << 20)) return -ENOMEM;  // refused
//
// malloc + memset + free of a buffer nobody reads is dead code to the
// optimiser: clang removes all three, so "allocate 256 MiB" charged nothing
// and a memory limit looked ineffective. TouchMemory maps anonymous memory
// with mmap(2) and writes every page through a volatile pointer, so each page
// is faulted in and charged (RLIMIT_AS, cgroup memory.max) before it returns.
#ifndef CAPSA_TESTS_HARNESS_MEMORY_H_
#define CAPSA_TESTS_HARNESS_MEMORY_H_

#include <stddef.h>

namespace capsa_test {

// Maps `bytes`, touches every page, unmaps. false (errno set, ENOMEM under
// RLIMIT_AS) when the mapping is refused; under a cgroup memory.max the OOM
// killer ends the process inside the call instead.
bool TouchMemory(size_t bytes);

}  // namespace capsa_test

#endif  // CAPSA_TESTS_HARNESS_MEMORY_H_
