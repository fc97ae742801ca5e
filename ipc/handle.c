// Checks a received descriptor against its declaration without ever
// blocking on it: only fstat, fcntl queries and socket queries, so a FIFO,
// a directory or a socket to elsewhere is recognised and refused, never
// opened or read.
#include "ipc/handle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc/reason.h"
#include "sandbox/memfd.h"

// Rights words carry their index in the top bits (sandbox/rights/rights.h).
#define WORD0_TAG (1ULL << 57)
#define WORD1_TAG (1ULL << 58)
#define TAG_MASK (0x7fULL << 57)

static const char *kind_name(capsa_handle_kind_t k) {
  switch (k) {
    case CAPSA_HANDLE_SHM:
      return "shm";
    case CAPSA_HANDLE_CHANNEL:
      return "channel";
    case CAPSA_HANDLE_FILE:
      return "file";
    default:
      return "?";
  }
}

static const char *mode_name(mode_t m) {
  if (S_ISREG(m)) return "regular file";
  if (S_ISDIR(m)) return "directory";
  if (S_ISFIFO(m)) return "FIFO";
  if (S_ISSOCK(m)) return "socket";
  if (S_ISCHR(m)) return "character device";
  if (S_ISBLK(m)) return "block device";
  if (S_ISLNK(m)) return "symlink";
  return "unknown file type";
}

void capsa_handle_max_rights(capsa_handle_kind_t kind, bool writable,
                             capsa_rights_t *out) {
  // Reading and describing data: what a read-only region or file needs.
  uint64_t read0 = CAPSA_CAP_READ | CAPSA_CAP_SEEK | CAPSA_CAP_MMAP_R |
                   CAPSA_CAP_FSTAT | CAPSA_CAP_FSTATFS | CAPSA_CAP_FCNTL |
                   CAPSA_CAP_FPATHCONF;
  out->cr_rights[0] = WORD0_TAG;
  out->cr_rights[1] = WORD1_TAG;
  switch (kind) {
    case CAPSA_HANDLE_FILE:
      out->cr_rights[0] |= read0;
      break;
    case CAPSA_HANDLE_SHM:
      // Never MMAP_X, never FTRUNCATE (the size is sealed anyway).
      out->cr_rights[0] |= read0;
      if (writable) out->cr_rights[0] |= CAPSA_CAP_WRITE | CAPSA_CAP_MMAP_W;
      break;
    case CAPSA_HANDLE_CHANNEL:
      out->cr_rights[0] |= CAPSA_CAP_READ | CAPSA_CAP_WRITE | CAPSA_CAP_FSTAT |
                           CAPSA_CAP_FCNTL | CAPSA_CAP_SHUTDOWN |
                           CAPSA_CAP_GETSOCKOPT | CAPSA_CAP_GETSOCKNAME |
                           CAPSA_CAP_GETPEERNAME;
      out->cr_rights[1] |= CAPSA_CAP_EVENT;
      break;
    default:
      break;
  }
}

int capsa_handle_check_decl(const capsa_handle_t *d, char *r, size_t n) {
  if (d->kind < CAPSA_HANDLE_SHM || d->kind > CAPSA_HANDLE_FILE)
    return capsa__bad(r, n, "handle kind %d unknown", (int)d->kind);
  const char *k = kind_name(d->kind);
  const uint64_t *w = d->rights.cr_rights;
  if ((w[0] & TAG_MASK) != WORD0_TAG || (w[1] & TAG_MASK) != WORD1_TAG)
    return capsa__bad(r, n, "%s handle: malformed rights %#llx %#llx", k,
                      (unsigned long long)w[0], (unsigned long long)w[1]);
  capsa_rights_t max;
  capsa_handle_max_rights(d->kind, d->writable, &max);
  if ((w[0] & ~max.cr_rights[0]) || (w[1] & ~max.cr_rights[1]))
    return capsa__bad(r, n,
                      "%s handle: rights %#llx %#llx wider than the kind "
                      "allows",
                      k, (unsigned long long)w[0], (unsigned long long)w[1]);
  if (d->writable && d->kind != CAPSA_HANDLE_SHM)
    return capsa__bad(r, n, "%s handle declared writable", k);
  if (d->size > CAPSA_IPC_MAX_REGION)
    return capsa__bad(r, n, "%s handle: size %llu too large", k,
                      (unsigned long long)d->size);
  if (d->kind == CAPSA_HANDLE_SHM && d->size == 0)
    return capsa__bad(r, n, "shm handle: size 0");
  if (d->kind == CAPSA_HANDLE_CHANNEL && d->size != 0)
    return capsa__bad(r, n, "channel handle: size %llu",
                      (unsigned long long)d->size);
  return 0;
}

