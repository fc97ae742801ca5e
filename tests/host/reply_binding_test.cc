// Replies bound to their incarnation (issue 32, item 3): an embedder that
// answers a renderer's request asynchronously must not reach the renderer's
// next incarnation with it. Each incarnation numbers its requests from 1
// and a reply carries only the id, so an answer kept across a restart
// (capsa_renderer_restart, a crash, a request deadline) would be the next
// incarnation's answer to its own request 1, which may be another user's
// job. capsa_renderer_reply refuses it (-ESTALE) and sends nothing; an
// answer to a request already answered or never made is refused too
// (-ENOENT). Real hosts, real renderers, root and uid 65534.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "renderer/runtime.h"
#include "tests/harness/command.h"
#include "tests/host/interfaces/replies.capsa.h"

namespace {

const capsa_interface_t *const kAskerSpeaks[] = {&capsa_test_command_interface,
                                                 &capsa_test_replies_interface};

// --- renderer side ----------------------------------------------------------
// Every incarnation asks the host once, on start, and logs what it was
// answered ("answer=..."), or the call's error ("call=-N"). What the host
// sends while it waits is handed over only after on_start returns (no
// handler runs inside another), so the crash comes from within: an ask
// left unanswered for 1.5 s crashes the incarnation. A Job is left
// unanswered (its deadline, the host's, ends the incarnation).

int AskOnStart(capsa_rctx_t *r) {
  capsa_test_replies_ask_t ask;
  capsa_test_replies_ask_init(&ask);
  ask.tag = "whose job";
  capsa_msg_t m, reply;
  capsa_msg_init_iface(&m, &capsa_test_replies_interface,
                       CAPSA_TEST_REPLIES_ASK, &ask);
  int err = capsa_rctx_call(r, &m, 1500, &reply);
  if (err == -ETIMEDOUT) {
    signal(SIGSEGV, SIG_DFL);
    *(volatile int *)nullptr = 1;
  }
  if (err < 0) return capsa_rctx_log(r, CAPSA_LOG_INFO, "call=%d", err);
  const auto *a = reply.type == CAPSA_MSG_INTERFACE &&
                          reply.u.iface.id == CAPSA_TEST_REPLIES_ANSWER
                      ? static_cast<const capsa_test_replies_answer_t *>(
                            reply.u.iface.value)
                      : nullptr;
  capsa_rctx_log(r, CAPSA_LOG_INFO, "answer=%s",
                 a && a->data ? a->data : "(none)");
  return 0;
}

int OnAskerMessage(capsa_rctx_t *r, capsa_msg_t *m) {
  (void)r;
  if (capsa_test::RunData(m) == "crash") {
    signal(SIGSEGV, SIG_DFL);
    *(volatile int *)nullptr = 1;
  }
  return 0;  // a Job: never answered
}

const capsa_renderer_handlers_t kAsker = {"asker", AskOnStart,   OnAskerMessage,
                                          nullptr, kAskerSpeaks, 2};

CAPSA_RENDERER_KIND(k_asker, "asker", capsa_renderer_main, &kAsker)

// --- host side --------------------------------------------------------------

class ReplyBinding : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_EQ(0, uv_loop_init(&loop_));
    ASSERT_EQ(0, capsa_host_init(&loop_, &host_, nullptr, OnEvent));
    host_.data = this;
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, "asker", capsa_renderer_main, (void *)&kAsker);
    k.interfaces = kAskerSpeaks;
    k.ninterfaces = 2;
    k.max_restarts = 3;
    kind_ = capsa_host_define_kind(&host_, &k);
    ASSERT_GE(kind_, 0);
    ASSERT_EQ(0, capsa_host_start(&host_));
    ASSERT_EQ(0, capsa_host_spawn(&host_, kind_, nullptr, &r_));
  }
  void TearDown() override {
    capsa_host_close(&host_, [](capsa_host_t *h) {
      static_cast<ReplyBinding *>(h->data)->host_closed_ = true;
    });
    Run([&] { return host_closed_; }, 10000);
    EXPECT_TRUE(host_closed_);
    EXPECT_EQ(0, uv_loop_close(&loop_)) << "handles left open on the loop";
  }
  static void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
    auto *t = static_cast<ReplyBinding *>(h->data);
    t->order_ += std::string(capsa_host_event_name(ev->type)) + " ";
    if (ev->type == CAPSA_EV_LOG && ev->text) t->logs_.push_back(ev->text);
    if (ev->type == CAPSA_EV_MESSAGE && ev->msg &&
        ev->msg->type == CAPSA_MSG_INTERFACE &&
        ev->msg->u.iface.iface == &capsa_test_replies_interface &&
        ev->msg->u.iface.id == CAPSA_TEST_REPLIES_ASK) {
      // Kept to answer later, as an asynchronous embedder does: the header
      // (type, flags, request_id, origin) is all a reply needs.
      capsa_msg_t keep = *ev->msg;
      keep.u.iface.value = nullptr;
      keep.handle_count = 0;
      t->asks_.push_back(keep);
    }
  }
  template <typename Pred>
  bool Run(Pred done, int timeout_ms) {
    uint64_t end = uv_now(&loop_) + (uint64_t)timeout_ms;
    while (!done()) {
      uv_update_time(&loop_);
      if (uv_now(&loop_) > end) return false;
      uv_run(&loop_, UV_RUN_ONCE);
    }
    return true;
  }
  int Answer(const capsa_msg_t &ask, const char *data) {
    capsa_test_replies_answer_t a;
    capsa_test_replies_answer_init(&a);
    a.data = data;
    capsa_msg_t m;
    capsa_msg_init_iface(&m, &capsa_test_replies_interface,
                         CAPSA_TEST_REPLIES_ANSWER, &a);
    return capsa_renderer_reply(r_, &ask, &m);
  }
  bool Logged(const std::string &needle) {
    for (auto &l : logs_)
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }
  // The first incarnation asks; `end_it` ends it; the second asks with the
  // same request id. Alice's answer to the first is refused and never
  // reaches the second, which gets Bob's.
  template <typename End>
  void StaleAnswerIsRefused(End end_it, const char *why_ended) {
    ASSERT_TRUE(Run([&] { return asks_.size() == 1; }, 10000)) << order_;
    end_it();
    ASSERT_TRUE(Run([&] { return asks_.size() == 2; }, 10000)) << order_;
    EXPECT_NE(std::string::npos, order_.find(why_ended)) << order_;
    EXPECT_EQ(1u, capsa_renderer_restarts(r_));
    // The hazard: both incarnations' requests look alike on the wire.
    EXPECT_EQ(asks_[0].request_id, asks_[1].request_id);
    EXPECT_NE(asks_[0].origin, asks_[1].origin);
    EXPECT_EQ(-ESTALE, Answer(asks_[0], "alice-secret"))
        << "an answer to the first incarnation reached the second";
    EXPECT_EQ(0, Answer(asks_[1], "bob-data")) << capsa_renderer_send_error(r_);
    ASSERT_TRUE(Run([&] { return Logged("answer="); }, 10000)) << order_;
    EXPECT_TRUE(Logged("answer=bob-data")) << order_;
    EXPECT_FALSE(Logged("alice")) << "alice's answer reached bob's renderer";
    // Answered once: the same request again, and one never made, are
    // refused too.
    EXPECT_EQ(-ENOENT, Answer(asks_[1], "bob-again"));
    capsa_msg_t forged = asks_[1];
    forged.request_id += 7;
    EXPECT_EQ(-ENOENT, Answer(forged, "unasked"));
    capsa_msg_t built;  // by hand, never received
    capsa_msg_init(&built, CAPSA_MSG_INTERFACE);
    built.flags = CAPSA_MSG_F_REQUEST;
    built.request_id = asks_[1].request_id;
    EXPECT_EQ(-ESTALE, Answer(built, "unasked"));
    // The renderer is still serving: nothing it was sent was a bad message.
    EXPECT_EQ(std::string::npos, order_.find("bad-message")) << order_;
  }

  uv_loop_t loop_;
  capsa_host_t host_;
  bool host_closed_ = false;
  int kind_ = -1;
  capsa_renderer_t *r_ = nullptr;
  std::vector<capsa_msg_t> asks_;
  std::vector<std::string> logs_;
  std::string order_;
};

