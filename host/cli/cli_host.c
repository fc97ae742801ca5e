// See host/cli/cli_host.h.
#include "host/cli/cli_host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/kind_registry.h"
#include "host/png_writer.h"
#include "ipc/frames.h"
#include "ipc/handle.h"
#include "ipc/shm.h"
#include "renderer/gzip/gzip.capsa.h"
#include "renderer/gzip/gzip.h"
#include "renderer/hostile/hostile.capsa.h"
#include "renderer/kinds.h"
#include "renderer/page/page.capsa.h"
#include "sandbox/memfd.h"

#define FONT_DIR "/usr/share/fonts/truetype/dejavu/"
#define FRAME_MAX_ROWS 8192u

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void finish(struct capsa_cli_job *job, int status, const char *what) {
  if (job->done) return;
  job->done = true;
  job->status = status;
  if (what) snprintf(job->outcome, sizeof job->outcome, "%s", what);
}

static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  struct capsa_cli_host *h = host->data;
  struct capsa_cli_job *job = h->job;
  if (!job || ev->renderer != job->r) return;
  job->last_event = ev->type;
  char what[160];
  switch (ev->type) {
    case CAPSA_EV_READY:
      job->ready = true;
      job->check = *ev->check;
      job->sandbox = *ev->sandbox;
      snprintf(job->sandbox_detail, sizeof job->sandbox_detail, "%s",
               ev->sandbox->detail ? ev->sandbox->detail : "");
      job->sandbox.detail = job->sandbox_detail;
      if (job->on_ready) job->on_ready(job);
      break;
    case CAPSA_EV_MESSAGE:
      if (job->on_message) job->on_message(job, ev->msg);
      break;
    case CAPSA_EV_LOG: {
      if (ev->status == CAPSA_HOST_LOG_STDERR) {
        // Already escaped and bounded by the host; attributed here.
        fprintf(stderr, "capsa: renderer %s pid %d stderr: %s\n",
                job->kind ? job->kind : "?",
                (int)capsa_renderer_pid(ev->renderer), ev->text);
        break;
      }
      char *line = strdup(ev->text ? ev->text : "");
      if (!line) break;
      if (job->nlogs == CAPSA_CLI_MAX_LOGS) {  // keep the tail
        free(job->logs[0]);
        memmove(job->logs, job->logs + 1, (job->nlogs - 1) * sizeof *job->logs);
        job->nlogs--;
        job->logs_dropped++;
      }
      char **l = realloc(job->logs, (job->nlogs + 1) * sizeof *l);
      if (!l) {
        free(line);
        break;
      }
      job->logs = l;
      job->logs[job->nlogs++] = line;
      break;
    }
    case CAPSA_EV_CLOSED:
      job->closed = true;
      break;
    case CAPSA_EV_SANDBOX_REFUSED:
      job->check = *ev->check;
      snprintf(what, sizeof what, "sandbox refused: %s", ev->text);
      finish(job, -EPERM, what);
      break;
    default:
      snprintf(what, sizeof what, "%s%s%s", capsa_host_event_name(ev->type),
               ev->text ? ": " : "", ev->text ? ev->text : "");
      if (ev->crash_report)
        snprintf(what, sizeof what, "%s: %s", capsa_host_event_name(ev->type),
                 ev->crash_report->summary);
      if (ev->type == CAPSA_EV_EXITED)
        snprintf(what, sizeof what, "exited with status %d", ev->status);
      finish(job, -ECHILD, what);
      break;
  }
}

// The CLI's kinds, found by name in the exec'd zygote image
// (host/kind_registry.h).
CAPSA_RENDERER_KIND(page, "page", capsa_renderer_main, &capsa_page_renderer)
// Fonts mapped and faces loaded once in the zygote (renderer/kinds.h).
CAPSA_RENDERER_WARM_UP(page, "page", capsa_page_renderer_warm_up)
CAPSA_RENDERER_KIND(gzip, "gzip", capsa_renderer_main_limited,
                    &capsa_gzip_renderer)
CAPSA_RENDERER_KIND(hostile, "hostile", capsa_renderer_main,
                    &capsa_hostile_renderer)

