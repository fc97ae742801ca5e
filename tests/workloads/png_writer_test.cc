// host/png_writer: frames written as PNG and read back with libpng; lying
// geometry refused before any pixel is read; write errors reported.
#include "host/png_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/workloads/test_util.h"

namespace {

// Decodes PNG bytes with libpng's simplified API into `format` pixels.
bool Decode(const std::string &bytes, png_uint_32 format, png_image *img,
            std::vector<uint8_t> *px) {
  memset(img, 0, sizeof *img);
  img->version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(img, bytes.data(), bytes.size()))
    return false;
  img->format = format;
  px->resize(PNG_IMAGE_SIZE(*img));
  return png_image_finish_read(img, nullptr, px->data(), 0, nullptr) != 0;
}

// Encodes through a memfd so the test reads back exactly what went out.
int EncodeToString(const capsa_png_image &img, std::string *out) {
  int fd = memfd_create("png", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  int r = capsa_png_write_fd(&img, fd);
  lseek(fd, 0, SEEK_SET);
  capsa_workloads::ReadFd(fd, out);
  close(fd);
  return r;
}

TEST(PngWriter, RgbaWithStrideRoundTrips) {
  const uint32_t w = 37, h = 23;
  const size_t stride = w * 4 + 12;  // padded rows
  std::vector<uint8_t> px(stride * h, 0xEE);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      uint8_t *p = &px[y * stride + x * 4];
      p[0] = static_cast<uint8_t>(x * 7);
      p[1] = static_cast<uint8_t>(y * 11);
      p[2] = static_cast<uint8_t>(x ^ y);
      p[3] = static_cast<uint8_t>(255 - x);
    }
  capsa_png_image img = {px.data(), px.size(), w, h, stride, CAPSA_PNG_RGBA8};
  std::string bytes;
  ASSERT_EQ(0, EncodeToString(img, &bytes));
  png_image back;
  std::vector<uint8_t> got;
  ASSERT_TRUE(Decode(bytes, PNG_FORMAT_RGBA, &back, &got));
  EXPECT_EQ(w, back.width);
  EXPECT_EQ(h, back.height);
  for (uint32_t y = 0; y < h; y++)
    ASSERT_EQ(0, memcmp(&got[y * w * 4], &px[y * stride], w * 4)) << y;
}

TEST(PngWriter, GrayAndRgbFormats) {
  const uint32_t w = 16, h = 9;
  std::vector<uint8_t> gray(w * h);
  for (size_t i = 0; i < gray.size(); i++) gray[i] = static_cast<uint8_t>(i);
  capsa_png_image g = {gray.data(), gray.size(), w, h, w, CAPSA_PNG_GRAY8};
  std::string bytes;
  ASSERT_EQ(0, EncodeToString(g, &bytes));
  png_image back;
  std::vector<uint8_t> got;
  ASSERT_TRUE(Decode(bytes, PNG_FORMAT_GRAY, &back, &got));
  EXPECT_EQ(0, (int)(back.format & PNG_FORMAT_FLAG_COLOR));
  EXPECT_TRUE(got == gray);

  // RGB8: RGBA in memory, alpha dropped in the file.
  std::vector<uint8_t> rgba(w * h * 4);
  for (size_t i = 0; i < rgba.size(); i++)
    rgba[i] = static_cast<uint8_t>(i * 3);
  capsa_png_image c = {rgba.data(), rgba.size(), w, h, w * 4, CAPSA_PNG_RGB8};
  ASSERT_EQ(0, EncodeToString(c, &bytes));
  ASSERT_TRUE(Decode(bytes, PNG_FORMAT_RGB, &back, &got));
  EXPECT_EQ(0, (int)(back.format & PNG_FORMAT_FLAG_ALPHA));
  for (size_t i = 0; i < w * h; i++)
    ASSERT_EQ(0, memcmp(&got[i * 3], &rgba[i * 4], 3)) << i;
}

