// See tests/harness/run_loop.h.
#include "tests/harness/run_loop.h"

namespace capsa_test {

bool RunLoopUntil(uv_loop_t *loop, const std::function<bool()> &done,
                  int timeout_ms) {
  uv_timer_t wake;
  uv_timer_init(loop, &wake);
  uv_timer_start(
      &wake, [](uv_timer_t *) {}, 50, 50);
  uv_update_time(loop);
  uint64_t end = uv_now(loop) + (uint64_t)timeout_ms;
  bool ok = true;
  while (!done()) {
    uv_update_time(loop);
    if (uv_now(loop) > end) {
      ok = false;
      break;
    }
    uv_run(loop, UV_RUN_ONCE);
  }
  uv_close(reinterpret_cast<uv_handle_t *>(&wake), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);
  return ok;
}

}  // namespace capsa_test
