// The gzip demo kind on the CLI's side: its row of the demo table
// (demos/demos.c), its commands (`capsa gzip`, `capsa gunzip`) and a
// synchronous job.
//
//   struct capsa_cli_host h;
//   const struct capsa_demo_kind *k = &capsa__demo_gzip;
//   if (capsa_cli_host_open(&h, &k, 1, false) < 0) ...;
//   struct capsa_cli_job job;
//   uint8_t *out;
//   size_t out_len;
//   int err = capsa_cli_gzip(&h, CAPSA_GZIP_OP_COMPRESS, 6, data, len, &out,
//                            &out_len, &job);  // out: malloc'd, caller frees
//   capsa_cli_job_free(&job);
//   capsa_cli_host_close(&h);
#ifndef CAPSA_DEMOS_GZIP_GZIP_DEMO_H_
#define CAPSA_DEMOS_GZIP_GZIP_DEMO_H_

#include "demos/gzip/gzip_renderer.h"
#include "host/cli/cli_host.h"

extern const struct capsa_demo_kind capsa__demo_gzip;

// gzip / gunzip `in` (borrowed) in a gzip renderer of `h`, `op`
// CAPSA_GZIP_OP_*; *out (malloc'd, owned by the caller) gets the result.
// Returns 0 or -errno (job->outcome says why).
int capsa_cli_gzip(struct capsa_cli_host *h, uint32_t op, int level,
                   const uint8_t *in, size_t in_len, uint8_t **out,
                   size_t *out_len, struct capsa_cli_job *job);

int capsa_cmd_gzip(int argc, char **argv);    // cmd_gzip.c
int capsa_cmd_gunzip(int argc, char **argv);  // cmd_gzip.c

#endif  // CAPSA_DEMOS_GZIP_GZIP_DEMO_H_
