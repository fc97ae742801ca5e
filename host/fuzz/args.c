// The live campaign's flags (args.h).
#include "host/fuzz/args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char kUsage[] =
    "[--seconds N] [--seed S] [--hang-seconds N] [--out DIR]\n"
    "       [--stop-after-unique N] [--stop-after-failures N]\n"
    "       [--parallel N] [--rounds N]\n"
    "       %s --replay FILE\n"
    "       %s --minimize FILE [--seconds N]";

enum { kMinimizeSeconds = 60 };

static int usage_error(const char *prog, const char *msg, const char *arg) {
  if (arg)
    fprintf(stderr, "%s: %s '%s'\n", prog, msg, arg);
  else
    fprintf(stderr, "%s: %s\n", prog, msg);
  fprintf(stderr, "usage: %s ", prog);
  fprintf(stderr, kUsage, prog, prog);
  fprintf(stderr, "\n");
  return CAPSA__FZ_ARGS_BAD;
}

// A number in [lo, hi] from s, or false.
static bool number(const char *s, unsigned long long lo, unsigned long long hi,
                   unsigned long long *v) {
  char *end = NULL;
  if (s[0] < '0' || s[0] > '9') return false;
  *v = strtoull(s, &end, 10);
  return *end == 0 && *v >= lo && *v <= hi;
}

int capsa__fz_args_parse(int argc, char **argv, const char *prog,
                         capsa__fz_live_options_t *o, capsa__fz_args_t *a) {
  memset(a, 0, sizeof *a);
  a->minimize_seconds = kMinimizeSeconds;
  for (int i = 1; i < argc; i++) {
    const char *f = argv[i];
    if (strcmp(f, "--help") == 0) {
      printf("usage: %s ", prog);
      printf(kUsage, prog, prog);
      printf("\n");
      return CAPSA__FZ_ARGS_HELP;
    }
    if (i + 1 >= argc) return usage_error(prog, "missing value for", f);
    const char *v = argv[++i];
    unsigned long long n = 0;
    if (strcmp(f, "--seconds") == 0) {
      if (!number(v, 1, 86400, &n))
        return usage_error(prog, "bad --seconds (1..86400)", v);
      o->seconds = (unsigned long)n;
      a->minimize_seconds = (unsigned long)n;
    } else if (strcmp(f, "--seed") == 0) {
      if (!number(v, 0, UINT64_MAX, &n))
        return usage_error(prog, "bad --seed", v);
      o->seed = n;
    } else if (strcmp(f, "--stop-after-unique") == 0) {
      if (!number(v, 1, 64, &n))
        return usage_error(prog, "bad --stop-after-unique (1..64)", v);
      o->stop_after_unique = (unsigned)n;
    } else if (strcmp(f, "--stop-after-failures") == 0) {
      if (!number(v, 1, 100000, &n))
        return usage_error(prog, "bad --stop-after-failures (1..100000)", v);
      o->stop_after_failures = (unsigned)n;
    } else if (strcmp(f, "--hang-seconds") == 0) {
      if (!number(v, 1, 3600, &n))
        return usage_error(prog, "bad --hang-seconds (1..3600)", v);
      o->hang_seconds = (unsigned)n;
    } else if (strcmp(f, "--parallel") == 0) {
      if (!number(v, 1, 64, &n))
        return usage_error(prog, "bad --parallel (1..64)", v);
      o->parallel = (unsigned)n;
    } else if (strcmp(f, "--rounds") == 0) {
      if (!number(v, 1, 65536, &n))
        return usage_error(prog, "bad --rounds (1..65536)", v);
      o->rounds = (unsigned)n;
    } else if (strcmp(f, "--replay") == 0) {
      a->replay = v;
    } else if (strcmp(f, "--minimize") == 0) {
      a->minimize = v;
    } else if (strcmp(f, "--out") == 0) {
      struct stat st;
      if (stat(v, &st) < 0 || !S_ISDIR(st.st_mode))
        return usage_error(prog, "--out is not a directory:", v);
      o->out_dir = v;
    } else {
      return usage_error(prog, "unknown option", f);
    }
  }
  if (a->replay && a->minimize)
    return usage_error(prog, "--replay and --minimize exclude each other",
                       NULL);
  return CAPSA__FZ_ARGS_RUN;
}

int capsa__fz_args_run(const capsa__fz_live_options_t *o,
                       const capsa__fz_args_t *a) {
  if (a->replay) return capsa__fz_live_replay(o, a->replay);
  if (a->minimize)
    return capsa__fz_live_minimize(o, a->minimize, a->minimize_seconds);
  return capsa__fz_live_campaign(o);
}
