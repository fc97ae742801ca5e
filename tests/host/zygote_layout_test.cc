// What sibling renderers share (issue 32, item 7; docs/DESIGN.md): every
// renderer forked from one exec'd zygote has its stack canary, pointer
// guard (both from the zygote exec's AT_RANDOM) and address layout; with
// capsa_host_options_t.zygote_renew_after N the host replaces the zygote by
// a fresh exec after N renderers, so the next ones differ.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "renderer/runtime.h"
#include "tests/harness/run_loop.h"

namespace {

// What an exploit of one renderer would learn and reuse against another:
// the canary glibc keeps at %fs:0x28, the pointer-mangling guard at
// %fs:0x30 (x86_64; elsewhere only the layout is compared), and where this
// binary's code is mapped.
int ReportLayout(capsa_rctx_t *r) {
  unsigned long canary = 0, guard = 0;
#if defined(__x86_64__)
  __asm__ volatile("mov %%fs:0x28, %0" : "=r"(canary));
  __asm__ volatile("mov %%fs:0x30, %0" : "=r"(guard));
#endif
  capsa_rctx_log(r, CAPSA_LOG_INFO, "layout %lx %lx %lx", canary, guard,
                 (unsigned long)(uintptr_t)&ReportLayout);
  return 0;
}

const capsa_renderer_handlers_t kLayout = {"layout", ReportLayout, nullptr,
                                           nullptr,  nullptr,      0};

}  // namespace

CAPSA_RENDERER_KIND(k_layout, "layout", capsa_renderer_main, &kLayout)

namespace {

struct Layout {
  unsigned long canary = 0, guard = 0, code = 0;
};

struct Run {
  uv_loop_t loop;
  capsa_host_t host;
  std::vector<capsa_renderer_t *> rs;
  std::vector<Layout> seen;  // by spawn order
  std::vector<bool> got;
  bool closed = false;
};

void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
  Run *run = static_cast<Run *>(h->data);
  if (ev->type != CAPSA_EV_LOG || !ev->text || run->rs.empty()) return;
  // Renderers are spawned one at a time: the report is the latest one's
  // (an earlier one's handle may have been freed and its address reused).
  size_t i = run->rs.size() - 1;
  Layout l;
  if (run->rs[i] == ev->renderer && sscanf(ev->text, "layout %lx %lx %lx",
                                           &l.canary, &l.guard, &l.code) == 3) {
    run->seen[i] = l;
    run->got[i] = true;
    capsa_renderer_kill(ev->renderer);
  }
}

// Spawns n renderers of "layout", one after the other (each after the
// previous one reported), on a host with zygote_renew_after = renew.
std::vector<Layout> Spawn(unsigned n, unsigned renew, bool spare = false) {
  Run run;
  EXPECT_EQ(0, uv_loop_init(&run.loop));
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  o.zygote_renew_after = renew;
  EXPECT_EQ(0, capsa_host_init(&run.loop, &run.host, &o, OnEvent));
  run.host.data = &run;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "layout", capsa_renderer_main, (void *)&kLayout);
  k.keep_spare = spare;
  EXPECT_EQ(0, capsa_host_define_kind(&run.host, &k));
  int err = capsa_host_start(&run.host);
  EXPECT_EQ(0, err) << capsa_host_start_error(&run.host);
  run.seen.resize(n);
  run.got.assign(n, false);
  for (unsigned i = 0; err == 0 && i < n; i++) {
    capsa_renderer_t *r = nullptr;
    run.rs.push_back(nullptr);
    err = capsa_host_spawn(&run.host, 0, nullptr, &r);
    EXPECT_EQ(0, err) << i;
    run.rs[i] = r;
    EXPECT_TRUE(capsa_test::RunLoopUntil(
        &run.loop, [&] { return (bool)run.got[i]; }, 10000))
        << "renderer " << i << " did not report";
  }
  capsa_host_close(&run.host, [](capsa_host_t *h) {
    static_cast<Run *>(h->data)->closed = true;
  });
  EXPECT_TRUE(capsa_test::RunLoopUntil(
      &run.loop, [&] { return run.closed; }, 10000));
  EXPECT_EQ(0, uv_loop_close(&run.loop));
  return run.seen;
}