// A kind speaks what its renderer's handlers say it speaks (the host
// refuses a renderer whose HELLO names other interfaces).
static void speak_as(capsa_kind_options_t *k,
                     const capsa_renderer_handlers_t *hd) {
  k->interfaces = hd->interfaces;
  k->ninterfaces = hd->ninterfaces;
}

static void close_fonts(struct capsa_cli_host *h) {
  for (int i = 0; i < 3; i++) {
    if (h->font_fds[i] >= 0) close(h->font_fds[i]);
    h->font_fds[i] = -1;
  }
}

static int open_host(struct capsa_cli_host *h, bool warm, bool gzip_only) {
  memset(h, 0, sizeof *h);
  for (int i = 0; i < 3; i++) h->font_fds[i] = -1;
  h->kind_page = h->kind_hostile = -1;
  int err = uv_loop_init(&h->loop);
  if (err < 0) return err;
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  // A gzip host has no page renderer to draw text for: no fonts to load.
  if (!gzip_only && access(FONT_DIR "DejaVuSans.ttf", R_OK) == 0) {
    o.font_regular = FONT_DIR "DejaVuSans.ttf";
    o.font_bold = FONT_DIR "DejaVuSans-Bold.ttf";
    o.font_mono = FONT_DIR "DejaVuSansMono.ttf";
    // The same files for the page kind's warm-up; all three or none (the
    // warm-up takes them in order).
    const char *paths[3] = {o.font_regular, o.font_bold, o.font_mono};
    for (int i = 0; warm && i < 3; i++)
      h->font_fds[i] = open(paths[i], O_RDONLY | O_CLOEXEC);
    if (h->font_fds[0] < 0 || h->font_fds[1] < 0 || h->font_fds[2] < 0)
      close_fonts(h);
  }
  err = capsa_host_init(&h->loop, &h->host, &o, on_event);
  if (err < 0) {
    close_fonts(h);
    uv_loop_close(&h->loop);
    return err;
  }
  h->host.data = h;
  capsa_kind_options_t k;
  if (!gzip_only) {
    capsa_kind_options_init(&k, "page", capsa_renderer_main,
                            (void *)&capsa_page_renderer);
    speak_as(&k, &capsa_page_renderer);
    k.allow_fonts = true;
    if (h->font_fds[0] >= 0) {
      memcpy(k.warm_up_fds, h->font_fds, sizeof h->font_fds);
      k.nwarm_up_fds = 3;
    }
    k.limit_memory = 1ull << 30;
    k.heartbeat_timeout_ms = 30000;
    h->kind_page = capsa_host_define_kind(&h->host, &k);
  }
  capsa_kind_options_init(&k, "gzip", capsa_renderer_main_limited,
                          (void *)&capsa_gzip_renderer);
  speak_as(&k, &capsa_gzip_renderer);
  k.heartbeat_ms = 0;  // one long job: no pings to answer meanwhile
  h->kind_gzip = capsa_host_define_kind(&h->host, &k);
  if (!gzip_only) {
    capsa_kind_options_init(&k, "hostile", capsa_renderer_main,
                            (void *)&capsa_hostile_renderer);
    speak_as(&k, &capsa_hostile_renderer);
    k.heartbeat_ms = 0;  // attacks take a while; the host kills it anyway
    h->kind_hostile = capsa_host_define_kind(&h->host, &k);
  }
  err = capsa_host_start(&h->host);
  if (err < 0) {
    snprintf(h->start_error, sizeof h->start_error, "%s",
             capsa_host_start_error(&h->host));
    capsa_cli_host_close(h);
    return err;
  }
  return 0;
}

int capsa_cli_host_open(struct capsa_cli_host *h) {
  return open_host(h, true, false);
}

int capsa_cli_host_open_cold(struct capsa_cli_host *h) {
  return open_host(h, false, false);
}

int capsa_cli_host_open_gzip(struct capsa_cli_host *h) {
  return open_host(h, false, true);
}

static void on_host_closed(capsa_host_t *host) {
  ((struct capsa_cli_host *)host->data)->closed = true;
}

void capsa_cli_host_close(struct capsa_cli_host *h) {
  capsa_host_close(&h->host, on_host_closed);
  while (!h->closed && uv_run(&h->loop, UV_RUN_ONCE)) {
  }
  uv_run(&h->loop, UV_RUN_DEFAULT);
  uv_loop_close(&h->loop);
  close_fonts(h);  // borrowed by the host until now
}