TEST_F(ReplyBinding, AnswerAcrossRestartIsRefused) {
  StaleAnswerIsRefused([&] { ASSERT_EQ(0, capsa_renderer_restart(r_)); },
                       "killed");
}

TEST_F(ReplyBinding, AnswerAcrossCrashRestartIsRefused) {
  StaleAnswerIsRefused([] {}, "crashed");  // unanswered for 1.5 s: it crashes
}

TEST_F(ReplyBinding, AnswerAcrossDeadlineRestartIsRefused) {
  bool timed_out = false;
  StaleAnswerIsRefused(
      [&] {
        capsa_test_command_job_t job;
        capsa_msg_t m;
        const std::string data = "never answered";  // borrowed by the job
        capsa_test::InitJob(&m, &job, data);
        ASSERT_EQ(0, capsa_renderer_request(
                         r_, &m, 200,
                         [](capsa_renderer_t *, int status, capsa_msg_t *,
                            void *arg) {
                           *static_cast<bool *>(arg) = status == -ETIMEDOUT;
                         },
                         &timed_out));
      },
      "killed");
  EXPECT_TRUE(timed_out);
}

// While the next incarnation is still starting (backing off), the answer is
// as stale: -ESTALE, not merely "not ready".
TEST_F(ReplyBinding, AnswerWhileRestartingIsStale) {
  ASSERT_TRUE(Run([&] { return asks_.size() == 1; }, 10000)) << order_;
  ASSERT_EQ(0, capsa_renderer_restart(r_));
  EXPECT_EQ(-ESTALE, Answer(asks_[0], "alice-secret"));
  ASSERT_TRUE(Run([&] { return asks_.size() == 2; }, 10000)) << order_;
  EXPECT_EQ(-ESTALE, Answer(asks_[0], "alice-secret"));
  EXPECT_EQ(0, Answer(asks_[1], "bob-data"));
  ASSERT_TRUE(Run([&] { return Logged("answer="); }, 10000)) << order_;
  EXPECT_FALSE(Logged("alice"));
}

}  // namespace