bool AslrOn() {
  FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "re");
  int v = 0;
  if (f) {
    if (fscanf(f, "%d", &v) != 1) v = 0;
    fclose(f);
  }
  return v != 0;
}

// The fact docs/DESIGN.md states: by default, siblings share all of it.
TEST(ZygoteLayout, ByDefaultSiblingsShareCanaryGuardAndLayout) {
  std::vector<Layout> l = Spawn(2, 0);
  ASSERT_EQ(2u, l.size());
  ASSERT_NE(0ul, l[0].code);
  EXPECT_EQ(l[0].code, l[1].code);
#if defined(__x86_64__)
  ASSERT_NE(0ul, l[0].canary);
  EXPECT_EQ(l[0].canary, l[1].canary);
  EXPECT_EQ(l[0].guard, l[1].guard);
#endif
}

// zygote_renew_after 2: renderers 0 and 1 come from the first zygote,
// renderer 2 from a fresh exec, with its own canary, guard and layout.
TEST(ZygoteLayout, RenewAfterNGivesTheNextRendererItsOwn) {
  std::vector<Layout> l = Spawn(3, 2);
  ASSERT_EQ(3u, l.size());
  EXPECT_EQ(l[0].code, l[1].code);
#if defined(__x86_64__)
  EXPECT_EQ(l[0].canary, l[1].canary);
  EXPECT_NE(l[1].canary, l[2].canary);
  EXPECT_NE(l[1].guard, l[2].guard);
#endif
  if (AslrOn()) {
    EXPECT_NE(l[1].code, l[2].code);
  }
}

// 1: an exec per renderer; no two share.
TEST(ZygoteLayout, RenewAfterOneSharesNothing) {
  std::vector<Layout> l = Spawn(3, 1);
  ASSERT_EQ(3u, l.size());
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++) {
#if defined(__x86_64__)
      EXPECT_NE(l[i].canary, l[j].canary) << i << " " << j;
#endif
      if (AslrOn()) {
        EXPECT_NE(l[i].code, l[j].code) << i << " " << j;
      }
    }
}

// A kind's pre-forked spare is the old zygote's: it goes with it, and the
// renderer after a renewal is the new zygote's (its spare or its fork).
TEST(ZygoteLayout, SparesDoNotOutliveTheirZygote) {
  std::vector<Layout> l = Spawn(3, 1, true);
  ASSERT_EQ(3u, l.size());
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++) {
#if defined(__x86_64__)
      EXPECT_NE(l[i].canary, l[j].canary) << i << " " << j;
#endif
      if (AslrOn()) {
        EXPECT_NE(l[i].code, l[j].code) << i << " " << j;
      }
    }
}

// A zygote forked from the host always has the host's canary and layout:
// the option cannot help there, and says so.
TEST(ZygoteLayout, RenewNeedsAnExecdZygote) {
  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  capsa_host_t host;
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  o.zygote_renew_after = 4;
  o.allow_forked_zygote = true;
  ASSERT_EQ(0, capsa_host_init(&loop, &host, &o, nullptr));
  capsa_kind_options_t k;
  // Not a registered name: the zygote would be a fork of this process.
  capsa_kind_options_init(&k, "layout-unregistered", capsa_renderer_main,
                          (void *)&kLayout);
  ASSERT_EQ(0, capsa_host_define_kind(&host, &k));
  EXPECT_EQ(-EINVAL, capsa_host_start(&host));
  EXPECT_NE(nullptr,
            strstr(capsa_host_start_error(&host), "zygote_renew_after"))
      << capsa_host_start_error(&host);
  capsa_host_close(&host, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&loop));
}

}  // namespace
