// Launcher primitives: clone3 into new namespaces, uid maps, empty root,
// descriptor hygiene. See sandbox/launcher/namespaces.h.
#include "sandbox/launcher/namespaces.h"
#include "sandbox/launcher/ns_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

// The uid a root launcher maps its children to: never lend uid 0 itself.
#define NOBODY 65534u

struct keep {
  int fd;
  int target;
};

struct capsa_ns_policy {
  unsigned wanted;
  unsigned required;
  bool empty_root;
  bool empty_root_required;
  int pdeathsig;
  bool clone_parent;
  bool keep_caps;
  unsigned nkeep;
  struct keep keep[CAPSA_NS_MAX_KEEP];
};

static const struct {
  unsigned bit;
  unsigned long clone_flag;
  const char *name;
} kNamespaces[CAPSA_NAMESPACE_COUNT] = {
    {CAPSA_NAMESPACE_USER, CLONE_NEWUSER, "user"},
    {CAPSA_NAMESPACE_PID, CLONE_NEWPID, "pid"},
    {CAPSA_NAMESPACE_IPC, CLONE_NEWIPC, "ipc"},
    {CAPSA_NAMESPACE_MOUNT, CLONE_NEWNS, "mnt"},
    {CAPSA_NAMESPACE_NET, CLONE_NEWNET, "net"},
};

capsa_ns_policy *capsa_ns_policy_new(void) {
  capsa_ns_policy *p = calloc(1, sizeof *p);
  if (p) p->pdeathsig = SIGKILL;
  return p;
}

void capsa_ns_policy_free(capsa_ns_policy *p) {
  free(p);
}

int capsa_ns_policy_set_namespaces(capsa_ns_policy *p, unsigned wanted,
                                   unsigned required) {
  if (!p || (wanted & ~CAPSA_NAMESPACE_ALL) || (required & ~wanted))
    return -EINVAL;
  p->wanted = wanted;
  p->required = required;
  return 0;
}

int capsa_ns_policy_set_empty_root(capsa_ns_policy *p, bool on, bool required) {
  if (!p || (required && !on)) return -EINVAL;
  p->empty_root = on;
  p->empty_root_required = required;
  return 0;
}

int capsa_ns_policy_keep_fd(capsa_ns_policy *p, int fd, int target) {
  if (!p || fd < 0 || target < 0) return -EINVAL;
  for (unsigned i = 0; i < p->nkeep; i++)
    if (p->keep[i].target == target) return -EINVAL;
  if (p->nkeep == CAPSA_NS_MAX_KEEP) return -E2BIG;
  p->keep[p->nkeep].fd = fd;
  p->keep[p->nkeep].target = target;
  p->nkeep++;
  return 0;
}

void capsa_ns_policy_clear_fds(capsa_ns_policy *p) {
  if (p) p->nkeep = 0;
}

int capsa_ns_policy_set_pdeathsig(capsa_ns_policy *p, int sig) {
  if (!p || sig < 0 || sig >= NSIG) return -EINVAL;
  p->pdeathsig = sig;
  return 0;
}

int capsa_ns_policy_set_keep_caps(capsa_ns_policy *p, bool on) {
  if (!p) return -EINVAL;
  p->keep_caps = on;
  return 0;
}

int capsa_ns_policy_set_clone_parent(capsa_ns_policy *p, bool on) {
  if (!p) return -EINVAL;
  p->clone_parent = on;
  return 0;
}

const char *capsa_namespace_name(unsigned bit) {
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    if (kNamespaces[i].bit == bit) return kNamespaces[i].name;
  return NULL;
}

static unsigned long clone_flags_of(unsigned bits) {
  unsigned long f = 0;
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    if (bits & kNamespaces[i].bit) f |= kNamespaces[i].clone_flag;
  return f;
}

// Raw clone3: returns 0 in the child like fork(). glibc has no wrapper.
static pid_t clone3_raw(unsigned long flags, int *pidfd) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = flags;
  if (flags & CLONE_PIDFD) args.pidfd = (uint64_t)(uintptr_t)pidfd;
  // With CLONE_PARENT the kernel uses our own exit signal for the child.
  args.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  return (pid_t)syscall(SYS_clone3, &args, sizeof args);
}

