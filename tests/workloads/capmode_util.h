// Helpers for running a workload inside capability mode in a test (the
// demos' capmode tests, //demos/<kind>): stderr captured with violation
// tracing on, and a skip where capability mode is incomplete.
#ifndef CAPSA_TESTS_WORKLOADS_CAPMODE_UTIL_H_
#define CAPSA_TESTS_WORKLOADS_CAPMODE_UTIL_H_

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode.h"
#include "tests/workloads/test_util.h"

namespace capsa_workloads {

// Sends stderr to a memfd and turns on violation tracing; Violations()
// returns what was traced. Must be set up before capsa_cap_enter().
struct TraceCapture {
  TraceCapture() {
    fd = memfd_create("trace", MFD_CLOEXEC);
    saved = dup(2);
    if (fd >= 0) dup2(fd, 2);
    setenv("CAPSA_TRACE", "1", 1);
  }
  std::string Violations() {
    fflush(stderr);
    std::string all;
    if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0) ReadFd(fd, &all);
    dup2(saved, 2);  // dup2 onto a held fd: allowed in capability mode
    return all;
  }
  int fd = -1, saved = -1;
};

inline void SkipWithoutCapmode() {
  capsa_capmode_report rep;
  ASSERT_EQ(0, capsa_capmode_default_report(&rep));
  if (!rep.complete) GTEST_SKIP() << "capability mode incomplete here";
}

}  // namespace capsa_workloads

#endif  // CAPSA_TESTS_WORKLOADS_CAPMODE_UTIL_H_
