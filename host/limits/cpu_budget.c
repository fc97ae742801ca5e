// CPU time of a renderer's whole process tree (issue 13 item 4). RLIMIT_CPU
// is per process: a renderer that forks N children gets N+1 budgets. The
// host therefore measures the tree on each heartbeat tick, and the verdict
// is CAPSA_EV_LIMIT "cpu time (process tree)" once the total passes the
// kind's limit_cpu_seconds (the state machine then ends the renderer):
//  - in the renderer's cgroup v2, when it has one: cpu.stat usage_usec (a
//    core file of every cgroup v2, present with or without the cpu
//    controller), which counts every process ever in the cgroup;
//  - else from /proc: the renderer's utime+stime+cutime+cstime, plus the
//    same of every live descendant, found through
//    /proc/PID/task/TID/children. A reaped descendant's time is in its
//    reaper's cutime/cstime (the renderer is pid 1 of its pid namespace and
//    reaps orphans), so nothing is counted twice and nothing that was waited
//    for is lost. Time of a descendant that exited unreaped is still in its
//    zombie's stat.
// What it does not hold: the check runs on the heartbeat (a kind with
// heartbeat_ms 0 keeps only the per-process RLIMIT_CPU), so a tree may run
// up to one heartbeat interval past the limit; without a pid namespace a
// descendant re-parented away from the renderer (double fork) leaves the
// tree; at most CPU_TREE_MAX processes are walked (more than any
// limit_processes default).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "sandbox/cgroup.h"

#define CPU_TREE_MAX 1024

// Reads a small proc/cgroup file into buf (NUL-terminated): length or -errno.
static ssize_t read_small(int dirfd, const char *path, char *buf, size_t len) {
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, len - 1);
  int err = errno;
  close(fd);
  if (n < 0) return -err;
  buf[n] = '\0';
  return n;
}

// utime+stime+cutime+cstime of process `pid` in clock ticks; -errno.
static long long proc_ticks(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if (read_small(AT_FDCWD, path, buf, sizeof buf) < 0) return -ESRCH;
  // comm may hold spaces and parentheses: fields follow the last ')'.
  char *p = strrchr(buf, ')');
  if (!p) return -EPROTO;
  p++;
  // After ')': state is field 3; utime..cstime are fields 14..17.
  long long sum = 0;
  for (int field = 3; field <= 17; field++) {
    while (*p == ' ') p++;
    if (!*p) return -EPROTO;
    char *end = p;
    if (field >= 14) {
      errno = 0;
      long long v = strtoll(p, &end, 10);
      if (errno || end == p || v < 0) return -EPROTO;
      sum += v;
    } else {
      while (*end && *end != ' ') end++;
    }
    p = end;
  }
  return sum;
}

// Appends the children of every thread of `pid` to q (up to max entries).
static void add_children(pid_t pid, pid_t *q, unsigned *n, unsigned max) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && *n < max) {
    char *tend;
    long tid = strtol(e->d_name, &tend, 10);
    if (tid <= 0 || *tend) continue;
    char cpath[64], buf[4096];
    snprintf(cpath, sizeof cpath, "%ld/children", tid);
    if (read_small(dirfd(d), cpath, buf, sizeof buf) <= 0) continue;
    for (char *p = buf; *p && *n < max;) {
      char *end;
      long c = strtol(p, &end, 10);
      if (end == p) break;
      if (c > 0) q[(*n)++] = (pid_t)c;
      p = end;
      while (*p == ' ' || *p == '\n') p++;
    }
  }
  closedir(d);
}

int capsa__cpu_tree_usec(pid_t root, uint64_t *usec) {
  if (root <= 0 || !usec) return -EINVAL;
  static long tck;
  if (tck <= 0) tck = sysconf(_SC_CLK_TCK);
  if (tck <= 0) return -EINVAL;
  pid_t q[CPU_TREE_MAX];
  unsigned n = 0, i = 0;
  q[n++] = root;
  long long ticks = 0;
  bool any = false;
  for (; i < n; i++) {
    long long t = proc_ticks(q[i]);
    if (t < 0) {
      if (i == 0) return (int)t;  // the renderer itself is gone
      continue;                   // a descendant exited meanwhile
    }
    any = true;
    ticks += t;
    add_children(q[i], q, &n, CPU_TREE_MAX);
  }
  if (!any) return -ESRCH;
  *usec = (uint64_t)ticks * (1000000u / (uint64_t)tck);
  return 0;
}

// usage_usec of the renderer's cgroup: 0, or -errno when not readable.
static int cgroup_usec(const struct capsa_host_renderer *r, uint64_t *usec) {
  if (!r->limits.cg) return -ENOENT;
  int fd = capsa_cgroup_fd(r->limits.cg);
  if (fd < 0) return -EBADF;
  char buf[512];
  ssize_t n = read_small(fd, "cpu.stat", buf, sizeof buf);
  if (n < 0) return (int)n;
  const char *p = strstr(buf, "usage_usec ");
  if (!p) return -EPROTO;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p + 11, &end, 10);
  if (errno || end == p + 11) return -EPROTO;
  *usec = v;
  return 0;
}

int capsa__renderer_cpu_usec(const struct capsa_host_renderer *r,
                             uint64_t *usec) {
  if (r->pid <= 0) return -ESRCH;
  if (cgroup_usec(r, usec) == 0) return 0;
  return capsa__cpu_tree_usec(r->pid, usec);
}

const char *capsa__cpu_budget_verdict(struct capsa_host_renderer *r) {
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  uint64_t limit = k->limit_cpu_seconds;
  if (limit == CAPSA_LIMIT_NONE || limit == 0 || r->pid <= 0) return NULL;
  if (r->state != R_READY || r->kill_reason) return NULL;
  uint64_t usec = 0;
  if (capsa__renderer_cpu_usec(r, &usec) < 0)
    return NULL;  // exited meanwhile: its exit is reported as such
  if (usec <= limit * 1000000u) return NULL;
  return "cpu time (process tree)";
}
