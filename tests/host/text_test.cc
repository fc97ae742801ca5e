// Escaping renderer text (host/text.h): what reaches a terminal or a log is
// one printable line of valid UTF-8, bounded.
#include "host/text.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <string.h>

#include <string>

#include "host/capsa_text.h"

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

// Characters that reorder, hide or break what a reader sees (issue 32,
// item 6): bidi embeddings, overrides and isolates, zero-width characters,
// word joiners, the byte order mark, line and paragraph separators, tags.
TEST(TextEscape, FormatAndSeparatorCharactersAreMadeVisible) {
  struct {
    const char *in, *out;
  } cases[] = {
      {"\xe2\x80\x8b", "\\u{200b}"},       // zero-width space
      {"\xe2\x80\x8c", "\\u{200c}"},       // ZWNJ
      {"\xe2\x80\x8d", "\\u{200d}"},       // ZWJ
      {"\xe2\x80\x8e", "\\u{200e}"},       // LRM
      {"\xe2\x80\x8f", "\\u{200f}"},       // RLM
      {"\xe2\x80\xa8", "\\u{2028}"},       // line separator
      {"\xe2\x80\xa9", "\\u{2029}"},       // paragraph separator
      {"\xe2\x80\xaa", "\\u{202a}"},       // LRE
      {"\xe2\x80\xab", "\\u{202b}"},       // RLE
      {"\xe2\x80\xac", "\\u{202c}"},       // PDF
      {"\xe2\x80\xad", "\\u{202d}"},       // LRO
      {"\xe2\x80\xae", "\\u{202e}"},       // RLO
      {"\xe2\x81\xa0", "\\u{2060}"},       // word joiner
      {"\xe2\x81\xa4", "\\u{2064}"},       // invisible plus
      {"\xe2\x81\xa5", "\\u{2065}"},       // (unassigned, in the block)
      {"\xe2\x81\xa6", "\\u{2066}"},       // LRI
      {"\xe2\x81\xa7", "\\u{2067}"},       // RLI
      {"\xe2\x81\xa8", "\\u{2068}"},       // FSI
      {"\xe2\x81\xa9", "\\u{2069}"},       // PDI
      {"\xef\xbb\xbf", "\\u{feff}"},       // BOM / zero-width no-break space
      {"\xc2\xad", "\\u{ad}"},             // soft hyphen
      {"\xd8\x9c", "\\u{61c}"},            // Arabic letter mark
      {"\xf3\xa0\x81\x81", "\\u{e0041}"},  // tag 'A'
  };
  for (const auto &c : cases) EXPECT_EQ(c.out, Esc(c.in)) << c.out;
  // In context: the override cannot turn "fdp.exe" around.
  EXPECT_EQ("invoice\\u{202e}fdp.exe", Esc("invoice\xe2\x80\xae"
                                           "fdp.exe"));
  // Their neighbours are ordinary characters and pass.
  for (const char *ok : {"\xe2\x80\x8a",  // U+200A hair space
                         "\xe2\x80\x90",  // U+2010 hyphen
                         "\xe2\x80\xaf",  // U+202F narrow no-break space
                         "\xe2\x81\xb0",  // U+2070 superscript zero
                         "\xef\xbb\xbe",  // U+FEFE Arabic ligature
                         "\xc2\xa0"})     // U+00A0 no-break space
    EXPECT_EQ(ok, Esc(ok));
}

TEST(TextEscape, PublicEscaperIsTheSame) {
  const std::string in = "t\x1b]52;c;eA==\x07\xe2\x80\xae\xc2\x9b\n[capsa] ok";
  char out[CAPSA__TEXT_MAX], pub[CAPSA__TEXT_MAX];
  capsa__text_escape(in.data(), in.size(), out, sizeof out);
  EXPECT_EQ(0, capsa_text_escape(in.data(), in.size(), pub, sizeof pub));
  EXPECT_STREQ(out, pub);
  EXPECT_STREQ("t\\x1b]52;c;eA==\\x07\\u{202e}\\u{9b}\\n[capsa] ok", pub);
  std::string longer(500, 'x');
  EXPECT_EQ(1, capsa_text_escape(longer.data(), longer.size(), pub, 100));
  EXPECT_LT(strlen(pub), 100u);
  char small[CAPSA_TEXT_ESCAPE_MIN - 1] = "zz";
  EXPECT_EQ(-EINVAL, capsa_text_escape("a", 1, small, sizeof small));
  EXPECT_STREQ("", small);
  EXPECT_EQ(-EINVAL, capsa_text_escape("a", 1, nullptr, 64));
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
