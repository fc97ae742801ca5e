// The page demo kind on the CLI's side: its row of the demo table
// (demos/demos.c), its command (`capsa render`) and a synchronous job.
//
//   struct capsa_cli_host h;
//   const struct capsa_demo_kind *k = &capsa__demo_page;
//   if (capsa_cli_host_open(&h, &k, 1, true) < 0) ...;
//   struct capsa_cli_job job;
//   uint32_t w, height;
//   int err = capsa_cli_render(&h, md_fd, 800, png_fd, &w, &height, &job);
//   capsa_cli_job_free(&job);
//   capsa_cli_host_close(&h);
#ifndef CAPSA_DEMOS_PAGE_PAGE_DEMO_H_
#define CAPSA_DEMOS_PAGE_PAGE_DEMO_H_

#include "demos/page/page_renderer.h"
#include "host/cli/cli_host.h"

extern const struct capsa_demo_kind capsa__demo_page;

// Renders Markdown file `md_fd` (borrowed; sent read-only to the renderer)
// at `width` into PNG `png_fd` (borrowed) in a page renderer of `h`;
// *frame_w and *frame_h (either may be NULL) get the page's size. Returns 0
// or -errno (job->outcome says why).
int capsa_cli_render(struct capsa_cli_host *h, int md_fd, uint32_t width,
                     int png_fd, uint32_t *frame_w, uint32_t *frame_h,
                     struct capsa_cli_job *job);

int capsa_cmd_render(int argc, char **argv);  // cmd_render.c

#endif  // CAPSA_DEMOS_PAGE_PAGE_DEMO_H_
