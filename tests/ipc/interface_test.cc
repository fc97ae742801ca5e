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
std::string RunIdl(const std::string &body, int *rc) {
  std::string idl = capsa_test::BuildProduct("capsa_idlc");
  std::string root = capsa_test::SourceRoot();
  char dir[] = "/tmp/capsa-idl-XXXXXX";
  if (!mkdtemp(dir)) return "mkdtemp failed";
  std::string d(dir);
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
       "the default is outside"},
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

}  // namespace
