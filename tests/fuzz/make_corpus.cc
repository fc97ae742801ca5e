// Writes a seed corpus of real messages for the fuzzers:
//   make_corpus DIR   ->  DIR/fuzz_decode/*, DIR/fuzz_channel/*
// Every message type as encoded by the codec, and channel inputs (see
// fuzz_channel.h) with the handles each message kind carries, right and
// wrong descriptors attached.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "ipc/codec.h"
#include "tests/fuzz/fuzz_channel.h"
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
  printf("make_corpus: %d inputs in %s\n", written, dir.c_str());
  return 0;
}