// clone3 with a fallback to clone for a caller in capability mode, whose
// filter answers clone3 with ENOSYS (its flags live in memory seccomp cannot
// read) and checks clone's flags instead: a zygote in its launcher stage.
// clone() takes the pidfd pointer in its parent_tid argument; the stack
// argument 0 means "the caller's", as fork.
static pid_t clone_fallback(unsigned long flags, int *pidfd) {
  static bool no_clone3;
  if (!no_clone3) {
    pid_t pid = clone3_raw(flags, pidfd);
    if (pid >= 0 || errno != ENOSYS) return pid;
    no_clone3 = true;
  }
  unsigned long sig = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  return (pid_t)syscall(SYS_clone, flags | sig, 0UL,
                        (flags & CLONE_PIDFD) ? pidfd : NULL, NULL, 0UL);
}

static int reap(int pidfd) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
    if (errno != EINTR) return -errno;
  return si.si_status;
}

// --- probe ----------------------------------------------------------------

static int probe_errors[CAPSA_NAMESPACE_COUNT];
static unsigned probe_result;
static bool probed;
static char probe_user_why[sizeof((struct capsa_ns_report *)0)->user_why];

// A sysctl's integer value, -1 when it cannot be read (absent here).
static int read_sysctl_int(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[32] = {0};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0 || buf[0] < '0' || buf[0] > '9') return -1;
  return atoi(buf);
}

// Which sysctl explains the user namespace refusal `err`, if one does:
// ENOSPC is the count limit (0 in this namespace or an ancestor's limit
// reached), EPERM / EACCES an unprivileged caller stopped by Debian's old
// switch or Ubuntu's AppArmor restriction. "" when none says.
static void userns_why(int err, char *buf, size_t len) {
  buf[0] = 0;
  if (err == -ENOSPC) {
    int max = read_sysctl_int("/proc/sys/user/max_user_namespaces");
    if (max >= 0)
      snprintf(buf, len, "max_user_namespaces=%d", max);
    else
      snprintf(buf, len, "user-namespace-limit");
  } else if ((err == -EPERM || err == -EACCES) && geteuid() != 0) {
    if (read_sysctl_int("/proc/sys/kernel/unprivileged_userns_clone") == 0)
      snprintf(buf, len, "unprivileged_userns_clone=0");
    else if (read_sysctl_int(
                 "/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
      snprintf(buf, len, "apparmor_restrict_unprivileged_userns=1");
  }
}

// Tries one clone3 with `flags` and a child that exits at once.
static int try_clone(unsigned long flags) {
  int pidfd = -1;
  pid_t pid = clone3_raw(flags | CLONE_PIDFD, &pidfd);
  if (pid < 0) return -errno;
  if (pid == 0) _exit(0);
  reap(pidfd);
  close(pidfd);
  return 0;
}

unsigned capsa_ns_available(void) {
  if (probed) return probe_result;
  unsigned avail = 0;
  // Every namespace in one child first: where the kernel allows them all
  // (the common case) that is the whole answer, each one then allowed on
  // its own as well, for one clone instead of one per namespace. A refusal
  // does not say which namespace it was: only then is each tried alone.
  unsigned long all = 0;
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    all |= kNamespaces[i].clone_flag;
  if (try_clone(all) == 0) {
    for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++) {
      probe_errors[i] = 0;
      avail |= kNamespaces[i].bit;
    }
    probe_user_why[0] = 0;
    probe_result = avail;
    probed = true;
    return avail;
  }
  int err = try_clone(CLONE_NEWUSER);
  probe_errors[0] = err;
  if (err == 0) avail |= CAPSA_NAMESPACE_USER;
  userns_why(err, probe_user_why, sizeof probe_user_why);
  // Unprivileged callers need the user namespace for the others, and a root
  // launcher uses one too (see capsa_ns_spawn), so probe them together.
  unsigned long base = (avail & CAPSA_NAMESPACE_USER) ? CLONE_NEWUSER : 0;
  for (int i = 1; i < CAPSA_NAMESPACE_COUNT; i++) {
    err = try_clone(base | kNamespaces[i].clone_flag);
    probe_errors[i] = err;
    if (err == 0) avail |= kNamespaces[i].bit;
  }
  probe_result = avail;
  probed = true;
  return avail;
}

bool capsa__ns_available_cached(unsigned *avail) {
  if (!probed || !avail) return false;
  *avail = probe_result;
  return true;
}

unsigned capsa__ns_available_reprobe(void) {
  probed = false;
  return capsa_ns_available();
}

int capsa_ns_available_report(struct capsa_ns_report *out) {
  if (!out) return -EINVAL;
  memset(out, 0, sizeof *out);
  out->requested = CAPSA_NAMESPACE_ALL;
  out->applied = capsa_ns_available();
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    out->ns_error[i] = probe_errors[i];
  out->uid_outside = (unsigned)geteuid();
  memcpy(out->user_why, probe_user_why, sizeof out->user_why);
  return 0;
}

// --- spawn ----------------------------------------------------------------

// What the child tells the parent once set up.
struct child_status {
  int fatal;  // 0, or -errno of a required step (the child then exits)
  bool uid_mapped;
  bool empty_root;
  int empty_root_error;
  bool fds_closed;
  bool setsid;
  int pdeathsig;
};

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t n = strlen(text);
  ssize_t w = write(fd, text, n);
  int err = (w == (ssize_t)n) ? 0 : (w < 0 ? -errno : -EIO);
  close(fd);
  return err;
}

