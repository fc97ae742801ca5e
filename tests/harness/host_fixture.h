// A gtest fixture with a capsa host on a loop of its own: what every host
// suite sets up and tears down alike. The suite gets each event in
// OnHostEvent; TearDown closes the host, waits for its close callback and
// checks that the loop closes with no handle left open (a host that leaks
// a handle fails every test of the suite).
//
//   class Mine : public capsa_test::HostFixture {
//    protected:
//     void OnHostEvent(const capsa_host_event_t *ev) override {
//       if (ev->type == CAPSA_EV_READY) ready_++;
//     }
//     unsigned ready_ = 0;
//   };
//   TEST_F(Mine, Starts) { ...; ASSERT_TRUE(Run([&] { return ready_; }, 5000));
//   }
#ifndef CAPSA_TESTS_HARNESS_HOST_FIXTURE_H_
#define CAPSA_TESTS_HARNESS_HOST_FIXTURE_H_

#include <gtest/gtest.h>
#include <uv.h>

#include "host/capsa_host.h"
#include "tests/harness/run_loop.h"

namespace capsa_test {

class HostFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, uv_loop_init(&loop_));
    ASSERT_EQ(0, capsa_host_init(&loop_, &host_, HostOptions(), Thunk));
    host_.data = this;
  }
  void TearDown() override {
    capsa_host_close(&host_, [](capsa_host_t *h) {
      static_cast<HostFixture *>(h->data)->host_closed_ = true;
    });
    Run([&] { return host_closed_; }, 10000);
    EXPECT_TRUE(host_closed_);
    EXPECT_EQ(0, uv_loop_close(&loop_)) << "handles left open on the loop";
  }
  // The host's options (NULL: defaults), read once by SetUp.
  virtual const capsa_host_options_t *HostOptions() {
    return nullptr;
  }
  virtual void OnHostEvent(const capsa_host_event_t *ev) = 0;

  // Runs the loop until done() holds (true) or timeout_ms passed (false).
  template <typename Pred>
  bool Run(Pred done, int timeout_ms) {
    return RunLoopUntil(&loop_, done, timeout_ms);
  }
  // Runs the loop for `ms`, whatever happens meanwhile.
  void Wait(int ms) {
    RunLoopUntil(
        &loop_, [] { return false; }, ms);
  }

  uv_loop_t loop_;
  capsa_host_t host_;
  bool host_closed_ = false;

 private:
  static void Thunk(capsa_host_t *h, const capsa_host_event_t *ev) {
    static_cast<HostFixture *>(h->data)->OnHostEvent(ev);
  }
};

}  // namespace capsa_test

#endif  // CAPSA_TESTS_HARNESS_HOST_FIXTURE_H_
