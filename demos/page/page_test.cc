// demos/page: the bundled sample renders as a page (text where it should
// be, wrapping within the margins), frames are bounds-checked, hostile
// Markdown stays bounded.
#include "demos/page/page.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "demos/page/page_fixture.h"
#include "host/png_writer.h"
#include "tests/workloads/test_util.h"

using capsa_workloads::Fonts;
using capsa_workloads::Frame;
using capsa_workloads::SampleMarkdown;

namespace {

TEST(Page, NewRejectsBadArgumentsAndFonts) {
  Fonts f;
  ASSERT_TRUE(f.ok());
  capsa_page *page = nullptr;
  EXPECT_EQ(-EINVAL, capsa_page_new(nullptr, nullptr, &page));
  EXPECT_EQ(-EINVAL, capsa_page_new(&f.fonts, nullptr, nullptr));
  capsa_page_fonts none = {};
  EXPECT_EQ(-EINVAL, capsa_page_new(&none, nullptr, &page));
  static const char kJunk[] = "this is not a font at all, just bytes";
  capsa_page_fonts junk = {{kJunk, sizeof kJunk}, {}, {}};
  EXPECT_EQ(-EBADMSG, capsa_page_new(&junk, nullptr, &page));
  EXPECT_EQ(nullptr, page);
  // A truncated font file is refused, not read past its end.
  capsa_page_fonts cut = f.fonts;
  cut.bold.len = 1000;
  EXPECT_EQ(-EBADMSG, capsa_page_new(&cut, nullptr, &page));
  capsa_page_options bad = {};
  bad.font_px = 1000;
  EXPECT_EQ(-EINVAL, capsa_page_new(&f.fonts, &bad, &page));
  ASSERT_EQ(0, capsa_page_new(&f.fonts, nullptr, &page));
  capsa_page_free(page);
  capsa_page_free(nullptr);
  // Only the regular font: bold and mono fall back to it.
  capsa_page_fonts one = {f.fonts.regular, {}, {}};
  ASSERT_EQ(0, capsa_page_new(&one, nullptr, &page));
  Frame fr(400, 300);
  EXPECT_EQ(0, capsa_page_render(page, "**b** `c`", 9, &fr.frame, nullptr));
  EXPECT_GT(fr.InkIn(0, 0, 400, 300), 0u);
  capsa_page_free(page);
}

TEST(Page, FrameChecks) {
  std::vector<uint8_t> px(100 * 4 * 50);
  capsa_frame ok = {px.data(), px.size(), 100, 50, 400, CAPSA_FRAME_RGBA8};
  EXPECT_EQ(0, capsa_frame_check(&ok));
  capsa_frame f = ok;
  f.height = 51;  // one row beyond the region
  EXPECT_EQ(-EINVAL, capsa_frame_check(&f));
  f = ok;
  f.stride = 399;
  EXPECT_EQ(-EINVAL, capsa_frame_check(&f));
  f = ok;
  f.pixels = nullptr;
  EXPECT_EQ(-EINVAL, capsa_frame_check(&f));
  f = ok;
  f.stride = SIZE_MAX / 2;
  EXPECT_EQ(-EINVAL, capsa_frame_check(&f));
  f = ok;
  f.format = static_cast<capsa_frame_format>(7);
  EXPECT_EQ(-EINVAL, capsa_frame_check(&f));
  f = ok;
  f.format = CAPSA_FRAME_GRAY8;
  f.stride = 100;
  EXPECT_EQ(0, capsa_frame_check(&f));
  f.width = 0;
  EXPECT_EQ(-EINVAL, capsa_frame_check(&f));
  EXPECT_EQ(-EINVAL, capsa_frame_check(nullptr));
}

class PageRender : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fonts_.ok());
    ASSERT_EQ(0, capsa_page_new(&fonts_.fonts, nullptr, &page_));
  }
  void TearDown() override {
    capsa_page_free(page_);
  }
  Fonts fonts_;
  capsa_page *page_ = nullptr;
};

TEST_F(PageRender, SampleLooksLikeAPage) {
  std::string md = SampleMarkdown();
  ASSERT_GT(md.size(), 1000u) << "demos/page/samples/page.md not found";
  ASSERT_FALSE(md.empty());
  uint32_t h = 0;
  ASSERT_EQ(0, capsa_page_measure(page_, md.data(), md.size(), 800, &h));
  EXPECT_GT(h, 800u);  // the sample is longer than a screen
  EXPECT_LT(h, 4000u);
  Frame fr(800, h);
  capsa_page_result res;
  ASSERT_EQ(0, capsa_page_render(page_, md.data(), md.size(), &fr.frame, &res));
  EXPECT_EQ(h, res.needed_height);
  EXPECT_FALSE(res.truncated);
  EXPECT_FALSE(res.limited);
  EXPECT_GT(res.glyphs_drawn, 1000u);
  EXPECT_EQ(res.glyphs, res.glyphs_drawn);
  // Margins stay white: 40 px on the left, right and top (less 4 px for
  // antialiased glyph overhang, e.g. a "T" whose bitmap starts at x = -1).
  EXPECT_EQ(0u, fr.InkIn(0, 0, 800, 36));
  EXPECT_EQ(0u, fr.InkIn(0, 0, 36, h));
  EXPECT_EQ(0u, fr.InkIn(764, 0, 36, h));
  // Text where the first heading is, and plenty of it on the page.
  EXPECT_GT(fr.InkIn(40, 40, 400, 40), 200u);
  EXPECT_GT(fr.InkIn(40, 0, 720, h), 20000u);
  // The code block's shaded box: light grey, not white, not text.
  EXPECT_GT(fr.CountColor(0xEF, 0xF1, 0xF3), 10000u);
  // Link blue is present (the link), as is the quote bar.
  EXPECT_GT(fr.CountColor(0xD0, 0xD7, 0xDE), 500u);
  fr.SavePng("sample.png");
}

