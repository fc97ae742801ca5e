// capsa fuzz: a live campaign against a real host. Fuzzing renderers
// (renderer/fuzz/) send structure-aware mutations of real messages; the
// host must catch every bad one (killing its sender) and keep serving, and
// its handler (on_noise below, the embedder's part) sees what it accepts.
//
// The campaign runs in a worker process watched by this one. Everything
// the worker's host receives is recorded, as it arrives, in memory shared
// with the watcher (host/cli/fuzz_repro.h). A worker that dies or stops
// reporting progress (a host crash or hang) is a failure: its signature
// (host/cli/fuzz_stack.h: the sanitizer report's top frames, or the signal
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

#include "host/capsa_host.h"
#include "host/cli/commands.h"
#include "host/cli/fuzz_live.h"
#include "host/kind_registry.h"
#include "renderer/fuzz/fuzz_renderer.h"

// After "usage: capsa fuzz " (capsa_cli_usage_error adds it).
static const char kUsage[] =
    "[--seconds N] [--seed S] [--hang-seconds N] [--out DIR]\n"
    "       [--stop-after-unique N]\n"
    "       capsa fuzz --replay FILE\n"
    "       capsa fuzz --minimize FILE [--seconds N]";

CAPSA_RENDERER_KIND(fuzz, "fuzz", capsa_fuzz_renderer_main, NULL)

enum {
  kHangSeconds = 15,      // default for --hang-seconds
  kMinimizeSeconds = 60,  // default budget of --minimize
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
static void on_noise(const capsa_msg_t *m, void *arg) {
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
  unsigned long seconds = 10, hang_seconds = kHangSeconds,
                stop_after_unique = 0;
  bool seconds_set = false;
  uint64_t seed = 1;
  const char *replay_path = NULL, *minimize_path = NULL, *out_dir = ".";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa fuzz %s\n", kUsage);
      return 0;
    }
    if (i + 1 >= argc)
      return capsa_cli_usage_error("fuzz", kUsage, "missing value for",
                                   argv[i]);
    char *end = NULL;
    if (strcmp(argv[i], "--seconds") == 0) {
      seconds = strtoul(argv[++i], &end, 10);
      seconds_set = true;
      if (*end || seconds == 0 || seconds > 86400)
        return capsa_cli_usage_error("fuzz", kUsage, "bad --seconds", argv[i]);
    } else if (strcmp(argv[i], "--seed") == 0) {
      seed = strtoull(argv[++i], &end, 10);
      if (*end)
        return capsa_cli_usage_error("fuzz", kUsage, "bad --seed", argv[i]);
    } else if (strcmp(argv[i], "--stop-after-unique") == 0) {
      stop_after_unique = strtoul(argv[++i], &end, 10);
      if (*end || stop_after_unique == 0 || stop_after_unique > 64)
        return capsa_cli_usage_error(
            "fuzz", kUsage, "bad --stop-after-unique (1..64)", argv[i]);
    } else if (strcmp(argv[i], "--hang-seconds") == 0) {
      hang_seconds = strtoul(argv[++i], &end, 10);
      if (*end || hang_seconds == 0 || hang_seconds > 3600)
        return capsa_cli_usage_error("fuzz", kUsage, "bad --hang-seconds",
                                     argv[i]);
    } else if (strcmp(argv[i], "--replay") == 0) {
      replay_path = argv[++i];
    } else if (strcmp(argv[i], "--minimize") == 0) {
      minimize_path = argv[++i];
    } else if (strcmp(argv[i], "--out") == 0) {
      out_dir = argv[++i];
      struct stat st;
      if (stat(out_dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return capsa_cli_usage_error("fuzz", kUsage,
                                     "--out is not a directory:", out_dir);
    } else {
      return capsa_cli_usage_error("fuzz", kUsage, "unknown option", argv[i]);
    }
  }
  if (replay_path && minimize_path)
    return capsa_cli_usage_error(
        "fuzz", kUsage, "--replay and --minimize exclude each other", NULL);
  read_inject();
  // capsa's own renderer, interface and handler: an embedder's would go
  // here (the design note in fuzz_live.h).
  capsa__fz_live_options_t o;
  capsa__fz_live_options_init(&o);
  o.kind = "fuzz";
  o.renderer_main = capsa_fuzz_renderer_main;
  o.interfaces = capsa_fuzz_interfaces;
  o.ninterfaces = 1;
  o.renderer_seed = capsa_fuzz_renderer_seed;
  o.on_ready = send_seed;
  o.on_message = on_noise;
  o.seed = seed;
  o.seconds = seconds;
  o.hang_seconds = (unsigned)hang_seconds;
  o.stop_after_unique = (unsigned)stop_after_unique;
  o.out_dir = out_dir;
  if (replay_path) return capsa__fz_live_replay(&o, replay_path);
  if (minimize_path)
    return capsa__fz_live_minimize(&o, minimize_path,
                                   seconds_set ? seconds : kMinimizeSeconds);
  return capsa__fz_live_campaign(&o);
}
