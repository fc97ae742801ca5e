// A renderer executable of its own (capsa_host_options_t.renderer_exe):
// its "png" kind decodes PNG images with libpng. Only this program links
// libpng (and zlib); the host that runs it, png_host.c, links libcapsa and
// libuv alone, so the parser is never mapped in the trusted process.
//
//   capsa-idl png.fbs gen host/examples/png.capsa.h
//   cc png_renderer.c gen/host/examples/png.capsa.c -Igen -o png_renderer
//      $(pkg-config --cflags --libs capsa libpng) -Wl,-rpath,LIBDIR  (one line)
//
// A host execs it as its zygote; run by hand it says so and exits 2.
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <capsa/capsa.h>  // the SDK: pkg-config --cflags --libs capsa

#include "host/examples/png.capsa.h"  // generated from png.fbs

static const capsa_interface_t *const kPngIface[] = {
    &capsa_example_png_interface};

// libpng's simplified API from memory into the host's region: in capability
// mode nothing is opened, and the regions are all the input and output.
static int decode_into(capsa_rctx_t *r, const uint8_t *png, size_t len,
                       capsa_shm_region_t *out,
                       capsa_example_png_decoded_t *res) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, png, len)) {
    capsa_rctx_log(r, CAPSA_LOG_WARN, "png: %s", img.message);
    return -EINVAL;
  }
  img.format = PNG_FORMAT_RGBA;
  void *dst;
  // The pixels must fit the region the host gave (checked before libpng
  // writes a byte; the host checks the answer against it again).
  if (img.width > 16384 || img.height > 16384 ||
      capsa_shm_view_mut(out, 0, PNG_IMAGE_SIZE(img), &dst) < 0) {
    png_image_free(&img);
    return -E2BIG;
  }
  if (!png_image_finish_read(&img, NULL, dst, 0, NULL)) {
    capsa_rctx_log(r, CAPSA_LOG_WARN, "png: %s", img.message);
    return -EINVAL;
  }
  res->width = img.width;
  res->height = img.height;
  return 0;
}

static int on_decode(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.id != CAPSA_EXAMPLE_PNG_DECODE)
    return -EPROTO;
  // Verified against png.fbs before we see it: both regions present, of the
  // kinds and rights it allows, png_size within range.
  const capsa_example_png_decode_t *q = m->u.iface.value;
  capsa_example_png_decoded_t res;
  capsa_example_png_decoded_init(&res);
  size_t in_size = m->handles[q->png].size;
  size_t out_size = m->handles[q->pixels].size;
  int in_fd = capsa_msg_take_handle(m, (uint32_t)q->png);
  int out_fd = capsa_msg_take_handle(m, (uint32_t)q->pixels);
  capsa_shm_region_t in, out;
  const void *png;
  if (capsa_shm_map_fd(in_fd, in_size, CAPSA_SHM_PEER_READS, &in) < 0) {
    close(in_fd);
    close(out_fd);
    res.status = -EBADF;
  } else if (capsa_shm_map_fd(out_fd, out_size, CAPSA_SHM_PEER_READWRITE,
                              &out) < 0) {
    close(out_fd);
    capsa_shm_close(&in);
    res.status = -EBADF;
  } else {
    res.status = capsa_shm_view(&in, 0, q->png_size, &png) < 0
                     ? -ERANGE  // png_size beyond the region
                     : decode_into(r, png, q->png_size, &out, &res);
    capsa_shm_close(&in);
    capsa_shm_close(&out);
  }
  capsa_msg_t reply;
  capsa_msg_init_iface(&reply, &capsa_example_png_interface,
                       CAPSA_EXAMPLE_PNG_DECODED, &res);
  return capsa_rctx_reply(r, m, &reply);
}

static const capsa_renderer_handlers_t kPng = {.kind = "png",
                                               .on_message = on_decode,
                                               .interfaces = kPngIface,
                                               .ninterfaces = 1};
// Found by name in the zygote, a fresh exec of this program.
CAPSA_RENDERER_KIND(png, "png", capsa_renderer_main, &kPng)

int main(int argc, char **argv) {
  if (capsa_main(argc, argv) < 0) return 1;  // the zygote never returns
  fprintf(stderr,
          "%s: a capsa renderer executable (kind \"png\"): a host runs it "
          "(capsa_host_options_t.renderer_exe), not a user\n",
          argc > 0 ? argv[0] : "png_renderer");
  return 2;
}
