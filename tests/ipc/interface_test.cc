// Embedder interfaces (ipc/interface.h): the bindings generated from
// tests/ipc/interfaces/thumbnail.fbs, the runtime's checks on every field,
// handle and envelope rule, hostile bytes, and the generator's refusals.
#include "ipc/interface.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include "tests/harness/paths.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"

namespace {

capsa_handle_t Handle(capsa_handle_kind_t kind, bool writable, uint64_t size,
                      std::vector<uint64_t> rights) {
  capsa_handle_t h;
  memset(&h, 0, sizeof h);
  h.fd = -1;
  h.kind = kind;
  h.writable = writable;
  h.size = size;
  capsa_rights_init_none(&h.rights);
  for (uint64_t r : rights) capsa_rights_set(&h.rights, r);
  return h;
}

capsa_handle_t Png() {
  return Handle(CAPSA_HANDLE_SHM, false, 1000,
                {CAPSA_CAP_READ, CAPSA_CAP_MMAP_R});
}

capsa_handle_t Frame() {
  return Handle(CAPSA_HANDLE_SHM, true, 1 << 20,
                {CAPSA_CAP_READ, CAPSA_CAP_WRITE, CAPSA_CAP_MMAP_RW});
}

struct Thumb : ::testing::Test {
  alignas(8) uint8_t buf[4096];
  char why[CAPSA_IPC_REASON_MAX] = "";
  capsa_test_thumbnail_decode_t d;
  capsa_handle_t h[2] = {Png(), Frame()};
  void SetUp() override {
    capsa_test_thumbnail_decode_init(&d);
    d.png = 0;
  }
  int Encode(uint32_t nh = 1) {
    return capsa_test_thumbnail_decode_encode(&d, h, nh, buf, sizeof buf, why,
                                              sizeof why);
  }
  int Decode(int n, capsa_test_thumbnail_decode_t *out, uint32_t nh = 1) {
    return capsa_test_thumbnail_decode_decode(buf, (size_t)n, h, nh, out, why,
                                              sizeof why);
  }
};

TEST_F(Thumb, DescriptorIsWellFormed) {
  EXPECT_EQ(0, capsa_iface_check_descriptor(&capsa_test_thumbnail_interface,
                                            why, sizeof why))
      << why;
  EXPECT_STREQ("capsa.test.thumbnail", capsa_test_thumbnail_interface.name);
  ASSERT_EQ(3u, capsa_test_thumbnail_interface.nmessages);
  const capsa_imessage_t *m = capsa_iface_message(
      &capsa_test_thumbnail_interface, CAPSA_TEST_THUMBNAIL_DECODE);
  ASSERT_NE(nullptr, m);
  EXPECT_EQ(CAPSA_IMSG_REQUEST, m->kind);
  EXPECT_EQ((uint32_t)CAPSA_TEST_THUMBNAIL_DECODE_RESULT, m->reply);
  EXPECT_EQ(2u, m->nhandles);
  EXPECT_EQ(nullptr, capsa_iface_message(&capsa_test_thumbnail_interface, 0));
  EXPECT_EQ(nullptr, capsa_iface_message(&capsa_test_thumbnail_interface, 4));
}

TEST_F(Thumb, DefaultsComeFromTheSchema) {
  EXPECT_EQ(-1, d.frame);
  EXPECT_EQ(256u, d.max_width);
  EXPECT_EQ(nullptr, d.name);
  capsa_test_thumbnail_progress_t p;
  capsa_test_thumbnail_progress_init(&p);
  EXPECT_EQ(1.0, p.scale);
}

TEST_F(Thumb, RoundTripKeepsEveryField) {
  d.max_width = 4096;
  d.name = "cat.png";
  d.frame = 1;
  int n = Encode(2);
  ASSERT_GT(n, 0) << why;
  capsa_test_thumbnail_decode_t out;
  ASSERT_EQ(0, Decode(n, &out, 2)) << why;
  EXPECT_EQ(0, out.png);
  EXPECT_EQ(1, out.frame);
  EXPECT_EQ(4096u, out.max_width);
  ASSERT_NE(nullptr, out.name);
  EXPECT_STREQ("cat.png", out.name);
  // Strings point into the buffer: borrowed, not copied.
  EXPECT_GE((const uint8_t *)out.name, buf);
  EXPECT_LT((const uint8_t *)out.name, buf + n);

  capsa_test_thumbnail_progress_t p, q;
  capsa_test_thumbnail_progress_init(&p);
  p.percent = 100;
  p.busy = true;
  p.note = "half";
  p.scale = -2.5;
  p.offset = INT64_MIN;
  n = capsa_test_thumbnail_progress_encode(&p, nullptr, 0, buf, sizeof buf, why,
                                           sizeof why);
  ASSERT_GT(n, 0) << why;
  ASSERT_EQ(0, capsa_test_thumbnail_progress_decode(buf, n, nullptr, 0, &q, why,
                                                    sizeof why))
      << why;
  EXPECT_EQ(100, q.percent);
  EXPECT_TRUE(q.busy);
  EXPECT_STREQ("half", q.note);
  EXPECT_EQ(-2.5, q.scale);
  EXPECT_EQ(INT64_MIN, q.offset);

  capsa_test_thumbnail_decode_result_t r, s;
  capsa_test_thumbnail_decode_result_init(&r);
  r.status = -ENOENT;
  static const uint8_t px[3] = {1, 2, 3};
  r.preview = {px, 3};
  n = capsa_test_thumbnail_decode_result_encode(&r, nullptr, 0, buf, sizeof buf,
                                                why, sizeof why);
  ASSERT_GT(n, 0) << why;
  ASSERT_EQ(0, capsa_test_thumbnail_decode_result_decode(buf, n, nullptr, 0, &s,
                                                         why, sizeof why));
  EXPECT_EQ(-ENOENT, s.status);
  ASSERT_EQ(3u, s.preview.len);
  EXPECT_EQ(0, memcmp(px, s.preview.data, 3));
}

// Encoding refuses what the receiver would refuse, naming the field.
TEST_F(Thumb, EncodeRefusesWhatBreaksTheSchema) {
  d.max_width = 0;  // capsa_min 1
  EXPECT_EQ(-EINVAL, Encode());
  EXPECT_NE(nullptr, strstr(why, "Decode.max_width: 0 outside 1..4096")) << why;
  d.max_width = 4097;
  EXPECT_EQ(-EINVAL, Encode());
  d.max_width = 10;
  std::string long_name(65, 'x');  // capsa_max_len 64
  d.name = long_name.c_str();
  EXPECT_EQ(-EINVAL, Encode());
  EXPECT_NE(nullptr, strstr(why, "Decode.name: string of 65 bytes")) << why;
  d.name = nullptr;
  d.png = -1;  // capsa_required
  EXPECT_EQ(-EINVAL, Encode(0));
  EXPECT_NE(nullptr, strstr(why, "required handle missing")) << why;

  capsa_test_thumbnail_progress_t p;
  capsa_test_thumbnail_progress_init(&p);
  p.note = nullptr;  // (required)
  EXPECT_EQ(-EINVAL, capsa_test_thumbnail_progress_encode(
                         &p, nullptr, 0, buf, sizeof buf, why, sizeof why));
  p.note = "n";
  p.percent = 101;
  EXPECT_EQ(-EINVAL, capsa_test_thumbnail_progress_encode(
                         &p, nullptr, 0, buf, sizeof buf, why, sizeof why));
  p.percent = 1;
  p.scale = 0.0 / 0.0;
  EXPECT_EQ(-EINVAL, capsa_test_thumbnail_progress_encode(
                         &p, nullptr, 0, buf, sizeof buf, why, sizeof why));
  EXPECT_NE(nullptr, strstr(why, "not a finite number")) << why;
  p.scale = 1;
  EXPECT_EQ(-EMSGSIZE, capsa_test_thumbnail_progress_encode(
                           &p, nullptr, 0, buf, 8, why, sizeof why));
  EXPECT_EQ(-ENOENT,
            capsa_iface_encode(&capsa_test_thumbnail_interface, 9, &p, nullptr,
                               0, buf, sizeof buf, why, sizeof why));
}

// The handles that travel with a message are held to the schema: kind,
// writability, rights, size; each named by exactly one field.
TEST_F(Thumb, HandlesAreHeldToTheSchema) {
  int n = Encode();
  ASSERT_GT(n, 0) << why;
  capsa_test_thumbnail_decode_t out;
  ASSERT_EQ(0, Decode(n, &out)) << why;

  h[0] = Handle(CAPSA_HANDLE_FILE, false, 10, {CAPSA_CAP_READ});
  EXPECT_EQ(-EBADMSG, Decode(n, &out));
  EXPECT_NE(nullptr, strstr(why, "a file handle where the schema says shm"))
      << why;
  h[0] = Png();
  h[0].writable = true;
  EXPECT_EQ(-EBADMSG, Decode(n, &out));
  EXPECT_NE(nullptr, strstr(why, "writable handle")) << why;
  h[0] = Handle(CAPSA_HANDLE_SHM, false, 10, {CAPSA_CAP_READ, CAPSA_CAP_WRITE});
  EXPECT_EQ(-EBADMSG, Decode(n, &out));
  EXPECT_NE(nullptr, strstr(why, "wider than the schema")) << why;
  h[0] = Png();
  h[0].size = (16u << 20) + 1;
  EXPECT_EQ(-EBADMSG, Decode(n, &out));
  EXPECT_NE(nullptr, strstr(why, "above the schema's 16777216")) << why;
  h[0] = Png();
  // A second descriptor no field names: refused (no smuggled handles).
  EXPECT_EQ(-EBADMSG, Decode(n, &out, 2));
  EXPECT_NE(nullptr, strstr(why, "handle 1 is named by no field")) << why;
  // Fewer handles than the fields name.
  EXPECT_EQ(-EBADMSG, Decode(n, &out, 0));
  // One handle named by two fields.
  d.frame = 0;
  h[0] = Png();  // fits both fields
  EXPECT_EQ(-EINVAL, Encode(1));
  EXPECT_NE(nullptr, strstr(why, "named twice")) << why;
}

// Hand-built wire bytes a hostile peer could send.
std::vector<uint8_t> Wire(void (*fill)(flatbuffers::FlatBufferBuilder &)) {
  flatbuffers::FlatBufferBuilder b;
  fill(b);
  return std::vector<uint8_t>(b.GetBufferPointer(),
                              b.GetBufferPointer() + b.GetSize());
}

TEST_F(Thumb, HostileWireBytesAreRefused) {
  capsa_test_thumbnail_decode_t out;
  auto decode = [&](const std::vector<uint8_t> &w, uint32_t nh) {
    return capsa_test_thumbnail_decode_decode(w.data(), w.size(), h, nh, &out,
                                              why, sizeof why);
  };
  // A NUL inside a string.
  auto nul = Wire([](flatbuffers::FlatBufferBuilder &b) {
    auto s = b.CreateString(std::string("a\0b", 3));
    auto t = b.StartTable();
    b.AddElement<uint8_t>(4, 1, 0);
    b.AddOffset(8, s);
    b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  });
  EXPECT_EQ(-EBADMSG, decode(nul, 1));
  EXPECT_NE(nullptr, strstr(why, "NUL byte")) << why;
  // A handle index beyond the message's handles (wire 200 -> index 199).
  auto far = Wire([](flatbuffers::FlatBufferBuilder &b) {
    auto t = b.StartTable();
    b.AddElement<uint8_t>(4, 200, 0);
    b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  });
  EXPECT_EQ(-EBADMSG, decode(far, 1));
  EXPECT_NE(nullptr, strstr(why, "handle 199 of 1")) << why;
  // The required handle absent.
  auto none = Wire([](flatbuffers::FlatBufferBuilder &b) {
    auto t = b.StartTable();
    b.AddElement<uint32_t>(6, 7, 256);
    b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  });
  EXPECT_EQ(-EBADMSG, decode(none, 0));
  EXPECT_NE(nullptr, strstr(why, "png: required")) << why;
  // A scalar out of its schema range on the wire.
  auto wide = Wire([](flatbuffers::FlatBufferBuilder &b) {
    auto t = b.StartTable();
    b.AddElement<uint8_t>(4, 1, 0);
    b.AddElement<uint32_t>(6, 1u << 31, 256);
    b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  });
  EXPECT_EQ(-EBADMSG, decode(wide, 1));
  EXPECT_NE(nullptr, strstr(why, "max_width: 2147483648 outside")) << why;
  // A string slot that holds a scalar: the offset points nowhere sane.
  auto confused = Wire([](flatbuffers::FlatBufferBuilder &b) {
    auto t = b.StartTable();
    b.AddElement<uint8_t>(4, 1, 0);
    b.AddElement<uint32_t>(8, 0x7ffffff0u, 0);
    b.Finish(flatbuffers::Offset<flatbuffers::Table>(b.EndTable(t)));
  });
  EXPECT_EQ(-EBADMSG, decode(confused, 1));
  // Too short, empty, NULL.
  EXPECT_EQ(-EBADMSG, capsa_test_thumbnail_decode_decode(buf, 3, h, 1, &out,
                                                         why, sizeof why));
  EXPECT_EQ(-EBADMSG, capsa_test_thumbnail_decode_decode(nullptr, 0, h, 1, &out,
                                                         why, sizeof why));
  // A misaligned buffer is the caller's mistake: -EINVAL, not a peer's.
  EXPECT_EQ(-EINVAL, capsa_test_thumbnail_decode_decode(buf + 1, 16, h, 1, &out,
                                                        why, sizeof why));
  // Unknown message id.
  EXPECT_EQ(-ENOENT,
            capsa_iface_decode(&capsa_test_thumbnail_interface, 0, nul.data(),
                               nul.size(), h, 1, &out, why, sizeof why));
}

// Every prefix and many bit flips of a valid message: decoded or refused,
// never a crash or a read outside the buffer (the ASan build checks that).
TEST_F(Thumb, MutatedBytesAreDecodedOrRefused) {
  d.name = "some name";
  d.frame = 1;
  int n = Encode(2);
  ASSERT_GT(n, 0) << why;
  std::vector<uint8_t> good(buf, buf + n);
  capsa_test_thumbnail_decode_t out;
  for (int len = 0; len < n; len++) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + len);
    int rc = capsa_test_thumbnail_decode_decode(cut.data(), cut.size(), h, 2,
                                                &out, why, sizeof why);
    EXPECT_TRUE(rc == 0 || rc == -EBADMSG) << len;
  }
  std::mt19937 rng(7);
  int refused = 0;
  for (int i = 0; i < 20000; i++) {
    std::vector<uint8_t> m = good;
    for (int k = 0; k < 1 + (int)(rng() % 3); k++)
      m[rng() % m.size()] ^= (uint8_t)(1u << (rng() % 8));
    int rc = capsa_test_thumbnail_decode_decode(m.data(), m.size(), h, 2, &out,
                                                why, sizeof why);
    ASSERT_TRUE(rc == 0 || rc == -EBADMSG);
    refused += rc != 0;
    if (rc == 0) {  // whatever was accepted holds every rule
      EXPECT_GE(out.max_width, 1u);
      EXPECT_LE(out.max_width, 4096u);
      if (out.name) {
        EXPECT_LE(strlen(out.name), 64u);
      }
    }
  }
  EXPECT_GT(refused, 0);
}

