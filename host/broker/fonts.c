// Broker service "font:regular|bold|mono" (host/broker/broker.h): the
// host's fonts (capsa_host_options_t.font_*), loaded once at start into
// sealed shared memory, handed read-only to kinds with allow_fonts.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host_internal.h"

#define MAX_FONT_BYTES (64u << 20)

static const char *const kFontNames[CAPSA__FONTS] = {"regular", "bold", "mono"};

static int load_font(const char *path, capsa_shm_region_t *out, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -errno;
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      (uint64_t)st.st_size > MAX_FONT_BYTES) {
    close(fd);
    return -EINVAL;
  }
  int err = capsa_shm_create((size_t)st.st_size, "font",
                             CAPSA_SHM_CREATOR_WRITES, out);
  if (err < 0) {
    close(fd);
    return err;
  }
  void *dst;
  err = capsa_shm_view_mut(out, 0, (size_t)st.st_size, &dst);
  size_t got = 0;
  while (err == 0 && got < (size_t)st.st_size) {
    ssize_t n = read(fd, (char *)dst + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      err = n < 0 ? -errno : -EIO;
    else
      got += (size_t)n;
  }
  close(fd);
  // Filled: drop the writable mapping before any renderer exists, so no
  // process a renderer descends from holds a writable alias of bytes the
  // broker hands to every renderer (the seals stop new write paths only).
  if (err == 0) err = capsa_shm_unmap(out);
  if (err < 0) {
    capsa_shm_close(out);
    return err;
  }
  *len = (size_t)st.st_size;
  return 0;
}

int capsa__broker_load_fonts(struct capsa__host_impl *h) {
  const char *paths[CAPSA__FONTS] = {h->opts.font_regular, h->opts.font_bold,
                                     h->opts.font_mono};
  for (int i = 0; i < CAPSA__FONTS; i++) {
    if (!paths[i]) continue;
    int err = load_font(paths[i], &h->broker.fonts[i], &h->broker.font_len[i]);
    if (err < 0) {
      capsa__broker_free_fonts(h);
      return err;
    }
  }
  return 0;
}

void capsa__broker_free_fonts(struct capsa__host_impl *h) {
  for (int i = 0; i < CAPSA__FONTS; i++) {
    if (h->broker.fonts[i].fd >= 0 || h->broker.fonts[i].base)
      capsa_shm_close(&h->broker.fonts[i]);
    h->broker.fonts[i].fd = -1;
  }
}

int capsa__broker_font(struct capsa_host_renderer *r, const capsa_msg_t *req,
                       const char *name, char *why) {
  if (!r->h->kinds[r->kind].allow_fonts) return -EACCES;
  for (int i = 0; i < CAPSA__FONTS; i++) {
    if (strcmp(name, kFontNames[i]) != 0) continue;
    const capsa_shm_region_t *f = &r->h->broker.fonts[i];
    if (f->fd < 0) return -ENOENT;
    // The channel sends a description of the renderer's own (reopened
    // read-only), so one renderer's offset is never the next one's.
    int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -errno;
    // The region is page-rounded: the mime says how many bytes are font.
    char mime[64];
    snprintf(mime, sizeof mime, "font/sfnt; length=%zu",
             r->h->broker.font_len[i]);
    return capsa__broker_reply_fd(r, req, fd, CAPSA_HANDLE_SHM, f->size, mime,
                                  why);
  }
  return -ENOENT;
}
