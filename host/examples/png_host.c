// A host that decodes PNG images in sandboxed renderers without a PNG
// parser of its own: its renderers are a renderer executable
// (png_renderer.c, the host option renderer_exe), which alone links libpng
// and zlib. This program links libcapsa and libuv only, needs no
// capsa_main() and registers nothing: it defines the kind "png" by name.
//
//   cc png_host.c gen/host/examples/png.capsa.c -Igen -o png_host
//      $(pkg-config --cflags --libs capsa) -Wl,-rpath,LIBDIR   (one line)
//   png_host RENDERER_EXE FILE.png...     ("-": standard input)
//
// prints "FILE: WxH RGBA, fnv1a64 HASH (renderer PID)" per file, decoded in
// order by one renderer, and exits 0 when every file was decoded.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capsa/capsa.h>  // the SDK: pkg-config --cflags --libs capsa

#include "host/examples/png.capsa.h"  // generated from png.fbs

static const capsa_interface_t *const kPngIface[] = {
    &capsa_example_png_interface};

#define MAX_BYTES (16u << 20)  // png.fbs: capsa_max_size of both regions

static char **g_files;
static int g_nfiles, g_next, g_decoded;
static capsa_shm_region_t g_pixels;  // the renderers write, we read

// A whole file ("-": standard input), read before it is sent: the host
// never parses it. NULL with errno on failure.
static uint8_t *read_all(const char *path, size_t *len) {
  int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  uint8_t *buf = malloc(MAX_BYTES);
  size_t n = 0;
  ssize_t got = 1;
  while (buf && n < MAX_BYTES &&
         ((got = read(fd, buf + n, MAX_BYTES - n)) > 0 ||
          (got < 0 && errno == EINTR)))
    n += got > 0 ? (size_t)got : 0;
  int err = !buf ? ENOMEM : got < 0 ? errno : n == MAX_BYTES ? EFBIG : 0;
  close(fd);
  if (err) {
    free(buf);
    errno = err;
    return NULL;
  }
  *len = n;
  return buf;
}

static void on_decoded(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                       void *arg);

// Sends the next file to `r`, or asks it to exit when none is left.
static void decode_next(capsa_renderer_t *r) {
  if (g_next == g_nfiles) {
    capsa_renderer_shutdown(r, 1000);
    return;
  }
  const char *path = g_files[g_next++];
  size_t len;
  uint8_t *data = read_all(path, &len);
  if (!data) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    decode_next(r);
    return;
  }
  // The file in a region sealed against writes, our own mapping dropped.
  capsa_shm_region_t in;
  int err =
      capsa_shm_create(len ? len : 1, "png", CAPSA_SHM_CREATOR_WRITES, &in);
  if (err == 0) err = capsa_shm_write(&in, 0, data, len);
  if (err == 0) err = capsa_shm_unmap(&in);
  free(data);
  if (err < 0) {
    fprintf(stderr, "%s: %s\n", path, strerror(-err));
    capsa_renderer_kill(r);
    return;
  }
  capsa_example_png_decode_t q;
  capsa_example_png_decode_init(&q);
  q.png_size = len;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_example_png_interface,
                       CAPSA_EXAMPLE_PNG_DECODE, &q);
  capsa_rights_t ro, rw;
  capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R, CAPSA_CAP_FSTAT);
  capsa_rights_init(&rw, CAPSA_CAP_READ, CAPSA_CAP_WRITE, CAPSA_CAP_MMAP_RW,
                    CAPSA_CAP_FSTAT);
  q.png = capsa_msg_add_handle(&m, capsa_shm_release_fd(&in), CAPSA_HANDLE_SHM,
                               &ro, in.size, false);
  q.pixels = capsa_msg_add_handle(&m, dup(g_pixels.fd), CAPSA_HANDLE_SHM, &rw,
                                  g_pixels.size, true);
  if (capsa_renderer_request(r, &m, 10000, on_decoded, (void *)path) < 0) {
    capsa_msg_close_handles(&m);  // a failed send leaves them ours
    capsa_renderer_kill(r);
  }
}

// 64-bit FNV-1a of what the renderer wrote: shows the pixels arrived.
static uint64_t fnv1a64(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void on_decoded(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                       void *arg) {
  const char *path = arg;
  if (status < 0 || reply->type != CAPSA_MSG_INTERFACE) {
    fprintf(stderr, "%s: %s\n", path,
            status < 0 ? strerror(-status) : "renderer error");
    return;  // the renderer's end is an event of its own
  }
  const capsa_example_png_decoded_t *res = reply->u.iface.value;
  size_t size = (size_t)res->width * res->height * 4;
  const void *px;
  if (res->status < 0) {
    fprintf(stderr, "%s: not decoded: %s\n", path, strerror(-res->status));
  } else if (capsa_shm_view(&g_pixels, 0, size, &px) < 0) {
    // The schema bounds each number; that they fit the region we gave is
    // ours to check. A renderer that lies about it is a bad message.
    capsa_renderer_report_bad_message(r, "geometry beyond the pixel region");
    return;
  } else {
    printf("%s: %ux%u RGBA, fnv1a64 %016llx (renderer %d)\n", path, res->width,
           res->height, (unsigned long long)fnv1a64(px, size),
           (int)capsa_renderer_pid(r));
    fflush(stdout);
    g_decoded++;
  }
  decode_next(r);
}

static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  switch (ev->type) {
    case CAPSA_EV_READY:  // its sandbox verified from outside
      decode_next(ev->renderer);
      break;
    case CAPSA_EV_LOG:
      fprintf(stderr, "renderer: %s\n", ev->text);
      break;
    case CAPSA_EV_CLOSED:
      capsa_host_close(host, NULL);
      break;
    case CAPSA_EV_SHUTDOWN:
      break;
    default:  // any other end: crashed, killed, bad message...
      fprintf(stderr, "renderer %s%s%s\n", capsa_host_event_name(ev->type),
              ev->text ? ": " : "", ev->text ? ev->text : "");
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s RENDERER_EXE FILE.png...\n", argv[0]);
    return 2;
  }
  g_files = argv + 2;
  g_nfiles = argc - 2;
  uv_loop_t *loop = uv_default_loop();
  capsa_host_t host;
  capsa_host_options_t opts;
  capsa_host_options_init(&opts);
  opts.renderer_exe = argv[1];  // the zygote is a fresh exec of it
  if (capsa_host_init(loop, &host, &opts, on_event) < 0) return 1;
  capsa_kind_options_t kind;
  capsa_kind_options_init(&kind, "png", NULL, NULL);  // its registration
  kind.interfaces = kPngIface;
  kind.ninterfaces = 1;
  int png = capsa_host_define_kind(&host, &kind);
  if (png < 0 || capsa_host_start(&host) < 0) {
    fprintf(stderr, "png_host: %s\n", capsa_host_start_error(&host));
    return 1;
  }
  capsa_renderer_t *r;
  if (capsa_shm_create(MAX_BYTES, "pixels", CAPSA_SHM_PEER_WRITES, &g_pixels) <
          0 ||
      capsa_host_spawn(&host, png, NULL, &r) < 0)
    return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  capsa_shm_close(&g_pixels);
  return g_decoded == g_nfiles ? 0 : 1;
}
