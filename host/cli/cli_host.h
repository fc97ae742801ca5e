// The capsa CLI's use of the embedding API: one host with the demo renderer
// kinds (page, gzip, hostile) and synchronous jobs on top of it, shared by
// `capsa render`, `capsa gzip` / `gunzip` and `capsa demo`.
//
//   struct capsa_cli_host h;
//   if (capsa_cli_host_open(&h) < 0) ...;
//   struct capsa_cli_job job;
//   int err = capsa_cli_gzip(&h, CAPSA_GZIP_OP_COMPRESS, 6, data, len, &out,
//                            &out_len, &job);   // out: malloc'd, caller frees
//   capsa_cli_host_close(&h);
#ifndef CAPSA_HOST_CLI_CLI_HOST_H_
#define CAPSA_HOST_CLI_CLI_HOST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/capsa_host.h"

struct capsa_cli_host {
  uv_loop_t loop;
  capsa_host_t host;
  int kind_page, kind_gzip, kind_hostile;
  // The page kind's warm-up input: the three fonts (ours until close), or
  // -1 (capsa_cli_host_open_cold: renderers fetch fonts at start).
  int font_fds[3];
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
  // Kind-specific.
  uint64_t out_size;
  int frame_w, frame_h, frame_stride;
  // The last CAPSA_CLI_MAX_LOGS LOG lines (malloc'd, already escaped by
  // the host), oldest first; logs_dropped counts the earlier ones let go.
  char **logs;
  size_t nlogs;
  size_t logs_dropped;
  void (*on_ready)(struct capsa_cli_job *job);
  void (*on_message)(struct capsa_cli_job *job, capsa_msg_t *m);
  void *ctx;
};

// A bounded tail: a renderer that logs without end costs the CLI at most
// this many lines of at most 1 KiB each.
#define CAPSA_CLI_MAX_LOGS 1000

int capsa_cli_host_open(struct capsa_cli_host *h);
// The same without the page kind's warm-up (`capsa bench navigate`'s
// comparison): each page renderer fetches and loads its fonts at start.
int capsa_cli_host_open_cold(struct capsa_cli_host *h);
// A host with the gzip kind alone (kind_page and kind_hostile are -1), for
// `capsa gzip` / `gunzip`, a tool run once per input: no other kind's
// policy compiled in the zygote, no fonts loaded, no warm-up run.
int capsa_cli_host_open_gzip(struct capsa_cli_host *h);
void capsa_cli_host_close(struct capsa_cli_host *h);

// Spawns `kind`, runs the loop until the job is done and its renderer is
// closed (or `timeout_ms`). Returns job->status.
int capsa_cli_run_job(struct capsa_cli_host *h, int kind,
                      struct capsa_cli_job *job, int timeout_ms);
void capsa_cli_job_free(struct capsa_cli_job *job);

// gzip / gunzip `in` (borrowed) in a gzip renderer, `op` CAPSA_GZIP_OP_*
// (renderer/kinds.h); *out (malloc'd, owned by the caller) gets the result.
// Returns 0 or -errno (job->outcome says why).
int capsa_cli_gzip(struct capsa_cli_host *h, uint32_t op, int level,
                   const uint8_t *in, size_t in_len, uint8_t **out,
                   size_t *out_len, struct capsa_cli_job *job);

// Renders Markdown file `md_fd` (borrowed; sent read-only to the renderer)
// at `width` into PNG `png_fd` (borrowed). Returns 0 or -errno.
int capsa_cli_render(struct capsa_cli_host *h, int md_fd, uint32_t width,
                     int png_fd, struct capsa_cli_job *job);

// Runs the hostile renderer; job->logs has its table. 0 when every attack
// was refused and the host killed it for its garbage message.
int capsa_cli_hostile(struct capsa_cli_host *h, struct capsa_cli_job *job);

#endif  // CAPSA_HOST_CLI_CLI_HOST_H_
