// The page renderer: untrusted Markdown to pixels with fonts handed in by
// the broker as read-only shared memory. See demos/page/page_renderer.h.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demos/page/page.capsa.h"
#include "demos/page/page.h"
#include "demos/page/page_renderer.h"
#include "ipc/frames.h"
#include "ipc/shm.h"

static const capsa_interface_t *const kPage[] = {&capsa_demo_page_interface};

struct page_state {
  capsa_shm_region_t fonts[3];
  size_t font_len[3];
  capsa_page *page;
  char *md;
  size_t md_len;
  bool have_content;
  // A Resize that arrived before the fonts: drawn once they are here.
  bool pending;
  uint32_t width, height;
  // The host's frame chain (docs/frames.md): we draw only into the buffer
  // we acquired, and the host reads only the one it took.
  capsa_frames_renderer_t chain;
};

static struct page_state g;

// "font/sfnt; length=N": the region is page-rounded, the font is N bytes.
static size_t font_length(const char *mime, size_t region) {
  const char *p = mime ? strstr(mime, "length=") : NULL;
  if (!p) return region;
  unsigned long long n = strtoull(p + 7, NULL, 10);
  return n > 0 && n <= region ? (size_t)n : region;
}

static int fetch_font(capsa_rctx_t *r, const char *url, int i) {
  capsa_msg_t req, rep;
  capsa_msg_init(&req, CAPSA_MSG_RESOURCE_REQUEST);
  req.u.resource_request.url = url;
  int err = capsa_rctx_call(r, &req, 5000, &rep);
  if (err < 0) return err;
  if (rep.u.resource_response.status < 0) return rep.u.resource_response.status;
  if (rep.handle_count != 1 || rep.handles[0].kind != CAPSA_HANDLE_SHM)
    return -EPROTO;
  int fd = capsa_msg_take_handle(&rep, 0);
  size_t size = (size_t)rep.handles[0].size;
  err = capsa_shm_map_fd(fd, size, CAPSA_SHM_PEER_READS, &g.fonts[i]);
  if (err < 0) {
    close(fd);
    return err;
  }
  g.font_len[i] = font_length(rep.u.resource_response.mime, size);
  return 0;
}

static int draw(capsa_rctx_t *r) {
  uint32_t width = g.width;
  uint32_t h = 0;
  int err = capsa_page_measure(g.page, g.md, g.md_len, width, &h);
  if (err < 0) return err;
  void *px;
  size_t len;
  err = capsa_frames_renderer_acquire(&g.chain, &px, &len);
  // -EAGAIN: the host still has every other buffer; the next Resize draws.
  if (err == -EAGAIN) return 0;
  if (err < 0) return err;
  uint32_t rows = (uint32_t)(len / ((size_t)width * 4));
  if (rows > g.height) rows = g.height;
  if (h > rows) h = rows;
  if (h == 0) h = 1;  // an empty page is one blank row
  if (h > rows) {     // a buffer narrower than one row: the host's mistake
    capsa_frames_renderer_cancel(&g.chain);
    return -ERANGE;
  }
  struct capsa_frame f = {px, (size_t)width * 4 * h, width,
                          h,  (size_t)width * 4,     CAPSA_FRAME_RGBA8};
  struct capsa_page_result res;
  err = capsa_page_render(g.page, g.md, g.md_len, &f, &res);
  capsa_frame_desc_t d = {.width = width,
                          .height = h,
                          .stride = width * 4,
                          .format = CAPSA_FRAMES_RGBA8};
  if (err == 0) err = capsa_frames_renderer_present(&g.chain, &d);
  if (err < 0) {
    capsa_frames_renderer_cancel(&g.chain);
    return err;
  }
  capsa_demo_page_frame_t fr;
  capsa_demo_page_frame_init(&fr);
  fr.frame_id = d.seq;
  fr.width = d.width;
  fr.height = d.height;
  fr.stride = d.stride;
  fr.format = CAPSA_PAGE_FORMAT_RGBA8888;
  fr.offset = d.offset;
  fr.buffer = d.buffer;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_demo_page_interface, CAPSA_DEMO_PAGE_FRAME,
                       &fr);
  g.pending = false;
  return capsa_rctx_send(r, &m);
}

// Every printable ASCII character in each style the layout uses (body,
// headings, bold, emphasis, code): measuring it fills the advance caches.
static const char kWarmText[] =
    "# !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`{|}~"
    "abcdefghijklmnopqrstuvwxyz\n\n## !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEF"
    "GHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\n\n### ABCXYZabcxyz019\n\n"
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_{|}~"
    "abcdefghijklmnopqrstuvwxyz **!\"#$%&'()+,-./0123456789:;<=>?@ABCDEFGHIJ"
    "KLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz** *!\"#$%&'()+,-./0123456789:"
    ";<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz*\n\n"
    "    !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`{|}~"
    "abcdefghijklmnopqrstuvwxyz\n";