// Parent side: uid 0 inside = `uid` outside. A root parent may map anyone
// and lets the child drop its supplementary groups; an unprivileged one may
// only map itself and must deny setgroups first.
static int write_maps(pid_t pid, unsigned uid, unsigned gid, bool privileged) {
  char path[64], line[64];
  int err;
  if (!privileged) {
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
    if ((err = write_file(path, "deny")) < 0) return err;
  }
  snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
  snprintf(line, sizeof line, "0 %u 1\n", uid);
  if ((err = write_file(path, line)) < 0) return err;
  snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
  snprintf(line, sizeof line, "0 %u 1\n", gid);
  return write_file(path, line);
}

// In the child, inside its mount namespace: a tmpfs becomes the root, the
// old root is detached, the new one made read-only. Returns 0 or -errno.
static int make_empty_root(void) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) return -errno;
  // Any existing directory serves as the mount point: the tmpfs only shadows
  // it inside our own mount namespace.
  const char *where = "/tmp";
  if (mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "size=4k,nr_inodes=4,mode=0555") < 0)
    return -errno;
  if (chdir(where) < 0) return -errno;
  // pivot_root(".", "."): the old root ends up stacked on the new one and
  // is then detached with everything under it.
  if (syscall(SYS_pivot_root, ".", ".") < 0) return -errno;
  if (umount2(".", MNT_DETACH) < 0) return -errno;
  if (chdir("/") < 0) return -errno;
  if (mount(NULL, "/", NULL,
            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            NULL) < 0)
    return -errno;
  struct statvfs sv;
  if (statvfs("/", &sv) < 0) return -errno;
  if (!(sv.f_flag & ST_RDONLY)) return -EROFS;
  return 0;
}

int capsa_ns_enter_empty_root(void) {
  return make_empty_root();
}