TEST_F(PageRender, WrappingRespectsWidth) {
  // One long paragraph: at each width the text stays inside the margins and
  // the page grows taller as it gets narrower.
  std::string md;
  for (int i = 0; i < 60; i++) md += "wrapping words across the page ";
  uint32_t prev = 0;
  for (uint32_t w : {1200u, 800u, 400u, 200u}) {
    uint32_t h = 0;
    ASSERT_EQ(0, capsa_page_measure(page_, md.data(), md.size(), w, &h));
    Frame fr(w, h);
    capsa_page_result res;
    ASSERT_EQ(0,
              capsa_page_render(page_, md.data(), md.size(), &fr.frame, &res));
    EXPECT_FALSE(res.truncated);
    uint32_t m = w / 8 < 40 ? w / 8 : 40;
    EXPECT_EQ(0u, fr.InkIn(w - m + 2, 0, m - 2, h)) << w;
    EXPECT_EQ(0u, fr.InkIn(0, 0, m - 2, h)) << w;
    EXPECT_GT(fr.InkIn(m, 0, w - 2 * m, h), 1000u) << w;
    if (prev != 0) {
      EXPECT_GT(h, prev) << w;
    }
    prev = h;
  }
  // A single 5000-character word wraps per character inside the margins.
  std::string word(5000, 'W');
  uint32_t h = 0;
  ASSERT_EQ(0, capsa_page_measure(page_, word.data(), word.size(), 600, &h));
  Frame fr(600, h);
  capsa_page_result res;
  ASSERT_EQ(
      0, capsa_page_render(page_, word.data(), word.size(), &fr.frame, &res));
  EXPECT_EQ(5000u, res.glyphs_drawn);
  EXPECT_EQ(0u, fr.InkIn(560, 0, 40, h));
  EXPECT_GT(h, 2000u);
}

TEST_F(PageRender, TruncationReported) {
  std::string md = SampleMarkdown();
  ASSERT_GT(md.size(), 1000u) << "demos/page/samples/page.md not found";
  Frame fr(800, 300);
  capsa_page_result res;
  ASSERT_EQ(0, capsa_page_render(page_, md.data(), md.size(), &fr.frame, &res));
  EXPECT_TRUE(res.truncated);
  EXPECT_GT(res.needed_height, 300u);
  EXPECT_LT(res.glyphs_drawn, res.glyphs);
  EXPECT_GT(fr.InkIn(40, 40, 720, 260), 1000u);
}

TEST_F(PageRender, GrayFrameAndPaddedStride) {
  const uint32_t w = 300, h = 200;
  const size_t stride = w + 13;
  // The frame ends at a guard page: a write past the declared size faults.
  size_t size = stride * (h - 1) + w;
  size_t page = 4096, maplen = (size + page - 1) / page * page + page;
  uint8_t *m =
      static_cast<uint8_t *>(mmap(nullptr, maplen, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(MAP_FAILED, m);
  ASSERT_EQ(0, mprotect(m + maplen - page, page, PROT_NONE));
  uint8_t *px = m + (maplen - page - size);
  capsa_frame fr = {px, size, w, h, stride, CAPSA_FRAME_GRAY8};
  std::string md = SampleMarkdown();
  ASSERT_GT(md.size(), 1000u) << "demos/page/samples/page.md not found";
  capsa_page_result res;
  ASSERT_EQ(0, capsa_page_render(page_, md.data(), md.size(), &fr, &res));
  EXPECT_TRUE(res.truncated);
  size_t dark = 0;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) dark += px[y * stride + x] < 128;
  EXPECT_GT(dark, 500u);
  // Rejected geometry writes nothing.
  memset(px, 0x5A, size);
  fr.height = h + 1;
  EXPECT_EQ(-EINVAL, capsa_page_render(page_, md.data(), md.size(), &fr, &res));
  EXPECT_EQ(0x5A, px[0]);
  munmap(m, maplen);
}

TEST_F(PageRender, ArgumentErrors) {
  uint32_t h;
  EXPECT_EQ(-EINVAL, capsa_page_measure(nullptr, "x", 1, 800, &h));
  EXPECT_EQ(-EINVAL, capsa_page_measure(page_, "x", 1, 8, &h));
  EXPECT_EQ(-EINVAL, capsa_page_measure(page_, nullptr, 1, 800, &h));
  EXPECT_EQ(-EINVAL, capsa_page_measure(page_, "x", 1, 800, nullptr));
  EXPECT_EQ(0, capsa_page_measure(page_, nullptr, 0, 800, &h));
  EXPECT_EQ(80u, h);  // an empty page is its margins
  capsa_page_options small = {};
  small.max_input_bytes = 100;
  capsa_page *p2;
  ASSERT_EQ(0, capsa_page_new(&fonts_.fonts, &small, &p2));
  std::string big(101, 'a');
  EXPECT_EQ(-E2BIG, capsa_page_measure(p2, big.data(), big.size(), 800, &h));
  EXPECT_EQ(0, capsa_page_measure(p2, big.data(), 100, 800, &h));
  capsa_page_free(p2);
}

}  // namespace
