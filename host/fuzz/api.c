// <capsa/fuzz_live.h>: an embedder's campaign is capsa fuzz's driver
// (live.h) with the generic renderer (generic.h) and the embedder's host
// code.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "host/fuzz/args.h"
#include "host/fuzz/capsa_fuzz_live.h"
#include "host/fuzz/generic.h"
#include "host/fuzz/live.h"

static const char kKind[] = "capsa-fuzz-live";

// Set before the worker forks its zygote: the renderers inherit it.
static capsa__fz_generic_t g_generic;
static capsa_fuzz_live_options_t g_user;

static uint64_t renderer_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed ^ (index * 0xD1B54A32D192ED03ULL);
  z += 0x9E3779B97F4A7C15ULL;  // splitmix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static unsigned g_rounds;

static void on_ready(capsa_renderer_t *r, uint64_t seed, uint64_t index,
                     void *arg) {
  (void)index;
  (void)arg;
  if (capsa__fz_generic_send_seed(r, seed, g_rounds) < 0) {
    capsa_renderer_kill(r);
    return;
  }
  if (g_user.on_ready) g_user.on_ready(r, g_user.arg);
}

static void on_replay_ready(capsa_renderer_t *r, void *arg) {
  (void)arg;
  if (g_user.on_ready) g_user.on_ready(r, g_user.arg);
}

static void on_message(capsa_renderer_t *r, const capsa_msg_t *m, void *arg) {
  (void)arg;
  if (g_user.on_message) g_user.on_message(r, m, g_user.arg);
}

void capsa_fuzz_live_options_init(capsa_fuzz_live_options_t *o) {
  if (o == NULL) return;
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->seconds = 60;
  o->hang_seconds = 15;
  o->parallel = 2;
  o->rounds = 256;
  o->out_dir = ".";
}

int capsa_fuzz_live_main(int argc, char **argv,
                         const capsa_fuzz_live_options_t *o) {
  const char *prog = argc > 0 && argv && argv[0] ? argv[0] : "capsa-fuzz-live";
  if (o == NULL || o->interfaces == NULL || o->ninterfaces == 0) {
    fprintf(stderr,
            "%s: capsa_fuzz_live_options_t.interfaces is empty: set "
            "interfaces and ninterfaces to what the renderers speak\n",
            prog);
    return 2;
  }
  if (o->ninterfaces + 1 > CAPSA_IFACE_MAX_PER_CHANNEL) {
    fprintf(stderr,
            "%s: capsa_fuzz_live_options_t.ninterfaces is %u: at most %d "
            "(the driver adds its own interface)\n",
            prog, o->ninterfaces, CAPSA_IFACE_MAX_PER_CHANNEL - 1);
    return 2;
  }
  for (unsigned i = 0; i < o->ninterfaces; i++) {
    char why[128] = "";
    if (o->interfaces[i] == NULL ||
        capsa_iface_check_descriptor(o->interfaces[i], why, sizeof why) < 0) {
      fprintf(stderr,
              "%s: capsa_fuzz_live_options_t.interfaces[%u] is not a "
              "generated interface: %s\n",
              prog, i, o->interfaces[i] ? why : "NULL");
      return 2;
    }
  }
  g_user = *o;
  if (capsa__fz_generic_init(&g_generic, kKind, o->interfaces, o->ninterfaces) <
      0)
    return 2;
  capsa__fz_live_options_t lo;
  capsa__fz_live_options_init(&lo);
  lo.kind = kKind;
  lo.renderer_main = capsa__fz_generic_main;
  lo.renderer_arg = &g_generic;
  lo.forked_zygote = true;
  lo.interfaces = g_generic.ifaces;
  lo.ninterfaces = g_generic.nifaces;
  lo.renderer_seed = renderer_seed;
  lo.on_ready = on_ready;
  lo.on_replay_ready = on_replay_ready;
  lo.on_message = on_message;
  lo.seed = o->seed;
  lo.seconds = o->seconds ? o->seconds : 60;
  lo.hang_seconds = o->hang_seconds ? o->hang_seconds : 15;
  lo.parallel = o->parallel ? o->parallel : 2;
  lo.rounds = o->rounds ? o->rounds : 256;
  lo.stop_after_unique = o->stop_after_unique;
  lo.stop_after_failures = o->stop_after_failures;
  lo.out_dir = o->out_dir ? o->out_dir : ".";
  lo.prog = prog;
  capsa__fz_args_t a;
  int r = capsa__fz_args_parse(argc, argv, prog, &lo, &a);
  if (r == CAPSA__FZ_ARGS_HELP) return 0;
  if (r != CAPSA__FZ_ARGS_RUN) return 2;
  g_rounds = lo.rounds;
  return capsa__fz_args_run(&lo, &a);
}
