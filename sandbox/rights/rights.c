// cap_rights_limit(2), cap_ioctls_limit(2), cap_fcntls_limit(2) on Linux:
// the process's rights table and the two enforcement layers (see rights.h and
// docs/rights.md).
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/rights/rights_internal.h"
#include "sandbox/seccomp.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC 1u
#endif

// fd -> entry; NULL for numbers never limited. Grown on demand. Inherited
// by fork together with the filters it describes.
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct capsa__rights_entry **g_table;
static size_t g_len;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

// A fork while another thread holds the lock must not leave the child's copy
// locked forever.
static void before_fork(void) {
  pthread_mutex_lock(&g_lock);
}
static void after_fork(void) {
  pthread_mutex_unlock(&g_lock);
}
static void init_once(void) {
  pthread_atfork(before_fork, after_fork, after_fork);
}

static void lock(void) {
  pthread_once(&g_once, init_once);
  pthread_mutex_lock(&g_lock);
}
static void unlock(void) {
  pthread_mutex_unlock(&g_lock);
}

static struct capsa__rights_entry *lookup(int fd) {
  return (size_t)fd < g_len ? g_table[fd] : NULL;
}

static bool fd_valid(int fd) {
  // F_GETFD stays allowed on limited numbers, so this works after a limit.
  if (fd < 0 || fcntl(fd, F_GETFD) < 0) return false;
  // A number closed by capsa_rights_close() holds the placeholder: closed.
  lock();
  const struct capsa__rights_entry *e = lookup(fd);
  bool parked = e && e->parked;
  unlock();
  return !parked;
}

static void entry_default(struct capsa__rights_entry *e) {
  memset(e, 0, sizeof *e);
  capsa_rights_init_all(&e->rights);
  e->fcntls = CAPSA_CAP_FCNTL_ALL;
}

// A copy of fd's recorded entry, or the unlimited default. Locked.
static struct capsa__rights_entry entry_of(int fd) {
  struct capsa__rights_entry e;
  const struct capsa__rights_entry *cur = lookup(fd);
  if (cur)
    e = *cur;
  else
    entry_default(&e);
  return e;
}

static bool entry_is_unlimited(const struct capsa__rights_entry *e) {
  capsa_rights_t all;
  capsa_rights_init_all(&all);
  return capsa_rights_contains(&e->rights, &all) && !e->ioctls_limited &&
         e->fcntls == CAPSA_CAP_FCNTL_ALL;
}

// Installs `next` as fd's state: filter first built, then the object
// narrowed (before the filter, which would refuse the narrowing's own fcntl
// and lseek calls), then the filter loaded on every thread. On success the
// table takes `next` (and its ioctl array). Called with the lock held.
static int commit_object(int fd, struct capsa__rights_entry *next,
                         bool narrow_object);
static int commit(int fd, struct capsa__rights_entry *next) {
  return commit_object(fd, next, true);
}

// commit(), optionally leaving the object alone (a duplicate shares the
// description, which was narrowed when the original was limited).
static int commit_object(int fd, struct capsa__rights_entry *next,
                         bool narrow_object) {
  struct capsa__rights_entry *cur = lookup(fd);
  if ((size_t)fd >= g_len) {
    size_t len = g_len ? g_len : 64;
    while (len <= (size_t)fd) len *= 2;
    struct capsa__rights_entry **t = realloc(g_table, len * sizeof(*t));
    if (!t) return -ENOMEM;
    memset(t + g_len, 0, (len - g_len) * sizeof(*t));
    g_table = t;
    g_len = len;
  }
  struct capsa__rights_entry *e = malloc(sizeof *e);
  if (!e) return -ENOMEM;
  struct capsa_bpf bpf = {0};
  int err = capsa__rights_bpf_build(fd, next, cur, &bpf);
  if (err < 0) {
    free(e);
    return err;
  }
  unsigned mech =
      narrow_object ? capsa__rights_narrow_object(fd, &next->rights) : 0;
  err = capsa_nnp_set();
  // Nothing new to refuse (the number's filters already do): no filter.
  if (err == 0 && bpf.len > 0)
    err = capsa_bpf_install(&bpf, SECCOMP_FILTER_FLAG_TSYNC);
  capsa_bpf_free(&bpf);
  if (err < 0) {
    free(e);
    // No seccomp filter mode on this kernel: say so rather than pretend.
    return (err == -EINVAL || err == -ENOSYS) ? -ENOSYS : err;
  }
  *e = *next;
  e->parked = false;
  e->mechanisms = mech | CAPSA_RIGHTS_BY_SECCOMP | next->mechanisms |
                  (cur ? cur->mechanisms : 0);
  if (cur) {
    if (cur->ioctls != e->ioctls) free(cur->ioctls);
    free(cur);
  }
  g_table[fd] = e;
  return 0;
}

