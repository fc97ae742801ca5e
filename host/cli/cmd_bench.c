// capsa bench <what>: benchmarks that print ratios against a raw baseline
// measured in the same run. Never timed tests: these only measure.
// Each benchmark lives in its own bench_*.c file and is listed once here.
#include <stdio.h>
#include <string.h>

#include "host/cli/commands.h"

struct bench {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

static const struct bench kBenches[] = {
    {"ipc", "round trips, msg/s, bulk vs raw socketpair/shm", capsa_bench_ipc},
    {"capmode", "capability mode: per-syscall overhead, cost of entering",
     capsa_bench_capmode},
    {"spawn", "renderer spawn-to-ready vs fork+exec, posix_spawn, bwrap",
     capsa_bench_spawn},
    {"navigate", "navigation/reload -> READY -> first reply vs a spare's spawn",
     capsa_bench_navigate},
    {"pool", "CPU per input: worker pool vs in-process vs fork+exec",
     capsa_bench_pool},
    {"host", "host cost per renderer at 1/10/100; a greedy sibling's cost",
     capsa_bench_host},
    {"oneshot", "a tool run once per input: capsa gzip vs bwrap, fork+exec",
     capsa_bench_oneshot},
    {NULL, NULL, NULL},  // sentinel; benches are added above this line
};

static void usage(FILE *out) {
  fprintf(out, "usage: capsa bench <what> [--json] [options]\n\nwhat:\n");
  for (const struct bench *b = kBenches; b->name; b++)
    fprintf(out, "  %-10s %s\n", b->name, b->summary);
}

int capsa_cmd_bench(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "capsa bench: missing benchmark name\n");
    usage(stderr);
    return CAPSA_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  for (const struct bench *b = kBenches; b->name; b++)
    if (strcmp(argv[1], b->name) == 0) return b->run(argc - 1, argv + 1);
  fprintf(stderr, "capsa bench: unknown benchmark '%s'\n", argv[1]);
  usage(stderr);
  return CAPSA_EXIT_USAGE;
}