static void on_timeout(uv_timer_t *t) {
  struct capsa_cli_job *job = t->data;
  finish(job, -ETIMEDOUT, "timed out");
  if (job->r && !job->closed) capsa_renderer_kill(job->r);
}

static void shutdown_renderer(struct capsa_cli_job *job) {
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_SHUTDOWN);
  if (capsa_renderer_send(job->r, &m) < 0) capsa_renderer_kill(job->r);
}

int capsa_cli_run_job(struct capsa_cli_host *h, int kind,
                      struct capsa_cli_job *job, int timeout_ms) {
  h->job = job;
  double t0 = now_ms();
  int err = capsa_host_spawn(&h->host, kind, job, &job->r);
  if (err < 0) {
    finish(job, err, "spawn failed");
    h->job = NULL;
    return err;
  }
  uv_timer_t timer;
  uv_timer_init(&h->loop, &timer);
  timer.data = job;
  uv_timer_start(&timer, on_timeout, (uint64_t)timeout_ms, 0);
  bool asked = false;
  while (!job->closed) {
    if (job->done && !asked) {
      job->ms = now_ms() - t0;
      asked = true;
      if (job->last_event == CAPSA_EV_READY ||
          job->last_event == CAPSA_EV_MESSAGE ||
          job->last_event == CAPSA_EV_LOG)
        shutdown_renderer(job);
    }
    uv_run(&h->loop, UV_RUN_ONCE);
  }
  if (!asked) job->ms = now_ms() - t0;
  uv_close((uv_handle_t *)&timer, NULL);
  uv_run(&h->loop, UV_RUN_NOWAIT);
  h->job = NULL;
  return job->status;
}

void capsa_cli_job_free(struct capsa_cli_job *job) {
  for (size_t i = 0; i < job->nlogs; i++) free(job->logs[i]);
  free(job->logs);
  job->logs = NULL;
  job->nlogs = 0;
  job->logs_dropped = 0;
}

// --- gzip -----------------------------------------------------------------

struct gzip_ctx {
  uint32_t op;
  int level;
  int in_fd, out_fd;
  size_t in_len, out_cap;
};

