// capsa render PAGE.md -o PAGE.png [--width N]: untrusted Markdown drawn by
// a sandboxed page renderer into shared memory; the host writes the PNG.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demos/page/page_demo.h"
#include "host/cli/commands.h"

static const char kUsage[] = "PAGE.md -o PAGE.png [--width N]";

int capsa_cmd_render(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  long width = 800;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(argv[i], "--width") == 0 && i + 1 < argc) {
      char *end;
      width = strtol(argv[++i], &end, 10);
      if (*end || width < 64 || width > 4096)
        return capsa_cli_usage_error("render", kUsage, "width must be 64..4096",
                                     argv[i]);
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: capsa render %s\n", kUsage);
      return 0;
    } else if (argv[i][0] == '-') {
      return capsa_cli_usage_error("render", kUsage, "unknown option", argv[i]);
    } else if (!in) {
      in = argv[i];
    } else {
      return capsa_cli_usage_error("render", kUsage, "more than one page",
                                   argv[i]);
    }
  }
  if (!in || !out)
    return capsa_cli_usage_error("render", kUsage, "need PAGE.md and -o", NULL);
  int md = capsa_cli_open_input("render", in);
  if (md < 0) return 1;
  int png = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (png < 0) {
    fprintf(stderr, "capsa render: %s: %s\n", out, strerror(errno));
    close(md);
    return 1;
  }
  struct capsa_cli_host h;
  // The page kind alone, warmed up (fonts loaded once in the zygote).
  const struct capsa_demo_kind *kind = &capsa__demo_page;
  int err = capsa_cli_host_open(&h, &kind, 1, true);
  struct capsa_cli_job job;
  memset(&job, 0, sizeof job);
  uint32_t frame_w = 0, frame_h = 0;
  if (err == 0) {
    err = capsa_cli_render(&h, md, (uint32_t)width, png, &frame_w, &frame_h,
                           &job);
    capsa_cli_host_close(&h);
  }
  close(md);
  if (close(png) < 0 && err == 0) err = -errno;
  if (err < 0 && job.logs_dropped)
    fprintf(stderr, "capsa render: renderer: (%zu earlier lines not kept)\n",
            job.logs_dropped);
  if (err < 0)  // what the renderer said, if anything
    for (size_t i = 0; i < job.nlogs; i++)
      fprintf(stderr, "capsa render: renderer: %s\n", job.logs[i]);
  capsa_cli_job_free(&job);
  if (err < 0) {
    fprintf(stderr, "capsa render: %s: %s\n", in,
            job.outcome[0] ? job.outcome : strerror(-err));
    unlink(out);
    return 1;
  }
  printf("%s: %ux%u\n", out, frame_w, frame_h);
  return 0;
}
