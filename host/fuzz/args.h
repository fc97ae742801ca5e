// The flags of a live campaign (`capsa fuzz`, capsa_fuzz_live_main): one
// parser, so the two take the same flags with the same errors.
//
//   capsa__fz_live_options_t o;
//   capsa__fz_live_options_init(&o);
//   capsa__fz_args_t a;
//   int r = capsa__fz_args_parse(argc, argv, "capsa fuzz", &o, &a);
//   if (r != CAPSA__FZ_ARGS_RUN) return r == CAPSA__FZ_ARGS_HELP ? 0 : 2;
//   return capsa__fz_args_run(&o, &a);
#ifndef CAPSA_HOST_FUZZ_ARGS_H_
#define CAPSA_HOST_FUZZ_ARGS_H_

#include <stdbool.h>

#include "host/fuzz/live.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct capsa__fz_args {
  const char *replay, *minimize;   // argv's (borrowed)
  unsigned long minimize_seconds;  // --seconds if given, else 60
} capsa__fz_args_t;

enum {
  CAPSA__FZ_ARGS_RUN = 0,
  CAPSA__FZ_ARGS_HELP = 1,  // printed the usage to stdout
  CAPSA__FZ_ARGS_BAD = 2,   // printed the error and usage to stderr
};

// argv[1..] over *o. `prog` names the program in messages ("capsa fuzz").
int capsa__fz_args_parse(int argc, char **argv, const char *prog,
                         capsa__fz_live_options_t *o, capsa__fz_args_t *a);

// Runs what the flags asked; the exit code of capsa__fz_live_*.
int capsa__fz_args_run(const capsa__fz_live_options_t *o,
                       const capsa__fz_args_t *a);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FUZZ_ARGS_H_
