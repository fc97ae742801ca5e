// CAPSA_IPC_DUMP (ipc/ipc_dump.h): received records as fuzz_host inputs.
#include "ipc/ipc_dump.h"

#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned capsa__dump_kind(int fd) {
  struct stat st;
  if (fstat(fd, &st) < 0) return CAPSA__DUMP_SHM_UNSEALED;
  if (S_ISFIFO(st.st_mode)) {
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_ACCMODE) == O_WRONLY ? CAPSA__DUMP_PIPE_WRITE
                                                   : CAPSA__DUMP_PIPE_READ;
  }
  if (S_ISSOCK(st.st_mode)) {
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
        type == SOCK_SEQPACKET)
      return CAPSA__DUMP_CHANNEL;
    return CAPSA__DUMP_STREAM;
  }
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) return CAPSA__DUMP_SHM_UNSEALED;
  if (seals & F_SEAL_WRITE) return CAPSA__DUMP_SHM_FROZEN;
  if (seals & F_SEAL_FUTURE_WRITE) return CAPSA__DUMP_SHM_READONLY;
  if (seals & (F_SEAL_GROW | F_SEAL_SHRINK)) return CAPSA__DUMP_SHM_SHARED;
  return CAPSA__DUMP_SHM_UNSEALED;
}

static int open_file(void) {
  const char *dir = getenv("CAPSA_IPC_DUMP");
  if (dir == NULL || dir[0] == 0) return -1;
  static _Atomic unsigned counter;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s/ipc-%ld-%u.in", dir, (long)getpid(),
                   ++counter);
  if (n < 0 || (size_t)n >= sizeof path) return -1;
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

static bool write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

size_t capsa__dump_head(uint8_t *head, size_t n, const int *fds, int nfds) {
  size_t h = 0;
  unsigned nh =
      nfds > CAPSA__DUMP_MAX_HANDLES ? CAPSA__DUMP_MAX_HANDLES : (unsigned)nfds;
  head[h++] = (uint8_t)nh;
  for (unsigned i = 0; i < nh; i++) {
    struct stat st;
    uint64_t size = fstat(fds[i], &st) == 0 ? (uint64_t)st.st_size : 0;
    head[h++] = (uint8_t)capsa__dump_kind(fds[i]);
    head[h++] = (uint8_t)(size / 256 > 255 ? 255 : size / 256);
  }
  size_t len = n > 65535 ? 65535 : n;
  head[h++] = (uint8_t)(len & 0xff);
  head[h++] = (uint8_t)(len >> 8);
  return h;
}

static capsa__dump_sink_fn sink;
static void *sink_arg;

void capsa__dump_set_sink(capsa__dump_sink_fn fn, void *arg) {
  sink = fn;
  sink_arg = arg;
}

void capsa__dump_record(capsa__chan_core_t *c, const uint8_t *buf, size_t n,
                        const int *fds, int nfds) {
  if (c->peer.peer != CAPSA_PEER_RENDERER) return;
  uint8_t head[CAPSA__DUMP_HEAD_MAX];
  size_t h = 0, len = n > 65535 ? 65535 : n;
  if (sink != NULL) {
    h = capsa__dump_head(head, n, fds, nfds);
    sink(sink_arg, c->serial, head, h, buf, len);
  }
  if (c->dump_state < 0) return;
  if (c->dump_state == 0) {
    int fd = open_file();
    if (fd < 0) {
      c->dump_state = -1;  // not asked for, or the directory refused it
      return;
    }
    c->dump_fd = fd;
    c->dump_state = 1;
    uint8_t flags = CAPSA__DUMP_AUTO_HELLO;
    if (!write_all(fd, &flags, 1)) goto failed;
    // The channel's first record is the renderer's HELLO (or what stands
    // in for it): the replayer makes its own.
    return;
  }
  if (h == 0) h = capsa__dump_head(head, n, fds, nfds);
  if (write_all(c->dump_fd, head, h) && write_all(c->dump_fd, buf, len)) return;
failed:
  capsa__dump_close(c);
  c->dump_state = -1;
}

void capsa__dump_close(capsa__chan_core_t *c) {
  if (c->dump_state > 0) close(c->dump_fd);
  if (c->dump_state > 0) c->dump_state = -1;
}
