// A one-shot start (issue 34 item 4): the exec'd zygote takes the host's
// verdicts of the probes that fork (an unprivileged user namespace, the x32
// and i386 entries) instead of forking them again, and refuses a set the
// host could not have made.
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "host/thread_pool.h"
#include "renderer/runtime.h"
#include "sandbox/features.h"
#include "sandbox/testing.h"
#include "tests/harness/child.h"
#include "tests/harness/command.h"
#include "tests/harness/run_loop.h"

namespace {

// On any Run: logs what this renderer's features say (inherited from the
// zygote that forked it), "features userns=U x32=X i386=I detail=D".
int OnFeatures(capsa_rctx_t *r, capsa_msg_t *m) {
  if (capsa_test::AsRun(m) == nullptr) return -EPROTO;
  const struct capsa_features *f = capsa_features_cached();
  if (!f) {
    capsa_rctx_log(r, CAPSA_LOG_INFO, "features none");
    return 0;
  }
  capsa_rctx_log(r, CAPSA_LOG_INFO,
                 "features userns=%d x32=%d i386=%d detail=%s",
                 f->userns_unprivileged, f->x32_abi, f->i386_entry,
                 f->i386_detail ? f->i386_detail : "(null)");
  return 0;
}

const capsa_renderer_handlers_t kFeatures = {
    "oneshot-features", nullptr, OnFeatures, nullptr, capsa_test::kCommand, 1};

}  // namespace

CAPSA_RENDERER_KIND(oneshot_features, "oneshot-features", capsa_renderer_main,
                    &kFeatures)

namespace {

struct Host {
  uv_loop_t loop;
  capsa_host_t host;
  capsa_renderer_t *r = nullptr;
  bool ready = false, closed = false;
  std::vector<std::string> logs;
};

void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
  Host *t = static_cast<Host *>(h->data);
  if (ev->renderer != t->r) return;
  if (ev->type == CAPSA_EV_READY) t->ready = true;
  if (ev->type == CAPSA_EV_LOG && ev->status != CAPSA_HOST_LOG_STDERR &&
      ev->text)
    t->logs.push_back(ev->text);
  if (ev->type == CAPSA_EV_CLOSED) t->closed = true;
}

int StartHost(Host *t, bool allow_dns = false) {
  EXPECT_EQ(0, uv_loop_init(&t->loop));
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  EXPECT_EQ(0, capsa_host_init(&t->loop, &t->host, &o, OnEvent));
  t->host.data = t;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "oneshot-features", capsa_renderer_main,
                          (void *)&kFeatures);
  capsa_test::SpeakCommand(&k);
  k.allow_dns = allow_dns;
  EXPECT_EQ(0, capsa_host_define_kind(&t->host, &k));
  return capsa_host_start(&t->host);
}

void CloseHost(Host *t) {
  capsa_host_close(&t->host, nullptr);
  uv_run(&t->loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&t->loop));
}

// The renderer's "features ..." line, or "" when none came.
std::string RendererFeatures(Host *t) {
  int err = capsa_host_spawn(&t->host, 0, nullptr, &t->r);
  EXPECT_EQ(0, err) << strerror(-err);
  if (err < 0) return "";
  EXPECT_TRUE(capsa_test::RunLoopUntil(
      &t->loop, [&] { return t->ready || t->closed; }, 10000));
  if (!t->ready) return "";
  EXPECT_EQ(0, capsa_test::SendRun(t->r, "features"));
  std::string line;
  capsa_test::RunLoopUntil(
      &t->loop,
      [&] {
        for (auto &l : t->logs)
          if (l.find("features ") != std::string::npos) line = l;
        return !line.empty() || t->closed;
      },
      10000);
  return line;
}

const char kSigsys[] = "unknown (probed under a seccomp filter: SIGSYS)";
const char kNoAnswer[] = "unknown (the probe did not answer)";

// The host's verdicts, made to differ from what this kernel answers (a test
// override), are what the zygote's renderers see: the zygote took them and
// did not probe for itself.
TEST(OneShot, ExecdZygoteTakesTheHostsForkedProbeVerdicts) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        struct capsa_features f = *capsa_features_get();
        const char *detail =
            f.i386_detail && strcmp(f.i386_detail, kSigsys) == 0 ? kNoAnswer
                                                                 : kSigsys;
        f.i386_entry = false;
        f.i386_detail = detail;
        f.userns_unprivileged = !f.userns_unprivileged;
        f.x32_abi = !f.x32_abi;
        capsa__features_override_for_test(&f);
        struct capsa__features_verdicts v;
        ASSERT_EQ(0, capsa__features_export(&v));
        EXPECT_EQ(f.userns_unprivileged, v.userns_unprivileged != 0);
        Host t;
        ASSERT_EQ(0, StartHost(&t)) << capsa_host_start_error(&t.host);
        EXPECT_STREQ("exec", capsa_host_image(&t.host));
        std::string want =
            "features userns=" + std::to_string(f.userns_unprivileged) +
            " x32=" + std::to_string(f.x32_abi) + " i386=0 detail=" + detail;
        EXPECT_EQ(want, RendererFeatures(&t));
        CloseHost(&t);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      30000);
}

