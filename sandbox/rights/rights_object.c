// The kernel-object layer of rights: narrow the open file description itself,
// so the limit holds for every copy of the descriptor (dup, fork,
// SCM_RIGHTS), not only for the number the seccomp layer watches.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/rights/rights_internal.h"

// Status flags a reopen keeps (the rest of F_GETFL is the access mode and
// flags that only matter at open time).
#define KEPT_STATUS (O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME | O_ASYNC)

// Reopens regular file `fd` with access mode `acc` through /proc/self/fd and
// puts the new description under the same number. 0 or -errno (nothing
// changed then).
static int reopen_narrower(int fd, int acc, int status) {
  struct stat before, after;
  if (fstat(fd, &before) != 0) return -errno;
  // The new description starts at offset 0: carry the offset over, or give
  // up if it cannot be read (a seekable file whose number an earlier limit
  // left without CAP_SEEK_TELL) rather than silently rewind the file.
  off_t off = lseek(fd, 0, SEEK_CUR);
  if (off < 0 && errno != ESPIPE) return -errno;
  int fdflags = fcntl(fd, F_GETFD);
  if (fdflags < 0) return -errno;
  char path[40];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  // In capability mode this open is refused (ECAPMODE): the seccomp layer
  // then holds the limit alone, which capsa_rights_mechanisms() reports.
  int nfd = open(path, acc | O_CLOEXEC | O_NOCTTY);
  if (nfd < 0) return -errno;
  // Another thread may have renumbered `fd` meanwhile: only replace the very
  // same file.
  if (fstat(nfd, &after) != 0 || after.st_dev != before.st_dev ||
      after.st_ino != before.st_ino) {
    close(nfd);
    return -EAGAIN;
  }
  if ((status & KEPT_STATUS) != 0 &&
      fcntl(nfd, F_SETFL, status & KEPT_STATUS) != 0) {
    int err = -errno;
    close(nfd);
    return err;
  }
  if (off > 0 && lseek(nfd, off, SEEK_SET) != off) {
    int err = -errno;
    close(nfd);
    return err;
  }
  int r = dup3(nfd, fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0);
  int err = r < 0 ? -errno : 0;
  close(nfd);
  return err;
}

static unsigned narrow_file(int fd, const capsa_rights_t *rights) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_PATH)) return 0;
  // Reading the file, mapping it at all (Linux needs a readable description
  // for mmap) -> read access; writing, truncating, allocating -> write.
  bool need_r = capsa__rights_has(rights, CAPSA_CAP_READ) ||
                capsa__rights_has(rights, CAPSA_CAP_MMAP);
  bool need_w = capsa__rights_has(rights, CAPSA_CAP_WRITE) ||
                capsa__rights_has(rights, CAPSA_CAP_FTRUNCATE);
  int acc = fl & O_ACCMODE;
  int want = acc;
  if (!need_w && acc != O_RDONLY) {
    // Read-only, unless the description could not read either (O_WRONLY):
    // a reopen for reading would widen what copies of it can do.
    if (acc == O_RDWR) want = O_RDONLY;
  } else if (!need_r && need_w && acc == O_RDWR) {
    want = O_WRONLY;
  }
  if (want != acc && reopen_narrower(fd, want, fl) != 0) want = acc;
  // Report the access mode as a mechanism only when it refuses something
  // the rights leave out.
  bool holds = (!need_w && want == O_RDONLY) || (!need_r && want == O_WRONLY);
  return holds ? CAPSA_RIGHTS_BY_ACCESS_MODE : 0;
}

static unsigned narrow_socket(int fd, const capsa_rights_t *rights) {
  int type = 0, listening = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) return 0;
  len = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 ||
      listening)
    return 0;
  // Datagram sockets: shutting one down is not a per-direction limit the
  // peer expects; leave them to the seccomp layer.
  if (type != SOCK_STREAM && type != SOCK_SEQPACKET) return 0;
  bool recv = capsa__rights_has(rights, CAPSA_CAP_RECV);
  bool send = capsa__rights_has(rights, CAPSA_CAP_SEND);
  int how = -1;
  if (!recv && !send) {
    how = SHUT_RDWR;
  } else if (!recv) {
    how = SHUT_RD;
  } else if (!send) {
    how = SHUT_WR;
  }
  if (how < 0) return 0;
  // ENOTCONN (not connected yet): nothing to shut; the filter holds.
  return shutdown(fd, how) == 0 ? CAPSA_RIGHTS_BY_SHUTDOWN : 0;
}

unsigned capsa__rights_narrow_object(int fd, const capsa_rights_t *rights) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  if (S_ISREG(st.st_mode)) return narrow_file(fd, rights);
  if (S_ISSOCK(st.st_mode)) return narrow_socket(fd, rights);
  // Pipes are one-directional already; directories are read-only;
  // devices are left alone (reopening one can have side effects).
  return 0;
}
