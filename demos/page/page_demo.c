// The page demo kind on the CLI's side. See demos/page/page_demo.h.
#include "demos/page/page_demo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demos/page/page.capsa.h"
#include "host/kind_registry.h"
#include "host/png_writer.h"
#include "ipc/frames.h"
#include "ipc/handle.h"

#define FONT_DIR "/usr/share/fonts/truetype/dejavu/"
#define FRAME_MAX_ROWS 8192u

// Found by name in the exec'd zygote image (host/kind_registry.h).
CAPSA_RENDERER_KIND(page, "page", capsa_renderer_main, &capsa_page_renderer)
// Fonts mapped and faces loaded once in the zygote
// (demos/page/page_renderer.h).
CAPSA_RENDERER_WARM_UP(page, "page", capsa_page_renderer_warm_up)

struct render_ctx {
  int md_fd;
  size_t md_size;
  uint32_t width;
  int png_fd;
  capsa_frames_host_t chain;  // the renderer draws, we read in place
  uint32_t frame_w, frame_h;  // the Frame's size
};

static void render_ready(struct capsa_cli_job *job) {
  struct render_ctx *c = job->ctx;
  // Both events are encoded when sent: local values will do.
  capsa_demo_page_load_t load;
  capsa_demo_page_load_init(&load);
  load.mime = "text/markdown";
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_demo_page_interface, CAPSA_DEMO_PAGE_LOAD,
                       &load);
  capsa_rights_t ro;
  capsa_handle_max_rights(CAPSA_HANDLE_FILE, false, &ro);
  int fd = fcntl(c->md_fd, F_DUPFD_CLOEXEC, 0);
  int err = fd < 0 ? -errno : 0;
  if (!err)
    err = load.file =
        capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_FILE, &ro, c->md_size, false);
  if (err >= 0) err = capsa_renderer_send(job->r, &m);
  if (err < 0) {
    if (fd >= 0) close(fd);
    capsa_cli_job_finish(job, err, "cannot send the page");
    return;
  }
  capsa_demo_page_resize_t rz;
  capsa_demo_page_resize_init(&rz);
  rz.width = c->width;
  rz.height = FRAME_MAX_ROWS;
  capsa_msg_init_iface(&m, &capsa_demo_page_interface, CAPSA_DEMO_PAGE_RESIZE,
                       &rz);
  rz.buffers = c->chain.count;
  capsa_rights_t rw, ro_shm;
  capsa_handle_max_rights(CAPSA_HANDLE_SHM, true, &rw);
  capsa_handle_max_rights(CAPSA_HANDLE_SHM, false, &ro_shm);
  int cfd = -1;
  err = capsa_frames_host_fds(&c->chain, &fd, &cfd);
  if (err < 0) fd = -1;
  // Both descriptors stay ours until the send succeeds.
  if (err >= 0)
    err = rz.frame =
        capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_SHM, &rw,
                             c->chain.count * c->chain.buffer_size, true);
  if (err >= 0)
    err = rz.control = capsa_msg_add_handle(&m, cfd, CAPSA_HANDLE_SHM, &ro_shm,
                                            c->chain.control.size, false);
  if (err >= 0) err = capsa_renderer_send(job->r, &m);
  if (err < 0) {
    if (fd >= 0) close(fd);
    if (cfd >= 0) close(cfd);
    capsa_cli_job_finish(job, err, "cannot send the frame chain");
  }
}

static void render_message(struct capsa_cli_job *job, capsa_msg_t *m) {
  struct render_ctx *c = job->ctx;
  if (m->type != CAPSA_MSG_INTERFACE || m->u.iface.id != CAPSA_DEMO_PAGE_FRAME)
    return;
  // page.fbs bounds each field; what needs the chain we gave is checked by
  // capsa_frames_host_present against our own state. A renderer that lies
  // about its frame is a bad message, ended as one.
  const capsa_demo_page_frame_t *f = m->u.iface.value;
  c->frame_w = f->width;
  c->frame_h = f->height;
  capsa_frame_desc_t d = {.seq = f->frame_id,
                          .buffer = f->buffer,
                          .width = f->width,
                          .height = f->height,
                          .stride = f->stride,
                          .format = f->format,
                          .offset = f->offset};
  int err = capsa_frames_host_present(&c->chain, &d);
  if (err < 0) {
    capsa_renderer_report_bad_message(
        job->r, "page: Frame outside the frame chain's rules");
    capsa_cli_job_finish(job, -EBADMSG, "frame does not match the request");
    return;
  }
  if (f->width != c->width || f->format != CAPSA_PAGE_FORMAT_RGBA8888 ||
      f->offset != 0) {
    capsa_cli_job_finish(job, -EBADMSG, "frame does not match the request");
    return;
  }
  // Read in place: f.len bytes inside the buffer whatever the renderer
  // writes meanwhile (at worst its own picture tears).
  capsa_frame_view_t fr;
  err = capsa_frames_host_latest(&c->chain, &fr);
  if (err < 0) {
    capsa_cli_job_finish(job, err, "no frame");
    return;
  }
  struct capsa_png_image img = {fr.pixels,      fr.len,         fr.desc.width,
                                fr.desc.height, fr.desc.stride, CAPSA_PNG_RGB8};
  err = capsa_png_write_fd(&img, c->png_fd);
  capsa_frames_host_release(&c->chain);
  capsa_cli_job_finish(job, err, err < 0 ? "cannot write the PNG" : "ok");
}

