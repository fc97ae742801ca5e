// See sandbox/cgroup.h. Files are opened relative to the cgroup's directory
// descriptor, so a cgroup renamed or replaced under its path is never
// written by mistake.
#include "sandbox/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

struct capsa_cgroup {
  int dfd;
  char path[640];
  uint64_t memory_max;  // 0: not recorded
  uint64_t pids_max;
  uint64_t cpu_quota, cpu_period;
};

static const struct {
  unsigned bit;
  const char *name;
} kControllers[] = {
    {CAPSA_CGROUP_MEMORY, "memory"},
    {CAPSA_CGROUP_PIDS, "pids"},
    {CAPSA_CGROUP_CPU, "cpu"},
};
#define NCTL (sizeof kControllers / sizeof kControllers[0])

int capsa_cgroup_controllers_format(unsigned set, char *buf, size_t len) {
  if (!buf && len) return -EINVAL;
  size_t n = 0;
  int total = 0;
  if (len) buf[0] = '\0';
  for (size_t i = 0; i < NCTL; i++) {
    if (!(set & kControllers[i].bit)) continue;
    int w = snprintf(buf ? buf + n : NULL, len > n ? len - n : 0, "%s%s",
                     total ? "," : "", kControllers[i].name);
    if (w < 0) return -EINVAL;
    total += w;
    n = (size_t)total < len ? (size_t)total : (len ? len - 1 : 0);
  }
  return total;
}