// Without an override the renderers see what this process probed: the
// verdicts travel unchanged.
TEST(OneShot, ExecdZygoteSeesWhatTheHostProbed) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        const struct capsa_features *f = capsa_features_get();
        Host t;
        ASSERT_EQ(0, StartHost(&t)) << capsa_host_start_error(&t.host);
        std::string want =
            "features userns=" + std::to_string(f->userns_unprivileged) +
            " x32=" + std::to_string(f->x32_abi) +
            " i386=" + std::to_string(f->i386_entry) +
            " detail=" + f->i386_detail;
        EXPECT_EQ(want, RendererFeatures(&t));
        CloseHost(&t);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      30000);
}

// A set of verdicts export could not have made (i386 present with a text
// that says absent) is refused by the zygote: the start fails, nothing
// runs on a contradiction.
TEST(OneShot, ExecdZygoteRefusesContradictoryVerdicts) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        struct capsa_features f = *capsa_features_get();
        f.i386_entry = true;
        f.i386_detail = kSigsys;
        capsa__features_override_for_test(&f);
        Host t;
        EXPECT_EQ(-EBADMSG, StartHost(&t));
        EXPECT_NE(nullptr, strstr(capsa_host_start_error(&t.host), "zygote"))
            << capsa_host_start_error(&t.host);
        CloseHost(&t);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      30000);
}

unsigned Threads() {
  unsigned n = 0;
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  while (struct dirent *e = readdir(d))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

// The broker's lookup threads start with the first host that has a kind
// allowed to look names up (allow_dns), not with every host: a host
// without one (capsa gzip) starts none, and the next host with one does.
TEST(OneShot, LookupThreadsStartOnlyForAHostThatMayLookUp) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        Host a;
        ASSERT_EQ(0, StartHost(&a)) << capsa_host_start_error(&a.host);
        unsigned without = Threads();
        Host b;
        ASSERT_EQ(0, StartHost(&b, true)) << capsa_host_start_error(&b.host);
        unsigned with = Threads();
        EXPECT_LT(without, with) << "a host without allow_dns started them";
        CloseHost(&b);
        CloseHost(&a);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      30000);
}

// A program that queues no libuv pool work (capsa gzip) says so, and a host
// without allow_dns then starts no thread at all: the process stays
// single-threaded through capsa_host_start, a spawn and a request.
TEST(OneShot, NoPoolAndNoLookupsMeansNoThreads) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        ASSERT_EQ(1u, Threads());
        capsa__thread_pool_not_used();
        Host t;
        ASSERT_EQ(0, StartHost(&t)) << capsa_host_start_error(&t.host);
        EXPECT_EQ(1u, Threads());
        EXPECT_NE("", RendererFeatures(&t));
        EXPECT_EQ(1u, Threads());
        CloseHost(&t);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      30000);
}

TEST(OneShot, AdoptRefusesVerdictsOutOfRangeAndKeepsItsOwn) {
  struct capsa__features_verdicts v;
  ASSERT_EQ(0, capsa__features_export(&v));
  const struct capsa_features before = *capsa_features_get();
  struct capsa__features_verdicts bad = v;
  bad.userns_unprivileged = 2;
  EXPECT_EQ(-EINVAL, capsa__features_adopt(&bad));
  bad = v;
  bad.x32_abi = 7;
  EXPECT_EQ(-EINVAL, capsa__features_adopt(&bad));
  bad = v;
  bad.i386_detail = 200;
  EXPECT_EQ(-EINVAL, capsa__features_adopt(&bad));
  bad = v;
  bad.i386_entry = !v.i386_entry;  // contradicts its detail text
  EXPECT_EQ(-EINVAL, capsa__features_adopt(&bad));
  EXPECT_EQ(-EINVAL, capsa__features_adopt(nullptr));
  EXPECT_EQ(-EINVAL, capsa__features_export(nullptr));
  // Probed already: the process's own answers stand.
  EXPECT_EQ(-EALREADY, capsa__features_adopt(&v));
  const struct capsa_features *after = capsa_features_get();
  EXPECT_EQ(before.i386_entry, after->i386_entry);
  EXPECT_STREQ(before.i386_detail, after->i386_detail);
  EXPECT_EQ(before.userns_unprivileged, after->userns_unprivileged);
}

}  // namespace
