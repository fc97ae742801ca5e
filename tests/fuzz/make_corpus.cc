// Writes a seed corpus of real messages for the fuzzers:
//   make_corpus DIR   ->  DIR/fuzz_decode/*, DIR/fuzz_channel/*,
//                         DIR/fuzz_host/*, DIR/fuzz_interface/*,
//                         DIR/fuzz_convert/*, DIR/fuzz_ring/*
// Every message type as encoded by the codec, channel inputs (see
// fuzz_channel.h) with the handles each message kind carries, right and
// wrong descriptors attached, host inputs (fuzz_host.h: a renderer's
// messages after its HELLO, with memfds, pipes and sockets), each message
// of the interfaces the interface fuzzers take, and ring words.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <utility>
#include <vector>

#include "host/examples/convert.capsa.h"
#include "ipc/codec.h"
#include "ipc/interface.h"
#include "ipc/ring.h"
#include "tests/fuzz/fuzz_channel.h"
#include "tests/fuzz/fuzz_host.h"
#include "tests/host/interfaces/replies.capsa.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"
#include "tests/ipc/ipc_test_util.h"

namespace {

bool Write(const std::string &path, const std::vector<uint8_t> &bytes) {
  FILE *f = fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return fclose(f) == 0 && ok;
}

std::vector<uint8_t> Encoded(const capsa_msg_t &m) {
  // The tests' carrier of handles (tests/ipc/interfaces/carrier.fbs): its
  // value encoded by the generated encoder, as a sender's channel would.
  if (m.type == CAPSA_MSG_INTERFACE && m.u.iface.value != nullptr)
    return ipc_test::EncodeCarried(m);
  std::vector<uint8_t> b(CAPSA_IPC_MAX_MESSAGE);
  int n = capsa_msg_encode(&m, b.data(), b.size());
  if (n < 0) {
    fprintf(stderr, "make_corpus: cannot encode %s: %d\n",
            capsa_msg_type_name(m.type), n);
    b.clear();
    return b;
  }
  b.resize((size_t)n);
  return b;
}

void Record(std::vector<uint8_t> *in, uint8_t mask, const capsa_msg_t &m) {
  std::vector<uint8_t> b = Encoded(m);
  in->push_back(mask);
  in->push_back((uint8_t)(b.size() & 0xff));
  in->push_back((uint8_t)(b.size() >> 8));
  in->insert(in->end(), b.begin(), b.end());
}

capsa_msg_t WithSeq(capsa_msg_t m, uint64_t seq) {
  m.seq = seq;
  return m;
}

// A fuzz_host record: `handles` as (FuzzHostHandle, size / 256) pairs.
void HostRecord(std::vector<uint8_t> *in,
                const std::vector<std::pair<uint8_t, uint8_t>> &handles,
                const std::vector<uint8_t> &b) {
  in->push_back((uint8_t)handles.size());
  for (const auto &h : handles) {
    in->push_back(h.first);
    in->push_back(h.second);
  }
  in->push_back((uint8_t)(b.size() & 0xff));
  in->push_back((uint8_t)(b.size() >> 8));
  in->insert(in->end(), b.begin(), b.end());
}

// An interface message as the channel sends it: the generated encoder's
// payload in an INTERFACE envelope (index: the place in the HELLO list).
std::vector<uint8_t> IfaceWire(const capsa_interface_t *iface, uint32_t index,
                               uint32_t id, const void *value,
                               const capsa_handle_t *h, uint32_t nh,
                               uint64_t seq) {
  alignas(8) static uint8_t payload[CAPSA_IPC_MAX_MESSAGE];
  char why[CAPSA_IPC_REASON_MAX] = "";
  int n = capsa_iface_encode(iface, id, value, h, nh, payload, sizeof payload,
                             why, sizeof why);
  if (n <= 0) {
    fprintf(stderr, "make_corpus: cannot encode %s #%u: %s\n", iface->name, id,
            why);
    return {};
  }
  capsa_msg_t wire;
  capsa_msg_init(&wire, CAPSA_MSG_INTERFACE);
  wire.seq = seq;
  wire.u.iface.index = index;
  wire.u.iface.id = id;
  wire.u.iface.payload = {payload, (size_t)n};
  for (uint32_t i = 0; i < nh; i++) wire.handles[i] = h[i];
  wire.handle_count = nh;
  return Encoded(wire);
}

// An interface fuzzer's input (tests/fuzz/interface_fuzzer.cc): message id
// byte, handle-declaration byte, then the generated encoder's payload of
// the message's default value.
void InterfaceCorpus(const std::string &dir, const capsa_interface_t *iface,
                     int *written) {
  mkdir(dir.c_str(), 0755);
  alignas(16) static uint8_t value[CAPSA_IFACE_MAX_FIELDS * 16];
  alignas(8) static uint8_t payload[CAPSA_IPC_MAX_MESSAGE];
  for (uint32_t id = 1; id <= iface->nmessages; id++) {
    memset(value, 0, sizeof value);
    char why[CAPSA_IPC_REASON_MAX] = "";
    int n = capsa_iface_encode(iface, id, value, nullptr, 0, payload,
                               sizeof payload, why, sizeof why);
    // A message with a required handle or field cannot encode empty: its
    // seed is the bare header, libFuzzer grows it.
    std::vector<uint8_t> in = {(uint8_t)(id - 1), 0};
    if (n > 0) in.insert(in.end(), payload, payload + n);
    if (Write(dir + "/" + capsa_iface_message(iface, id)->name, in))
      (*written)++;
  }
}

struct HostInput {
  std::string name;
  std::vector<uint8_t> bytes;
};

capsa_msg_t Resource(const char *url, uint64_t seq, uint64_t id) {
  capsa_msg_t m = ipc_test::Sample(CAPSA_MSG_RESOURCE_REQUEST);
  m.u.resource_request.url = url;
  m.seq = seq;
  m.request_id = id;
  return m;
}

capsa_msg_t Log(const char *text, uint64_t seq) {
  capsa_msg_t m = ipc_test::Sample(CAPSA_MSG_LOG);
  m.u.log.text = text;
  m.seq = seq;
  return m;
}

// The carrier's Give with one handle declared as given (kind, rights, size,
// writability), whatever the schema says: the core's handle checks judge
// the descriptor attached first.
// A size no other field has: found again in the encoded bytes.
constexpr uint64_t kMarkerSize = 0x12345;

// Writes a declaration the encoder would refuse over the one whose size is
// kMarkerSize (ipc/schema/capsa_ipc.fbs struct HandleDecl: kind at -24,
// writable at -23, rights0 at -16, rights1 at -8 from size), as a hostile
// sender writes it.
void PatchDecl(std::vector<uint8_t> *b, uint8_t kind, uint8_t writable,
               uint64_t rights0, uint64_t rights1, uint64_t size) {
  for (size_t i = 24; i + 8 <= b->size(); i++) {
    if (memcmp(b->data() + i, &kMarkerSize, 8) != 0) continue;
    uint8_t *d = b->data() + i - 24;
    d[0] = kind;
    d[1] = writable;
    memcpy(d + 8, &rights0, 8);
    memcpy(d + 16, &rights1, 8);
    memcpy(d + 24, &size, 8);
    return;
  }
}

std::vector<uint8_t> GiveWire(capsa_handle_kind_t kind, bool writable,
                              uint64_t size, uint64_t seq) {
  capsa_test_carrier_give_t v;
  capsa_test_carrier_give_init(&v);
  v.region = 0;
  capsa_handle_t h;
  memset(&h, 0, sizeof h);
  h.fd = -1;
  h.kind = CAPSA_HANDLE_SHM;
  h.rights = ipc_test::ReadRights();
  h.size = 4096;
  // Encoded as the schema allows, then the declaration swapped in the
  // envelope (the codec carries declarations as they are).
  alignas(8) static uint8_t payload[CAPSA_IPC_MAX_MESSAGE];
  char why[CAPSA_IPC_REASON_MAX] = "";
  int n =
      capsa_iface_encode(&capsa_test_carrier_interface, CAPSA_TEST_CARRIER_GIVE,
                         &v, &h, 1, payload, sizeof payload, why, sizeof why);
  if (n <= 0) return {};
  capsa_msg_t wire;
  capsa_msg_init(&wire, CAPSA_MSG_INTERFACE);
  wire.seq = seq;
  wire.u.iface.index = 1;
  wire.u.iface.id = CAPSA_TEST_CARRIER_GIVE;
  wire.u.iface.payload = {payload, (size_t)n};
  h.kind = kind;
  h.writable = writable;
  h.size = size;
  if (kind == CAPSA_HANDLE_CHANNEL) h.rights = ipc_test::ChannelRights();
  if (writable) h.rights = ipc_test::WriteRights();
  wire.handles[0] = h;
  wire.handle_count = 1;
  return Encoded(wire);
}

// fuzz_host seeds for every path of the harness (tests/fuzz/fuzz_host.h):
// the broker's services through the listening and the well-behaved
// renderer, the handle checks (every declared kind against every
// descriptor the renderer makes), the embedder's actions, crashes, and
// long valid sequences.
void HostSeeds(std::vector<HostInput> *out) {
  const uint8_t kHello = kFuzzHostAutoHello, kListen = kFuzzHostListen;
  // Broker requests: each answer read (listen) or called (loop).
  static const char *const kUrls[] = {"file:a",
                                      "file:empty",
                                      "file:linked",
                                      "file:dir",
                                      "file:fifo",
                                      "file:missing",
                                      "file:/etc/passwd",
                                      "file:../a",
                                      "file:",
                                      "font:regular",
                                      "font:bold",
                                      "font:mono",
                                      "font:serif",
                                      "dns:localhost",
                                      "dns:",
                                      "dns:no.such.name.invalid",
                                      "capsa://x.png"};
  int i = 0;
  for (const char *url : kUrls) {
    HostInput in{"broker_" + std::to_string(i++),
                 {(uint8_t)(kHello | kListen)}};
    HostRecord(&in.bytes, {}, Encoded(Resource(url, 2, 1)));
    HostRecord(&in.bytes, {}, Encoded(Log("after", 3)));
    out->push_back(in);
    HostInput lo{"loop_" + in.name, {kFuzzHostLoop}};
    HostRecord(&lo.bytes, {}, Encoded(Resource(url, 2, 1)));
    HostRecord(&lo.bytes, {}, Encoded(Log("after", 3)));
    out->push_back(lo);
  }
  {
    // A long DNS name and a flood of lookups past limit_broker_requests.
    static std::string longname = "dns:" + std::string(300, 'a');
    HostInput in{"broker_dns_long", {(uint8_t)(kHello | kListen)}};
    HostRecord(&in.bytes, {}, Encoded(Resource(longname.c_str(), 2, 1)));
    out->push_back(in);
    HostInput flood{"broker_dns_flood", {(uint8_t)(kHello | kListen)}};
    for (uint64_t k = 0; k < 6; k++)
      HostRecord(&flood.bytes, {},
                 Encoded(Resource("dns:localhost", 2 + k, 1 + k)));
    out->push_back(flood);
  }
  // What the broker sent, handed back: a file (FILE handle, read-only) and
  // a font (sealed SHM), declared as each kind.
  static const struct {
    const char *name, *url;
  } kBack[] = {{"file", "file:a"}, {"font", "font:regular"}};
  // Declarations the encoder refuses (an unknown kind, a size 0 region,
  // rights wider than the kind allows, a writable file, a channel with a
  // size) are encoded as a region of kMarkerSize bytes and the declaration
  // (struct HandleDecl: kind, writable, rights0, rights1, size) written
  // over it.
  const uint64_t r0 = ipc_test::ReadRights().cr_rights[0],
                 r1 = ipc_test::ReadRights().cr_rights[1],
                 w0 = ipc_test::WriteRights().cr_rights[0],
                 c0 = ipc_test::ChannelRights().cr_rights[0];
  // The regular font's region (page-rounded), as the broker declares it.
  struct stat fst;
  uint64_t font =
      stat("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", &fst) == 0
          ? ((uint64_t)fst.st_size + 4095) / 4096 * 4096
          : 4096;
  struct Decl {
    const char *name;
    capsa_handle_kind_t kind;
    bool writable;
    uint64_t size;
    bool patch;  // write the declaration over the marker's
    uint8_t pkind, pwritable;
    uint64_t prights0, prights1, psize;
  };
  const Decl kDecl[] = {
      {"shm", CAPSA_HANDLE_SHM, false, 4096, false, 0, 0, 0, 0, 0},
      {"shm_w", CAPSA_HANDLE_SHM, true, 4096, false, 0, 0, 0, 0, 0},
      {"file100", CAPSA_HANDLE_FILE, false, 100, false, 0, 0, 0, 0, 0},
      {"channel", CAPSA_HANDLE_CHANNEL, false, 0, false, 0, 0, 0, 0, 0},
      {"font", CAPSA_HANDLE_SHM, false, font, false, 0, 0, 0, 0, 0},
      {"font_w", CAPSA_HANDLE_SHM, true, font, false, 0, 0, 0, 0, 0},
      {"file0", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 3, 0, r0, r1, 0},
      {"shm0", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 1, 0, r0, r1, 0},
      {"shm_wide", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 1, 0, ~0ull, r1,
       4096},
      {"shm_huge", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 1, 0, r0, r1,
       1ull << 50},
      {"file_w", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 3, 1, r0, r1, 100},
      {"file_wide", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 3, 0, w0, r1,
       100},
      {"channel1", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 2, 0, c0, r1, 1},
      {"kind0", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 0, 0, r0, r1, 4096},
      {"kind9", CAPSA_HANDLE_SHM, false, kMarkerSize, true, 9, 0, r0, r1, 4096},
  };
  auto wire = [](const Decl &d, uint64_t seq) {
    std::vector<uint8_t> w = GiveWire(d.kind, d.writable, d.size, seq);
    if (d.patch)
      PatchDecl(&w, d.pkind, d.pwritable, d.prights0, d.prights1, d.psize);
    return w;
  };
  for (const auto &b : kBack)
    for (const auto &d : kDecl) {
      HostInput in{std::string("back_") + b.name + "_as_" + d.name,
                   {(uint8_t)(kHello | kListen)}};
      HostRecord(&in.bytes, {}, Encoded(Resource(b.url, 2, 1)));
      HostRecord(&in.bytes, {{kFuzzHostReceived, 0}}, wire(d, 3));
      out->push_back(in);
    }
  // Every descriptor the renderer makes under every declaration.
  for (uint8_t k = 0; k < kFuzzHostHandleKinds; k++) {
    if (k == kFuzzHostReceived) continue;
    for (const auto &d : kDecl) {
      HostInput in{"handle_" + std::to_string(k) + "_as_" + d.name, {kHello}};
      HostRecord(&in.bytes, {{k, 16}}, wire(d, 2));
      out->push_back(in);
    }
  }
  // The embedder's actions, each alone, after a message that triggers the
  // first-message ones.
  static const struct {
    const char *name;
    uint8_t acts;
  } kActs[] = {
      {"request", kFuzzHostActRequest},        {"send", kFuzzHostActSend},
      {"shutdown", kFuzzHostActShutdown},      {"kill", kFuzzHostActKill},
      {"bad_message", kFuzzHostActBadMessage}, {"reply", kFuzzHostActReply},
      {"navigate", kFuzzHostActNavigate},      {"info", kFuzzHostActInfo}};
  for (const auto &a : kActs) {
    for (int loop = 0; loop < 2; loop++) {
      HostInput in{std::string(loop ? "loop_act_" : "act_") + a.name,
                   {(uint8_t)((loop ? kFuzzHostLoop : (kHello | kListen)) |
                              kFuzzHostEmbedder),
                    a.acts}};
      HostRecord(&in.bytes, {}, Encoded(Log("first", 2)));
      HostRecord(&in.bytes, {}, Encoded(Resource("dns:localhost", 3, 1)));
      HostRecord(&in.bytes, {}, Encoded(Log("second", 4)));
      out->push_back(in);
    }
  }
  // The replies interface's Ask (a renderer's request to the embedder),
  // answered (kFuzzHostActReply) or not, raw and through the loop.
  for (int loop = 0; loop < 2; loop++)
    for (int reply = 0; reply < 2; reply++) {
      HostInput in{
          std::string(loop ? "loop_" : "") + "ask" + (reply ? "_answered" : ""),
          {(uint8_t)((loop ? kFuzzHostLoop : (kHello | kListen)) |
                     (reply ? kFuzzHostEmbedder : 0))}};
      if (reply) in.bytes.push_back(kFuzzHostActReply);
      capsa_test_replies_ask_t ask;
      capsa_test_replies_ask_init(&ask);
      ask.tag = "question";
      std::vector<uint8_t> w =
          IfaceWire(&capsa_test_replies_interface, 2, CAPSA_TEST_REPLIES_ASK,
                    &ask, nullptr, 0, 2);
      // A request: the flag and an id of its own.
      capsa_msg_t m;
      if (capsa_msg_decode(w.data(), w.size(), &m, nullptr, 0) == 0) {
        m.flags = CAPSA_MSG_F_REQUEST;
        m.request_id = 1;
        w = Encoded(m);
      }
      HostRecord(&in.bytes, {}, w);
      HostRecord(&in.bytes, {}, Encoded(Log("asked", 3)));
      out->push_back(in);
    }
  // Crashes after a message: a fault and an abort.
  for (uint8_t how : {kFuzzHostCrash, kFuzzHostAbort}) {
    HostInput in{how == kFuzzHostCrash ? "crash_fault" : "crash_abort",
                 {(uint8_t)(kHello | how)}};
    HostRecord(&in.bytes, {}, Encoded(Log("about to crash", 2)));
    out->push_back(in);
  }
  // A renderer's child that outlives it (an orphan the host reaps) and one
  // that stays in its group (killed with it).
  for (uint8_t how : {kFuzzHostFork, kFuzzHostForkStay}) {
    HostInput in{how == kFuzzHostFork ? "fork_orphan" : "fork_in_group",
                 {(uint8_t)(kHello | how)}};
    HostRecord(&in.bytes, {}, Encoded(Log("forked", 2)));
    out->push_back(in);
  }
  {
    // A renderer that lingers without answering PING: the heartbeat judges
    // it.
    HostInput in{"linger_hung", {(uint8_t)(kHello | kListen)}};
    HostRecord(&in.bytes, {}, Encoded(Log("idle next", 2)));
    out->push_back(in);
  }
  {
    // A long valid session through the renderer loop: logs, progress,
    // a region given, a channel opened, broker calls, an error.
    HostInput in{"loop_session", {kFuzzHostLoop}};
    capsa_test_thumbnail_progress_t pr;
    capsa_test_thumbnail_progress_init(&pr);
    pr.percent = 10;
    pr.note = "loop";
    uint64_t seq = 2;
    for (int k = 0; k < 6; k++) {
      HostRecord(&in.bytes, {}, Encoded(Log("step", seq++)));
      HostRecord(
          &in.bytes, {},
          IfaceWire(&capsa_test_thumbnail_interface, 0,
                    CAPSA_TEST_THUMBNAIL_PROGRESS, &pr, nullptr, 0, seq++));
    }
    HostRecord(&in.bytes, {{kFuzzHostShmFrozen, 16}},
               GiveWire(CAPSA_HANDLE_SHM, false, 4096, seq++));
    capsa_msg_t oc = WithSeq(ipc_test::Sample(CAPSA_MSG_OPEN_CHANNEL), seq++);
    HostRecord(&in.bytes, {{kFuzzHostChannel, 0}}, Encoded(oc));
    HostRecord(&in.bytes, {}, Encoded(Resource("font:mono", seq++, 1)));
    HostRecord(&in.bytes, {}, Encoded(Resource("file:a", seq++, 2)));
    HostRecord(&in.bytes, {{kFuzzHostReceived, 0}},
               GiveWire(CAPSA_HANDLE_SHM, false, 4096, seq++));
    HostRecord(&in.bytes, {},
               Encoded(WithSeq(ipc_test::Sample(CAPSA_MSG_ERROR), seq++)));
    out->push_back(in);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::string dec = dir + "/fuzz_decode", chan = dir + "/fuzz_channel";
  mkdir(dir.c_str(), 0755);
  mkdir(dec.c_str(), 0755);
  mkdir(chan.c_str(), 0755);
  int written = 0;
  for (capsa_msg_type_t t : ipc_test::CoreTypes()) {
    capsa_msg_t m = ipc_test::Sample(t);
    if (!Write(dec + "/" + capsa_msg_type_name(t), Encoded(m))) return 1;
    written++;
  }

  capsa_rights_t rr = ipc_test::ReadRights(), rw = ipc_test::WriteRights();
  capsa_msg_t hello = ipc_test::Hello();
  struct Input {
    const char *name;
    std::vector<uint8_t> bytes;
  };
  std::vector<Input> inputs;
  {
    Input in{"hello_log_ping", {}};
    Record(&in.bytes, 0, hello);
    Record(&in.bytes, 0, WithSeq(ipc_test::Sample(CAPSA_MSG_LOG), 2));
    Record(&in.bytes, 0, WithSeq(ipc_test::Sample(CAPSA_MSG_PING), 3));
    Record(&in.bytes, 0, WithSeq(ipc_test::Sample(CAPSA_MSG_INTERFACE), 4));
    inputs.push_back(in);
  }
  {
    capsa_test_carrier_deliver_t v;
    capsa_msg_t m = ipc_test::Carry(&v);
    ipc_test::CarryHandle(&m, &v, 0, CAPSA_HANDLE_SHM, &rw, 4096, true);
    Input ok{"frame_shm", {}}, bad{"frame_fifo", {}};
    Record(&ok.bytes, 1u << kFuzzShmWritable, m);
    Record(&bad.bytes, 1u << kFuzzFifo, m);
    inputs.push_back(ok);
    inputs.push_back(bad);
  }
  {
    capsa_test_carrier_deliver_t v;
    capsa_msg_t m = ipc_test::Carry(&v);
    ipc_test::CarryHandle(&m, &v, 0, CAPSA_HANDLE_FILE, &rr, 100, false);
    Input ok{"deliver_file", {}}, rwfile{"deliver_rw_file", {}},
        dir_in{"deliver_directory", {}};
    Record(&ok.bytes, 1u << kFuzzFileReadOnly, m);
    Record(&rwfile.bytes, 1u << kFuzzFileReadWrite, m);
    Record(&dir_in.bytes, 1u << kFuzzDirectory, m);
    inputs.push_back(ok);
    inputs.push_back(rwfile);
    inputs.push_back(dir_in);
  }
  {
    capsa_test_carrier_deliver_t v;
    capsa_msg_t m = ipc_test::Carry(&v);
    ipc_test::CarryHandle(&m, &v, 0, CAPSA_HANDLE_SHM, &rr, 4096, false);
    ipc_test::CarryHandle(&m, &v, 0, CAPSA_HANDLE_SHM, &rw, 4096, true);
    Input ok{"deliver_two_regions", {}}, swapped{"deliver_sockets", {}};
    Record(&ok.bytes, (1u << kFuzzShmReadOnly) | (1u << kFuzzShmWritable), m);
    Record(&swapped.bytes, (1u << kFuzzSocketPair) | (1u << kFuzzStreamSocket),
           m);
    inputs.push_back(ok);
    inputs.push_back(swapped);
  }
  {
    capsa_msg_t m = ipc_test::Sample(CAPSA_MSG_OPEN_CHANNEL);
    Input ok{"open_channel", {}}, stream{"open_channel_stream", {}};
    Record(&ok.bytes, 1u << kFuzzSocketPair, m);
    Record(&stream.bytes, 1u << kFuzzStreamSocket, m);
    inputs.push_back(ok);
    inputs.push_back(stream);
  }
  for (const Input &in : inputs) {
    if (!Write(chan + "/" + in.name, in.bytes)) return 1;
    written++;
  }

  // fuzz_host: the renderer's HELLO is the harness's (kFuzzHostAutoHello),
  // then messages from seq 2 on, as a renderer sends them.
  std::string host = dir + "/fuzz_host";
  mkdir(host.c_str(), 0755);
  std::vector<HostInput> hin;
  for (capsa_msg_type_t t : ipc_test::CoreTypes()) {
    if (t == CAPSA_MSG_HELLO) continue;
    HostInput in{capsa_msg_type_name(t), {kFuzzHostAutoHello}};
    std::vector<std::pair<uint8_t, uint8_t>> h;
    if (t == CAPSA_MSG_OPEN_CHANNEL) h.push_back({kFuzzHostChannel, 0});
    HostRecord(&in.bytes, h, Encoded(WithSeq(ipc_test::Sample(t), 2)));
    hin.push_back(in);
  }
  {
    // The handshake itself from the input: the harness's pid is not this
    // one, so the host refuses it (a path to keep covered).
    HostInput in{"own_hello", {0}};
    HostRecord(&in.bytes, {}, Encoded(hello));
    hin.push_back(in);
  }
  {
    // A long valid session: logs, pings and progress events.
    HostInput in{"session", {kFuzzHostAutoHello}};
    capsa_test_thumbnail_progress_t p;
    capsa_test_thumbnail_progress_init(&p);
    p.percent = 50;
    p.note = "half";
    uint64_t seq = 2;
    for (int i = 0; i < 4; i++) {
      HostRecord(&in.bytes, {},
                 Encoded(WithSeq(ipc_test::Sample(CAPSA_MSG_LOG), seq++)));
      HostRecord(
          &in.bytes, {},
          IfaceWire(&capsa_test_thumbnail_interface, 0,
                    CAPSA_TEST_THUMBNAIL_PROGRESS, &p, nullptr, 0, seq++));
    }
    hin.push_back(in);
  }
  // The carrier's Give (renderer -> host) with one read-only region
  // declared; the descriptor attached is each kind the harness makes, so
  // the host's handle checks see right and wrong ones.
  static const struct {
    const char *name;
    uint8_t kind;
  } kGive[] = {{"give_region", kFuzzHostShmFrozen},
               {"give_future_sealed", kFuzzHostShmReadOnly},
               {"give_writable", kFuzzHostShmShared},
               {"give_unsealed", kFuzzHostShmUnsealed},
               {"give_pipe", kFuzzHostPipeRead},
               {"give_socket", kFuzzHostStream}};
  for (const auto &g : kGive) {
    capsa_test_carrier_give_t v;
    capsa_test_carrier_give_init(&v);
    v.region = 0;
    capsa_handle_t h;
    memset(&h, 0, sizeof h);
    h.fd = -1;
    h.kind = CAPSA_HANDLE_SHM;
    h.rights = rr;
    h.size = 4096;
    HostInput in{g.name, {kFuzzHostAutoHello}};
    HostRecord(&in.bytes, {{g.kind, 16}},
               IfaceWire(&capsa_test_carrier_interface, 1,
                         CAPSA_TEST_CARRIER_GIVE, &v, &h, 1, 2));
    hin.push_back(in);
  }
  HostSeeds(&hin);
  for (const HostInput &in : hin) {
    if (!Write(host + "/" + in.name, in.bytes)) return 1;
    written++;
  }

  InterfaceCorpus(dir + "/fuzz_interface", &capsa_test_thumbnail_interface,
                  &written);
  InterfaceCorpus(dir + "/fuzz_convert", &capsa_example_convert_interface,
                  &written);

  // fuzz_ring: tail, head and start (u32 each) then data-area bytes: an
  // empty ring, one with a record, one wrapped.
  std::string ring = dir + "/fuzz_ring";
  mkdir(ring.c_str(), 0755);
  static const struct {
    const char *name;
    uint32_t words[3];
  } kRings[] = {{"empty", {0, 0, 0}},
                {"one_record", {0, 16, 0}},
                {"wrapped", {4000, 96, 4000}}};
  for (const auto &r : kRings) {
    std::vector<uint8_t> b((const uint8_t *)r.words,
                           (const uint8_t *)r.words + sizeof r.words);
    uint32_t len = 8;
    b.insert(b.end(), (const uint8_t *)&len, (const uint8_t *)&len + 4);
    b.insert(b.end(), {'r', 'e', 'c', 'o', 'r', 'd', '!', '!'});
    if (!Write(ring + "/" + r.name, b)) return 1;
    written++;
  }
  printf("make_corpus: %d inputs in %s\n", written, dir.c_str());
  return 0;
}