TEST_F(Thumb, EnvelopeRulesDirectionFlagsAndPairing) {
  const capsa_interface_t *i = &capsa_test_thumbnail_interface;
  // Decode: host -> renderer, a request.
  EXPECT_EQ(0, capsa_iface_check_envelope(i, CAPSA_TEST_THUMBNAIL_DECODE,
                                          CAPSA_PEER_HOST, CAPSA_MSG_F_REQUEST,
                                          0, why, sizeof why))
      << why;
  EXPECT_EQ(-EBADMSG, capsa_iface_check_envelope(
                          i, CAPSA_TEST_THUMBNAIL_DECODE, CAPSA_PEER_RENDERER,
                          CAPSA_MSG_F_REQUEST, 0, why, sizeof why));
  EXPECT_NE(nullptr, strstr(why, "not sent by the renderer")) << why;
  EXPECT_EQ(-EBADMSG,
            capsa_iface_check_envelope(i, CAPSA_TEST_THUMBNAIL_DECODE,
                                       CAPSA_PEER_HOST, 0, 0, why, sizeof why));
  // DecodeResult answers a Decode, and nothing else.
  EXPECT_EQ(0, capsa_iface_check_envelope(
                   i, CAPSA_TEST_THUMBNAIL_DECODE_RESULT, CAPSA_PEER_RENDERER,
                   CAPSA_MSG_F_RESPONSE, CAPSA_TEST_THUMBNAIL_DECODE, why,
                   sizeof why))
      << why;
  EXPECT_EQ(-EBADMSG, capsa_iface_check_envelope(
                          i, CAPSA_TEST_THUMBNAIL_DECODE_RESULT,
                          CAPSA_PEER_RENDERER, CAPSA_MSG_F_RESPONSE,
                          CAPSA_TEST_THUMBNAIL_PROGRESS, why, sizeof why));
  EXPECT_EQ(-EBADMSG,
            capsa_iface_check_envelope(
                i, CAPSA_TEST_THUMBNAIL_DECODE_RESULT, CAPSA_PEER_RENDERER,
                CAPSA_MSG_F_RESPONSE, 0, why, sizeof why));
  // Progress: an event, renderer -> host, no flags.
  EXPECT_EQ(0, capsa_iface_check_envelope(i, CAPSA_TEST_THUMBNAIL_PROGRESS,
                                          CAPSA_PEER_RENDERER, 0, 0, why,
                                          sizeof why));
  EXPECT_EQ(-EBADMSG, capsa_iface_check_envelope(
                          i, CAPSA_TEST_THUMBNAIL_PROGRESS, CAPSA_PEER_RENDERER,
                          CAPSA_MSG_F_REQUEST, 0, why, sizeof why));
  EXPECT_EQ(-EBADMSG, capsa_iface_check_envelope(i, 77, CAPSA_PEER_RENDERER, 0,
                                                 0, why, sizeof why));
}

