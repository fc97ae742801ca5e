// Renderers' oom_score_adj (host/oom_score.h). Set by the host, from
// outside: a renderer has no /proc of its own to write it (empty root,
// capability mode), and its children inherit the value.
#include "host/oom_score.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int capsa__oom_score_raise(pid_t pid) {
  char path[64], value[16];
  snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)pid);
  int n = snprintf(value, sizeof value, "%d", CAPSA__RENDERER_OOM_SCORE_ADJ);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t w = write(fd, value, (size_t)n);
  int err = w == n ? 0 : w < 0 ? -errno : -EIO;
  close(fd);
  return err;
}