// Puts kept descriptors at their targets, stdio on `devnull` unless kept,
// `extra` (the status pipe; -1 for none) just above them, and closes the
// rest. Returns the new number of `extra` (or 0), or -errno.
static int arrange_fds(const capsa_ns_policy *p, int devnull, int extra) {
  int hi = 2;
  for (unsigned i = 0; i < p->nkeep; i++) {
    if (p->keep[i].fd > hi) hi = p->keep[i].fd;
    if (p->keep[i].target > hi) hi = p->keep[i].target;
  }
  if (devnull > hi) hi = devnull;
  if (extra > hi) hi = extra;
  hi++;
  // First lift every source above every target, so that a dup2 onto a
  // target never closes a source still needed.
  int tmp[CAPSA_NS_MAX_KEEP];
  for (unsigned i = 0; i < p->nkeep; i++) {
    tmp[i] = fcntl(p->keep[i].fd, F_DUPFD_CLOEXEC, hi);
    if (tmp[i] < 0) return -errno;
  }
  int tnull = devnull >= 0 ? fcntl(devnull, F_DUPFD_CLOEXEC, hi) : -1;
  int textra = extra >= 0 ? fcntl(extra, F_DUPFD_CLOEXEC, hi) : -1;
  if ((devnull >= 0 && tnull < 0) || (extra >= 0 && textra < 0)) return -errno;
  int max_target = 2;
  for (unsigned i = 0; i < p->nkeep; i++) {
    if (dup2(tmp[i], p->keep[i].target) < 0) return -errno;
    if (p->keep[i].target > max_target) max_target = p->keep[i].target;
  }
  for (int s = 0; s <= 2; s++) {
    bool kept = false;
    for (unsigned i = 0; i < p->nkeep; i++)
      if (p->keep[i].target == s) kept = true;
    if (!kept && tnull >= 0 && dup2(tnull, s) < 0) return -errno;
  }
  int extra_at = 0;
  int first_closed = max_target + 1;
  if (textra >= 0) {
    extra_at = max_target + 1;
    if (dup3(textra, extra_at, O_CLOEXEC) < 0) return -errno;
    first_closed = extra_at + 1;
  }
  if (syscall(SYS_close_range, (unsigned)first_closed, ~0u, 0) < 0)
    return -errno;
  for (int fd = 3; fd <= max_target; fd++) {
    bool kept = false;
    for (unsigned i = 0; i < p->nkeep; i++)
      if (p->keep[i].target == fd) kept = true;
    if (!kept) close(fd);
  }
  return extra_at;
}

// Drops every capability the child holds (in its own user namespace): after
// setup it needs none.
static int drop_caps(void) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (syscall(SYS_capset, &h, d) < 0) return -errno;
  return 0;
}

static void write_all(int fd, const void *buf, size_t n) {
  const char *c = buf;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= (size_t)w;
  }
}

// In a child of capsa_ns_spawn: what was done to it (see capsa_ns_self).
static struct capsa_ns_report g_self;
static bool g_self_set;

int capsa_ns_self(struct capsa_ns_report *out) {
  if (!out) return -EINVAL;
  if (!g_self_set) return -ENOENT;
  *out = g_self;
  return 0;
}

// Runs in the child; never returns.
static void child_setup(const capsa_ns_policy *p, unsigned applied,
                        bool privileged, int go_fd, int status_fd,
                        int (*fn)(void *), void *arg) {
  struct child_status st;
  memset(&st, 0, sizeof st);
  char go = 0;
  ssize_t r;
  do {
    r = read(go_fd, &go, 1);
  } while (r < 0 && errno == EINTR);
  if (r != 1) _exit(126);  // parent gone or refused
  close(go_fd);
  if (applied & CAPSA_NAMESPACE_USER) {
    // The parent wrote the maps; our credentials still carry the uid we were
    // cloned with until we take the mapped one.
    if (privileged && setgroups(0, NULL) < 0) st.fatal = -errno;
    if (!st.fatal && setresgid(0, 0, 0) < 0) st.fatal = -errno;
    if (!st.fatal && setresuid(0, 0, 0) < 0) st.fatal = -errno;
    st.uid_mapped = st.fatal == 0;
  }
  if (!st.fatal) st.setsid = setsid() >= 0;
  if (!st.fatal && p->pdeathsig) {
    if (prctl(PR_SET_PDEATHSIG, p->pdeathsig, 0, 0, 0) == 0)
      st.pdeathsig = p->pdeathsig;
  }
  int devnull = -1;
  if (!st.fatal) devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (!st.fatal && p->empty_root) {
    if (!(applied & CAPSA_NAMESPACE_MOUNT))
      st.empty_root_error = -EPERM;
    else
      st.empty_root_error = make_empty_root();
    st.empty_root = st.empty_root_error == 0;
    if (!st.empty_root && p->empty_root_required)
      st.fatal = st.empty_root_error;
  }
  if (!st.fatal) {
    int at = arrange_fds(p, devnull, status_fd);
    if (at < 0) {
      st.fatal = at;
    } else {
      status_fd = at;
      st.fds_closed = true;
    }
  }
  if (!st.fatal && (applied & CAPSA_NAMESPACE_USER) && !p->keep_caps) {
    int e = drop_caps();
    if (e < 0) st.fatal = e;
  }
  write_all(status_fd, &st, sizeof st);
  close(status_fd);
  if (st.fatal) _exit(126);
  memset(&g_self, 0, sizeof g_self);
  g_self.requested = p->wanted;
  g_self.applied = applied;
  g_self.uid_mapped = st.uid_mapped;
  g_self.empty_root = st.empty_root;
  g_self.empty_root_error = st.empty_root_error;
  g_self.fds_closed = st.fds_closed;
  g_self.setsid = st.setsid;
  g_self.pdeathsig = st.pdeathsig;
  g_self_set = true;
  _exit(fn(arg));
}

