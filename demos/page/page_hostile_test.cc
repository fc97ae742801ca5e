// demos/page against hostile Markdown: deep nesting, pathological inline
// syntax, invalid UTF-8, random bytes, inputs that would lay out forever.
// Each runs in a forked child with a timeout, so a hang or a crash is a
// failure, and the frame sits between guard pages, so a stray write faults.
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <string>

#include <gtest/gtest.h>

#include "demos/page/page.h"
#include "demos/page/page_fixture.h"
#include "tests/harness/child.h"

using capsa_workloads::Fonts;

namespace {

// An RGBA frame with an inaccessible page on each side.
class GuardedFrame {
 public:
  GuardedFrame(uint32_t w, uint32_t h) {
    size_ = static_cast<size_t>(w) * h * 4;
    size_t body = (size_ + kPage - 1) / kPage * kPage;
    len_ = body + 2 * kPage;
    void *m =
        mmap(nullptr, len_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<uint8_t *>(m);
    mprotect(base_ + kPage, body, PROT_READ | PROT_WRITE);
    // The frame ends exactly at the trailing guard page.
    frame = {base_ + kPage + body - size_,
             size_,
             w,
             h,
             static_cast<size_t>(w) * 4,
             CAPSA_FRAME_RGBA8};
  }
  ~GuardedFrame() {
    if (base_ != nullptr) munmap(base_, len_);
  }
  capsa_frame frame = {};

 private:
  static constexpr size_t kPage = 4096;
  uint8_t *base_ = nullptr;
  size_t size_ = 0, len_ = 0;
};

std::string Repeat(const std::string &s, size_t n) {
  std::string r;
  r.reserve(s.size() * n);
  for (size_t i = 0; i < n; i++) r += s;
  return r;
}

// Renders `md` into a guarded 800x1000 frame and checks the outcome is
// defined; returns the result through *out.
void RenderHostile(const std::string &md, capsa_page_result *out, int *rc,
                   const capsa_page_options *opts = nullptr) {
  Fonts f;
  ASSERT_TRUE(f.ok());
  capsa_page *page;
  ASSERT_EQ(0, capsa_page_new(&f.fonts, opts, &page));
  GuardedFrame fr(800, 1000);
  ASSERT_NE(nullptr, fr.frame.pixels);
  *rc = capsa_page_render(page, md.data(), md.size(), &fr.frame, out);
  uint32_t h = 0;
  int mrc = capsa_page_measure(page, md.data(), md.size(), 800, &h);
  EXPECT_EQ(*rc, mrc);
  if (*rc == 0) {
    EXPECT_EQ(out->needed_height, h);
    EXPECT_LE(h, 32768u);
  }
  capsa_page_free(page);
}

TEST(PageHostile, DeepNesting) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([] {
        capsa_page_result res;
        int rc;
        // 100 000 nested block quotes, then nested lists, then both mixed.
        RenderHostile(std::string(100000, '>') + " deep\n", &res, &rc);
        EXPECT_EQ(0, rc);
        EXPECT_GT(res.glyphs_drawn, 0u);  // the text still shows
        std::string lists;
        for (int i = 0; i < 1500; i++)
          lists += std::string(i * 2, ' ') + "- x\n";
        RenderHostile(lists, &res, &rc);
        EXPECT_EQ(0, rc);
        RenderHostile(Repeat("> 1. - > ", 20000) + "text\n", &res, &rc);
        EXPECT_EQ(0, rc);
        // A million-deep list on one line: markers past max_depth are not
        // drawn (they would overprint), those drawn count as glyphs.
        RenderHostile(Repeat("1. ", 1000000), &res, &rc);
        EXPECT_EQ(0, rc);
        EXPECT_LE(res.glyphs, 8u * 3);
      }),
      60000);
}

TEST(PageHostile, PathologicalInlines) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([] {
        capsa_page_result res;
        int rc;
        for (const std::string &md :
             {Repeat("*a **a ", 50000),
              Repeat("[", 100000) + Repeat("]", 100000), Repeat("![a](", 30000),
              Repeat("`", 100000) + "x", Repeat("<a href=\"", 30000),
              Repeat("_", 200000), Repeat("**x", 50000) + Repeat("x**", 50000),
              Repeat("[a](<", 30000), Repeat("\\", 100000),
              Repeat("&#", 50000)}) {
          RenderHostile(md, &res, &rc);
          EXPECT_EQ(0, rc) << md.substr(0, 10);
        }
      }),
      120000);
}

TEST(PageHostile, InvalidUtf8AndBinary) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([] {
        capsa_page_result res;
        int rc;
        std::string bad =
            "ok \xff\xfe \xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80 "
            "\xe2\x82 \xf0\x9f\x98 \x80\x80 end";
        RenderHostile(bad, &res, &rc);
        EXPECT_EQ(0, rc);
        EXPECT_GT(res.glyphs_drawn, 5u);
        // Random bytes, NULs included.
        std::string rnd = capsa_workloads::MakeData(1 << 20, 99);
        RenderHostile(rnd, &res, &rc);
        EXPECT_EQ(0, rc);
      }),
      60000);
}

TEST(PageHostile, LayoutLimitsStopEndlessPages) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([] {
        capsa_page_result res;
        int rc;
        // 200 000 paragraphs would be millions of pixels tall: stops at
        // max_height, reported as limited and truncated.
        RenderHostile(Repeat("a\n\n", 200000), &res, &rc);
        EXPECT_EQ(0, rc);
        EXPECT_TRUE(res.limited);
        EXPECT_TRUE(res.truncated);
        EXPECT_EQ(32768u, res.needed_height);
        // The glyph budget.
        capsa_page_options o = {};
        o.max_glyphs = 1000;
        RenderHostile(Repeat("word ", 10000), &res, &rc, &o);
        EXPECT_EQ(0, rc);
        EXPECT_TRUE(res.limited);
        EXPECT_LE(res.glyphs, 1001u);
        // Input size limit.
        o = {};
        o.max_input_bytes = 1 << 20;
        RenderHostile(std::string((1 << 20) + 1, 'a'), &res, &rc, &o);
        EXPECT_EQ(-E2BIG, rc);
        // A huge code block with tabs and very long lines.
        RenderHostile("```\n" + Repeat("\t\tx", 200000) + "\n```\n", &res, &rc);
        EXPECT_EQ(0, rc);
      }),
      120000);
}

}  // namespace
