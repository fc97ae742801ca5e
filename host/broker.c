// Broker services: what a renderer in capability mode cannot do itself and
// its kind's policy lets the host do for it (Chromium's BrokerProcess,
// FreeBSD's Casper). Every answer is a read-only handle or inline data.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "ipc/handle.h"

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
    int err = load_font(paths[i], &h->fonts[i], &h->font_len[i]);
    if (err < 0) {
      capsa__broker_free_fonts(h);
      return err;
    }
  }
  return 0;
}

void capsa__broker_free_fonts(struct capsa__host_impl *h) {
  for (int i = 0; i < CAPSA__FONTS; i++) {
    if (h->fonts[i].fd >= 0 || h->fonts[i].base) capsa_shm_close(&h->fonts[i]);
    h->fonts[i].fd = -1;
  }
}

static int reply_with_fd(struct capsa_host_renderer *r, const capsa_msg_t *req,
                         int fd, capsa_handle_kind_t kind, uint64_t size,
                         const char *mime) {
  capsa_msg_t resp;
  capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
  resp.u.resource_response.status = 0;
  resp.u.resource_response.mime = mime;
  capsa_rights_t rights;
  capsa_handle_max_rights(kind, false, &rights);
  int err = capsa_msg_add_handle(&resp, fd, kind, &rights, size, false);
  if (err >= 0) err = capsa_channel_reply(&r->ch, req, &resp);
  if (err < 0) close(fd);  // on success the channel owns it
  return err < 0 ? err : 0;
}

// "file:REL/PATH": opened by the host, beneath the kind's directory only.
static int serve_file(struct capsa_host_renderer *r, const capsa_msg_t *req,
                      const char *path) {
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
  // Back to blocking for the renderer's reads (O_NONBLOCK only kept the open
  // itself from hanging on a FIFO).
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return reply_with_fd(r, req, fd, CAPSA_HANDLE_FILE, (uint64_t)st.st_size,
                       "application/octet-stream");
}

// "font:regular|bold|mono": read-only sealed shared memory.
static int serve_font(struct capsa_host_renderer *r, const capsa_msg_t *req,
                      const char *name) {
  if (!r->h->kinds[r->kind].allow_fonts) return -EACCES;
  for (int i = 0; i < CAPSA__FONTS; i++) {
    if (strcmp(name, kFontNames[i]) != 0) continue;
    const capsa_shm_region_t *f = &r->h->fonts[i];
    if (f->fd < 0) return -ENOENT;
    // The channel sends a description of the renderer's own (reopened
    // read-only), so one renderer's offset is never the next one's.
    int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -errno;
    // The region is page-rounded: the mime says how many bytes are font.
    char mime[64];
    snprintf(mime, sizeof mime, "font/sfnt; length=%zu", r->h->font_len[i]);
    return reply_with_fd(r, req, fd, CAPSA_HANDLE_SHM, f->size, mime);
  }
  return -ENOENT;
}

struct capsa__dns_req {
  uv_getaddrinfo_t req;
  struct capsa_host_renderer *r;
  struct capsa__dns_req *next;  // r's list of lookups in flight
  unsigned incarnation;
  bool cancelled;
  capsa_msg_t request;  // header only: the id to answer
};

static void dns_unlink(struct capsa__dns_req *d) {
  struct capsa_host_renderer *r = d->r;
  for (struct capsa__dns_req **pp = &r->dns; *pp; pp = &(*pp)->next) {
    if (*pp == d) {
      *pp = d->next;
      break;
    }
  }
  r->dns_inflight--;
  r->h->dns_inflight--;
}

