// capsa: the command-line front end. Each subcommand lives in its own
// cmd_*.c file and is listed once in kCommands below, or (a demo kind's
// command) in its kind's row of the demo table (demos/demos.h).
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "demos/demos.h"
#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "host/version.h"

// The demo kinds' commands come between these two lists, in the table's
// order.
static const struct capsa_cli_command kCommands[] = {
    {"doctor", "report what this kernel offers and self-test capability mode",
     capsa_cmd_doctor},
    {"bench", "benchmarks, as ratios against raw baselines", capsa_cmd_bench},
    {"fuzz", "live IPC fuzzing campaign against a real host", capsa_cmd_fuzz},
};
static const struct capsa_cli_command kCommandsAfter[] = {
    {"demo", "page render, gzip round trip and a hostile renderer, reported",
     capsa_cmd_demo},
    {"top", "a demo host's renderers: pid, kind, state, memory, CPU",
     capsa_cmd_top},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

// Every command in the order `capsa --help` lists them: calls `fn` with
// each until it returns true; returns that command or NULL.
static const struct capsa_cli_command *each_command(
    bool (*fn)(const struct capsa_cli_command *c, void *arg), void *arg) {
  for (size_t i = 0; i < COUNT(kCommands); i++)
    if (fn(&kCommands[i], arg)) return &kCommands[i];
  for (unsigned k = 0; k < capsa__ndemo_kinds; k++)
    for (unsigned i = 0; i < capsa__demo_kinds[k]->ncommands; i++)
      if (fn(&capsa__demo_kinds[k]->commands[i], arg))
        return &capsa__demo_kinds[k]->commands[i];
  for (size_t i = 0; i < COUNT(kCommandsAfter); i++)
    if (fn(&kCommandsAfter[i], arg)) return &kCommandsAfter[i];
  return NULL;
}

static bool print_one(const struct capsa_cli_command *c, void *out) {
  fprintf(out, "  %-10s %s\n", c->name, c->summary);
  return false;
}

static bool named(const struct capsa_cli_command *c, void *name) {
  return strcmp(c->name, name) == 0;
}

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: capsa [--help] [--version] <command> [args]\n\ncommands:\n");
  each_command(print_one, out);
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
  const struct capsa_cli_command *c = each_command(named, (void *)cmd);
  if (c) return c->run(argc - 1, argv + 1);
  if (cmd[0] == '-')
    fprintf(stderr, "capsa: unknown option '%s'\n", cmd);
  else
    fprintf(stderr, "capsa: unknown command '%s'\n", cmd);
  print_usage(stderr);
  return CAPSA_EXIT_USAGE;
}