TEST_F(Thumb, MalformedDescriptorsAreRefused) {
  capsa_interface_t copy = capsa_test_thumbnail_interface;
  std::vector<capsa_imessage_t> msgs(copy.messages,
                                     copy.messages + copy.nmessages);
  copy.messages = msgs.data();
  ASSERT_EQ(0, capsa_iface_check_descriptor(&copy, why, sizeof why));
  msgs[0].reply = 3;  // Progress is no response
  EXPECT_EQ(-EINVAL, capsa_iface_check_descriptor(&copy, why, sizeof why));
  msgs[0].reply = 2;
  msgs[1].id = 5;
  EXPECT_EQ(-EINVAL, capsa_iface_check_descriptor(&copy, why, sizeof why));
  msgs[1].id = 2;
  msgs[2].nhandles = 1;
  EXPECT_EQ(-EINVAL, capsa_iface_check_descriptor(&copy, why, sizeof why));
  EXPECT_EQ(-EINVAL, capsa_iface_check_descriptor(nullptr, why, sizeof why));
}

// The generator refuses a schema whose rules the runtime could not enforce,
// naming the field (a mistake fails the build, it never weakens a check).
// `raw`: body is the whole schema (no include or namespace added).
std::string RunIdl(const std::string &body, int *rc, bool raw = false) {
  std::string idl = capsa_test::BuildProduct("capsa_idlc");
  std::string root = capsa_test::SourceRoot();
  char dir[] = "/tmp/capsa-idl-XXXXXX";
  if (!mkdtemp(dir)) return "mkdtemp failed";
  std::string d(dir);
  if (raw)
    std::ofstream(d + "/bad.fbs") << body;
  else
    std::ofstream(d + "/bad.fbs")
        << "include \"ipc/interface/capsa_attributes.fbs\";\n"
        << "namespace bad;\n"
        << body;
  std::string cmd = "cd '" + d + "' && /usr/bin/flatc --schema -b -I '" + root +
                    "' bad.fbs 2>&1 && ASAN_OPTIONS=detect_leaks=0 '" + idl +
                    "' bad.bfbs bad.fbs bad.h bad.c bad.h 2>&1; echo \"rc=$?\"";
  FILE *p = popen(cmd.c_str(), "r");
  std::string out;
  char line[512];
  while (p && fgets(line, sizeof line, p)) out += line;
  if (p) pclose(p);
  for (const char *f : {"/bad.fbs", "/bad.bfbs", "/bad.h", "/bad.c"})
    unlink((d + f).c_str());
  rmdir(d.c_str());
  size_t at = out.rfind("rc=");
  *rc = at == std::string::npos ? -1 : atoi(out.c_str() + at + 3);
  return out;
}

