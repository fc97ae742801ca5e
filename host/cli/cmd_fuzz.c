// capsa fuzz: a live campaign against a real host. Fuzzing renderers
// (demos/fuzz/) send structure-aware mutations of real messages; the
// host must catch every bad one (killing its sender) and keep serving, and
// its handler (on_noise below, the embedder's part) sees what it accepts.
//
// The campaign runs in a worker process watched by this one. Everything
// the worker's host receives is recorded, as it arrives, in memory shared
// with the watcher (host/fuzz/repro.h). A worker that dies or stops
// reporting progress (a host crash or hang) is a failure: its signature
// (host/fuzz/stack.h: the sanitizer report's top frames, or the signal
// and the frames the crash handler saw) names it, the last channels'
// records are saved once per signature as OUT/crash-HASH.repro (a manifest
// and a CAPSA_IPC_DUMP .in file per renderer, each a fuzz_host input), and
// a new worker goes on with the next renderer seeds until the time is up.
// `--replay FILE` sends a reproducer's records to a fresh host in their
// arrival order; `--minimize FILE` drops renderers and records while the
// replay still fails with the same signature, and writes FILE.min.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demos/fuzz/fuzz_renderer.h"
#include "host/capsa_host.h"
#include "host/cli/commands.h"
#include "host/fuzz/args.h"
#include "host/fuzz/live.h"
#include "host/kind_registry.h"

CAPSA_RENDERER_KIND(fuzz, "fuzz", capsa_fuzz_renderer_main, NULL)

enum {
  kHangSeconds = 15,  // default for --hang-seconds
};

// --- the host's handler (what an embedder's would be)

// Test hooks (CAPSA_FUZZ_INJECT=crash,abort,hang): planted bugs of the
// host, reached only by some accepted messages, so a campaign finds them
// and a replay of the saved records reaches them again.
static bool g_inject_crash, g_inject_abort, g_inject_hang;

__attribute__((noinline)) static void planted_null_write(unsigned v) {
  volatile int *volatile p = NULL;
  *p = (int)v;  // SIGSEGV here: a host bug
}

__attribute__((noinline)) static void planted_abort(void) {
  abort();
}

// Every message the host accepted, as the embedder's on_message sees it.
static void on_noise(capsa_renderer_t *r, const capsa_msg_t *m, void *arg) {
  (void)r;
  (void)arg;
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.iface != &capsa_fuzz_interface ||
      m->u.iface.id != CAPSA_FUZZ_NOISE || m->u.iface.value == NULL)
    return;
  const capsa_fuzz_noise_t *nz = m->u.iface.value;
  // A handler's reading of what the schema promises (bounded note and data).
  volatile size_t sum = 0;
  for (size_t i = 0; i < nz->data.len; i++) sum += nz->data.data[i];
  if (g_inject_crash && nz->level == 3 && nz->data.len >= 100)
    planted_null_write((unsigned)sum);
  if (g_inject_abort && nz->level == 2 && nz->data.len >= 128) planted_abort();
}

static void read_inject(void) {
  const char *s = getenv("CAPSA_FUZZ_INJECT");
  if (s == NULL) return;
  g_inject_crash = strstr(s, "crash") != NULL;
  g_inject_abort = strstr(s, "abort") != NULL;
  g_inject_hang = strstr(s, "hang") != NULL;
}

// A fuzzing renderer is READY: it waits for its seed.
static void send_seed(capsa_renderer_t *r, uint64_t seed, uint64_t index,
                      void *arg) {
  (void)arg;
  if (g_inject_hang && index >= 3)
    for (;;) pause();
  capsa_fuzz_seed_t sd;
  capsa_fuzz_seed_init(&sd);
  sd.seed = seed;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_fuzz_interface, CAPSA_FUZZ_SEED, &sd);
  capsa_renderer_send(r, &m);
}

int capsa_cmd_fuzz(int argc, char **argv) {
  // capsa's own renderer, interface and handler; an embedder's campaign is
  // the same driver through <capsa/fuzz_live.h>.
  capsa__fz_live_options_t o;
  capsa__fz_live_options_init(&o);
  o.kind = "fuzz";
  o.renderer_main = capsa_fuzz_renderer_main;
  o.interfaces = capsa_fuzz_interfaces;
  o.ninterfaces = 1;
  o.renderer_seed = capsa_fuzz_renderer_seed;
  o.on_ready = send_seed;
  o.on_message = on_noise;
  o.hang_seconds = kHangSeconds;
  o.seed = 1;
  capsa__fz_args_t a;
  int r = capsa__fz_args_parse(argc, argv, "capsa fuzz", &o, &a);
  if (r == CAPSA__FZ_ARGS_HELP) return 0;
  if (r != CAPSA__FZ_ARGS_RUN) return CAPSA_EXIT_USAGE;
  if (o.rounds)
    return capsa_cli_usage_error(
        "fuzz", "[...]",
        "--rounds is capsa_fuzz_live_main's: capsa's own fuzzing renderer "
        "sends a fixed number of records (CAPSA_FUZZ_ROUNDS)",
        NULL);
  read_inject();
  return capsa__fz_args_run(&o, &a);
}