// capsa_rights_limit with the lock held.
static int limit_locked(int fd, const capsa_rights_t *rights) {
  struct capsa__rights_entry next = entry_of(fd);
  if (!capsa_rights_contains(&next.rights, rights))
    return -ENOTCAPABLE;  // rights only shrink
  if (memcmp(&next.rights, rights, sizeof *rights) == 0) return 0;
  next.rights = *rights;
  // FreeBSD's kern_cap_rights_limit: without CAP_IOCTL the ioctl list
  // becomes empty (cap_ioctls_get() answers 0, not CAP_IOCTLS_ALL), without
  // CAP_FCNTL the fcntl mask becomes 0, so a later cap_ioctls_limit() or
  // cap_fcntls_limit() asking for anything fails with ENOTCAPABLE. The
  // filter is the same either way (the missing right already refuses every
  // ioctl / every CAP_FCNTL command); commit() frees the old list.
  if (!capsa__rights_has(rights, CAPSA_CAP_IOCTL)) {
    next.ioctls_limited = true;
    next.ioctls = NULL;
    next.nioctls = 0;
  }
  if (!capsa__rights_has(rights, CAPSA_CAP_FCNTL)) next.fcntls = 0;
  return entry_is_unlimited(&next) ? 0 : commit(fd, &next);
}

int capsa_rights_limit(int fd, const capsa_rights_t *rights) {
  if (!rights || !capsa_rights_is_valid(rights)) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  int err = limit_locked(fd, rights);
  unlock();
  return err;
}

// Numbers handed out by capsa_rights_limit_renumber(): counting down from
// the top of RLIMIT_NOFILE (at most 4096), far from the lowest-free numbers
// open() and friends return, and never handed out twice.
static int g_next_high = -1;
static int g_high_floor;

static int pick_fresh_number(void) {
  if (g_next_high < 0) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -errno;
    // At most 4096: the kernel sizes a process's descriptor table to its
    // highest number (8 bytes each), and renderers are meant to stay small.
    rlim_t top = rl.rlim_cur > 4096 ? 4096 : rl.rlim_cur;
    g_next_high = (int)top - 1;
    g_high_floor = (int)(top / 2);
  }
  for (; g_next_high >= g_high_floor; g_next_high--) {
    int n = g_next_high;
    // Free, and never limited (a limited number keeps its filter).
    if (lookup(n) == NULL && fcntl(n, F_GETFD) < 0 && errno == EBADF) {
      g_next_high--;
      return n;
    }
  }
  return -EMFILE;
}

int capsa_rights_limit_renumber(int fd, const capsa_rights_t *rights) {
  if (!rights || !capsa_rights_is_valid(rights)) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  int err = 0;
  int n = -1;
  if (lookup(fd) != NULL) {
    err = -ENOTCAPABLE;  // dup of a limited number is refused anyway
  } else if ((n = pick_fresh_number()) < 0) {
    err = n;
  } else if (dup3(fd, n, O_CLOEXEC) < 0) {
    err = -errno;
  } else if ((err = limit_locked(n, rights)) < 0) {
    close(n);
  }
  unlock();
  if (err < 0) return err;
  close(fd);
  return n;
}

int capsa_rights_get(int fd, capsa_rights_t *rights) {
  if (!rights) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  const struct capsa__rights_entry *e = lookup(fd);
  if (e) {
    *rights = e->rights;
  } else {
    capsa_rights_init_all(rights);
  }
  unlock();
  return 0;
}

