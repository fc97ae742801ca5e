// libFuzzer (not a GoogleTest binary, despite the name): arbitrary bytes as
// each message of a generated interface (tests/ipc/interfaces/thumbnail.fbs),
// with handle declarations the input also chooses. Every call must return 0
// or -EBADMSG, never read outside the input (ASan), and whatever it accepts
// must encode again (the runtime's encode refuses what decode would).
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/ipc/interfaces/thumbnail.capsa.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) {
  if (len < 2) return 0;
  uint32_t id = 1 + data[0] % capsa_test_thumbnail_interface.nmessages;
  // Up to two handle declarations from the next byte.
  uint32_t nh = data[1] % 3;
  capsa_handle_t h[2];
  for (uint32_t i = 0; i < 2; i++) {
    memset(&h[i], 0, sizeof h[i]);
    h[i].fd = -1;
    h[i].kind = (capsa_handle_kind_t)(1 + ((data[1] >> (2 + i)) & 1) * 2);
    h[i].writable = (data[1] >> (4 + i)) & 1;
    h[i].size = 1000;
    capsa_rights_init(&h[i].rights, CAPSA_CAP_READ);
  }
  union {
    capsa_test_thumbnail_decode_t d;
    capsa_test_thumbnail_decode_result_t r;
    capsa_test_thumbnail_progress_t p;
  } out;
  char why[CAPSA_IPC_REASON_MAX];
  // Received messages sit in aligned buffers; so does this one.
  static uint64_t in[CAPSA_IPC_MAX_MESSAGE / 8];
  size_t n_in = len - 2 > sizeof in ? sizeof in : len - 2;
  memcpy(in, data + 2, n_in);
  int rc = capsa_iface_decode(&capsa_test_thumbnail_interface, id,
                              reinterpret_cast<const uint8_t *>(in), n_in, h,
                              nh, &out, why, sizeof why);
  if (rc != 0 && rc != -EBADMSG) __builtin_trap();
  if (rc == 0) {
    static uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
    int n = capsa_iface_encode(&capsa_test_thumbnail_interface, id, &out, h, nh,
                               buf, sizeof buf, why, sizeof why);
    if (n <= 0) __builtin_trap();  // accepted once, refused now: a bug
  }
  return 0;
}
