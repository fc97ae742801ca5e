// capsa doctor: what this kernel offers for capability mode.
// Filled in by the capability-mode work (sandbox/): until then it reports that
// nothing is checked and exits non-zero, so nobody mistakes it for a pass.
#include <stdio.h>
#include <string.h>

#include "host/cli/commands.h"

static const char kUsage[] = "[--json]";

int capsa_cmd_doctor(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = 1;
    else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa doctor %s\n", kUsage);
      return 0;
    } else
      return capsa_cli_usage_error("doctor", kUsage, "unknown argument",
                                   argv[i]);
  }
  if (json)
    printf("{\"capability_mode\":\"unavailable\",\"reason\":\"not built\"}\n");
  else
    printf("capsa doctor: capability mode is not implemented in this build\n");
  return 1;
}
