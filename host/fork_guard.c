#include "host/fork_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

// Descriptors compared by the probe: libuv creates its lock pipe at the
// first loop's creation, early in a process's life, so its numbers are low.
#define PROBE_MAX_FD 256
#define MAX_RESERVED 2

// Written by the probe in the host; renderers read their inherited copy.
static int g_reserved[MAX_RESERVED] = {-1, -1};
static int g_probed;  // 0: not yet; 1: done

struct ident {
  dev_t dev;
  ino_t ino;
  bool open;
};

int capsa__fork_guard_probe(void) {
  if (g_probed) {
    int n = 0;
    for (int i = 0; i < MAX_RESERVED; i++) n += g_reserved[i] >= 0;
    return n;
  }
  static struct ident before[PROBE_MAX_FD];
  for (int fd = 0; fd < PROBE_MAX_FD; fd++) {
    struct stat st;
    before[fd].open = fstat(fd, &st) == 0;
    before[fd].dev = before[fd].open ? st.st_dev : 0;
    before[fd].ino = before[fd].open ? st.st_ino : 0;
  }
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) < 0) return -errno;
  pid_t pid = fork();  // glibc's: runs the atfork handlers in the child
  if (pid < 0) {
    int err = -errno;
    close(pfd[0]);
    close(pfd[1]);
    return err;
  }
  if (pid == 0) {
    // Only async-signal-safe calls here: the host may have threads.
    int found[MAX_RESERVED] = {-1, -1}, n = 0;
    for (int fd = 0; fd < PROBE_MAX_FD && n < MAX_RESERVED; fd++) {
      if (!before[fd].open || fd == pfd[0] || fd == pfd[1]) continue;
      struct stat st;
      if (fstat(fd, &st) < 0 || st.st_dev != before[fd].dev ||
          st.st_ino != before[fd].ino)
        found[n++] = fd;
    }
    _exit(write(pfd[1], found, sizeof found) == sizeof found ? 0 : 1);
  }
  close(pfd[1]);
  int found[MAX_RESERVED];
  ssize_t got;
  do {
    got = read(pfd[0], found, sizeof found);
  } while (got < 0 && errno == EINTR);
  close(pfd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != (ssize_t)sizeof found || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    return -EIO;
  int n = 0;
  for (int i = 0; i < MAX_RESERVED; i++) {
    g_reserved[i] = found[i];
    n += found[i] >= 0;
  }
  g_probed = 1;
  return n;
}

static bool is_reserved(int fd) {
  for (int i = 0; i < MAX_RESERVED; i++)
    if (g_reserved[i] == fd) return true;
  return false;
}

int capsa__fork_guard_reserve(int channel_fd) {
  if (g_reserved[0] < 0 && g_reserved[1] < 0) return channel_fd;
  int chan = channel_fd;
  if (is_reserved(chan)) {
    // Move it to the lowest number that is not reserved. A duplicate that
    // lands on the other reserved number is left there: the placeholder
    // replaces it below.
    int from = 0;
    do {
      chan = fcntl(channel_fd, F_DUPFD_CLOEXEC, from);
      if (chan < 0) return -errno;
      from = chan + 1;
    } while (is_reserved(chan));
  }
  int placeholder = eventfd(0, EFD_CLOEXEC);
  if (placeholder < 0) return -errno;
  for (int i = 0; i < MAX_RESERVED; i++) {
    int fd = g_reserved[i];
    if (fd < 0 || fd == placeholder) continue;
    // Atomically replaces whatever sits there (the channel's old number, a
    // stand-in from above, or a descriptor the launcher left).
    if (dup3(placeholder, fd, O_CLOEXEC) < 0) return -errno;
  }
  if (!is_reserved(placeholder)) close(placeholder);
  return chan;
}