// A memfd holding exactly `len` bytes of `data`, then sealed read-only for
// everyone (the renderer's read() sees EOF right after the data).
static int input_region(const uint8_t *data, size_t len) {
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
  // Never executable: the receiver checks for it.
  int fd = memfd_create("gzip-in",
                        MFD_CLOEXEC | MFD_ALLOW_SEALING |
                            (capsa_memfd_exec_sealed() ? MFD_NOEXEC_SEAL : 0));
  if (fd < 0) return -errno;
  if (!capsa_memfd_exec_sealed()) fchmod(fd, 0600);
  // A region is never empty (the IPC layer refuses size 0): empty input is
  // a 1-byte region carrying in_size 0.
  if (len == 0 && ftruncate(fd, 1) < 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t n = pwrite(fd, data + off, len - off, (off_t)off);
    if (n <= 0) {
      int e = n < 0 ? -errno : -EIO;
      close(fd);
      return e;
    }
    off += (size_t)n;
  }
  int seals = CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK | CAPSA_SEAL_FUTURE_WRITE |
              (capsa_memfd_exec_sealed() ? CAPSA_SEAL_EXEC : 0) |
              CAPSA_SEAL_SEAL;
  if (fcntl(fd, F_ADD_SEALS, seals) < 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  return fd;
}

static void gzip_reply(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                       void *arg) {
  struct capsa_cli_job *job = arg;
  if (status < 0 || !reply) {
    finish(job, status < 0 ? status : -EPROTO, "no answer");
    return;
  }
  // The channel paired it with our Job and verified it against gzip.fbs;
  // an ERROR answer is the other possibility.
  if (reply->type != CAPSA_MSG_INTERFACE ||
      reply->u.iface.id != CAPSA_DEMO_GZIP_RESULT) {
    finish(job, -EPROTO, "unexpected answer");
    return;
  }
  struct gzip_ctx *g = job->ctx;
  const capsa_demo_gzip_result_t *res = reply->u.iface.value;
  if (res->status < 0) {
    char what[160];
    snprintf(what, sizeof what, "%s", capsa_gzip_strerror(res->status));
    finish(job, res->status, what);
    return;
  }
  // Never trust the renderer's size beyond the region it could write.
  if (res->out_size > g->out_cap) {
    capsa_renderer_report_bad_message(
        r, "gzip: Result.out_size beyond the output region");
    finish(job, -EBADMSG, "renderer claims more output than its region");
    return;
  }
  job->out_size = res->out_size;
  finish(job, 0, "ok");
}

static void gzip_ready(struct capsa_cli_job *job) {
  struct gzip_ctx *g = job->ctx;
  // Encoded when sent (capsa_renderer_request), so a local value will do.
  capsa_demo_gzip_job_t q;
  capsa_demo_gzip_job_init(&q);
  q.job_id = 1;
  q.op = g->op;
  q.level = g->level;
  q.in_size = g->in_len;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_demo_gzip_interface, CAPSA_DEMO_GZIP_JOB, &q);
  capsa_rights_t ro, wo;
  capsa_handle_max_rights(CAPSA_HANDLE_SHM, false, &ro);
  // Output: write-only (no read, no mmap), as in the Capsicum paper.
  capsa_rights_init(&wo, CAPSA_CAP_WRITE, CAPSA_CAP_SEEK, CAPSA_CAP_FSTAT);
  int in = fcntl(g->in_fd, F_DUPFD_CLOEXEC, 0);
  int out = fcntl(g->out_fd, F_DUPFD_CLOEXEC, 0);
  int err = (in < 0 || out < 0) ? -EMFILE : 0;
  if (!err)
    err = q.input = capsa_msg_add_handle(&m, in, CAPSA_HANDLE_SHM, &ro,
                                         g->in_len ? g->in_len : 1, false);
  if (err >= 0)
    err = q.output =
        capsa_msg_add_handle(&m, out, CAPSA_HANDLE_SHM, &wo, g->out_cap, true);
  if (err >= 0)
    err = capsa_renderer_request(job->r, &m, 120000, gzip_reply, job);
  if (err < 0) {
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    finish(job, err, "cannot send the job");
  }
}

int capsa_cli_gzip(struct capsa_cli_host *h, uint32_t op, int level,
                   const uint8_t *in, size_t in_len, uint8_t **out,
                   size_t *out_len, struct capsa_cli_job *job) {
  memset(job, 0, sizeof *job);
  job->kind = "gzip";
  *out = NULL;
  *out_len = 0;
  struct gzip_ctx g = {op, level, -1, -1, in_len, 0};
  if (op == CAPSA_GZIP_OP_COMPRESS)
    g.out_cap = in_len + in_len / 8 + 65536;
  else
    g.out_cap = in_len * 64 > (64u << 20) ? in_len * 64 : (64u << 20);
  if (g.out_cap > CAPSA_SHM_MAX_SIZE) g.out_cap = CAPSA_SHM_MAX_SIZE;
  g.in_fd = input_region(in, in_len);
  if (g.in_fd < 0) return g.in_fd;
  g.out_fd = capsa_memfd_create("gzip-out", g.out_cap);
  int err = g.out_fd < 0 ? g.out_fd : capsa_memfd_seal_shared(g.out_fd);
  if (err < 0) {
    close(g.in_fd);
    if (g.out_fd >= 0) close(g.out_fd);
    return err;
  }
  job->ctx = &g;
  job->on_ready = gzip_ready;
  err = capsa_cli_run_job(h, h->kind_gzip, job, 180000);
  if (err == 0) {
    *out = malloc(job->out_size ? job->out_size : 1);
    size_t got = 0;
    while (*out && got < job->out_size) {
      ssize_t n = pread(g.out_fd, *out + got, job->out_size - got, (off_t)got);
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (!*out || got != job->out_size) {
      free(*out);
      *out = NULL;
      err = -EIO;
    } else {
      *out_len = got;
    }
  }
  close(g.in_fd);
  close(g.out_fd);
  job->ctx = NULL;
  return err;
}

// --- render ---------------------------------------------------------------

struct render_ctx {
  int md_fd;
  size_t md_size;
  uint32_t width;
  int png_fd;
  capsa_frames_host_t chain;  // the renderer draws, we read in place
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
    finish(job, err, "cannot send the page");
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
    finish(job, err, "cannot send the frame chain");
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
  job->frame_w = (int)f->width;
  job->frame_h = (int)f->height;
  job->frame_stride = (int)f->stride;
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
    finish(job, -EBADMSG, "frame does not match the request");
    return;
  }
  if (f->width != c->width || f->format != CAPSA_PAGE_FORMAT_RGBA8888 ||
      f->offset != 0) {
    finish(job, -EBADMSG, "frame does not match the request");
    return;
  }
  // Read in place: f.len bytes inside the buffer whatever the renderer
  // writes meanwhile (at worst its own picture tears).
  capsa_frame_view_t fr;
  err = capsa_frames_host_latest(&c->chain, &fr);
  if (err < 0) {
    finish(job, err, "no frame");
    return;
  }
  struct capsa_png_image img = {fr.pixels,      fr.len,         fr.desc.width,
                                fr.desc.height, fr.desc.stride, CAPSA_PNG_RGB8};
  err = capsa_png_write_fd(&img, c->png_fd);
  capsa_frames_host_release(&c->chain);
  finish(job, err, err < 0 ? "cannot write the PNG" : "ok");
}

