// Opening a FILE argument of the CLI. open(2) of a FIFO with O_RDONLY blocks
// until a writer appears (forever, if none does); gzip(1) refuses anything
// but a regular file given by name, and so do we. stdin may still be a pipe.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/cli/commands.h"

int capsa_cli_open_input(const char *cmd, const char *path) {
  // O_NONBLOCK: a FIFO opens at once (no writer needed) so fstat can refuse
  // it; cleared again for regular files, where it has no effect anyway.
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    fprintf(stderr, "capsa %s: %s: %s\n", cmd, path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    fprintf(stderr, "capsa %s: %s: %s\n", cmd, path, strerror(errno));
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    fprintf(stderr, "capsa %s: %s: not a regular file%s\n", cmd, path,
            S_ISDIR(st.st_mode) ? " (a directory)" : "");
    close(fd);
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
    fprintf(stderr, "capsa %s: %s: %s\n", cmd, path, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}
