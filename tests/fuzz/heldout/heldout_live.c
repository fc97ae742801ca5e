// The held-out schema's handler (heldout_fuzz.c) as a live campaign has it
// (<capsa/fuzz_live.h>, docs/interfaces.md "Fuzzing, live"): the same
// planted bug, now in a real host's on_message, reached only by a Write a
// sandboxed renderer sent over a real channel that every check accepted.
#include <capsa/fuzz_live.h>
#include <string.h>

#include "heldout.capsa.h"

static uint8_t g_table[256];

static void on_message(capsa_renderer_t *r, const capsa_msg_t *m, void *arg) {
  (void)r;
  (void)arg;
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.iface != &capsa_test_heldout_interface ||
      m->u.iface.id != CAPSA_TEST_HELDOUT_WRITE)
    return;
  const capsa_test_heldout_write_t *w = m->u.iface.value;
#ifdef HELDOUT_FIXED  // the check the planted bug lacks (the test's control)
  if (w->offset + w->data.len > sizeof g_table) return;
#endif
  if (w->data.len) memcpy(g_table + w->offset, w->data.data, w->data.len);
}

static const capsa_interface_t *const kSpeaks[] = {
    &capsa_test_heldout_interface};

int main(int argc, char **argv) {
  capsa_fuzz_live_options_t o;
  capsa_fuzz_live_options_init(&o);
  o.interfaces = kSpeaks;
  o.ninterfaces = 1;
  o.on_message = on_message;
  return capsa_fuzz_live_main(argc, argv, &o);
}
