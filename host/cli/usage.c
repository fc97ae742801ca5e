#include <stdio.h>

#include "host/cli/commands.h"

int capsa_cli_usage_error(const char *cmd, const char *usage, const char *msg,
                          const char *arg) {
  if (arg)
    fprintf(stderr, "capsa %s: %s '%s'\n", cmd, msg, arg);
  else
    fprintf(stderr, "capsa %s: %s\n", cmd, msg);
  fprintf(stderr, "usage: capsa %s %s\n", cmd, usage);
  return CAPSA_EXIT_USAGE;
}