static int cmp_ulong(const void *a, const void *b) {
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return x < y ? -1 : x > y;
}

static bool has_cmd(const struct capsa__rights_entry *e, unsigned long cmd) {
  // An emptied list (CAP_IOCTL removed) has no array: bsearch's base must
  // not be NULL.
  if (e->nioctls == 0 || !e->ioctls) return false;
  return bsearch(&cmd, e->ioctls, e->nioctls, sizeof cmd, cmp_ulong) != NULL;
}

int capsa_ioctls_limit(int fd, const unsigned long *cmds, size_t ncmds) {
  if (ncmds > CAPSA_IOCTLS_LIMIT_MAX || (ncmds > 0 && !cmds)) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  // The kernel reads the request as 32 bits (CVE-2019-10063): so do we.
  unsigned long *list = malloc((ncmds ? ncmds : 1) * sizeof(*list));
  if (!list) return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < ncmds; i++) list[n++] = cmds[i] & 0xFFFFFFFFul;
  qsort(list, n, sizeof(*list), cmp_ulong);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || list[u - 1] != list[i]) list[u++] = list[i];
  lock();
  struct capsa__rights_entry next = entry_of(fd);
  int err = 0;
  if (next.ioctls_limited) {
    for (size_t i = 0; i < u && err == 0; i++)
      if (!has_cmd(&next, list[i])) err = -ENOTCAPABLE;
  }
  if (err == 0) {
    next.ioctls_limited = true;
    next.ioctls = list;
    next.nioctls = u;
    err = commit(fd, &next);
  }
  unlock();
  if (err < 0) free(list);
  return err;
}

long capsa_ioctls_get(int fd, unsigned long *cmds, size_t maxcmds) {
  if (maxcmds > 0 && !cmds) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  const struct capsa__rights_entry *e = lookup(fd);
  long r = CAPSA_IOCTLS_ALL;
  if (e && e->ioctls_limited) {
    size_t m = e->nioctls < maxcmds ? e->nioctls : maxcmds;
    if (m) memcpy(cmds, e->ioctls, m * sizeof(*cmds));
    r = (long)e->nioctls;
  }
  unlock();
  return r;
}

int capsa_fcntls_limit(int fd, uint32_t fcntlrights) {
  if ((fcntlrights & ~(uint32_t)CAPSA_CAP_FCNTL_ALL) != 0) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  struct capsa__rights_entry next = entry_of(fd);
  int err = 0;
  if ((next.fcntls & fcntlrights) != fcntlrights) {
    err = -ENOTCAPABLE;
  } else if (next.fcntls != fcntlrights) {
    next.fcntls = fcntlrights;
    err = commit(fd, &next);
  }
  unlock();
  return err;
}

int capsa_fcntls_get(int fd, uint32_t *fcntlrights) {
  if (!fcntlrights) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  const struct capsa__rights_entry *e = lookup(fd);
  *fcntlrights = e ? e->fcntls : CAPSA_CAP_FCNTL_ALL;
  unlock();
  return 0;
}

int capsa_rights_mechanisms(int fd) {
  if (!fd_valid(fd)) return -EBADF;
  lock();
  const struct capsa__rights_entry *e = lookup(fd);
  int m = e ? (int)e->mechanisms : 0;
  unlock();
  return m;
}

// --- dup and close with FreeBSD's semantics (issue 16) ---
//
// A duplicate of a limited number is made by sending the descriptor to
// ourselves over a socketpair (the only way to a second number for the same
// description that the number-keyed filter does not refuse) and limiting
// the new number with the same entry before it is returned. A closed limited
// number is parked: dup3() puts an inert placeholder under it, so the kernel
// never hands the number (and its filter) to the next open(). Both cost a
// filter or a number for the rest of the process's life; see
// docs/rights.md, "dup and close".

// The placeholder: the read end of a pipe whose write end is closed (read
// answers 0, write EBADF; not a directory, no path, nothing to signal), at
// a number never limited. Recreated if the program closed it.
static int g_ph = -1;
static dev_t g_ph_dev;
static ino_t g_ph_ino;

