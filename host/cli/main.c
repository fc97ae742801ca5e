// capsa: the command-line front end. Each subcommand lives in its own
// cmd_*.c file and is listed once in kCommands below.
#include <stdio.h>
#include <string.h>

#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "host/version.h"

static const struct capsa_cli_command kCommands[] = {
    {"doctor", "report what this kernel offers and self-test capability mode",
     capsa_cmd_doctor},
    {"bench", "benchmarks, as ratios against raw baselines", capsa_cmd_bench},
    {"fuzz", "live IPC fuzzing campaign against a real host", capsa_cmd_fuzz},
    {"render", "render untrusted Markdown to PNG in a sandboxed renderer",
     capsa_cmd_render},
    {"gzip", "compress in a sandboxed renderer (stdin/stdout or FILE)",
     capsa_cmd_gzip},
    {"gunzip", "decompress in a sandboxed renderer", capsa_cmd_gunzip},
    {"demo", "page render, gzip round trip and a hostile renderer, reported",
     capsa_cmd_demo},
    {"top", "a demo host's renderers: pid, kind, state, memory, CPU",
     capsa_cmd_top},
};

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: capsa [--help] [--version] <command> [args]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof(kCommands) / sizeof(kCommands[0]); i++)
    fprintf(out, "  %-10s %s\n", kCommands[i].name, kCommands[i].summary);
  fprintf(out, "\nRun 'capsa <command> --help' for a command's options.\n");
}

int main(int argc, char **argv) {
  // First: in the zygote image this does not return (host/kind_registry.h).
  if (capsa_main(argc, argv) < 0) {
    perror("capsa: capsa_main");
    return 1;
  }
  if (argc < 2) {
    fprintf(stderr, "capsa: missing command\n");
    print_usage(stderr);
    return CAPSA_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    print_usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("capsa %s\n", CAPSA_VERSION_STRING);
    return 0;
  }
  for (size_t i = 0; i < sizeof(kCommands) / sizeof(kCommands[0]); i++) {
    if (strcmp(cmd, kCommands[i].name) == 0)
      return kCommands[i].run(argc - 1, argv + 1);
  }
  if (cmd[0] == '-')
    fprintf(stderr, "capsa: unknown option '%s'\n", cmd);
  else
    fprintf(stderr, "capsa: unknown command '%s'\n", cmd);
  print_usage(stderr);
  return CAPSA_EXIT_USAGE;
}
