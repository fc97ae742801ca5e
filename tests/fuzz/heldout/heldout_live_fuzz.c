// The held-out schema's planted bug (heldout_live.c) under libFuzzer, as
// docs/interfaces.md ("Fuzzing, live") has an embedder write it: this
// process is the host, with the planted bug in its on_message; each input
// is one sandboxed renderer's messages over a real channel, guided by the
// host's coverage (ASan: global-buffer-overflow).
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

static void setup(capsa_fuzz_live_options_t *o) {
  o->interfaces = kSpeaks;
  o->ninterfaces = 1;
  o->on_message = on_message;
}

CAPSA_FUZZ_LIVE_TARGET(setup)