TEST(InterfaceGenerator, RefusesSchemasItCannotEnforce) {
  ASSERT_TRUE(
      capsa_test::Present(capsa_test::BuildProduct("capsa_idlc"), X_OK));
  ASSERT_TRUE(capsa_test::Present(
      capsa_test::SourceFile("ipc/interface/capsa_attributes.fbs")));
  struct Case {
    const char *schema, *says;
  } cases[] = {
      {"table A (capsa_event, capsa_from: \"host\") { h: ubyte "
       "(capsa_handle: \"shm\", capsa_max_size: \"1\"); }\n"
       "union M (capsa_interface) { A }\n",
       "A.h: a handle needs capsa_rights"},
      {"table A (capsa_event, capsa_from: \"host\") { h: uint "
       "(capsa_handle: \"shm\"); }\nunion M (capsa_interface) { A }\n",
       "a capsa_handle field must be declared ubyte"},
      {"table A (capsa_event, capsa_from: \"host\") { v: [int]; }\n"
       "union M (capsa_interface) { A }\n",
       "A.v: type not carried"},
      {"table A (capsa_event, capsa_from: \"nobody\") { v: int; }\n"
       "union M (capsa_interface) { A }\n",
       "capsa_from must be host, renderer or any"},
      {"table A (capsa_request: \"B\", capsa_from: \"host\") { v: int; }\n"
       "table B (capsa_event, capsa_from: \"host\") { v: int; }\n"
       "union M (capsa_interface) { A, B }\n",
       "B is not a capsa_response"},
      {"table A (capsa_event, capsa_from: \"host\") { v: ubyte = 9 "
       "(capsa_max: \"5\"); }\nunion M (capsa_interface) { A }\n",
       "A.v: the default 9 is outside capsa_min..capsa_max (0..5): "
       "a field without `= N` defaults to 0"},
      {"table A (capsa_event, capsa_from: \"host\") { v: int "
       "(capsa_required); }\nunion M (capsa_interface) { A }\n",
       "capsa_required applies to strings"},
      {"table A (capsa_event, capsa_from: \"host\") { v: int; }\n"
       "union M { A }\n",
       "no union with the capsa_interface attribute"},
      {"table A (capsa_event, capsa_from: \"host\") { v: [ubyte] "
       "(capsa_text); }\nunion M (capsa_interface) { A }\n",
       "A.v: capsa_text applies to strings"},
  };
  for (const Case &c : cases) {
    int rc = 0;
    std::string out = RunIdl(c.schema, &rc);
    EXPECT_EQ(1, rc) << c.schema << out;
    EXPECT_NE(std::string::npos, out.find(c.says)) << c.schema << out;
  }
  int rc = 0;
  std::string ok = RunIdl(
      "table A (capsa_event, capsa_from: \"any\") { v: int; }\n"
      "union M (capsa_interface) { A }\n",
      &rc);
  EXPECT_EQ(0, rc) << ok;
}