int capsa_page_renderer_warm_up(const int *fds, unsigned nfds) {
  if (nfds == 0) return 0;  // nothing given: renderers fetch their fonts
  if (nfds > 3) return -EINVAL;
  struct capsa_page_fonts fonts;
  memset(&fonts, 0, sizeof fonts);
  struct {
    const void **data;
    size_t *len;
  } slot[3] = {{&fonts.regular.data, &fonts.regular.len},
               {&fonts.bold.data, &fonts.bold.len},
               {&fonts.mono.data, &fonts.mono.len}};
  for (unsigned i = 0; i < nfds; i++) {
    struct stat st;
    if (fstat(fds[i], &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > (64 << 20))
      return -EINVAL;
    // Private and read-only: each renderer inherits the mapping, never the
    // descriptor; a write to it (after mprotect) would be its own copy.
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fds[i], 0);
    if (p == MAP_FAILED) return -errno;
    *slot[i].data = p;
    *slot[i].len = (size_t)st.st_size;
  }
  int err = capsa_page_new(&fonts, NULL, &g.page);
  if (err < 0) return err;
  uint32_t h = 0;
  return capsa_page_measure(g.page, kWarmText, sizeof kWarmText - 1, 800, &h);
}

static int on_start(capsa_rctx_t *r) {
  // Warmed in the zygote (capsa_page_renderer_warm_up): fonts and faces are
  // here already, nothing to ask the broker for.
  if (g.page) return g.pending && g.have_content ? draw(r) : 0;
  static const char *const urls[3] = {"font:regular", "font:bold", "font:mono"};
  for (int i = 0; i < 3; i++) {
    int err = fetch_font(r, urls[i], i);
    if (err < 0 && i == 0) {
      capsa_rctx_log(r, CAPSA_LOG_ERROR, "no regular font: %s", strerror(-err));
      return err;
    }
  }
  struct capsa_page_fonts fonts = {
      {g.fonts[0].base, g.font_len[0]},
      {g.fonts[1].base, g.fonts[1].base ? g.font_len[1] : 0},
      {g.fonts[2].base, g.fonts[2].base ? g.font_len[2] : 0}};
  int err = capsa_page_new(&fonts, NULL, &g.page);
  if (err < 0) return err;
  if (g.pending && g.have_content) return draw(r);
  return 0;
}

// page.fbs bounds both forms (inline text, a read-only file of at most
// 4 MiB); a Load carrying both is refused.
static int load(capsa_msg_t *m, const capsa_demo_page_load_t *l) {
  if (l->file >= 0 && l->text.len != 0) return -EPROTO;
  free(g.md);
  g.md = NULL;
  g.md_len = 0;
  size_t len = l->text.len;
  if (l->file >= 0) len = (size_t)m->handles[l->file].size;
  g.md = malloc(len ? len : 1);
  if (!g.md) return -ENOMEM;
  if (l->file >= 0) {
    int fd = capsa_msg_take_handle(m, (uint32_t)l->file);
    size_t got = 0;
    while (got < len) {
      ssize_t n = pread(fd, g.md + got, len - got, (off_t)got);
      if (n <= 0) break;
      got += (size_t)n;
    }
    close(fd);
    len = got;
  } else if (len) {
    memcpy(g.md, l->text.data, len);
  }
  g.md_len = len;
  g.have_content = true;
  return 0;
}

// Resize: a new chain (both regions required by the schema; the buffers
// writable, at most 1 GiB; the control area sealed read-only, which
// capsa_frames_renderer_map checks). draw() never writes past a buffer,
// whatever width and height say.
static int resize(capsa_rctx_t *r, capsa_msg_t *m,
                  const capsa_demo_page_resize_t *z) {
  capsa_frames_renderer_close(&g.chain);
  size_t size = (size_t)m->handles[z->frame].size;
  size_t csize = (size_t)m->handles[z->control].size;
  if (z->buffers == 0 || size % z->buffers != 0) return -EPROTO;
  int fd = capsa_msg_take_handle(m, (uint32_t)z->frame);
  int cfd = capsa_msg_take_handle(m, (uint32_t)z->control);
  int err = capsa_frames_renderer_map(&g.chain, fd, cfd, z->buffers,
                                      size / z->buffers, csize);
  if (err < 0) {
    close(fd);
    close(cfd);
    return err;
  }
  g.width = z->width;
  g.height = z->height;
  g.pending = true;
  if (g.page && g.have_content) return draw(r);
  return 0;
}

static int on_message(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE) return -EPROTO;
  switch (m->u.iface.id) {
    case CAPSA_DEMO_PAGE_LOAD:
      return load(m, m->u.iface.value);
    case CAPSA_DEMO_PAGE_RESIZE:
      return resize(r, m, m->u.iface.value);
    case CAPSA_DEMO_PAGE_INPUT:
      return 0;  // a static page: input changes nothing
    default:
      return -EPROTO;
  }
}

const capsa_renderer_handlers_t capsa_page_renderer = {.kind = "page",
                                                       .on_start = on_start,
                                                       .on_message = on_message,
                                                       .interfaces = kPage,
                                                       .ninterfaces = 1};
