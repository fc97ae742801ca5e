// The page workload inside capability mode, as a renderer runs it:
// everything it touches is handed in before capsa_cap_enter() (fonts and
// Markdown as read-only sealed memory, the frame as a shared region). With
// CAPSA_TRACE=1 every refused syscall would print a violation line: the
// test captures stderr and requires none, so FreeType and cmark need
// nothing capability mode refuses.
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "demos/page/page.h"
#include "demos/page/page_fixture.h"
#include "host/png_writer.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/memfd.h"
#include "tests/harness/child.h"
#include "tests/workloads/capmode_util.h"
#include "tests/workloads/test_util.h"

using capsa_workloads::Fonts;
using capsa_workloads::ReadFd;
using capsa_workloads::SampleMarkdown;
using capsa_workloads::SkipWithoutCapmode;
using capsa_workloads::TraceCapture;

namespace {

// A read-only sealed region holding `data`, mapped read-only, as the host
// hands fonts and Markdown to a renderer.
struct RoRegion {
  explicit RoRegion(const std::string &data) {
    size = data.size() > 0 ? data.size() : 1;
    int fd = capsa_memfd_create("ro", size);
    if (fd < 0) return;
    void *w = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (w != MAP_FAILED) {
      memcpy(w, data.data(), data.size());
      munmap(w, size);
    }
    if (capsa_memfd_seal_readonly(fd) == 0) {
      void *r = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (r != MAP_FAILED) ptr = static_cast<const char *>(r);
    }
    close(fd);  // the mapping keeps the region
  }
  const char *ptr = nullptr;
  size_t size = 0;
};

TEST(CapmodeWorkloads, PageRendersIdenticallyInCapabilityMode) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([] {
        SkipWithoutCapmode();
        if (::testing::Test::IsSkipped()) return;
        Fonts f;
        ASSERT_TRUE(f.ok());
        RoRegion reg(f.regular), bold(f.bold), mono(f.mono);
        ASSERT_GT(SampleMarkdown().size(), 1000u);
        RoRegion md(SampleMarkdown());
        ASSERT_NE(nullptr, reg.ptr);
        ASSERT_NE(nullptr, md.ptr);
        capsa_page_fonts fonts = {{reg.ptr, f.regular.size()},
                                  {bold.ptr, f.bold.size()},
                                  {mono.ptr, f.mono.size()}};
        const uint32_t w = 800, h = 1400;
        size_t size = static_cast<size_t>(w) * h * 4;
        // Reference render outside the sandbox.
        std::string ref(size, '\0');
        {
          capsa_page *page;
          ASSERT_EQ(0, capsa_page_new(&fonts, nullptr, &page));
          capsa_frame fr = {reinterpret_cast<uint8_t *>(&ref[0]),
                            size,
                            w,
                            h,
                            w * 4,
                            CAPSA_FRAME_RGBA8};
          ASSERT_EQ(0, capsa_page_render(page, md.ptr, md.size, &fr, nullptr));
          capsa_page_free(page);
        }
        int frame_fd = capsa_memfd_create("frame", size);
        ASSERT_GE(frame_fd, 0);
        uint8_t *frame = static_cast<uint8_t *>(mmap(
            nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, frame_fd, 0));
        ASSERT_NE(MAP_FAILED, frame);

        // The host side too: the PNG writer on a descriptor held before entry.
        int png_fd = memfd_create("png", MFD_CLOEXEC);
        ASSERT_GE(png_fd, 0);

        TraceCapture trace;
        ASSERT_EQ(0, capsa_cap_enter());
        // Everything from FT_Init_FreeType on happens in capability mode.
        capsa_page *page;
        ASSERT_EQ(0, capsa_page_new(&fonts, nullptr, &page));
        uint32_t need = 0;
        ASSERT_EQ(0, capsa_page_measure(page, md.ptr, md.size, w, &need));
        capsa_frame fr = {frame, size, w, h, w * 4, CAPSA_FRAME_RGBA8};
        capsa_page_result res;
        ASSERT_EQ(0, capsa_page_render(page, md.ptr, md.size, &fr, &res));
        capsa_page_free(page);
        capsa_png_image img = {frame, size, w, h, w * 4, CAPSA_PNG_RGB8};
        EXPECT_EQ(0, capsa_png_write_fd(&img, png_fd));
        std::string violations = trace.Violations();
        EXPECT_EQ("", violations);
        EXPECT_EQ(need, res.needed_height);
        EXPECT_GT(res.glyphs_drawn, 1000u);
        EXPECT_EQ(0, memcmp(frame, ref.data(), size))
            << "the sandboxed render differs from the unsandboxed one";
        std::string png;
        ASSERT_EQ(0, lseek(png_fd, 0, SEEK_SET));
        ASSERT_TRUE(ReadFd(png_fd, &png));
        EXPECT_GT(png.size(), 1000u);
        EXPECT_EQ(0, png.compare(0, 8, "\x89PNG\r\n\x1a\n"));
      }),
      60000);
}

}  // namespace
