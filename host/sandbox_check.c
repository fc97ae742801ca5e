// The host's outside view of a renderer's confinement: what the kernel says
// in /proc, which a compromised renderer cannot forge.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/capsa_host.h"

// Reads an integer field ("Seccomp:\t2") of /proc/PID/status; -1 if absent.
static int status_field(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text; p && *p; p = strchr(p, '\n')) {
    if (*p == '\n') p++;
    if (strncmp(p, name, n) == 0 && p[n] == ':') return atoi(p + n + 1);
  }
  return -1;
}

int capsa_renderer_check_pid(pid_t pid, unsigned expect_ns,
                             capsa_renderer_check_t *out) {
  if (pid <= 0 || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  out->ns_expected = expect_ns;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? -ESRCH : -errno;
  char text[4096];
  ssize_t n = read(fd, text, sizeof text - 1);
  int e = errno;
  close(fd);
  if (n <= 0) return n < 0 ? -e : -ESRCH;
  text[n] = 0;
  out->seccomp_mode = status_field(text, "Seccomp");
  out->no_new_privs = status_field(text, "NoNewPrivs");
  int differ = capsa_ns_of_pid_differ(pid);
  if (differ < 0) return differ;
  out->ns_differ = (unsigned)differ;
  if (out->seccomp_mode != 2)
    snprintf(out->why, sizeof out->why, "seccomp mode %d, not 2 (filter)",
             out->seccomp_mode);
  else if (out->no_new_privs != 1)
    snprintf(out->why, sizeof out->why, "no_new_privs not set");
  else if ((out->ns_differ & expect_ns) != expect_ns)
    snprintf(out->why, sizeof out->why,
             "namespaces 0x%x differ from ours, expected 0x%x", out->ns_differ,
             expect_ns);
  else
    out->ok = true;
  return 0;
}
