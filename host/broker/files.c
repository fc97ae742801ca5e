// Broker service "file:REL/PATH" (host/broker/broker.h): a regular file
// beneath the kind's resource_dir_fd, opened by the host, read-only.
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/host_internal.h"

int capsa__broker_file(struct capsa_host_renderer *r, const capsa_msg_t *req,
                       const char *path, char *why) {
  int dirfd = r->h->kinds[r->kind].resource_dir_fd;
  if (dirfd < 0) return -EACCES;
  if (!*path || path[0] == '/') return -EXDEV;
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                RESOLVE_NO_XDEV;
  int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
  if (fd < 0) return -errno;
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -EINVAL;  // only regular files: never a FIFO or a device
  }
  // RESOLVE_BENEATH checks the path, not the inode: a hard link beneath the
  // directory to a file outside it (made by anyone who can write there and
  // read the target, e.g. ln /etc/shadow-copy res/x) resolves beneath it.
  // No path tells where else an inode is linked, so any second name is
  // refused (capsa_host.h, resource_dir_fd).
  if (st.st_nlink > 1) {
    close(fd);
    return -EMLINK;
  }
  // Back to blocking for the renderer's reads (O_NONBLOCK only kept the open
  // itself from hanging on a FIFO).
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return capsa__broker_reply_fd(r, req, fd, CAPSA_HANDLE_FILE,
                                (uint64_t)st.st_size,
                                "application/octet-stream", why);
}
