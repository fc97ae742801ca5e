// See host/proc_info.h. Small files read whole in one read(2): the kernel
// generates each /proc file at its first read, so one read is one
// consistent snapshot.
#include "host/proc_info.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Reads `path` into buf (NUL-terminated): length or -errno. A process that
// ended between open and read answers ESRCH; both mean "gone".
static ssize_t read_small(const char *path, char *buf, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? -ESRCH : -errno;
  ssize_t n = read(fd, buf, len - 1);
  int err = errno;
  close(fd);
  if (n < 0) return -err;
  buf[n] = '\0';
  return n;
}

static long ticks_per_second(void) {
  long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? hz : 100;
}

// Parses one unsigned decimal at *p (after blanks), advancing *p.
static bool next_u64(const char **p, uint64_t *v) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t') s++;
  if (*s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno) return false;
  *v = x;
  *p = end;
  return true;
}

// Skips one field (after blanks).
static bool skip_field(const char **p) {
  const char *s = *p;
  while (*s == ' ') s++;
  if (!*s || *s == '\n') return false;
  while (*s && *s != ' ' && *s != '\n') s++;
  *p = s;
  return true;
}

int capsa__proc_stat_parse(const char *line, struct capsa__proc_stat *out) {
  // "PID (COMM) S PPID ...": COMM is whatever the process named itself
  // (prctl PR_SET_NAME, up to 15 bytes), spaces and parentheses included,
  // so the only safe anchor is the last ')'.
  const char *p = strrchr(line, ')');
  if (!p || !strchr(line, '(')) return -EPROTO;
  p++;
  while (*p == ' ') p++;
  if (!*p || *p == '\n') return -EPROTO;
  char state = *p++;
  // Fields 4..22 (ppid .. starttime) are integers; those not needed are
  // skipped as text (tty_nr and tpgid may be negative).
  uint64_t ppid, v[2];
  if (!next_u64(&p, &ppid)) return -EPROTO;
  for (int field = 5; field <= 13; field++)
    if (!skip_field(&p)) return -EPROTO;
  for (int i = 0; i < 2; i++)  // 14 utime, 15 stime
    if (!next_u64(&p, &v[i])) return -EPROTO;
  for (int field = 16; field <= 21; field++)  // cutime .. itrealvalue
    if (!skip_field(&p)) return -EPROTO;
  uint64_t start;
  if (!next_u64(&p, &start)) return -EPROTO;  // 22 starttime
  out->state = state;
  out->ppid = (pid_t)ppid;
  out->cpu_ticks = v[0] + v[1];
  out->start_ticks = start;
  return 0;
}

int capsa__proc_stat_read(pid_t pid, struct capsa__proc_stat *out) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  ssize_t n = read_small(path, buf, sizeof buf);
  if (n < 0) return (int)n;
  return capsa__proc_stat_parse(buf, out);
}

uint64_t capsa__proc_age_ms(const struct capsa__proc_stat *st) {
  // starttime counts from boot on CLOCK_BOOTTIME (suspend included).
  struct timespec ts;
  if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0) return 0;
  uint64_t now_ms =
      (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
  uint64_t start_ms = st->start_ticks * 1000u / (uint64_t)ticks_per_second();
  return now_ms > start_ms ? now_ms - start_ms : 0;
}

uint64_t capsa__proc_ticks_usec(uint64_t ticks) {
  return ticks * 1000000u / (uint64_t)ticks_per_second();
}

// The value in kB of "Name:   N kB" lines.
static bool kb_field(const char *text, const char *name, uint64_t *kb) {
  size_t len = strlen(name);
  for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
    if (strncmp(l, name, len) != 0 || l[len] != ':') continue;
    const char *p = l + len + 1;
    return next_u64(&p, kb);
  }
  return false;
}

int capsa__proc_smaps_rollup(pid_t pid, uint64_t *uss, uint64_t *pss) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
  ssize_t n = read_small(path, buf, sizeof buf);
  if (n < 0) return (int)n;
  // An empty file: a kernel thread or a process without memory (zombie).
  if (n == 0) return -ESRCH;
  uint64_t clean, dirty, p;
  if (!kb_field(buf, "Private_Clean", &clean) ||
      !kb_field(buf, "Private_Dirty", &dirty) || !kb_field(buf, "Pss", &p))
    return -EPROTO;
  *uss = (clean + dirty) * 1024u;
  *pss = p * 1024u;
  return 0;
}

int capsa__proc_statm_private(pid_t pid, uint64_t *bytes) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
  ssize_t n = read_small(path, buf, sizeof buf);
  if (n < 0) return (int)n;
  const char *p = buf;
  uint64_t size, resident, shared;
  if (!next_u64(&p, &size) || !next_u64(&p, &resident) ||
      !next_u64(&p, &shared))
    return -EPROTO;
  long page = sysconf(_SC_PAGESIZE);
  *bytes = (resident > shared ? resident - shared : 0) *
           (uint64_t)(page > 0 ? page : 4096);
  return 0;
}

int capsa__cgroup_memory_current(const char *dir, uint64_t *bytes) {
  char path[640], buf[64];
  if ((size_t)snprintf(path, sizeof path, "%s/memory.current", dir) >=
      sizeof path)
    return -ENAMETOOLONG;
  ssize_t n = read_small(path, buf, sizeof buf);
  if (n < 0) return n == -ESRCH ? -ENOENT : (int)n;
  const char *p = buf;
  return next_u64(&p, bytes) ? 0 : -EPROTO;
}

int capsa__proc_in_capmode(pid_t pid, bool *yes) {
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  ssize_t n = read_small(path, buf, sizeof buf);
  if (n < 0) return (int)n;
  uint64_t seccomp = 0, nnp = 0;
  // Not kB fields, but the same "Name:\tN" shape.
  if (!kb_field(buf, "Seccomp", &seccomp) || !kb_field(buf, "NoNewPrivs", &nnp))
    return -EPROTO;
  *yes = seccomp == 2 && nnp == 1;
  return 0;
}