// capsa-idl's refusals say what to write instead (issue 36 item 7): one
// schema per error class the generator has, each refused (rc 1) with the
// problem and its fix, an example in schema syntax.
TEST(InterfaceGenerator, EachRefusalSaysWhatToWriteInstead) {
  ASSERT_TRUE(
      capsa_test::Present(capsa_test::BuildProduct("capsa_idlc"), X_OK));
  const std::string ev = "table A (capsa_event, capsa_from: \"host\") { ";
  const std::string un = " }\nunion M (capsa_interface) { A }\n";
  std::string many_fields, many_handles;
  for (int i = 0; i < 65; i++)
    many_fields += "f" + std::to_string(i) + ": int; ";
  for (int i = 0; i < 9; i++)
    many_handles += "h" + std::to_string(i) +
                    ": ubyte (capsa_handle: \"channel\", capsa_rights: "
                    "\"read\"); ";
  struct Case {
    std::string schema;
    const char *says;
    bool raw;
  } cases[] = {
      // The example: a range without a default inside it.
      {"table Surface (capsa_event, capsa_from: \"host\") { width: uint "
       "(capsa_min: \"1\", capsa_max: \"4096\"); }\n"
       "union M (capsa_interface) { Surface }\n",
       "Surface.width: the default 0 is outside capsa_min..capsa_max "
       "(1..4096): a field without `= N` defaults to 0, and the default is "
       "what an unset field reads as, so it must pass the check: give the "
       "field a default inside the range, e.g. `width: uint = 1 (capsa_min: "
       "\"1\", capsa_max: \"4096\");`",
       false},
      // Fields.
      {"attribute \"capsa_colour\";\n" + ev + "v: int (capsa_colour);" + un,
       "A.v: unknown attribute capsa_colour: a field takes capsa_min, "
       "capsa_max, capsa_max_len, capsa_handle, capsa_rights, capsa_writable, "
       "capsa_max_size, capsa_required or capsa_text",
       false},
      {ev + "v: [ubyte] (capsa_text);" + un,
       "declare the field a string, e.g. `v: string (capsa_text, "
       "capsa_max_len: \"256\");`",
       false},
      {ev + "h: uint (capsa_handle: \"shm\");" + un,
       "must be declared ubyte (its value is the handle's index), e.g. `h: "
       "ubyte (capsa_handle: \"shm\", capsa_rights: \"read,mmap_r\", "
       "capsa_max_size: \"1048576\");`",
       false},
      {ev + "h: ubyte (capsa_handle: \"pipe\");" + un,
       "not 'pipe': write capsa_handle: \"shm\" (shared memory), \"file\" "
       "(a read-only file) or \"channel\"",
       false},
      {ev + "h: ubyte (capsa_handle: \"file\", capsa_max_size: \"9\");" + un,
       "A.h: a handle needs capsa_rights (the widest a sender may declare): "
       "add the CAPSA_CAP_* names it may carry, lower case without the "
       "prefix, e.g. `h: ubyte (capsa_handle: \"file\", capsa_rights: "
       "\"read,mmap_r\", capsa_max_size: \"1048576\");`",
       false},
      {ev +
           "h: ubyte (capsa_handle: \"shm\", capsa_rights: \"read-only\", "
           "capsa_max_size: \"9\");" +
           un,
       "bad right name 'read-only': rights are CAPSA_CAP_* names in lower "
       "case without the prefix (letters, digits, _), separated by commas, "
       "e.g. capsa_rights: \"read,mmap_r,fstat\"",
       false},
      {ev +
           "h: ubyte (capsa_handle: \"file\", capsa_writable, capsa_rights: "
           "\"read\", capsa_max_size: \"9\");" +
           un,
       "only shm handles may be capsa_writable: remove capsa_writable, or "
       "make it shared memory, e.g. `h: ubyte (capsa_handle: \"shm\", "
       "capsa_writable,",
       false},
      {ev +
           "h: ubyte (capsa_handle: \"shm\", capsa_rights: \"read\", "
           "capsa_max_size: \"-1\");" +
           un,
       "capsa_max_size must be a positive integer, not '-1': the largest "
       "size in bytes a sender may declare, in decimal or 0x hex, e.g. "
       "capsa_max_size: \"1048576\"",
       false},
      {ev + "h: ubyte (capsa_handle: \"shm\", capsa_rights: \"read\");" + un,
       "a shm handle needs capsa_max_size (the largest size in bytes a "
       "sender may declare): add it, e.g. `h: ubyte (capsa_handle: \"shm\", "
       "capsa_rights: \"read\", capsa_max_size: \"1048576\");`",
       false},
      {ev +
           "h: ubyte (capsa_handle: \"channel\", capsa_rights: \"read\", "
           "capsa_max_len: \"4\");" +
           un,
       "ranges and lengths do not apply to a handle: remove capsa_min, "
       "capsa_max and capsa_max_len from it",
       false},
      {ev + "s: string (capsa_max_len: \"0\");" + un,
       "capsa_max_len must be 1..65536, not '0': the most bytes accepted, "
       "e.g. `s: string (capsa_max_len: \"256\");`",
       false},
      {ev + "s: string (capsa_min: \"1\");" + un,
       "capsa_min/capsa_max apply to integers: bound a string's length with "
       "capsa_max_len instead, e.g. `s: string (capsa_max_len: \"256\");`",
       false},
      {ev + "v: [int];" + un,
       "A.v: type not carried by capsa interfaces (scalars, string, [ubyte] "
       "and ubyte handles are): declare it as one of those, e.g. `v: [ubyte] "
       "(capsa_max_len: \"4096\");`",
       false},
      {ev + "v: int (capsa_required);" + un,
       "capsa_required applies to strings, bytes and handles (a scalar equal "
       "to its default is not sent): remove it and give the field a default "
       "that means \"not given\", e.g. `v: int = -1;`",
       false},
      {ev + "v: int (capsa_max_len: \"4\");" + un,
       "capsa_max_len applies to strings and [ubyte]: bound the field with "
       "capsa_min/capsa_max instead, e.g. `v: int (capsa_min: \"0\", "
       "capsa_max: \"100\");`",
       false},
      {ev + "v: float (capsa_max: \"1\");" + un,
       "capsa_min/capsa_max apply to integers, not float (floats are only "
       "checked finite): remove them, or carry an integer (e.g. thousandths) "
       "and range it, e.g. `v_milli: int (capsa_min: \"0\", capsa_max: "
       "\"1000\");`",
       false},
      {ev + "v: ubyte (capsa_min: \"-1\");" + un,
       "capsa_min '-1' is not an integer in ubyte's range 0..255: write one "
       "in it, in decimal or 0x hex, e.g. `v: ubyte (capsa_min: \"0\");`, or "
       "widen the field's type",
       false},
      {ev + "v: byte (capsa_max: \"300\");" + un,
       "capsa_max '300' is not an integer in byte's range -128..127: write "
       "one in it, in decimal or 0x hex, e.g. `v: byte (capsa_max: "
       "\"127\");`",
       false},
      {ev + "v: int = 5 (capsa_min: \"5\", capsa_max: \"2\");" + un,
       "capsa_max 2 is below capsa_min 5: the range is capsa_min..capsa_max, "
       "so swap them or raise capsa_max, e.g. `v: int = 5 (capsa_min: \"5\", "
       "capsa_max: \"5\");`",
       false},
      // Messages and the interface.
      {"enum E : byte (capsa_interface) { X }\n" + ev + "v: int;" + un,
       "bad.E: capsa_interface goes on a union: put it on the union that "
       "lists the messages, e.g. `union Messages (capsa_interface) {",
       false},
      {ev + "v: int; }\ntable B (capsa_event, capsa_from: \"host\") { v: "
            "int; }\nunion M (capsa_interface) { A }\n"
            "union N (capsa_interface) { B }\n",
       "two unions with capsa_interface: bad.M, bad.N: a schema is one "
       "interface: keep capsa_interface on one union",
       false},
      {ev + "v: int; }\nunion M { A }\n",
       "no union with the capsa_interface attribute: list the interface's "
       "messages (tables) in a union marked so, e.g. `union Messages "
       "(capsa_interface) { Decode, DecodeDone }`",
       false},
      {"include \"ipc/interface/capsa_attributes.fbs\";\n" + ev + "v: int;" +
           un,
       "M: an interface needs a namespace (its name): add `namespace NAME;` "
       "(e.g. `namespace thumb;`) before the tables and the union",
       true},
      {"include \"ipc/interface/capsa_attributes.fbs\";\nnamespace " +
           std::string(65, 'n') + ";\n" + ev + "v: int;" + un,
       "interface name over 64 bytes (65): shorten the schema's `namespace` "
       "line",
       true},
      {ev + "v: int; }\nunion M (capsa_interface) { A:string }\n",
       "bad.M: every member must be a table: list only tables in the union",
       false},
      {"struct S { v: int; }\nunion M (capsa_interface) { S }\n",
       "bad.S: a message must be a table: declare it with `table`, not "
       "`struct`, e.g. `table S (capsa_event, capsa_from: \"host\") { ... }`",
       false},
      {"include \"ipc/interface/capsa_attributes.fbs\";\nnamespace other;\n" +
           ev +
           "v: int; }\nnamespace bad;\nunion M (capsa_interface) { "
           "other.A }\n",
       "other.A: a message must be in the interface's namespace (bad): "
       "declare the table after `namespace bad;`",
       true},
      {ev + "v: int; }\nunion M (capsa_interface) { A = 2 }\n",
       "member values must be 1, 2, 3... (no gaps; they are the message "
       "ids): remove the explicit values (`A = 5`) from the union's members",
       false},
      {"attribute \"capsa_priority\";\ntable A (capsa_event, capsa_priority, "
       "capsa_from: \"host\") { v: int;" +
           un,
       "A: unknown attribute capsa_priority: a message takes capsa_request, "
       "capsa_response, capsa_event or capsa_from; remove it or fix its "
       "spelling",
       false},
      {"table A (capsa_from: \"host\") { v: int;" + un,
       "A: exactly one of capsa_request, capsa_response, capsa_event (found "
       "0): say what the message is, e.g. `table A (capsa_request: "
       "\"ADone\", capsa_from: \"host\")`",
       false},
      {"table A (capsa_request: \"\", capsa_from: \"host\") { v: int;" + un,
       "A: capsa_request names its response table: give the name of a "
       "capsa_response table of the union, e.g. `table A (capsa_request: "
       "\"ADone\", capsa_from: \"host\")`",
       false},
      {"table A (capsa_event) { v: int;" + un,
       "A: capsa_from must be host, renderer or any, and is missing: say who "
       "may send it, e.g. `table A (capsa_event, capsa_from: \"host\")`",
       false},
      {ev + many_fields + un,
       "A: more than 64 fields (65): split it into two messages", false},
      {ev + many_handles + un,
       "A: more than 8 handle fields (9; a message carries at most 8 "
       "descriptors): split it into messages of 8 handles or fewer",
       false},
      {ev + "v: int; }\nunion M (capsa_interface) { }\n",
       "bad.M: no messages: list at least one table in the union, e.g. "
       "`union M (capsa_interface) { Ping }`",
       false},
      {"table A (capsa_request: \"Z\", capsa_from: \"host\") { v: int;" + un,
       "A: response Z is not in bad.M: add table Z to the union's members, "
       "or name one that is there in capsa_request",
       false},
      {"table A (capsa_request: \"B\", capsa_from: \"host\") { v: int; }\n"
       "table B (capsa_event, capsa_from: \"host\") { v: int; }\n"
       "union M (capsa_interface) { A, B }\n",
       "A: B is not a capsa_response: mark it as the answer, e.g. `table B "
       "(capsa_response, capsa_from: \"renderer\")`",
       false},
  };
  for (const Case &c : cases) {
    int rc = 0;
    std::string out = RunIdl(c.schema, &rc, c.raw);
    EXPECT_EQ(1, rc) << c.schema << out;
    EXPECT_NE(std::string::npos, out.find(c.says)) << "schema:\n"
                                                   << c.schema << "\nsays:\n"
                                                   << out << "\nwanted:\n"
                                                   << c.says;
  }
}

