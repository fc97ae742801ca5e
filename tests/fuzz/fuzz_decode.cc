// libFuzzer: decode + validation of arbitrary bytes (what a hostile peer
// controls in a record). Whatever the input: no crash, no out-of-bounds read
// (ASan), and anything accepted re-encodes to a message that decodes again
// to the same bytes (the codec and the checks agree).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "ipc/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // An exact-size heap copy so ASan sees any read past the end.
  std::vector<uint8_t> buf(data, data + size);
  capsa_msg_t m;
  char why[CAPSA_IPC_REASON_MAX];
  if (capsa_msg_decode(buf.data(), buf.size(), &m, why, sizeof why) != 0)
    return 0;
  static uint8_t out[CAPSA_IPC_MAX_MESSAGE];
  int n = capsa_msg_encode(&m, out, sizeof out);
  if (n <= 0) abort();  // decode accepted what encode refuses
  capsa_msg_t again;
  if (capsa_msg_decode(out, (size_t)n, &again, why, sizeof why) != 0) abort();
  static uint8_t out2[CAPSA_IPC_MAX_MESSAGE];
  int n2 = capsa_msg_encode(&again, out2, sizeof out2);
  if (n2 != n || memcmp(out, out2, (size_t)n) != 0) abort();
  return 0;
}