static int check_shm(int fd, const struct stat *st, int fl,
                     const capsa_handle_t *d, capsa_peer_role_t sender, char *r,
                     size_t n) {
  if (!S_ISREG(st->st_mode))
    return capsa__bad(r, n, "shm handle is a %s", mode_name(st->st_mode));
  int seals = capsa_memfd_seals(fd);
  if (seals < 0)
    return capsa__bad(r, n, "shm handle is not a sealable memfd (%d)", seals);
  unsigned need = CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK | CAPSA_SEAL_SEAL;
  if (((unsigned)seals & need) != need)
    return capsa__bad(r, n, "shm handle: seals %#x lack grow/shrink/seal",
                      seals);
  // Executable memory must never reach a sandboxed peer: on kernels with
  // MFD_NOEXEC_SEAL the mode has no x bits and cannot regain them.
  if (capsa_memfd_exec_sealed() && (st->st_mode & 0111))
    return capsa__bad(r, n, "shm handle is executable (mode %#o)",
                      (unsigned)(st->st_mode & 07777));
  if ((uint64_t)st->st_size != d->size)
    return capsa__bad(r, n, "shm handle: size %lld, declared %llu",
                      (long long)st->st_size, (unsigned long long)d->size);
  int write_sealed =
      (seals & (CAPSA_SEAL_WRITE | CAPSA_SEAL_FUTURE_WRITE)) != 0;
  if (d->writable) {
    if ((fl & O_ACCMODE) != O_RDWR)
      return capsa__bad(r, n, "writable shm handle not opened read-write");
    if (write_sealed)
      return capsa__bad(r, n, "writable shm handle is write-sealed");
  } else if (!write_sealed) {
    // Read-only by seal, not by access mode: a read-only fd could be
    // reopened writable through /proc/self/fd.
    return capsa__bad(r, n, "read-only shm handle lacks a write seal");
  } else if (sender != CAPSA_PEER_HOST && !(seals & CAPSA_SEAL_WRITE)) {
    // FUTURE_WRITE leaves the mappings made before it writable: the
    // renderer that made the region could change it under the host's
    // checks. F_SEAL_WRITE cannot be set while one exists.
    return capsa__bad(r, n,
                      "read-only shm handle from a renderer is sealed "
                      "F_SEAL_FUTURE_WRITE, not F_SEAL_WRITE: its maker may "
                      "still write it (make it with "
                      "CAPSA_SHM_CREATOR_FREEZES, then capsa_shm_freeze)");
  }
  return 0;
}

static int unnamed(int fd, int peer) {
  struct sockaddr_un a;
  socklen_t len = sizeof a;
  int rc = peer ? getpeername(fd, (struct sockaddr *)&a, &len)
                : getsockname(fd, (struct sockaddr *)&a, &len);
  if (rc < 0) return 0;
  return a.sun_family == AF_UNIX && len == sizeof(sa_family_t);
}

static int check_channel(int fd, const struct stat *st, int fl, char *r,
                         size_t n) {
  if (!S_ISSOCK(st->st_mode))
    return capsa__bad(r, n, "channel handle is a %s", mode_name(st->st_mode));
  int domain = -1, type = -1;
  socklen_t len = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
      domain != AF_UNIX)
    return capsa__bad(r, n, "channel handle: socket domain %d, not AF_UNIX",
                      domain);
  len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
      type != SOCK_SEQPACKET)
    return capsa__bad(r, n, "channel handle: socket type %d, not SEQPACKET",
                      type);
  // A socketpair end: neither side bound to a path or abstract name, and
  // connected. A socket connected to a listening server has a named peer.
  if (!unnamed(fd, 0) || !unnamed(fd, 1))
    return capsa__bad(r, n,
                      "channel handle: not an unnamed connected socketpair");
  if ((fl & O_ACCMODE) != O_RDWR)
    return capsa__bad(r, n, "channel handle: access mode %#x", fl & O_ACCMODE);
  return 0;
}

static int check_file(const struct stat *st, int fl, const capsa_handle_t *d,
                      char *r, size_t n) {
  if (!S_ISREG(st->st_mode))
    return capsa__bad(r, n, "file handle is a %s, not a regular file",
                      mode_name(st->st_mode));
  if ((fl & O_ACCMODE) != O_RDONLY)
    return capsa__bad(r, n, "file handle not opened read-only (flags %#x)",
                      fl & O_ACCMODE);
  if ((uint64_t)st->st_size != d->size)
    return capsa__bad(r, n, "file handle: size %lld, declared %llu",
                      (long long)st->st_size, (unsigned long long)d->size);
  return 0;
}

int capsa_handle_check(int fd, const capsa_handle_t *d,
                       capsa_peer_role_t sender, char *r, size_t n) {
  int err = capsa_handle_check_decl(d, r, n);
  if (err < 0) return err;
  struct stat st;
  if (fstat(fd, &st) < 0) return capsa__bad(r, n, "fstat: errno %d", errno);
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0) return capsa__bad(r, n, "F_GETFL: errno %d", errno);
  if (fl & O_PATH) return capsa__bad(r, n, "handle is an O_PATH descriptor");
  switch (d->kind) {
    case CAPSA_HANDLE_SHM:
      return check_shm(fd, &st, fl, d, sender, r, n);
    case CAPSA_HANDLE_CHANNEL:
      return check_channel(fd, &st, fl, r, n);
    case CAPSA_HANDLE_FILE:
      return check_file(&st, fl, d, r, n);
    default:
      return capsa__bad(r, n, "handle kind %d unknown", (int)d->kind);
  }
}

int capsa_handle_reopen(int fd, bool writable) {
  if (fd < 0) return -EBADF;
  char path[32];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  // O_NOCTTY | O_NONBLOCK: never a controlling terminal, never a blocking
  // open (a FIFO fails the handle check before this is reached anyway).
  int nfd = open(
      path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (nfd < 0) return -errno;
  // The blocking mode the renderer reads with, as a fresh open gives it.
  int fl = fcntl(nfd, F_GETFL);
  if (fl < 0 || fcntl(nfd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
    int e = errno;
    close(nfd);
    return -e;
  }
  return nfd;
}
