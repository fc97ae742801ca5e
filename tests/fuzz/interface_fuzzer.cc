// libFuzzer: arbitrary bytes as each message of one generated interface,
// with handle declarations the input also chooses. Every call must return 0
// or -EBADMSG, never read outside the input (ASan), and whatever it accepts
// must encode again (the runtime's encode refuses what decode would).
//
// One harness for every interface: capsa_interface_fuzzer() (tests/fuzz/
// fuzzer.gni) compiles it with CAPSA_FUZZ_HEADER (the generated header) and
// CAPSA_FUZZ_IFACE (its capsa_interface_t), so an interface gets its fuzzer
// from one GN target.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ipc/interface.h"

#ifndef CAPSA_FUZZ_HEADER
#error "CAPSA_FUZZ_HEADER: the generated header (capsa_interface_fuzzer)"
#endif
#include CAPSA_FUZZ_HEADER

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) {
  const capsa_interface_t *iface = &CAPSA_FUZZ_IFACE;
  if (len < 2) return 0;
  uint32_t id = 1 + data[0] % iface->nmessages;
  // Up to CAPSA_IPC_MAX_HANDLES declarations; kinds and writability from the
  // next byte, so the handle rules are fuzzed too.
  uint32_t nh = data[1] % 4;
  capsa_handle_t h[4];
  for (uint32_t i = 0; i < 4; i++) {
    memset(&h[i], 0, sizeof h[i]);
    h[i].fd = -1;
    h[i].kind = (capsa_handle_kind_t)(1 + ((data[1] >> (2 + i)) & 1) * 2);
    h[i].writable = (data[1] >> (4 + (i & 1))) & 1;
    h[i].size = 1000;
    capsa_rights_init(&h[i].rights, CAPSA_CAP_READ);
  }
  // The decoded struct: generated structs are at most 64 fields of 16 bytes.
  alignas(16) static uint8_t out[CAPSA_IFACE_MAX_FIELDS * 16];
  if (capsa_iface_message(iface, id)->c_size > sizeof out) __builtin_trap();
  char why[CAPSA_IPC_REASON_MAX];
  // Received messages sit in aligned buffers; so does this one.
  static uint64_t in[CAPSA_IPC_MAX_MESSAGE / 8];
  size_t n_in = len - 2 > sizeof in ? sizeof in : len - 2;
  memcpy(in, data + 2, n_in);
  int rc = capsa_iface_decode(iface, id, reinterpret_cast<const uint8_t *>(in),
                              n_in, h, nh, out, why, sizeof why);
  if (rc != 0 && rc != -EBADMSG) __builtin_trap();
  if (rc == 0) {
    static uint8_t buf[CAPSA_IPC_MAX_MESSAGE];
    int n = capsa_iface_encode(iface, id, out, h, nh, buf, sizeof buf, why,
                               sizeof why);
    if (n <= 0) __builtin_trap();  // accepted once, refused now: a bug
  }
  return 0;
}
