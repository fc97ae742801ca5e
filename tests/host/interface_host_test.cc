// Embedder interfaces on a real host (issue 14): a kind that speaks
// tests/ipc/interfaces/thumbnail.fbs, a renderer that lies about its
// interfaces in HELLO, one that sends a message breaking the schema, and the
// README's convert example (host/examples/convert.c) run as a program.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "ipc/interface.h"
#include "renderer/runtime.h"
#include "tests/harness/paths.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"

namespace {

const capsa_interface_t *const kThumb[] = {&capsa_test_thumbnail_interface};

// Sends one honest Progress, then (for "forger") a Progress whose payload
// is not a flatbuffer of the schema, then waits for the host.
int Speak(capsa_rctx_t *r) {
  capsa_test_thumbnail_progress_t p;
  capsa_test_thumbnail_progress_init(&p);
  p.note = "halfway";
  p.percent = 50;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_test_thumbnail_interface,
                       CAPSA_TEST_THUMBNAIL_PROGRESS, &p);
  int err = capsa_rctx_send(r, &m);
  if (err < 0) return err;
  if (capsa_rctx_data(r) == nullptr) return 0;
  static const uint8_t kJunk[] = {4, 0, 0, 0, 0xff, 0xff, 0, 0};
  capsa_msg_t bad;
  capsa_msg_init(&bad, CAPSA_MSG_INTERFACE);  // raw bytes, no value
  bad.u.iface.id = CAPSA_TEST_THUMBNAIL_PROGRESS;
  bad.u.iface.payload = {kJunk, sizeof kJunk};
  return capsa_rctx_send(r, &bad);
}

int Ignore(capsa_rctx_t *, capsa_msg_t *) {
  return 0;
}

const capsa_renderer_handlers_t kSpeaker = {"iface-speaker", Speak,  Ignore,
                                            nullptr,         kThumb, 1};
const capsa_renderer_handlers_t kForger = {"iface-forger",  Speak,  Ignore,
                                           (void *)"forge", kThumb, 1};
// Its kind options say it speaks nothing.
const capsa_renderer_handlers_t kLiar = {"iface-liar", nullptr, Ignore,
                                         nullptr,      kThumb,  1};
CAPSA_RENDERER_KIND(k_speaker, "iface-speaker", capsa_renderer_main, &kSpeaker)
CAPSA_RENDERER_KIND(k_forger, "iface-forger", capsa_renderer_main, &kForger)
CAPSA_RENDERER_KIND(k_liar, "iface-liar", capsa_renderer_main, &kLiar)

class IfaceHost : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_EQ(0, uv_loop_init(&loop_));
    ASSERT_EQ(0, capsa_host_init(&loop_, &host_, nullptr, OnEvent));
    host_.data = this;
  }
  void TearDown() override {
    capsa_host_close(&host_, [](capsa_host_t *h) {
      static_cast<IfaceHost *>(h->data)->closed_host_ = true;
    });
    for (int i = 0; i < 100000 && !closed_host_; i++)
      uv_run(&loop_, UV_RUN_ONCE);
    EXPECT_TRUE(closed_host_);
    EXPECT_EQ(0, uv_loop_close(&loop_));
  }
  static void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
    auto *t = static_cast<IfaceHost *>(h->data);
    t->events_ += std::string(capsa_host_event_name(ev->type)) + " ";
    if (ev->type == CAPSA_EV_MESSAGE && ev->msg->type == CAPSA_MSG_INTERFACE &&
        ev->msg->u.iface.iface == &capsa_test_thumbnail_interface &&
        ev->msg->u.iface.id == CAPSA_TEST_THUMBNAIL_PROGRESS) {
      auto *p = static_cast<const capsa_test_thumbnail_progress_t *>(
          ev->msg->u.iface.value);
      t->notes_.push_back(std::string(p->note) + " " +
                          std::to_string(p->percent));
    }
    if (ev->type == CAPSA_EV_BAD_MESSAGE) t->bad_ = ev->text;
    if (ev->type == CAPSA_EV_CLOSED) t->closed_++;
  }
  int Kind(const char *name, const capsa_renderer_handlers_t *hd,
           bool interfaces) {
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, name, capsa_renderer_main, (void *)hd);
    if (interfaces) {
      k.interfaces = kThumb;
      k.ninterfaces = 1;
    }
    return capsa_host_define_kind(&host_, &k);
  }
  template <typename P>
  bool Run(P done, int timeout_ms) {
    uv_update_time(&loop_);
    uint64_t end = uv_now(&loop_) + (uint64_t)timeout_ms;
    while (!done()) {
      uv_update_time(&loop_);
      if (uv_now(&loop_) > end) return false;
      uv_run(&loop_, UV_RUN_ONCE);
    }
    return true;
  }
  capsa_renderer_t *Spawn(int kind) {
    capsa_renderer_t *r = nullptr;
    EXPECT_EQ(0, capsa_host_spawn(&host_, kind, nullptr, &r));
    return r;
  }

  uv_loop_t loop_;
  capsa_host_t host_;
  bool closed_host_ = false;
  std::string events_, bad_;
  std::vector<std::string> notes_;
  unsigned closed_ = 0;
};