int capsa_ns_spawn(const capsa_ns_policy *p, int (*fn)(void *arg), void *arg,
                   struct capsa_ns_child *child,
                   struct capsa_ns_report *report) {
  if (!p || !fn || !child) return -EINVAL;
  struct capsa_ns_report rep;
  memset(&rep, 0, sizeof rep);
  rep.requested = p->wanted;
  rep.uid_outside = (unsigned)geteuid();
  unsigned avail = p->wanted ? capsa_ns_available() : 0;
  if (p->wanted & CAPSA_NAMESPACE_USER)
    memcpy(rep.user_why, probe_user_why, sizeof rep.user_why);
  unsigned use = p->wanted & avail;
  // A namespace other than user needs one when unprivileged; the probe
  // already tried them that way.
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    if ((p->wanted & kNamespaces[i].bit) && !(use & kNamespaces[i].bit))
      rep.ns_error[i] = probe_errors[i] ? probe_errors[i] : -EPERM;
  if (p->required & ~use) {
    if (report) *report = rep;
    return -EPERM;
  }
  if ((use & ~CAPSA_NAMESPACE_USER) && !(use & CAPSA_NAMESPACE_USER) &&
      geteuid() != 0) {
    if (report) *report = rep;
    return -EPERM;
  }
  bool privileged = geteuid() == 0;
  unsigned outside_uid = privileged ? NOBODY : (unsigned)geteuid();
  unsigned outside_gid = privileged ? NOBODY : (unsigned)getegid();

  int go[2], status[2];
  if (pipe2(go, O_CLOEXEC) < 0) return -errno;
  if (pipe2(status, O_CLOEXEC) < 0) {
    int e = -errno;
    close(go[0]);
    close(go[1]);
    return e;
  }
  int pidfd = -1;
  pid_t pid = clone3_raw(clone_flags_of(use) | CLONE_PIDFD, &pidfd);
  if (pid == 0) {
    close(go[1]);
    close(status[0]);
    child_setup(p, use, privileged, go[0], status[1], fn, arg);
  }
  int err = pid < 0 ? -errno : 0;
  close(go[0]);
  close(status[1]);
  if (err < 0) {
    close(go[1]);
    close(status[0]);
    return err;
  }
  if (use & CAPSA_NAMESPACE_USER) {
    err = write_maps(pid, outside_uid, outside_gid, privileged);
    if (err < 0) {
      close(go[1]);  // the child reads EOF and exits
      close(status[0]);
      reap(pidfd);
      close(pidfd);
      return err;
    }
  }
  write_all(go[1], "g", 1);
  close(go[1]);
  struct child_status st;
  size_t got = 0;
  while (got < sizeof st) {
    ssize_t r = read(status[0], (char *)&st + got, sizeof st - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(status[0]);
  if (got != sizeof st || st.fatal) {
    reap(pidfd);
    close(pidfd);
    if (got == sizeof st) {
      rep.empty_root_error = st.empty_root_error;
      if (report) *report = rep;
      return st.fatal;
    }
    return -ECHILD;
  }
  rep.applied = use;
  rep.uid_mapped = st.uid_mapped;
  rep.uid_outside = st.uid_mapped ? outside_uid : (unsigned)geteuid();
  rep.empty_root = st.empty_root;
  rep.empty_root_error = st.empty_root_error;
  rep.fds_closed = st.fds_closed;
  rep.setsid = st.setsid;
  rep.pdeathsig = st.pdeathsig;
  if (report) *report = rep;
  child->pidfd = pidfd;
  child->pid = pid;
  return 0;
}

int capsa_ns_fork(const capsa_ns_policy *p, struct capsa_ns_child *child) {
  if (!p || !child) return -EINVAL;
  // A zygote is already in its mount namespace. A user namespace here is
  // nested and left unmapped: it gives the child no identity, only counts
  // of its own (RLIMIT_NPROC is counted per user namespace and uid).
  if (p->wanted & CAPSA_NAMESPACE_MOUNT) return -EINVAL;
  unsigned long flags = clone_flags_of(p->wanted) | CLONE_PIDFD;
  if (p->clone_parent) flags |= CLONE_PARENT;
  int pidfd = -1;
  pid_t pid = clone_fallback(flags, &pidfd);
  if (pid < 0) return -errno;
  if (pid > 0) {
    child->pidfd = pidfd;
    child->pid = pid;
    return pid;
  }
  // Child: nothing here may fail silently; a failure is fatal.
  if (setsid() < 0) _exit(126);
  if (p->pdeathsig && prctl(PR_SET_PDEATHSIG, p->pdeathsig, 0, 0, 0) < 0)
    _exit(126);
  if (p->nkeep && arrange_fds(p, -1, -1) < 0) _exit(126);
  if (!p->keep_caps && drop_caps() < 0) _exit(126);
  return 0;
}

int capsa_ns_report_format(const struct capsa_ns_report *r, char *buf,
                           size_t len) {
  if (!r || (!buf && len)) return -EINVAL;
  size_t n = 0;
  int w;
  // The others, refused with EPERM, were tried without a user namespace.
  bool no_userns = (r->requested & CAPSA_NAMESPACE_USER) &&
                   !(r->applied & CAPSA_NAMESPACE_USER);
#define PUT(...)                                         \
  do {                                                   \
    w = snprintf(buf ? buf + (n < len ? n : len) : NULL, \
                 n < len ? len - n : 0, __VA_ARGS__);    \
    if (w < 0) return -EINVAL;                           \
    n += (size_t)w;                                      \
  } while (0)
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++) {
    unsigned bit = kNamespaces[i].bit;
    const char *sep = n ? " " : "";
    if (r->applied & bit)
      PUT("%s%s=yes", sep, kNamespaces[i].name);
    else if (r->requested & bit)
      PUT("%s%s=no(%s%s%s)", sep, kNamespaces[i].name,
          r->ns_error[i] ? strerrorname_np(-r->ns_error[i]) : "?",
          bit == CAPSA_NAMESPACE_USER && r->user_why[0] ? ":" : "",
          bit == CAPSA_NAMESPACE_USER             ? r->user_why
          : no_userns && r->ns_error[i] == -EPERM ? ":no-userns"
                                                  : "");
    else
      PUT("%s%s=off", sep, kNamespaces[i].name);
  }
  if (r->empty_root)
    PUT(" root=empty-ro");
  else if (r->empty_root_error)
    PUT(" root=host(%s)", strerrorname_np(-r->empty_root_error));
  else
    PUT(" root=host");
  PUT(" fds=%s", r->fds_closed ? "closed" : "inherited");
  if (r->uid_mapped)
    PUT(" uid0->%u", r->uid_outside);
  else if (no_userns)
    PUT(" uid=%u(unmapped)", r->uid_outside);
#undef PUT
  return (int)n;
}

int capsa_ns_ids_of(pid_t pid, capsa_ns_ids *out) {
  if (pid < 0 || !out) return -EINVAL;
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++) {
    char path[64];
    struct stat st;
    if (pid)
      snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid,
               kNamespaces[i].name);
    else
      snprintf(path, sizeof path, "/proc/self/ns/%s", kNamespaces[i].name);
    if (stat(path, &st) < 0) return errno == ENOENT ? -ESRCH : -errno;
    out->dev[i] = st.st_dev;
    out->ino[i] = st.st_ino;
  }
  return 0;
}

unsigned capsa_ns_ids_differ(const capsa_ns_ids *a, const capsa_ns_ids *b) {
  unsigned differ = 0;
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT; i++)
    if (a->dev[i] != b->dev[i] || a->ino[i] != b->ino[i])
      differ |= kNamespaces[i].bit;
  return differ;
}

int capsa_ns_of_pid_differ(pid_t pid) {
  if (pid <= 0) return -EINVAL;
  capsa_ns_ids theirs, ours;
  int err = capsa_ns_ids_of(pid, &theirs);
  if (err == 0) err = capsa_ns_ids_of(0, &ours);
  return err < 0 ? err : (int)capsa_ns_ids_differ(&theirs, &ours);
}