int capsa_cli_render(struct capsa_cli_host *h, int md_fd, uint32_t width,
                     int png_fd, struct capsa_cli_job *job) {
  memset(job, 0, sizeof *job);
  job->kind = "page";
  struct stat st;
  if (fstat(md_fd, &st) < 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  struct render_ctx c = {
      md_fd, (size_t)st.st_size, width, png_fd, {.held = -1}};
  // One frame at most; the chain's other buffers are for a renderer that
  // draws again (untouched pages of a memfd cost nothing).
  int err = capsa_frames_host_init(&c.chain, CAPSA_FRAMES_DEFAULT_BUFFERS,
                                   (size_t)width * 4 * FRAME_MAX_ROWS, "frame");
  if (err < 0) return err;
  job->ctx = &c;
  job->on_ready = render_ready;
  job->on_message = render_message;
  err = capsa_cli_run_job(h, h->kind_page, job, 60000);
  capsa_frames_host_close(&c.chain);
  job->ctx = NULL;
  return err;
}

// --- hostile --------------------------------------------------------------

static void hostile_ready(struct capsa_cli_job *job) {
  char text[64];
  int n = snprintf(text, sizeof text, "host-pid=%d", (int)getpid());
  int fd = input_region((const uint8_t *)text, (size_t)n);
  if (fd < 0) {
    finish(job, fd, "cannot make the shm region");
    return;
  }
  capsa_demo_hostile_attack_t a;
  capsa_demo_hostile_attack_init(&a);
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_demo_hostile_interface,
                       CAPSA_DEMO_HOSTILE_ATTACK, &a);
  capsa_rights_t ro;
  capsa_handle_max_rights(CAPSA_HANDLE_SHM, false, &ro);
  int err = a.target =
      capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_SHM, &ro, (uint64_t)n, false);
  if (err >= 0) err = capsa_renderer_send(job->r, &m);
  if (err < 0) {
    close(fd);
    finish(job, err, "cannot send");
  }
}

int capsa_cli_hostile(struct capsa_cli_host *h, struct capsa_cli_job *job) {
  memset(job, 0, sizeof *job);
  job->kind = "hostile";
  job->on_ready = hostile_ready;
  capsa_cli_run_job(h, h->kind_hostile, job, 120000);
  // Success = the summary says nothing escaped and the host then killed it
  // for its garbage message.
  bool clean = false;
  for (size_t i = 0; i < job->nlogs; i++)
    if (strncmp(job->logs[i], CAPSA_HOSTILE_SUMMARY,
                strlen(CAPSA_HOSTILE_SUMMARY)) == 0 &&
        strstr(job->logs[i], " 0 escaped, 0 unexpected"))
      clean = true;
  bool killed = job->last_event == CAPSA_EV_BAD_MESSAGE ||
                strncmp(job->outcome, "bad-message", 11) == 0;
  job->status = clean && killed ? 0 : -EPERM;
  return job->status;
}