static void on_resolved(uv_getaddrinfo_t *gr, int status, struct addrinfo *ai) {
  struct capsa__dns_req *d = gr->data;
  struct capsa_host_renderer *r = d->r;
  dns_unlink(d);
  if (!d->cancelled && status != UV_ECANCELED && r->state == R_READY &&
      !r->kill_reason && r->restarts == d->incarnation) {
    char text[1024] = "";
    size_t n = 0;
    for (struct addrinfo *a = ai; status == 0 && a; a = a->ai_next) {
      char addr[INET6_ADDRSTRLEN] = "";
      const void *src =
          a->ai_family == AF_INET
              ? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
              : (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
      if (!inet_ntop(a->ai_family, src, addr, sizeof addr)) continue;
      if (strstr(text, addr)) continue;  // one line per address
      int w = snprintf(text + n, sizeof text - n, "%s\n", addr);
      if (w < 0 || (size_t)w >= sizeof text - n) break;
      n += (size_t)w;
    }
    capsa_msg_t resp;
    capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
    resp.u.resource_response.status =
        status == 0 ? 0 : (status == UV_EAI_NONAME ? -ENOENT : -EIO);
    resp.u.resource_response.mime = "text/plain";
    resp.u.resource_response.data = (capsa_bytes_t){(const uint8_t *)text, n};
    capsa_channel_reply(&r->ch, &d->request, &resp);
  }
  if (ai) uv_freeaddrinfo(ai);
  free(d);
  capsa__renderer_unpend(r);
}

// libuv starts its thread pool on the first job, and aborts the process if
// it cannot create the threads then. Started here, at capsa_host_start and
// before any renderer exists, no renderer (say, one that forks until the
// process table is full) can make the host's first dns: lookup abort it.
static void warm_work(uv_work_t *w) {}
static void warm_done(uv_work_t *w, int status) {}
static pthread_once_t g_warm_once = PTHREAD_ONCE_INIT;
static void warm_once(void) {
  // On a loop of its own, run to completion here: the pool is process-wide,
  // and the embedder's loop is left without a request it did not make.
  uv_loop_t loop;
  uv_work_t w;
  if (uv_loop_init(&loop) != 0) return;
  if (uv_queue_work(&loop, &w, warm_work, warm_done) == 0)
    uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
}

void capsa__broker_start_threadpool(void) {
  pthread_once(&g_warm_once, warm_once);
}

void capsa__broker_cancel(struct capsa_host_renderer *r) {
  // uv_cancel succeeds only for a lookup no thread has taken yet; its
  // callback then runs with UV_ECANCELED. Running ones finish, unanswered.
  for (struct capsa__dns_req *d = r->dns; d; d = d->next) {
    d->cancelled = true;
    uv_cancel((uv_req_t *)&d->req);
  }
}

static int serve_dns(struct capsa_host_renderer *r, const capsa_msg_t *req,
                     const char *name) {
  if (!r->h->kinds[r->kind].allow_dns) return -EACCES;
  if (!*name || strlen(name) > 253) return -EINVAL;
  if (r->dns_inflight >= CAPSA__DNS_PER_RENDERER) {
    char why[96];
    snprintf(why, sizeof why,
             "broker budget: more than %d dns lookups in flight",
             CAPSA__DNS_PER_RENDERER);
    capsa__renderer_kill_for_limit(r, why);
    return 0;  // killed: nothing to answer
  }
  if (r->h->dns_inflight >= CAPSA__DNS_PER_HOST) return -EBUSY;
  struct capsa__dns_req *d = calloc(1, sizeof *d);
  if (!d) return -ENOMEM;
  d->r = r;
  d->incarnation = r->restarts;
  d->request.type = req->type;
  d->request.flags = req->flags;
  d->request.request_id = req->request_id;
  d->request.seq = req->seq;
  d->req.data = d;
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int err =
      uv_getaddrinfo(r->h->loop, &d->req, on_resolved, name, NULL, &hints);
  if (err < 0) {
    free(d);
    return -EIO;
  }
  d->next = r->dns;
  r->dns = d;
  r->dns_inflight++;
  r->h->dns_inflight++;
  r->pending++;
  return 0;
}

int capsa__broker_request(struct capsa_host_renderer *r,
                          const capsa_msg_t *req) {
  const char *url = req->u.resource_request.url;
  if (!url) return -EINVAL;
  if (strncmp(url, "file:", 5) == 0) return serve_file(r, req, url + 5);
  if (strncmp(url, "font:", 5) == 0) return serve_font(r, req, url + 5);
  if (strncmp(url, "dns:", 4) == 0) return serve_dns(r, req, url + 4);
  return -EPROTONOSUPPORT;
}