TEST_F(IfaceHost, TypedEventsReachTheEmbedderABrokenOneKillsOnlyItsSender) {
  int speaker = Kind("iface-speaker", &kSpeaker, true);
  int forger = Kind("iface-forger", &kForger, true);
  ASSERT_GE(speaker, 0);
  ASSERT_GE(forger, 0);
  ASSERT_EQ(0, capsa_host_start(&host_)) << capsa_host_start_error(&host_);
  capsa_renderer_t *honest = Spawn(speaker);
  Spawn(forger);
  ASSERT_TRUE(Run([&] { return closed_ == 1; }, 20000)) << events_;
  EXPECT_NE(std::string::npos, bad_.find("Progress")) << bad_;
  EXPECT_NE(std::string::npos, events_.find("bad-message")) << events_;
  // Both sent their honest event, typed; the honest renderer still serves.
  ASSERT_TRUE(Run([&] { return notes_.size() == 2; }, 5000)) << events_;
  EXPECT_EQ("halfway 50", notes_[0]);
  EXPECT_EQ("halfway 50", notes_[1]);
  capsa_msg_t ping;
  capsa_msg_init(&ping, CAPSA_MSG_PING);
  bool ponged = false;
  ASSERT_EQ(0, capsa_renderer_request(
                   honest, &ping, 5000,
                   [](capsa_renderer_t *, int st, capsa_msg_t *, void *a) {
                     *static_cast<bool *>(a) = st == 0;
                   },
                   &ponged));
  EXPECT_TRUE(Run([&] { return ponged; }, 5000)) << events_;
}

// A check the schema cannot express (say, frame geometry against the region
// the host gave) is the embedder's: report_bad_message kills the sender as
// the channel would, with the reason escaped, and never restarts it.
TEST_F(IfaceHost, EmbedderReportedBadMessageKillsWithoutRestart) {
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "iface-speaker", capsa_renderer_main,
                          (void *)&kSpeaker);
  k.interfaces = kThumb;
  k.ninterfaces = 1;
  k.max_restarts = 3;
  int kind = capsa_host_define_kind(&host_, &k);
  ASSERT_GE(kind, 0);
  ASSERT_EQ(0, capsa_host_start(&host_)) << capsa_host_start_error(&host_);
  capsa_renderer_t *r = Spawn(kind);
  ASSERT_NE(nullptr, r);
  ASSERT_TRUE(Run([&] { return notes_.size() == 1; }, 20000)) << events_;
  EXPECT_EQ(0, capsa_renderer_report_bad_message(r, "percent 50\x1b[2J\n"));
  // Once it is ending, a second report (or a kill) finds nothing to end.
  EXPECT_EQ(-ESRCH, capsa_renderer_report_bad_message(r, "again"));
  EXPECT_EQ(-EINVAL, capsa_renderer_report_bad_message(nullptr, "x"));
  ASSERT_TRUE(Run([&] { return closed_ == 1; }, 20000)) << events_;
  EXPECT_NE(std::string::npos, events_.find("bad-message")) << events_;
  EXPECT_EQ(std::string::npos, events_.find("restarted")) << events_;
  EXPECT_NE(std::string::npos, bad_.find("percent 50")) << bad_;
  for (char c : bad_) EXPECT_FALSE(c == 0x1b || c == '\n') << bad_;
}

TEST_F(IfaceHost, ARendererSpeakingOtherInterfacesIsRefusedAtHello) {
  int liar = Kind("iface-liar", &kLiar, false);
  ASSERT_GE(liar, 0);
  ASSERT_EQ(0, capsa_host_start(&host_)) << capsa_host_start_error(&host_);
  Spawn(liar);
  ASSERT_TRUE(Run([&] { return closed_ == 1; }, 20000)) << events_;
  EXPECT_EQ(std::string::npos, events_.find("ready")) << events_;
  EXPECT_NE(std::string::npos,
            bad_.find("hello: interfaces 'capsa.test.thumbnail'"))
      << bad_;
}

TEST_F(IfaceHost, KindWithABadInterfaceListIsRefused) {
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "iface-speaker", capsa_renderer_main,
                          (void *)&kSpeaker);
  k.ninterfaces = 1;  // and no list
  EXPECT_EQ(-EINVAL, capsa_host_define_kind(&host_, &k));
  k.interfaces = kThumb;
  k.ninterfaces = CAPSA_IFACE_MAX_PER_CHANNEL + 1;
  EXPECT_EQ(-EINVAL, capsa_host_define_kind(&host_, &k));
  capsa_interface_t broken = capsa_test_thumbnail_interface;
  broken.nmessages = 0;
  const capsa_interface_t *const list[] = {&broken};
  k.interfaces = list;
  k.ninterfaces = 1;
  EXPECT_EQ(-EINVAL, capsa_host_define_kind(&host_, &k));
  k.interfaces = kThumb;
  EXPECT_GE(capsa_host_define_kind(&host_, &k), 0);
}

// The README's example, as its user runs it: a typed request carrying a
// read-only input region and a writable output region, a typed reply.
TEST(IfaceExample, ConvertRunsEndToEnd) {
  std::string example = capsa_test::BuildProduct("convert_example");
  ASSERT_TRUE(capsa_test::Present(example, X_OK));
  for (const char *arg : {"", "mixed Case 123"}) {
    std::string cmd = example;
    if (*arg) cmd += std::string(" '") + arg + "'";
    cmd += " 2>&1";
    FILE *f = popen(cmd.c_str(), "r");
    ASSERT_NE(nullptr, f);
    std::string out;
    char buf[256];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    int st = pclose(f);
    ASSERT_TRUE(WIFEXITED(st)) << out;
    EXPECT_EQ(0, WEXITSTATUS(st)) << out;
    EXPECT_EQ(
        *arg ? "converted: MIXED CASE 123\n" : "converted: HELLO, CAPSA\n",
        out);
  }
}

}  // namespace
