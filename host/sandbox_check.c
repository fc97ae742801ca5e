// The host's outside view of a renderer's confinement: what the kernel says
// in /proc, which a compromised renderer cannot forge.
//
// Two halves, so that the host can take each at its earliest sound moment:
// namespaces are fixed when the zygote's clone returns (a renderer cannot
// change them: unshare and setns are refused in capability mode), so they
// are read while the renderer is still starting; the seccomp state is read
// when its HELLO arrives, after the renderer's own final step.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host_internal.h"

// Reads an integer field ("Seccomp:\t2") of /proc/PID/status; -1 if absent.
static int status_field(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text; p && *p; p = strchr(p, '\n')) {
    if (*p == '\n') p++;
    if (strncmp(p, name, n) == 0 && p[n] == ':') return atoi(p + n + 1);
  }
  return -1;
}

// host/testing.h: a kernel before 5.9, which has no Seccomp_filters line.
static bool g_hide_filters;

void capsa__check_hide_seccomp_filters_for_test(bool hide) {
  g_hide_filters = hide;
}

// host/testing.h: a zygote whose renderers stayed in its user namespace.
static bool g_zygote_ns_of_renderer;

void capsa__check_zygote_ns_of_renderer_for_test(bool on) {
  g_zygote_ns_of_renderer = on;
}

const capsa_ns_ids *capsa__check_zygote_ns(const capsa_ns_ids *zygote,
                                           const capsa_ns_ids *renderer) {
  return g_zygote_ns_of_renderer ? renderer : zygote;
}

int capsa__check_status(pid_t pid, capsa_renderer_check_t *out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? -ESRCH : -errno;
  // Whole: a long Groups: line (many supplementary groups) must not push
  // the fields we need out of the buffer.
  char text[16384];
  size_t n = 0;
  int e = 0;
  while (n < sizeof text - 1) {
    ssize_t r = read(fd, text + n, sizeof text - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) e = errno;
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(fd);
  if (e) return -e;
  if (n == 0) return -ESRCH;
  text[n] = 0;
  out->seccomp_mode = status_field(text, "Seccomp");
  out->no_new_privs = status_field(text, "NoNewPrivs");
  out->seccomp_filters =
      g_hide_filters ? -1 : status_field(text, "Seccomp_filters");
  return 0;
}

void capsa__check_verdict(capsa_renderer_check_t *out) {
  out->ok = false;
  if (out->seccomp_mode != 2)
    snprintf(out->why, sizeof out->why, "seccomp mode %d, not 2 (filter)",
             out->seccomp_mode);
  else if (out->no_new_privs != 1)
    snprintf(out->why, sizeof out->why, "no_new_privs not set");
  else if (out->filters_expected > 0 &&
           out->seccomp_filters < out->filters_expected)
    // Only known when the kernel says (Seccomp_filters, Linux >= 5.9).
    snprintf(out->why, sizeof out->why,
             "%d seccomp filters, expected at least %d (final step missing)",
             out->seccomp_filters, out->filters_expected);
  else if ((out->ns_differ & out->ns_expected) != out->ns_expected)
    snprintf(out->why, sizeof out->why,
             "namespaces 0x%x differ from ours, expected 0x%x", out->ns_differ,
             out->ns_expected);
  else
    out->ok = true;
}

int capsa_renderer_check_pid(pid_t pid, unsigned expect_ns,
                             capsa_renderer_check_t *out) {
  if (pid <= 0 || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  out->ns_expected = expect_ns;
  int err = capsa__check_status(pid, out);
  if (err < 0) return err;
  int differ = capsa_ns_of_pid_differ(pid);
  if (differ < 0) return differ;
  out->ns_differ = (unsigned)differ;
  capsa__check_verdict(out);
  return 0;
}