// Reads a small file at dfd/name into buf (NUL-terminated). Length or -errno.
static int read_small(int dfd, const char *name, char *buf, size_t len) {
  int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t n = 0;
  while (n + 1 < len) {
    ssize_t r = read(fd, buf + n, len - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      return -e;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  close(fd);
  return (int)n;
}

// One write(2) of text: cgroup files take each value in a single write.
static int write_small(int dfd, const char *name, const char *text) {
  int fd = openat(dfd, name, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = strlen(text);
  ssize_t w;
  do {
    w = write(fd, text, len);
  } while (w < 0 && errno == EINTR);
  int e = w < 0 ? errno : ((size_t)w == len ? 0 : EIO);
  close(fd);
  return -e;
}

// "memory pids hugetlb" -> CAPSA_CGROUP_* bits.
static unsigned parse_controllers(const char *text) {
  unsigned set = 0;
  const char *p = text;
  while (*p) {
    while (*p == ' ' || *p == '\n' || *p == '\t') p++;
    const char *s = p;
    while (*p && *p != ' ' && *p != '\n' && *p != '\t') p++;
    for (size_t i = 0; i < NCTL; i++)
      if ((size_t)(p - s) == strlen(kControllers[i].name) &&
          strncmp(s, kControllers[i].name, (size_t)(p - s)) == 0)
        set |= kControllers[i].bit;
  }
  return set;
}

static unsigned controllers_in(int dfd, const char *file) {
  char buf[512];
  return read_small(dfd, file, buf, sizeof buf) < 0 ? 0
                                                    : parse_controllers(buf);
}

// Decodes mountinfo's octal escapes (\040 space, \011 tab, \012, \134) in
// place.
static void unescape(char *s) {
  char *o = s;
  for (char *p = s; *p;) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
        p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
      *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 4;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
}

// Splits a mountinfo line into its root, mount point, fstype and super
// options. false when malformed.
static bool mountinfo_fields(char *line, char **root, char **mnt, char **fstype,
                             char **super) {
  char *save = NULL;
  char *f[6] = {0};
  char *tok = strtok_r(line, " \n", &save);
  for (int i = 0; tok && i < 6; i++) {
    f[i] = tok;
    if (i < 5) tok = strtok_r(NULL, " \n", &save);
  }
  if (!f[4]) return false;
  // Optional fields, then "-", fstype, source, super options.
  while ((tok = strtok_r(NULL, " \n", &save)) && strcmp(tok, "-") != 0) {
  }
  if (!tok) return false;
  *fstype = strtok_r(NULL, " \n", &save);
  char *source = strtok_r(NULL, " \n", &save);
  *super = strtok_r(NULL, " \n", &save);
  if (!*fstype || !source || !*super) return false;
  *root = f[3];
  *mnt = f[4];
  unescape(*root);
  unescape(*mnt);
  return true;
}

int capsa_cgroup_probe_from(const char *mountinfo, const char *proc_cgroup,
                            capsa_cgroup_probe_t *out) {
  if (!mountinfo || !proc_cgroup || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  // Our own v2 cgroup first: it picks the cgroup2 mount that shows it.
  FILE *f = fopen(proc_cgroup, "re");
  if (!f) return -errno;
  char line[4096];
  bool have_self = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    if (strlen(line + 3) < sizeof out->self) {
      snprintf(out->self, sizeof out->self, "%s", line + 3);
      have_self = out->self[0] == '/';
    }
    break;
  }
  fclose(f);
  f = fopen(mountinfo, "re");
  if (!f) return -errno;
  char best_root[256] = "";
  while (fgets(line, sizeof line, f)) {
    char *root, *mnt, *fstype, *super;
    if (!mountinfo_fields(line, &root, &mnt, &fstype, &super)) continue;
    if (strcmp(fstype, "cgroup") == 0) {
      // A v1 hierarchy: its super options name its controllers.
      char *save = NULL;
      for (char *o = strtok_r(super, ",", &save); o;
           o = strtok_r(NULL, ",", &save))
        for (size_t i = 0; i < NCTL; i++)
          if (strcmp(o, kControllers[i].name) == 0)
            out->v1_bound |= kControllers[i].bit;
      continue;
    }
    if (strcmp(fstype, "cgroup2") != 0) continue;
    size_t rl = strlen(root);
    bool shows_self =
        have_self && (strcmp(root, "/") == 0 ||
                      (strncmp(out->self, root, rl) == 0 &&
                       (out->self[rl] == '\0' || out->self[rl] == '/')));
    if (out->mounted && (out->in_hierarchy || !shows_self)) continue;
    if (strlen(mnt) >= sizeof out->mount || rl >= sizeof best_root) continue;
    out->mounted = true;
    snprintf(out->mount, sizeof out->mount, "%s", mnt);
    snprintf(best_root, sizeof best_root, "%s", root);
    out->in_hierarchy = shows_self;
  }
  fclose(f);
  if (!out->in_hierarchy) return 0;
  // dir = mount point + our path below the mount's root.
  const char *rel = out->self;
  if (strcmp(best_root, "/") != 0) rel += strlen(best_root);
  if (strcmp(rel, "/") == 0) rel = "";
  if ((size_t)snprintf(out->dir, sizeof out->dir, "%s%s", out->mount, rel) >=
      sizeof out->dir) {
    out->in_hierarchy = false;
    out->dir[0] = '\0';
    return 0;
  }
  out->is_root = rel[0] == '\0' && strcmp(best_root, "/") == 0;
  int dfd = open(out->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    out->available = controllers_in(dfd, "cgroup.controllers");
    out->enabled = controllers_in(dfd, "cgroup.subtree_control");
    out->writable = faccessat(dfd, ".", W_OK, 0) == 0 &&
                    faccessat(dfd, "cgroup.subtree_control", W_OK, 0) == 0;
    close(dfd);
  }
  return 0;
}

static capsa_cgroup_probe_t g_probe;
static pthread_once_t g_probe_once = PTHREAD_ONCE_INIT;

static void probe_once(void) {
  capsa_cgroup_probe_from("/proc/self/mountinfo", "/proc/self/cgroup",
                          &g_probe);
}

const capsa_cgroup_probe_t *capsa_cgroup_probe(void) {
  pthread_once(&g_probe_once, probe_once);
  return &g_probe;
}

int capsa_cgroup_probe_check(const capsa_cgroup_probe_t *p,
                             unsigned controllers, char *why, size_t len) {
  if (!p || (!why && len) || (controllers & ~CAPSA_CGROUP_ALL)) return -EINVAL;
  if (len) why[0] = '\0';
  if (!p->mounted) {
    snprintf(why, len, "not mounted");
    return -ENOENT;
  }
  if (!p->in_hierarchy) {
    snprintf(why, len, "our cgroup %s is not under %s",
             p->self[0] ? p->self : "(none)", p->mount);
    return -ENOENT;
  }
  unsigned missing = controllers & ~p->available;
  if (missing) {
    char names[64], v1[64];
    capsa_cgroup_controllers_format(missing, names, sizeof names);
    capsa_cgroup_controllers_format(missing & p->v1_bound, v1, sizeof v1);
    snprintf(why, len, "no %s controller in %s/cgroup.controllers%s%s%s", names,
             p->dir, v1[0] ? " (" : "", v1,
             v1[0] ? " bound to cgroup v1)" : "");
    return -EOPNOTSUPP;
  }
  if (!p->writable) {
    snprintf(why, len, "%s is not writable (not delegated to us)", p->dir);
    return -EACCES;
  }
  return 0;
}

int capsa_cgroup_parent_prepare(const char *dir, unsigned controllers,
                                char *why, size_t len) {
  if (!dir || !dir[0] || (!why && len) || (controllers & ~CAPSA_CGROUP_ALL))
    return -EINVAL;
  if (len) why[0] = '\0';
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    int e = errno;
    snprintf(why, len, "%s: %s", dir, strerror(e));
    return -e;
  }
  struct statfs sfs;
  if (fstatfs(dfd, &sfs) < 0 ||
      (unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC) {
    close(dfd);
    snprintf(why, len, "%s is not a cgroup v2 directory", dir);
    return -EMEDIUMTYPE;
  }
  unsigned missing = controllers & ~controllers_in(dfd, "cgroup.controllers");
  if (missing) {
    close(dfd);
    char names[64];
    capsa_cgroup_controllers_format(missing, names, sizeof names);
    snprintf(why, len, "no %s controller in %s/cgroup.controllers", names, dir);
    return -EOPNOTSUPP;
  }
  unsigned to_enable =
      controllers & ~controllers_in(dfd, "cgroup.subtree_control");
  for (size_t i = 0; i < NCTL; i++) {
    if (!(to_enable & kControllers[i].bit)) continue;
    char cmd[16];
    snprintf(cmd, sizeof cmd, "+%s", kControllers[i].name);
    int err = write_small(dfd, "cgroup.subtree_control", cmd);
    if (err < 0) {
      close(dfd);
      snprintf(why, len, "cannot enable %s in %s/cgroup.subtree_control: %s",
               kControllers[i].name, dir,
               err == -EBUSY ? "it holds processes (no internal processes "
                               "rule: name an empty delegated cgroup)"
                             : strerror(-err));
      return err;
    }
  }
  close(dfd);
  return 0;
}

int capsa_cgroup_new(const char *parent, const char *name,
                     capsa_cgroup_t **out) {
  if (out) *out = NULL;
  if (!parent || !parent[0] || !name || !out) return -EINVAL;
  size_t nl = strlen(name);
  if (nl == 0 || nl >= 128 || strchr(name, '/') || strcmp(name, ".") == 0 ||
      strcmp(name, "..") == 0)
    return -EINVAL;
  capsa_cgroup_t *cg = calloc(1, sizeof *cg);
  if (!cg) return -ENOMEM;
  if ((size_t)snprintf(cg->path, sizeof cg->path, "%s/%s", parent, name) >=
      sizeof cg->path) {
    free(cg);
    return -ENAMETOOLONG;
  }
  if (mkdir(cg->path, 0755) < 0) {
    int e = errno;
    free(cg);
    return -e;
  }
  cg->dfd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg->dfd < 0) {
    int e = errno;
    rmdir(cg->path);
    free(cg);
    return -e;
  }
  *out = cg;
  return 0;
}

int capsa_cgroup_set_memory_max(capsa_cgroup_t *cg, uint64_t bytes) {
  if (!cg || bytes == 0) return -EINVAL;
  cg->memory_max = bytes;
  return 0;
}

int capsa_cgroup_set_pids_max(capsa_cgroup_t *cg, uint64_t n) {
  if (!cg || n == 0) return -EINVAL;
  cg->pids_max = n;
  return 0;
}

int capsa_cgroup_set_cpu_max(capsa_cgroup_t *cg, uint64_t quota_us,
                             uint64_t period_us) {
  // The kernel's own bounds for cpu.max.
  if (!cg || quota_us < 1000 || period_us < 1000 || period_us > 1000000)
    return -EINVAL;
  cg->cpu_quota = quota_us;
  cg->cpu_period = period_us;
  return 0;
}

int capsa_cgroup_apply(capsa_cgroup_t *cg) {
  if (!cg) return -EINVAL;
  unsigned need = (cg->memory_max ? CAPSA_CGROUP_MEMORY : 0) |
                  (cg->pids_max ? CAPSA_CGROUP_PIDS : 0) |
                  (cg->cpu_quota ? CAPSA_CGROUP_CPU : 0);
  // All or nothing: check every controller before the first write.
  if (need & ~controllers_in(cg->dfd, "cgroup.controllers")) return -EOPNOTSUPP;
  char v[64];
  int err;
  if (cg->memory_max) {
    snprintf(v, sizeof v, "%" PRIu64, cg->memory_max);
    if ((err = write_small(cg->dfd, "memory.max", v)) < 0) return err;
    // Without swap accounting (or swap) the file is absent: nothing to cap.
    err = write_small(cg->dfd, "memory.swap.max", "0");
    if (err < 0 && err != -ENOENT) return err;
  }
  if (cg->pids_max) {
    snprintf(v, sizeof v, "%" PRIu64, cg->pids_max);
    if ((err = write_small(cg->dfd, "pids.max", v)) < 0) return err;
  }
  if (cg->cpu_quota) {
    snprintf(v, sizeof v, "%" PRIu64 " %" PRIu64, cg->cpu_quota,
             cg->cpu_period);
    if ((err = write_small(cg->dfd, "cpu.max", v)) < 0) return err;
  }
  return 0;
}

int capsa_cgroup_add_pid(capsa_cgroup_t *cg, pid_t pid) {
  if (!cg || pid <= 0) return -EINVAL;
  char v[32];
  snprintf(v, sizeof v, "%d", (int)pid);
  return write_small(cg->dfd, "cgroup.procs", v);
}

int capsa_cgroup_fd(const capsa_cgroup_t *cg) {
  return cg ? cg->dfd : -EINVAL;
}

const char *capsa_cgroup_path(const capsa_cgroup_t *cg) {
  return cg ? cg->path : NULL;
}

// The value of `key` in a "key value" per line file; false when absent.
static bool keyed(const char *text, const char *key, uint64_t *out) {
  size_t kl = strlen(key);
  const char *p = text;
  while (*p) {
    if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
      *out = strtoull(p + kl + 1, NULL, 10);
      return true;
    }
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    p = nl + 1;
  }
  return false;
}

int capsa_cgroup_events(capsa_cgroup_t *cg, capsa_cgroup_events_t *out) {
  if (!cg || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  out->populated = -1;
  char buf[1024];
  int n = read_small(cg->dfd, "cgroup.events", buf, sizeof buf);
  if (n < 0) return n;
  uint64_t v;
  if (keyed(buf, "populated", &v)) out->populated = v ? 1 : 0;
  if (read_small(cg->dfd, "memory.events", buf, sizeof buf) >= 0) {
    out->has_memory = true;
    keyed(buf, "oom", &out->oom);
    keyed(buf, "oom_kill", &out->oom_kill);
  }
  if (read_small(cg->dfd, "pids.events", buf, sizeof buf) >= 0) {
    out->has_pids = true;
    keyed(buf, "max", &out->pids_max);
  }
  return 0;
}

// SIGKILL to every pid listed in cgroup.procs, read whole in chunks (a
// number split between two reads is carried over, never cut into another
// pid). Returns how many pids were listed, or -errno.
static int kill_listed(int dfd) {
  int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buf[4096];
  long pid = -1;  // digits seen so far; -1: none
  int listed = 0, err = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) err = -errno;
    if (r <= 0) break;
    for (ssize_t i = 0; i < r; i++) {
      char ch = buf[i];
      if (ch >= '0' && ch <= '9') {
        pid = (pid < 0 ? 0 : pid) * 10 + (ch - '0');
        if (pid > 0x3fffffff) pid = 0x40000000;  // not a pid; never wraps
      } else {
        if (pid > 0 && pid < 0x40000000) {
          kill((pid_t)pid, SIGKILL);
          listed++;
        }
        pid = -1;
      }
    }
  }
  if (pid > 0 && pid < 0x40000000 && err == 0) {
    kill((pid_t)pid, SIGKILL);
    listed++;
  }
  close(fd);
  return err < 0 ? err : listed;
}

int capsa_cgroup_kill(capsa_cgroup_t *cg) {
  if (!cg) return -EINVAL;
  int err = write_small(cg->dfd, "cgroup.kill", "1");
  if (err != -ENOENT) return err;
  // Before Linux 5.14: pid by pid. A process forked between reading the
  // list and the kill escapes one round, so rounds go on until a read finds
  // the cgroup empty (killed processes leave cgroup.procs once they exit,
  // so a round may list them again: bounded).
  for (int round = 0; round < 64; round++) {
    int n = kill_listed(cg->dfd);
    if (n <= 0) return n;
    if (round) usleep(1000);
  }
  return -EBUSY;
}

int capsa_cgroup_remove(capsa_cgroup_t *cg) {
  if (!cg) return -EINVAL;
  return rmdir(cg->path) < 0 ? -errno : 0;
}

void capsa_cgroup_free(capsa_cgroup_t *cg) {
  if (!cg) return;
  if (cg->dfd >= 0) close(cg->dfd);
  free(cg);
}
