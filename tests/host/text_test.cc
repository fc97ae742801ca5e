// Escaping renderer text (host/text.h): what reaches a terminal or a log is
// one printable line of valid UTF-8, bounded.
#include "host/text.h"

#include <gtest/gtest.h>
#include <string.h>

#include <string>

namespace {

std::string Esc(const std::string &in, size_t size = CAPSA__TEXT_MAX,
                size_t *left = nullptr) {
  std::string out(size, '\x7f');
  size_t l = capsa__text_escape(in.data(), in.size(), &out[0], out.size());
  if (left) *left = l;
  return std::string(out.c_str());
}

TEST(TextEscape, PrintableTextAndUtf8PassUnchanged) {
  EXPECT_EQ("frame 3 painted", Esc("frame 3 painted"));
  EXPECT_EQ("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
            Esc("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"));
  EXPECT_EQ("", Esc(""));
}

TEST(TextEscape, ControlsAreMadeVisible) {
  EXPECT_EQ("a\\nb\\rc\\td", Esc("a\nb\rc\td"));
  EXPECT_EQ("\\x1b[2J\\x1b]52;c;eA==\\x07", Esc("\x1b[2J\x1b]52;c;eA==\x07"));
  EXPECT_EQ("\\x7f", Esc("\x7f"));
  EXPECT_EQ("nul\\x00byte", Esc(std::string("nul\0byte", 8)));
  EXPECT_EQ("\\u{9b}31m \\u{9d}", Esc("\xc2\x9b"
                                      "31m \xc2\x9d"));  // 8-bit CSI/OSC
  EXPECT_EQ("back\\\\slash", Esc("back\\slash"));
}

TEST(TextEscape, BytesThatAreNoUtf8AreEscaped) {
  EXPECT_EQ("\\xff", Esc("\xff"));
  EXPECT_EQ("\\xc0\\xaf", Esc("\xc0\xaf"));                    // overlong '/'
  EXPECT_EQ("\\xed\\xa0\\x80", Esc("\xed\xa0\x80"));           // a surrogate
  EXPECT_EQ("\\xf4\\x90\\x80\\x80", Esc("\xf4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_EQ("x\\xe6\\x97", Esc("x\xe6\x97"));                  // truncated
}

TEST(TextEscape, LongTextIsCutAtACharacterAndSaysHowMuch) {
  size_t left = 0;
  std::string out = Esc(std::string(5000, 'a'), CAPSA__TEXT_MAX, &left);
  EXPECT_LT(out.size(), (size_t)CAPSA__TEXT_MAX);
  EXPECT_GT(left, 0u);
  std::string tail = "...[+" + std::to_string(left) + " bytes]";
  ASSERT_GE(out.size(), tail.size());
  EXPECT_EQ(tail, out.substr(out.size() - tail.size()));
  EXPECT_EQ(5000u, out.size() - tail.size() + left);
  // A multi-byte character is never split.
  std::string wide;
  for (int i = 0; i < 600; i++) wide += "\xc3\xa9";
  out = Esc(wide, 128, &left);
  EXPECT_LT(out.size(), 128u);
  size_t kept = out.find("...[+");
  ASSERT_NE(std::string::npos, kept);
  EXPECT_EQ(0u, kept % 2);
  EXPECT_EQ(wide.size(), kept + left);
  // Text that fits exactly is not cut.
  EXPECT_EQ(std::string(63, 'b'), Esc(std::string(63, 'b'), 64, &left));
  EXPECT_EQ(0u, left);
}

TEST(TextEscape, BadArguments) {
  char small[8] = "xxxxxxx";
  EXPECT_EQ(5u, capsa__text_escape("hello", 5, small, sizeof small));
  EXPECT_EQ('\0', small[0]);
  EXPECT_EQ(5u, capsa__text_escape("hello", 5, nullptr, 64));
  char out[64];
  EXPECT_EQ(0u, capsa__text_escape(nullptr, 10, out, sizeof out));
  EXPECT_STREQ("", out);
}

}  // namespace