// The tool's own refusals (its inputs and outputs) say what to pass.
TEST(InterfaceGenerator, ToolErrorsSayWhatToPass) {
  std::string idl = capsa_test::BuildProduct("capsa_idlc");
  ASSERT_TRUE(capsa_test::Present(idl, X_OK));
  char dir[] = "/tmp/capsa-idl-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  std::string d(dir);
  std::ofstream(d + "/x.fbs") << "table A { v: int; }\n";
  auto run = [&](const std::string &args) {
    std::string cmd = "ASAN_OPTIONS=detect_leaks=0 '" + idl + "' " + args +
                      " 2>&1; echo \"rc=$?\"";
    FILE *p = popen(cmd.c_str(), "r");
    std::string out;
    char line[1024];
    while (p && fgets(line, sizeof line, p)) out += line;
    if (p) pclose(p);
    return out;
  };
  std::string out = run("'" + d + "/nothere.bfbs' x.fbs a.h a.c a.h");
  EXPECT_NE(std::string::npos,
            out.find("nothere.bfbs: No such file or directory: pass the "
                     ".bfbs flatc wrote"))
      << out;
  out = run("'" + d + "/x.fbs' x.fbs a.h a.c a.h");
  EXPECT_NE(std::string::npos,
            out.find("not a flatc binary schema (.bfbs): pass what `flatc "
                     "--schema -b NAME.fbs` writes (NAME.bfbs), not the .fbs "
                     "source"))
      << out;
  // A valid schema, outputs into a directory that does not exist.
  std::string cmd = "cd '" + d +
                    "' && printf 'include \"ipc/interface/capsa_attributes."
                    "fbs\";\\nnamespace ok;\\ntable A (capsa_event, "
                    "capsa_from: \"host\") { v: int; }\\nunion M "
                    "(capsa_interface) { A }\\n' > ok.fbs && /usr/bin/flatc "
                    "--schema -b -I '" +
                    capsa_test::SourceRoot() + "' ok.fbs";
  ASSERT_EQ(0, system(cmd.c_str()));
  out = run("'" + d + "/ok.bfbs' ok.fbs '" + d + "/no/a.h' '" + d +
            "/no/a.c' a.h");
  EXPECT_NE(std::string::npos,
            out.find("No such file or directory: make their directory exist "
                     "and be writable"))
      << out;
  EXPECT_NE(std::string::npos, out.find("rc=1")) << out;
  for (const char *f : {"/x.fbs", "/ok.fbs", "/ok.bfbs"})
    unlink((d + f).c_str());
  rmdir(d.c_str());
}

