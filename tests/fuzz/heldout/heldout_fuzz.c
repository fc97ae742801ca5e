// An embedder's fuzzer as docs/interfaces.md ("Fuzzing") has them write it:
// the generated interface, the embedder's handler, one macro. The handler
// has a planted bug: it trusts offset + data.len <= 256 because each is
// within its schema range (offset <= 100, data <= 200 bytes), and copies
// past its 256-byte table when both are near their maximum. The
// structure-aware mutator must find it (ASan: global-buffer-overflow).
#include <capsa/fuzz.h>
#include <errno.h>
#include <string.h>

#include "heldout.capsa.h"

static uint8_t g_table[256];

static int handle(uint32_t id, const void *value, const capsa_handle_t *handles,
                  uint32_t nhandles, void *arg) {
  (void)handles;
  (void)nhandles;
  (void)arg;
  if (id != CAPSA_TEST_HELDOUT_WRITE) return 0;
  const capsa_test_heldout_write_t *w = value;
#ifdef HELDOUT_FIXED  // the check the planted bug lacks (the test's control)
  if (w->offset + w->data.len > sizeof g_table) return -EINVAL;
#endif
  if (w->data.len) memcpy(g_table + w->offset, w->data.data, w->data.len);
  return 0;
}

CAPSA_FUZZ_INTERFACE(capsa_test_heldout_interface, handle, NULL)