static int placeholder_locked(void) {
  struct stat st;
  if (g_ph >= 0 && lookup(g_ph) == NULL && fstat(g_ph, &st) == 0 &&
      S_ISFIFO(st.st_mode) && st.st_dev == g_ph_dev && st.st_ino == g_ph_ino)
    return g_ph;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -errno;
  close(p[1]);
  int n = pick_fresh_number();
  if (n >= 0 && dup3(p[0], n, O_CLOEXEC) == n) {
    close(p[0]);
  } else if (lookup(p[0]) == NULL) {
    n = p[0];  // no high number left: the low one is never limited
  } else {
    close(p[0]);
    return -EMFILE;
  }
  if (fstat(n, &st) != 0) {
    int err = -errno;
    close(n);
    return err;
  }
  g_ph = n;
  g_ph_dev = st.st_dev;
  g_ph_ino = st.st_ino;
  return n;
}

// Puts the placeholder under the limited number `fd` (which the caller is
// closing); closes it outright when no placeholder can be made.
static void park_locked(int fd, struct capsa__rights_entry *e) {
  int ph = placeholder_locked();
  if (ph < 0 || dup3(ph, fd, O_CLOEXEC) != fd) {
    close(fd);  // closing must close; the number keeps its filter
    return;
  }
  e->parked = true;
}

int capsa_rights_close(int fd) {
  if (fd < 0) return -EBADF;
  lock();
  struct capsa__rights_entry *e = lookup(fd);
  int err = 0;
  if (e == NULL) {
    err = close(fd) == 0 ? 0 : -errno;
  } else if (e->parked) {
    err = -EBADF;
  } else {
    // Also for a number the program already closed behind our back (EBADF):
    // parking it keeps the next open() from inheriting its filter.
    if (fcntl(fd, F_GETFD) < 0) err = -EBADF;
    park_locked(fd, e);
  }
  unlock();
  return err;
}

// *out = a copy of `src` (ioctl list duplicated) narrowed by whatever is
// already recorded for number `dst` (a parked or reused limited number
// keeps its filter: the result is never wider than either).
static int entry_for_copy(int dst, const struct capsa__rights_entry *src,
                          struct capsa__rights_entry *out) {
  struct capsa__rights_entry old = entry_of(dst);
  *out = *src;
  out->parked = false;
  for (size_t i = 0; i < sizeof(out->rights.cr_rights) / sizeof(uint64_t); i++)
    out->rights.cr_rights[i] &= old.rights.cr_rights[i];
  out->fcntls &= old.fcntls;
  out->ioctls = NULL;
  out->nioctls = 0;
  out->ioctls_limited = src->ioctls_limited || old.ioctls_limited;
  if (!out->ioctls_limited) return 0;
  const struct capsa__rights_entry *a = src->ioctls_limited ? src : &old;
  const struct capsa__rights_entry *b = src->ioctls_limited ? &old : src;
  if (a->nioctls == 0) return 0;
  out->ioctls = malloc(a->nioctls * sizeof(*out->ioctls));
  if (!out->ioctls) return -ENOMEM;
  for (size_t i = 0; i < a->nioctls; i++)
    if (!b->ioctls_limited || has_cmd(b, a->ioctls[i]))
      out->ioctls[out->nioctls++] = a->ioctls[i];
  return 0;
}

static bool entries_equal(const struct capsa__rights_entry *a,
                          const struct capsa__rights_entry *b) {
  if (memcmp(&a->rights, &b->rights, sizeof a->rights) != 0 ||
      a->fcntls != b->fcntls || a->ioctls_limited != b->ioctls_limited ||
      a->nioctls != b->nioctls)
    return false;
  return a->nioctls == 0 ||
         memcmp(a->ioctls, b->ioctls, a->nioctls * sizeof(*a->ioctls)) == 0;
}