// What flatc refuses before the generator sees the schema: an undeclared
// attribute. The build's wrapper (build/idl/capsa_idl.py) says whether the
// include is missing or the name is misspelt.
TEST(InterfaceGenerator, UndeclaredAttributesGetTheIncludeOrTheSpelling) {
  std::string idl = capsa_test::BuildProduct("capsa_idlc");
  std::string wrapper = capsa_test::SourceFile("build/idl/capsa_idl.py");
  ASSERT_TRUE(capsa_test::Present(wrapper));
  char dir[] = "/tmp/capsa-idl-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  std::string d(dir);
  struct Case {
    const char *schema, *says;
  } cases[] = {
      {"namespace bad;\ntable A (capsa_event, capsa_from: \"host\") { v: "
       "int; }\nunion M (capsa_interface) { A }\n",
       "capsa-idl: capsa_event is capsa's: add `include "
       "\"ipc/interface/capsa_attributes.fbs\";` as the schema's first line"},
      {"include \"ipc/interface/capsa_attributes.fbs\";\nnamespace bad;\n"
       "table A (capsa_event, capsa_from: \"host\") { v: int (capsa_mni: "
       "\"1\"); }\nunion M (capsa_interface) { A }\n",
       "capsa-idl: capsa_mni is no capsa attribute (did you mean "
       "capsa_min?): the attributes are capsa_interface, "},
  };
  // The wrapper is the build's python script: a kernel-matrix guest (a
  // busybox initramfs) has the tests and flatc, not python.
  if (access("/usr/bin/python3", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/python3 to run the build's capsa-idl wrapper";
  for (const Case &c : cases) {
    std::ofstream(d + "/bad.fbs") << c.schema;
    std::string cmd = "cd '" + d + "' && /usr/bin/python3 '" + wrapper + "' '" +
                      idl + "' '" + capsa_test::SourceRoot() +
                      "' bad.fbs bad.fbs bad.h bad.c bad.h 2>&1; echo "
                      "\"rc=$?\"";
    FILE *p = popen(cmd.c_str(), "r");
    std::string out;
    char line[1024];
    while (p && fgets(line, sizeof line, p)) out += line;
    if (p) pclose(p);
    EXPECT_NE(std::string::npos, out.find("rc=1")) << out;
    EXPECT_NE(std::string::npos, out.find(c.says)) << out;
  }
  unlink((d + "/bad.fbs").c_str());
  rmdir(d.c_str());
}

}  // namespace
