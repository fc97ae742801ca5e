// The capsa CLI's use of the embedding API: one host with demo renderer
// kinds (demos/: a table of struct capsa_demo_kind rows, each kind one
// folder) and synchronous jobs on top of it, shared by the demos' commands
// (`capsa render`, `capsa gzip` / `gunzip`), `capsa demo` and the benches.
//
//   struct capsa_cli_host h;                        // every demo kind
//   if (capsa_cli_host_open(&h, capsa__demo_kinds, capsa__ndemo_kinds,
//                           true) < 0) ...;
//   struct capsa_cli_job job;
//   int err = capsa_cli_gzip(&h, CAPSA_GZIP_OP_COMPRESS, 6, data, len, &out,
//                            &out_len, &job);   // demos/gzip/gzip_demo.h
//   capsa_cli_host_close(&h);
#ifndef CAPSA_HOST_CLI_CLI_HOST_H_
#define CAPSA_HOST_CLI_CLI_HOST_H_

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/capsa_host.h"
#include "host/cli/commands.h"
#include "renderer/runtime.h"

struct capsa_cli_host;
struct capsa_cli_job;

// `capsa demo`'s run: where its inputs and outputs are. Filled by
// cmd_demo.c, read by each kind's demo hook.
struct capsa_cli_demo {
  const char *out_dir;         // the PNG and other outputs go here
  const char *sample;          // the kind's sample file, found (or NULL)
  bool verbose;                // -v
  char footer[PATH_MAX + 64];  // printed after the table (a kind appends)
};

// A demo renderer kind, as the CLI knows it: one row of the table
// capsa__demo_kinds (demos/demos.h; made from the list in demos/BUILD.gn),
// defined in the kind's own folder as capsa__demo_<kind>
// (demos/<kind>/<kind>_demo.c, which also registers the kind with
// CAPSA_RENDERER_KIND). The CLI loops over the rows: kinds defined,
// commands listed, `capsa demo` rows run.
struct capsa_demo_kind {
  const char *name;  // the kind's name (capsa_kind_options_t.name)
  capsa_renderer_entry_fn entry;
  // Its handlers (static); the kind speaks their interfaces.
  const capsa_renderer_handlers_t *handlers;
  // Optional: host options the kind needs (fonts for the broker), and, when
  // `warm`, descriptors for its warm-up opened into fds[] (at most
  // CAPSA_WARM_UP_MAX_FDS; owned by the CLI host until it closes). Not
  // called for a host without this kind.
  void (*host_options)(capsa_host_options_t *o, bool warm, int *fds,
                       unsigned *nfds);
  // Optional: the kind's options beyond name, entry, argument and
  // interfaces (warm-up descriptors given in `fds`, borrowed).
  void (*kind_options)(capsa_kind_options_t *k, const int *fds, unsigned nfds);
  // The CLI commands the kind adds (capsa <name> ...), may be none.
  const struct capsa_cli_command *commands;
  unsigned ncommands;
  // `capsa demo`: its sample under demos/ ("page/samples/page.md"), or NULL.
  const char *sample;
  // `capsa demo`: runs the kind's demo job(s) on `h` and prints its row
  // (capsa_cli_demo_row), then what else it has to say. 0 when it behaved.
  int (*demo)(struct capsa_cli_host *h, struct capsa_cli_demo *d);
};

// Prints `capsa demo`'s row for `job` (cmd_demo.c).
void capsa_cli_demo_row(const struct capsa_cli_job *job, const char *outcome);

// Demo kinds one CLI host holds at most.
#define CAPSA_CLI_MAX_KINDS 16

struct capsa_cli_host {
  uv_loop_t loop;
  capsa_host_t host;
  // The demo kinds of this host, in the order given at open, and their
  // kind ids; with each its warm-up descriptors (ours until close).
  unsigned nkinds;
  struct {
    const struct capsa_demo_kind *demo;
    int id;
    int fds[CAPSA_WARM_UP_MAX_FDS];
    unsigned nfds;
  } kinds[CAPSA_CLI_MAX_KINDS];
  struct capsa_cli_job *job;  // the job running now
  bool closed;
  // Why capsa_cli_host_open failed: capsa_host_start_error(), "" if empty.
  char start_error[640];
};

// What happened to one renderer job, for reports.
struct capsa_cli_job {
  const char *kind;
  capsa_renderer_t *r;
  bool ready;
  capsa_renderer_check_t check;
  capsa_sandbox_report_t sandbox;
  char sandbox_detail[256];
  bool done;          // the job's answer arrived (or it failed)
  int status;         // 0 or -errno
  char outcome[160];  // last event, human-readable
  capsa_host_event_type_t last_event;
  double ms;  // spawn to answer
  bool closed;
  // The last CAPSA_CLI_MAX_LOGS LOG lines (malloc'd, already escaped by
  // the host), oldest first; logs_dropped counts the earlier ones let go.
  char **logs;
  size_t nlogs;
  size_t logs_dropped;
  void (*on_ready)(struct capsa_cli_job *job);
  void (*on_message)(struct capsa_cli_job *job, capsa_msg_t *m);
  void *ctx;  // the kind's job state (demos/<kind>/<kind>_demo.c)
};

// A bounded tail: a renderer that logs without end costs the CLI at most
// this many lines of at most 1 KiB each.
#define CAPSA_CLI_MAX_LOGS 1000

// Opens a host with the demo kinds `kinds[0..n)` (rows of capsa__demo_kinds,
// borrowed, static), defined in that order. `warm`: the kinds' warm-up runs
// in the zygote (the page kind: fonts mapped and faces loaded once); without
// it (`capsa bench navigate`'s comparison) each page renderer fetches and
// loads its fonts at start. A host of the gzip kind alone (`capsa gzip`, a
// tool run once per input) has no other kind's policy in the zygote and no
// fonts loaded. On failure h->start_error may say why.
int capsa_cli_host_open(struct capsa_cli_host *h,
                        const struct capsa_demo_kind *const *kinds, unsigned n,
                        bool warm);
// The kind id of demo kind `name` in `h`, or -ENOENT.
int capsa_cli_host_kind(const struct capsa_cli_host *h, const char *name);
void capsa_cli_host_close(struct capsa_cli_host *h);

// Spawns `kind`, runs the loop until the job is done and its renderer is
// closed (or `timeout_ms`). Returns job->status.
int capsa_cli_run_job(struct capsa_cli_host *h, int kind,
                      struct capsa_cli_job *job, int timeout_ms);
void capsa_cli_job_free(struct capsa_cli_job *job);

// Ends `job` with `status` and `what` (its outcome) unless it ended
// already: for the kinds' event hooks.
void capsa_cli_job_finish(struct capsa_cli_job *job, int status,
                          const char *what);

// A sealed read-only memfd holding exactly `len` bytes of `data` (a region
// of 1 byte when empty), for a job's input; the caller's descriptor or
// -errno.
int capsa_cli_input_region(const uint8_t *data, size_t len);

#endif  // CAPSA_HOST_CLI_CLI_HOST_H_
