// capsa_utf8_decode: what counts as one character of renderer text.
#include "ipc/utf8.h"

#include <string>

#include <gtest/gtest.h>

namespace {

size_t Decode(const std::string &s, uint32_t *cp) {
  return capsa_utf8_decode(s.data(), s.size(), cp);
}

TEST(Utf8, WellFormedSequencesDecode) {
  uint32_t cp = 0;
  EXPECT_EQ(1u, Decode("A", &cp));
  EXPECT_EQ(0x41u, cp);
  EXPECT_EQ(1u, Decode(std::string("\0", 1), &cp));
  EXPECT_EQ(0u, cp);
  EXPECT_EQ(2u, Decode("\xc2\x80", &cp));  // U+0080, a C1 control
  EXPECT_EQ(0x80u, cp);
  EXPECT_EQ(2u, Decode("\xc3\xa9tail", &cp));  // only the first character
  EXPECT_EQ(0xE9u, cp);
  EXPECT_EQ(3u, Decode("\xe2\x82\xac", &cp));
  EXPECT_EQ(0x20ACu, cp);
  EXPECT_EQ(3u, Decode("\xef\xbf\xbf", &cp));
  EXPECT_EQ(0xFFFFu, cp);
  EXPECT_EQ(4u, Decode("\xf0\x9f\x98\x80", &cp));
  EXPECT_EQ(0x1F600u, cp);
  EXPECT_EQ(4u, Decode("\xf4\x8f\xbf\xbf", &cp));
  EXPECT_EQ(0x10FFFFu, cp);
}

TEST(Utf8, IllFormedSequencesAreRefusedAndLeaveTheOutputAlone) {
  const char *bad[] = {
      "\x80",              // continuation byte
      "\xbf",              // continuation byte
      "\xc0\xaf",          // overlong '/'
      "\xc1\xbf",          // overlong
      "\xe0\x80\xaf",      // overlong, 3 bytes
      "\xf0\x80\x80\xaf",  // overlong, 4 bytes
      "\xed\xa0\x80",      // surrogate U+D800
      "\xed\xbf\xbf",      // surrogate U+DFFF
      "\xf4\x90\x80\x80",  // U+110000
      "\xf5\x80\x80\x80",  // lead byte out of range
      "\xff",              // never UTF-8
      "\xc3",              // cut short
      "\xe2\x82",          // cut short
      "\xf0\x9f\x98",      // cut short
      "\xc3(",             // not a continuation
      "\xe2\x28\xa1",      // not a continuation
  };
  for (const char *b : bad) {
    uint32_t cp = 0xdeadbeef;
    EXPECT_EQ(0u, Decode(b, &cp)) << testing::PrintToString(std::string(b));
    EXPECT_EQ(0xdeadbeefu, cp);
  }
  uint32_t cp = 7;
  EXPECT_EQ(0u, capsa_utf8_decode("A", 0, &cp));
  EXPECT_EQ(0u, capsa_utf8_decode(nullptr, 1, &cp));
  EXPECT_EQ(0u, capsa_utf8_decode("A", 1, nullptr));
  EXPECT_EQ(7u, cp);
  // A length shorter than the sequence is a cut: "\xe2\x82\xac" with 2.
  EXPECT_EQ(0u, capsa_utf8_decode("\xe2\x82\xac", 2, &cp));
}

}  // namespace
