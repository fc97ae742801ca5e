// Subcommands of the capsa CLI. Each takes argv with argv[0] = the command's
// name and returns the process exit code. The demo kinds' commands are
// declared in their folders (demos/<kind>/<kind>_demo.h) and listed by
// their rows of the demo table (demos/demos.h).
#ifndef CAPSA_HOST_CLI_COMMANDS_H_
#define CAPSA_HOST_CLI_COMMANDS_H_

#include <stdio.h>

// Exit code for a wrong command line (as for getopt-style tools).
#define CAPSA_EXIT_USAGE 2

struct capsa_cli_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

// Prints "capsa <cmd>: <msg>" and the command's usage line to stderr; returns
// CAPSA_EXIT_USAGE.
int capsa_cli_usage_error(const char *cmd, const char *usage, const char *msg,
                          const char *arg);

// Opens FILE (a command-line argument) for reading; refuses, with a message
// naming it, anything but a regular file — a FIFO would block open(2) and
// the read forever. Returns the descriptor (the caller's, O_CLOEXEC) or -1
// after printing "capsa <cmd>: FILE: reason".
int capsa_cli_open_input(const char *cmd, const char *path);  // input_file.c

int capsa_cmd_doctor(int argc, char **argv);
int capsa_cmd_bench(int argc, char **argv);
int capsa_cmd_fuzz(int argc, char **argv);
int capsa_bench_capmode(int argc, char **argv);
int capsa_bench_ipc(int argc, char **argv);  // bench_ipc.c
// GB/s of `chunks` MiB through a data pipe to a forked consumer (0: failed).
double capsa__bench_data_pipe_gbps(int chunks, int cpu_a,
                                   int cpu_b);    // bench_data_pipe.c
int capsa_bench_spawn(int argc, char **argv);     // bench_spawn.c
int capsa_bench_pool(int argc, char **argv);      // bench_pool.c
int capsa_bench_navigate(int argc, char **argv);  // bench_navigate.c
int capsa_bench_host(int argc, char **argv);      // bench_host.c
int capsa_bench_oneshot(int argc, char **argv);   // bench_oneshot.c
int capsa_cmd_demo(int argc, char **argv);        // cmd_demo.c
int capsa_cmd_top(int argc, char **argv);         // cmd_top.c

#endif  // CAPSA_HOST_CLI_COMMANDS_H_