int capsa_cli_render(struct capsa_cli_host *h, int md_fd, uint32_t width,
                     int png_fd, uint32_t *frame_w, uint32_t *frame_h,
                     struct capsa_cli_job *job) {
  memset(job, 0, sizeof *job);
  job->kind = "page";
  struct stat st;
  if (fstat(md_fd, &st) < 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  struct render_ctx c = {
      md_fd, (size_t)st.st_size, width, png_fd, {.held = -1}, 0, 0};
  // One frame at most; the chain's other buffers are for a renderer that
  // draws again (untouched pages of a memfd cost nothing).
  int err = capsa_frames_host_init(&c.chain, CAPSA_FRAMES_DEFAULT_BUFFERS,
                                   (size_t)width * 4 * FRAME_MAX_ROWS, "frame");
  if (err < 0) return err;
  job->ctx = &c;
  job->on_ready = render_ready;
  job->on_message = render_message;
  err = capsa_cli_run_job(h, capsa_cli_host_kind(h, "page"), job, 60000);
  capsa_frames_host_close(&c.chain);
  job->ctx = NULL;
  if (frame_w) *frame_w = c.frame_w;
  if (frame_h) *frame_h = c.frame_h;
  return err;
}

// The broker serves the DejaVu fonts to page renderers; with `warm` the
// same files are the kind's warm-up input, all three or none (the warm-up
// takes them in order).
static void host_options(capsa_host_options_t *o, bool warm, int *fds,
                         unsigned *nfds) {
  *nfds = 0;
  if (access(FONT_DIR "DejaVuSans.ttf", R_OK) != 0) return;
  o->font_regular = FONT_DIR "DejaVuSans.ttf";
  o->font_bold = FONT_DIR "DejaVuSans-Bold.ttf";
  o->font_mono = FONT_DIR "DejaVuSansMono.ttf";
  if (!warm) return;
  const char *paths[3] = {o->font_regular, o->font_bold, o->font_mono};
  for (unsigned i = 0; i < 3; i++) {
    fds[i] = open(paths[i], O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) {
      while (i-- > 0) close(fds[i]);
      return;
    }
  }
  *nfds = 3;
}

static void kind_options(capsa_kind_options_t *k, const int *fds,
                         unsigned nfds) {
  k->allow_fonts = true;
  if (nfds > 0) {
    memcpy(k->warm_up_fds, fds, nfds * sizeof *fds);
    k->nwarm_up_fds = nfds;
  }
  k->limit_memory = 1ull << 30;
  k->heartbeat_timeout_ms = 30000;
}

// `capsa demo`: Markdown -> pixels in shared memory -> PNG by the host.
static int demo(struct capsa_cli_host *h, struct capsa_cli_demo *d) {
  char png[PATH_MAX + 16];
  snprintf(png, sizeof png, "%s/page.png", d->out_dir);
  // Initialised here: capsa_cli_render() is not called when a file cannot
  // be opened, and the row is printed either way.
  struct capsa_cli_job job = {.kind = "page"};
  uint32_t w = 0, fh = 0;
  int mdfd = d->sample ? open(d->sample, O_RDONLY | O_CLOEXEC) : -1;
  int pngfd = open(png, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = mdfd < 0 || pngfd < 0
                ? (errno ? -errno : -ENOENT)
                : capsa_cli_render(h, mdfd, 800, pngfd, &w, &fh, &job);
  if (mdfd >= 0) close(mdfd);
  if (pngfd >= 0) close(pngfd);
  char outcome[256];
  if (err == 0)
    snprintf(outcome, sizeof outcome, "ok: %ux%u page.png", w, fh);
  else
    snprintf(outcome, sizeof outcome, "FAILED: %s",
             job.outcome[0] ? job.outcome : strerror(-err));
  capsa_cli_demo_row(&job, outcome);
  capsa_cli_job_free(&job);
  char abs[PATH_MAX];
  size_t used = strlen(d->footer);
  snprintf(d->footer + used, sizeof d->footer - used, "PNG: %s\n",
           realpath(png, abs) ? abs : png);
  return err;
}

static const struct capsa_cli_command kCommands[] = {
    {"render", "render untrusted Markdown to PNG in a sandboxed renderer",
     capsa_cmd_render},
};

const struct capsa_demo_kind capsa__demo_page = {
    .name = "page",
    .entry = capsa_renderer_main,
    .handlers = &capsa_page_renderer,
    .host_options = host_options,
    .kind_options = kind_options,
    .commands = kCommands,
    .ncommands = 1,
    .sample = "page/samples/page.md",
    .demo = demo,
};
