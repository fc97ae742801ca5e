// Runs a libuv loop until a condition holds or a deadline passes, whatever
// the loop has (or lacks) to wake it: a timer of its own brings uv_run back
// every 50 ms, so a test whose awaited event never comes fails at its
// deadline instead of blocking in epoll_wait (no timer armed, nothing to
// read) until the watchdog ends the whole binary.
//
//   ASSERT_TRUE(capsa_test::RunLoopUntil(&loop, [&] { return done; }, 5000));
#ifndef CAPSA_TESTS_HARNESS_RUN_LOOP_H_
#define CAPSA_TESTS_HARNESS_RUN_LOOP_H_

#include <uv.h>

#include <functional>

namespace capsa_test {

// True once done() holds; false when timeout_ms passed first. `loop` is the
// caller's; the wake-up timer is closed again before this returns (one
// UV_RUN_NOWAIT pass finishes the close).
bool RunLoopUntil(uv_loop_t *loop, const std::function<bool()> &done,
                  int timeout_ms);

}  // namespace capsa_test

#endif  // CAPSA_TESTS_HARNESS_RUN_LOOP_H_