TEST(PngWriter, LyingGeometryRefusedBeforeReading) {
  // The region is one page; the claims around it must all be refused.
  const size_t region = 4096;
  void *m = mmap(nullptr, region * 2, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, m);
  // A guard page right after the region: any over-read would fault.
  ASSERT_EQ(0, mprotect(static_cast<char *>(m) + region, region, PROT_NONE));
  const uint8_t *px = static_cast<const uint8_t *>(m);
  struct Case {
    uint32_t w, h;
    size_t stride;
    int fmt;
  } cases[] = {
      {0, 1, 4, CAPSA_PNG_RGBA8},      // zero width
      {1, 0, 4, CAPSA_PNG_RGBA8},      // zero height
      {32, 33, 128, CAPSA_PNG_RGBA8},  // one row too many
      {32, 32, 127, CAPSA_PNG_RGBA8},  // stride < row
      {33, 31, 128, CAPSA_PNG_RGBA8},  // width beyond stride
      {CAPSA_PNG_MAX_DIM + 1, 1, 1u << 20, CAPSA_PNG_GRAY8},  // too wide
      {1, 3, SIZE_MAX / 2, CAPSA_PNG_GRAY8},  // stride overflows
      {4, 4, 16, 99},                         // unknown format
  };
  for (const Case &c : cases) {
    capsa_png_image img = {px,  region,   c.w,
                           c.h, c.stride, static_cast<capsa_png_format>(c.fmt)};
    EXPECT_EQ(-EINVAL, capsa_png_check(&img)) << c.w << "x" << c.h;
    EXPECT_EQ(-EINVAL, capsa_png_write_fd(&img, 1)) << c.w << "x" << c.h;
  }
  // The largest frame that fits exactly is accepted, the last row reaching
  // the region's end (a padded stride need not cover the last row's padding).
  capsa_png_image fits = {px, region, 30, 32, 128, CAPSA_PNG_RGBA8};
  EXPECT_EQ(0, capsa_png_check(&fits));
  std::string bytes;
  EXPECT_EQ(0, EncodeToString(fits, &bytes));
  capsa_png_image null_px = {nullptr, region, 1, 1, 4, CAPSA_PNG_RGBA8};
  EXPECT_EQ(-EINVAL, capsa_png_check(&null_px));
  EXPECT_EQ(-EINVAL, capsa_png_check(nullptr));
  munmap(m, region * 2);
}

TEST(PngWriter, WriteErrorsReported) {
  std::vector<uint8_t> px(64 * 64 * 4, 0x80);
  capsa_png_image img = {px.data(), px.size(), 64, 64, 256, CAPSA_PNG_RGBA8};
  EXPECT_EQ(-EBADF, capsa_png_write_fd(&img, -1));
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  EXPECT_EQ(-EBADF, capsa_png_write_fd(&img, p[0]));  // read end
  close(p[0]);
  struct sigaction sa = {}, old;
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, &old);
  EXPECT_EQ(-EPIPE, capsa_png_write_fd(&img, p[1]));  // no reader
  sigaction(SIGPIPE, &old, nullptr);
  close(p[1]);
  EXPECT_EQ(-EINVAL, capsa_png_write_file(&img, nullptr));
}

TEST(PngWriter, StdioStream) {
  std::vector<uint8_t> px(8 * 8 * 4, 0x40);
  capsa_png_image img = {px.data(), px.size(), 8, 8, 32, CAPSA_PNG_RGBA8};
  char *buf = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ASSERT_NE(nullptr, f);
  ASSERT_EQ(0, capsa_png_write_file(&img, f));
  std::string bytes(buf, len);
  fclose(f);
  free(buf);
  png_image back;
  std::vector<uint8_t> got;
  ASSERT_TRUE(Decode(bytes, PNG_FORMAT_RGBA, &back, &got));
  EXPECT_TRUE(got == px);
}

}  // namespace
