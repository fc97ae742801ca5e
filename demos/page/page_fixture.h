// Test fixtures for the page renderer: the DejaVu fonts (read here, outside
// any sandbox, as the host would), the bundled sample, an RGBA frame with
// pixel counting helpers.
#ifndef CAPSA_DEMOS_PAGE_PAGE_FIXTURE_H_
#define CAPSA_DEMOS_PAGE_PAGE_FIXTURE_H_

#include <stdlib.h>

#include <string>
#include <vector>

#include "demos/page/page.h"
#include "host/png_writer.h"
#include "tests/harness/paths.h"
#include "tests/workloads/test_util.h"

namespace capsa_workloads {

// The bundled sample (data of workloads_tests in BUILD.gn); empty when it
// cannot be read, which the tests assert against.
inline std::string SampleMarkdown() {
  std::string md;
  ReadFile(capsa_test::SourceFile("demos/page/samples/page.md"), &md);
  return md;
}

struct Fonts {
  Fonts() {
    const char *dir = "/usr/share/fonts/truetype/dejavu/";
    ok_ = ReadFile(std::string(dir) + "DejaVuSans.ttf", &regular) &&
          ReadFile(std::string(dir) + "DejaVuSans-Bold.ttf", &bold) &&
          ReadFile(std::string(dir) + "DejaVuSansMono.ttf", &mono);
    fonts.regular = {regular.data(), regular.size()};
    fonts.bold = {bold.data(), bold.size()};
    fonts.mono = {mono.data(), mono.size()};
  }
  bool ok() const {
    return ok_;
  }
  std::string regular, bold, mono;
  capsa_page_fonts fonts = {};

 private:
  bool ok_ = false;
};

struct Frame {
  Frame(uint32_t w, uint32_t h) : px(static_cast<size_t>(w) * h * 4, 0) {
    frame = {px.data(),        px.size(), w, h, static_cast<size_t>(w) * 4,
             CAPSA_FRAME_RGBA8};
  }
  // Pixels in the rectangle that are not background white.
  size_t InkIn(uint32_t x0, uint32_t y0, uint32_t w, uint32_t h) const {
    size_t n = 0;
    for (uint32_t y = y0; y < y0 + h && y < frame.height; y++)
      for (uint32_t x = x0; x < x0 + w && x < frame.width; x++) {
        const uint8_t *p = &px[y * frame.stride + x * 4];
        n += !(p[0] == 255 && p[1] == 255 && p[2] == 255);
      }
    return n;
  }
  size_t CountColor(uint8_t r, uint8_t g, uint8_t b) const {
    size_t n = 0;
    for (size_t i = 0; i + 3 < px.size(); i += 4)
      n += px[i] == r && px[i + 1] == g && px[i + 2] == b;
    return n;
  }
  // Writes the frame as PNG into $CAPSA_WORKLOADS_PNG_DIR, when set, so a
  // person can look at it.
  void SavePng(const std::string &name) const {
    const char *dir = getenv("CAPSA_WORKLOADS_PNG_DIR");
    if (dir == nullptr) return;
    std::string path = std::string(dir) + "/" + name;
    FILE *f = fopen(path.c_str(), "wb");
    if (f == nullptr) return;
    capsa_png_image img = {px.data(),    px.size(),    frame.width,
                           frame.height, frame.stride, CAPSA_PNG_RGBA8};
    capsa_png_write_file(&img, f);
    fclose(f);
  }
  std::vector<uint8_t> px;
  capsa_frame frame;
};

}  // namespace capsa_workloads

#endif  // CAPSA_DEMOS_PAGE_PAGE_FIXTURE_H_
