// libFuzzer (not a GoogleTest binary, despite the name): arbitrary bytes as
// the peer-written words and records of a ring, against both sides. Every call
// must return a documented result and never read or write outside the region
// (ASan), hang (all waits are timeout 0) or trust a record it did not check.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ipc/ring.h"
#include "ipc/shm.h"

namespace {

constexpr size_t kCap = 4096;

bool Documented(int r, bool reader) {
  if (reader && r >= 0) return r <= (int)CAPSA_RING_MAX_MESSAGE;
  return r == 0 || r == -EAGAIN || r == -EBADMSG || r == -EMSGSIZE;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) {
  static capsa_shm_region_t region;
  static bool ready = false;
  if (!ready) {
    if (capsa_shm_create(capsa_ring_region_size(kCap), "fuzz-ring",
                         CAPSA_SHM_BOTH_WRITE, &region) != 0)
      __builtin_trap();
    ready = true;
  }
  // Input: tail, head (u32 each), a start position, then data-area bytes.
  uint8_t *base = (uint8_t *)region.base;
  memset(base, 0, region.size);
  uint32_t words[3] = {0, 0, 0};
  memcpy(words, data, len < sizeof words ? len : sizeof words);
  size_t rest = len > sizeof words ? len - sizeof words : 0;
  if (rest > 0)
    memcpy(base + CAPSA_RING_HEADER, data + sizeof words,
           rest < kCap ? rest : kCap);
  uint32_t start = words[2] & ~7u;  // our own positions are always aligned
  memcpy(base + CAPSA_RING_OFF_TAIL, &words[0], 4);
  memcpy(base + CAPSA_RING_OFF_HEAD, &words[1], 4);

  capsa_ring_t rx, tx;
  if (capsa_ring_init(&rx, &region, CAPSA_RING_CONSUMER) != 0 ||
      capsa_ring_init(&tx, &region, CAPSA_RING_PRODUCER) != 0)
    __builtin_trap();
  rx.pos = start;
  tx.pos = start;
  capsa_ring_set_spin(&rx, 0, 0);
  capsa_ring_set_spin(&tx, 0, 0);
  static uint8_t buf[CAPSA_RING_MAX_MESSAGE];
  for (int i = 0; i < 64; i++) {
    uint32_t kind;
    int r = capsa_ring_read(&rx, buf, sizeof buf, &kind, 0);
    if (!Documented(r, true)) __builtin_trap();
    if (r < 0) break;
  }
  // The producer against a hostile head: fill until refused.
  for (int i = 0; i < 64; i++) {
    int r = capsa_ring_write(&tx, 1, buf, (size_t)(i * 37) % 700, 0);
    if (!Documented(r, false)) __builtin_trap();
    if (r < 0) break;
  }
  return 0;
}