// Records `src`'s rights on the new number `n`, which refers to the same
// description. On failure `n` is closed (parked if it was limited before).
static int limit_copy_locked(int n, const struct capsa__rights_entry *src) {
  struct capsa__rights_entry next;
  int err = entry_for_copy(n, src, &next);
  struct capsa__rights_entry *cur = lookup(n);
  if (err == 0 && cur && entries_equal(cur, &next)) {
    cur->parked = false;  // the filter already there is exactly this
    free(next.ioctls);
    return 0;
  }
  if (err == 0 && !cur && entry_is_unlimited(&next)) return 0;
  if (err == 0) err = commit_object(n, &next, false);
  if (err < 0) {
    free(next.ioctls);
    if (cur) {
      park_locked(n, cur);
    } else {
      close(n);
    }
  }
  return err;
}

// A second number for the description behind `fd`, through SCM_RIGHTS to
// ourselves: the number-keyed filter refuses dup of `fd`, not sendmsg on an
// unrelated socket. Close-on-exec with O_CLOEXEC in `flags`.
static int loopback_dup(int fd, int flags) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return -errno;
  char byte = 0;
  struct iovec iov = {&byte, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = u.buf;
  m.msg_controllen = sizeof u.buf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  int n = -EIO;
  if (sendmsg(sv[0], &m, MSG_NOSIGNAL) != 1) {
    n = -errno;
  } else {
    memset(&u, 0, sizeof u);
    m.msg_control = u.buf;
    m.msg_controllen = sizeof u.buf;
    ssize_t r = recvmsg(sv[1], &m, (flags & O_CLOEXEC) ? MSG_CMSG_CLOEXEC : 0);
    c = CMSG_FIRSTHDR(&m);
    if (r < 0) {
      n = -errno;
    } else if (r == 1 && c && c->cmsg_level == SOL_SOCKET &&
               c->cmsg_type == SCM_RIGHTS &&
               c->cmsg_len == CMSG_LEN(sizeof(int))) {
      memcpy(&n, CMSG_DATA(c), sizeof n);
    }
  }
  close(sv[0]);
  close(sv[1]);
  return n;
}

// The duplicate of limited `fd` (entry `e`): at `target` when >= 0, else at
// the lowest number >= minfd.
static int dup_limited_locked(int fd, const struct capsa__rights_entry *e,
                              int target, int minfd, int flags) {
  struct capsa__rights_entry src = *e;  // the table may move under commit
  int m = loopback_dup(fd, flags);
  if (m < 0) return m;
  int n = m;
  if (target >= 0 || m < minfd) {
    bool cloexec = (flags & O_CLOEXEC) != 0;
    if (target >= 0) {
      n = dup3(m, target, cloexec ? O_CLOEXEC : 0);
    } else {
      n = fcntl(m, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, minfd);
    }
    int err = n < 0 ? -errno : 0;
    close(m);
    if (err < 0) return err;
  }
  int err = limit_copy_locked(n, &src);
  return err < 0 ? err : n;
}

int capsa_rights_dupfd(int fd, int minfd, int flags) {
  if (minfd < 0 || (flags & ~O_CLOEXEC) != 0) return -EINVAL;
  if (!fd_valid(fd)) return -EBADF;
  lock();
  const struct capsa__rights_entry *e = lookup(fd);
  int n;
  if (e == NULL) {
    n = fcntl(fd, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, minfd);
    if (n < 0) n = -errno;
  } else {
    n = dup_limited_locked(fd, e, -1, minfd, flags);
  }
  unlock();
  return n;
}

int capsa_rights_dup(int fd) {
  return capsa_rights_dupfd(fd, 0, 0);
}

int capsa_rights_dup3(int oldfd, int newfd, int flags) {
  if ((flags & ~O_CLOEXEC) != 0 || oldfd == newfd) return -EINVAL;
  if (newfd < 0) return -EBADF;
  if (!fd_valid(oldfd)) return -EBADF;
  lock();
  const struct capsa__rights_entry *e = lookup(oldfd);
  int n;
  if (e == NULL) {
    // The copy has all rights, narrowed by any filter already on newfd.
    struct capsa__rights_entry *cur = lookup(newfd);
    n = dup3(oldfd, newfd, flags);
    if (n < 0) {
      n = -errno;
    } else if (cur) {
      cur->parked = false;
    }
  } else {
    n = dup_limited_locked(oldfd, e, newfd, 0, flags);
  }
  unlock();
  return n;
}
