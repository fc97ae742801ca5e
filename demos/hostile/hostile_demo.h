// The hostile demo kind on the CLI's side: its row of the demo table
// (demos/demos.c) and a synchronous job.
//
//   struct capsa_cli_host h;
//   const struct capsa_demo_kind *k = &capsa__demo_hostile;
//   if (capsa_cli_host_open(&h, &k, 1, false) < 0) ...;
//   struct capsa_cli_job job;
//   int err = capsa_cli_hostile(&h, &job);  // job.logs: its table
//   capsa_cli_job_free(&job);
//   capsa_cli_host_close(&h);
#ifndef CAPSA_DEMOS_HOSTILE_HOSTILE_DEMO_H_
#define CAPSA_DEMOS_HOSTILE_HOSTILE_DEMO_H_

#include "demos/hostile/hostile_renderer.h"
#include "host/cli/cli_host.h"

extern const struct capsa_demo_kind capsa__demo_hostile;

// Runs the hostile renderer in `h`; job->logs has its table. 0 when every
// attack was refused and the host killed it for its garbage message.
int capsa_cli_hostile(struct capsa_cli_host *h, struct capsa_cli_job *job);

#endif  // CAPSA_DEMOS_HOSTILE_HOSTILE_DEMO_H_
