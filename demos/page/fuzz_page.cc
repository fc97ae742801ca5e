// libFuzzer: arbitrary bytes as Markdown into a small frame between guard
// pages. Any crash, sanitizer report or out-of-bounds store is a bug.
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <string>

#include "demos/page/page.h"
#include "tests/workloads/test_util.h"

namespace {

struct State {
  State() {
    const std::string dir = "/usr/share/fonts/truetype/dejavu/";
    capsa_workloads::ReadFile(dir + "DejaVuSans.ttf", &regular);
    capsa_workloads::ReadFile(dir + "DejaVuSans-Bold.ttf", &bold);
    capsa_workloads::ReadFile(dir + "DejaVuSansMono.ttf", &mono);
    capsa_page_fonts fonts = {{regular.data(), regular.size()},
                              {bold.data(), bold.size()},
                              {mono.data(), mono.size()}};
    capsa_page_options o = {};
    o.font_px = 10;
    o.margin_px = 8;
    o.max_height = 4096;
    o.max_glyphs = 20000;
    if (capsa_page_new(&fonts, &o, &page) != 0) __builtin_trap();
    // The frame ends at a guard page.
    const size_t kPage = 4096;
    size = kW * kH * 4;
    size_t body = (size + kPage - 1) / kPage * kPage;
    auto *m = static_cast<uint8_t *>(mmap(nullptr, body + kPage,
                                          PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (m == MAP_FAILED || mprotect(m + body, kPage, PROT_NONE) != 0)
      __builtin_trap();
    pixels = m + body - size;
  }
  static constexpr uint32_t kW = 160, kH = 120;
  std::string regular, bold, mono;
  capsa_page *page = nullptr;
  uint8_t *pixels = nullptr;
  size_t size = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) {
  static State *s = new State;
  capsa_frame fr = {s->pixels, s->size,       State::kW,
                    State::kH, State::kW * 4, CAPSA_FRAME_RGBA8};
  capsa_page_result res;
  const char *md = reinterpret_cast<const char *>(data);
  if (capsa_page_render(s->page, md, len, &fr, &res) != 0) __builtin_trap();
  uint32_t h;
  if (capsa_page_measure(s->page, md, len, State::kW, &h) != 0 ||
      h != res.needed_height)
    __builtin_trap();  // measuring and drawing must agree
  return 0;
}
