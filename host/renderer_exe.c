// capsa_host_options_t.renderer_exe: the embedder's renderer executable,
// opened and checked once by capsa_host_start, and the verdict on the
// zygote it became. See host/capsa_host.h.
//
// Checked before anything starts, so that a wrong path is said as such
// rather than as a zygote that never answered: a regular file, executable
// by this process (faccessat with the effective ids, which also refuses a
// noexec mount), neither set-user-ID nor set-group-ID, and ELF (the exec is
// an execveat of the descriptor, which the kernel refuses for a script: its
// interpreter would need the closed descriptor's /dev/fd path).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "host/host_internal.h"

static int exe_refused(struct capsa__host_impl *h, int err, const char *what) {
  snprintf(h->start_error, sizeof h->start_error, "renderer_exe '%s': %s",
           h->exe_path, what);
  return err;
}

// Whether this process may exec the file, as the kernel will judge it.
static int executable(int fd, const struct stat *st) {
  if (faccessat(fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -errno;
  // Before faccessat2 (Linux 5.8): the mode bits and the mount, by hand.
  struct statvfs vfs;
  if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) return -EACCES;
  uid_t uid = geteuid();
  mode_t m = st->st_mode;
  bool x = uid == 0                   ? (m & 0111) != 0
           : st->st_uid == uid        ? (m & 0100) != 0
           : group_member(st->st_gid) ? (m & 0010) != 0
                                      : (m & 0001) != 0;
  return x ? 0 : -EACCES;
}

int capsa__renderer_exe_open(struct capsa__host_impl *h) {
  const char *path = h->opts.renderer_exe;
  snprintf(h->exe_path, sizeof h->exe_path, "%s", path);
  if (h->exe_fd >= 0) {  // a start tried again: the file as it is now
    close(h->exe_fd);
    h->exe_fd = -1;
  }
  char what[128];
  if (!path[0]) return exe_refused(h, -EINVAL, "empty path");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = -errno;
    snprintf(what, sizeof what, "cannot open: %s", strerror(-err));
    return exe_refused(h, err, what);
  }
  struct stat st;
  int err = 0;
  const char *why = NULL;
  if (fstat(fd, &st) < 0) {
    err = -errno;
    why = strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    err = -EISDIR;
    why = "a directory, not an executable file";
  } else if (!S_ISREG(st.st_mode)) {
    err = -EACCES;
    why = "not a regular file";
  } else if (st.st_mode & (S_ISUID | S_ISGID)) {
    err = -EPERM;
    why =
        "set-user-ID or set-group-ID: refused (a renderer never gains "
        "privileges)";
  } else if ((err = executable(fd, &st)) < 0) {
    snprintf(what, sizeof what,
             "not executable by this process (mode %04o%s): %s",
             (unsigned)(st.st_mode & 07777),
             err == -EACCES ? ", or a noexec mount" : "", strerror(-err));
    why = what;
  } else {
    unsigned char magic[4];
    if (pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic ||
        memcmp(magic, "\177ELF", 4) != 0) {
      err = -ENOEXEC;
      why =
          "not an ELF executable (a script cannot be exec'd from a "
          "descriptor)";
    }
  }
  if (err < 0) {
    close(fd);
    return exe_refused(h, err, why);
  }
  h->exe_fd = fd;
  return 0;
}

int capsa__renderer_exe_verdict(struct capsa__host_impl *h, int err) {
  char what[400];
  capsa__zygote *z = &h->zygote;
  if (err < 0) {
    if (z->exec_error > 0) {
      snprintf(what, sizeof what, "exec failed: %s", strerror(z->exec_error));
      return exe_refused(h, err, what);
    }
    // It ran, but did not speak the zygote's protocol: exited (EOF: the
    // host's read is EPROTO, its send EPIPE), hung, or another layout.
    if (err == -EPROTO || err == -EPIPE || err == -ECONNRESET ||
        err == -ETIMEDOUT || err == -EBADMSG || err == -EPROTONOSUPPORT) {
      snprintf(what, sizeof what,
               "did not answer as a capsa zygote (%s): its main() must call "
               "capsa_main(argc, argv) first, and it must be built against "
               "this capsa",
               strerror(-err));
      // One answer for one cause, whichever way the socket saw it end.
      return exe_refused(h, err == -ETIMEDOUT ? err : -EPROTO, what);
    }
    return err;  // the zygote's own failure, said as for any host
  }
  for (unsigned k = 0; k < h->nkinds; k++) {
    int kerr = z->kind_error[k];
    if (kerr != -ENOENT && kerr != -ENOTUNIQ) continue;
    if (kerr == -ENOENT)
      snprintf(what, sizeof what,
               "kind '%.64s' is not registered in it (CAPSA_RENDERER_KIND; "
               "it registers: %s)",
               h->kinds[k].name, z->registered[0] ? z->registered : "none");
    else
      snprintf(what, sizeof what,
               "kind '%.64s' is registered twice in it (CAPSA_RENDERER_KIND)",
               h->kinds[k].name);
    capsa__zygote_stop(z);
    return exe_refused(h, kerr, what);
  }
  return 0;
}
