// The workloads inside capability mode, as a renderer runs them: everything
// they touch is handed in before capsa_cap_enter() (fonts and Markdown as
// read-only sealed memory, the frame as a shared region, gzip's input
// read-only and output write-only). With CAPSA_TRACE=1 every refused syscall
// would print a violation line: the tests capture stderr and require none,
// so FreeType, cmark and zlib need nothing capability mode refuses.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "host/png_writer.h"
#include "renderer/gzip/gzip.h"
#include "renderer/page/page.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/memfd.h"
#include "tests/harness/child.h"
#include "tests/workloads/page_fixture.h"
#include "tests/workloads/test_util.h"

using capsa_workloads::Fonts;
using capsa_workloads::ReadFd;
using capsa_workloads::ReadFile;
using capsa_workloads::SampleMarkdown;
using capsa_workloads::TempDir;
using capsa_workloads::WriteFile;

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

// Sends stderr to a memfd and turns on violation tracing; Violations()
// returns what was traced. Must be set up before capsa_cap_enter().
struct TraceCapture {
  TraceCapture() {
    fd = memfd_create("trace", MFD_CLOEXEC);
    saved = dup(2);
    if (fd >= 0) dup2(fd, 2);
    setenv("CAPSA_TRACE", "1", 1);
  }
  std::string Violations() {
    fflush(stderr);
    std::string all;
    if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0) ReadFd(fd, &all);
    dup2(saved, 2);  // dup2 onto a held fd: allowed in capability mode
    return all;
  }
  int fd = -1, saved = -1;
};

void SkipWithoutCapmode() {
  capsa_capmode_report rep;
  ASSERT_EQ(0, capsa_capmode_default_report(&rep));
  if (!rep.complete) GTEST_SKIP() << "capability mode incomplete here";
}

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

// Runs compress or gunzip in capability mode from a read-only input to a
// write-only output, both opened before entry.
void GzipInCapmode(bool compress, const std::string &in, const std::string &out,
                   int expect) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([&] {
        SkipWithoutCapmode();
        if (::testing::Test::IsSkipped()) return;
        int i = open(in.c_str(), O_RDONLY | O_CLOEXEC);
        int o =
            open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_GE(i, 0);
        ASSERT_GE(o, 0);
        TraceCapture trace;
        ASSERT_EQ(0, capsa_cap_enter());
        capsa_gzip_stats st;
        int rc = compress ? capsa_gzip_compress(i, o, nullptr, &st)
                          : capsa_gunzip(i, o, nullptr, &st);
        EXPECT_EQ(expect, rc);
        // The sandbox holds: the output path cannot be reopened.
        EXPECT_EQ(-1, open(out.c_str(), O_RDONLY));
        EXPECT_EQ(ECAPMODE, errno);
        std::string violations = trace.Violations();
        // The one deliberate violation above is the only one.
        EXPECT_EQ(1u, std::count(violations.begin(), violations.end(), '\n'))
            << violations;
      }),
      60000);
}

TEST(CapmodeWorkloads, GzipRoundTripWithSystemGzip) {
  // Decided here, not only in the children: the steps between them need
  // what the sandboxed ones wrote.
  SkipWithoutCapmode();
  if (::testing::Test::IsSkipped()) return;
  TempDir d;
  ASSERT_TRUE(d.ok());
  std::string data = capsa_workloads::MakeData(3 << 20, 21);
  ASSERT_TRUE(WriteFile(d.File("in"), data));
  GzipInCapmode(true, d.File("in"), d.File("ours.gz"), 0);
  // What the sandboxed gzip wrote, the system gzip reads.
  std::string cmd =
      "gzip -dc '" + d.File("ours.gz") + "' | cmp -s - '" + d.File("in") + "'";
  EXPECT_EQ(0, system(cmd.c_str()));
  // What the system gzip wrote, the sandboxed gunzip reads.
  cmd = "gzip -c '" + d.File("in") + "' > '" + d.File("sys.gz") + "'";
  ASSERT_EQ(0, system(cmd.c_str()));
  GzipInCapmode(false, d.File("sys.gz"), d.File("out"), 0);
  std::string back;
  ASSERT_TRUE(ReadFile(d.File("out"), &back));
  EXPECT_TRUE(back == data);
  // Corrupt input in the sandbox: a clear error, not a crash.
  std::string gz;
  ASSERT_TRUE(ReadFile(d.File("sys.gz"), &gz));
  ASSERT_TRUE(WriteFile(d.File("cut.gz"), gz.substr(0, gz.size() / 2)));
  GzipInCapmode(false, d.File("cut.gz"), d.File("out2"), -ENODATA);
}

}  // namespace
