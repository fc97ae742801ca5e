// The gzip demo kind on the CLI's side. See demos/gzip/gzip_demo.h.
#include "demos/gzip/gzip_demo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demos/gzip/gzip.capsa.h"
#include "demos/gzip/gzip.h"
#include "host/kind_registry.h"
#include "ipc/handle.h"
#include "ipc/shm.h"
#include "sandbox/memfd.h"

// Found by name in the exec'd zygote image (host/kind_registry.h).
CAPSA_RENDERER_KIND(gzip, "gzip", capsa_renderer_main_limited,
                    &capsa_gzip_renderer)

struct gzip_ctx {
  uint32_t op;
  int level;
  int in_fd, out_fd;
  size_t in_len, out_cap;
  uint64_t out_size;  // Result.out_size, checked against out_cap
};

// A memfd holding exactly `len` bytes of `data`, then sealed read-only for

static void gzip_reply(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                       void *arg) {
  struct capsa_cli_job *job = arg;
  if (status < 0 || !reply) {
    capsa_cli_job_finish(job, status < 0 ? status : -EPROTO, "no answer");
    return;
  }
  // The channel paired it with our Job and verified it against gzip.fbs;
  // an ERROR answer is the other possibility.
  if (reply->type != CAPSA_MSG_INTERFACE ||
      reply->u.iface.id != CAPSA_DEMO_GZIP_RESULT) {
    capsa_cli_job_finish(job, -EPROTO, "unexpected answer");
    return;
  }
  struct gzip_ctx *g = job->ctx;
  const capsa_demo_gzip_result_t *res = reply->u.iface.value;
  if (res->status < 0) {
    char what[160];
    snprintf(what, sizeof what, "%s", capsa_gzip_strerror(res->status));
    capsa_cli_job_finish(job, res->status, what);
    return;
  }
  // Never trust the renderer's size beyond the region it could write.
  if (res->out_size > g->out_cap) {
    capsa_renderer_report_bad_message(
        r, "gzip: Result.out_size beyond the output region");
    capsa_cli_job_finish(job, -EBADMSG,
                         "renderer claims more output than its region");
    return;
  }
  g->out_size = res->out_size;
  capsa_cli_job_finish(job, 0, "ok");
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
    capsa_cli_job_finish(job, err, "cannot send the job");
  }
}

int capsa_cli_gzip(struct capsa_cli_host *h, uint32_t op, int level,
                   const uint8_t *in, size_t in_len, uint8_t **out,
                   size_t *out_len, struct capsa_cli_job *job) {
  memset(job, 0, sizeof *job);
  job->kind = "gzip";
  *out = NULL;
  *out_len = 0;
  struct gzip_ctx g = {op, level, -1, -1, in_len, 0, 0};
  if (op == CAPSA_GZIP_OP_COMPRESS)
    g.out_cap = in_len + in_len / 8 + 65536;
  else
    g.out_cap = in_len * 64 > (64u << 20) ? in_len * 64 : (64u << 20);
  if (g.out_cap > CAPSA_SHM_MAX_SIZE) g.out_cap = CAPSA_SHM_MAX_SIZE;
  g.in_fd = capsa_cli_input_region(in, in_len);
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
  err = capsa_cli_run_job(h, capsa_cli_host_kind(h, "gzip"), job, 180000);
  if (err == 0) {
    *out = malloc(g.out_size ? g.out_size : 1);
    size_t got = 0;
    while (*out && got < g.out_size) {
      ssize_t n = pread(g.out_fd, *out + got, g.out_size - got, (off_t)got);
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (!*out || got != g.out_size) {
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

// `capsa demo`: a gzip round trip on the sample text.
static int demo(struct capsa_cli_host *h, struct capsa_cli_demo *d) {
  int tfd = d->sample ? open(d->sample, O_RDONLY | O_CLOEXEC) : -1;
  struct stat st;
  uint8_t *plain = NULL, *gz = NULL, *back = NULL;
  size_t plain_len = 0, gz_len = 0, back_len = 0;
  if (tfd >= 0 && fstat(tfd, &st) == 0) {
    plain = malloc((size_t)st.st_size + 1);
    if (plain && read(tfd, plain, (size_t)st.st_size) == st.st_size)
      plain_len = (size_t)st.st_size;
  }
  if (tfd >= 0) close(tfd);
  struct capsa_cli_job job, j2;
  double ms = 0;
  int err = capsa_cli_gzip(h, CAPSA_GZIP_OP_COMPRESS, 6, plain, plain_len, &gz,
                           &gz_len, &job);
  ms = job.ms;
  if (err == 0) {
    err = capsa_cli_gzip(h, CAPSA_GZIP_OP_GUNZIP, 0, gz, gz_len, &back,
                         &back_len, &j2);
    ms += j2.ms;
    capsa_cli_job_free(&j2);
    if (err == 0 && (back_len != plain_len || memcmp(back, plain, plain_len)))
      err = -EILSEQ;
  }
  char outcome[256];
  if (err == 0)
    snprintf(outcome, sizeof outcome, "ok: %zu -> %zu -> %zu bytes, equal",
             plain_len, gz_len, back_len);
  else
    snprintf(outcome, sizeof outcome, "FAILED: %s",
             err == -EILSEQ   ? "round trip differs"
             : job.outcome[0] ? job.outcome
                              : strerror(-err));
  job.ms = ms;
  capsa_cli_demo_row(&job, outcome);
  capsa_cli_job_free(&job);
  free(plain);
  free(gz);
  free(back);
  return err;
}

static void kind_options(capsa_kind_options_t *k, const int *fds,
                         unsigned nfds) {
  (void)fds, (void)nfds;
  k->heartbeat_ms = 0;  // one long job: no pings to answer meanwhile
}

static const struct capsa_cli_command kCommands[] = {
    {"gzip", "compress in a sandboxed renderer (stdin/stdout or FILE)",
     capsa_cmd_gzip},
    {"gunzip", "decompress in a sandboxed renderer", capsa_cmd_gunzip},
};

const struct capsa_demo_kind capsa__demo_gzip = {
    .name = "gzip",
    .entry = capsa_renderer_main_limited,
    .handlers = &capsa_gzip_renderer,
    .kind_options = kind_options,
    .commands = kCommands,
    .ncommands = 2,
    .sample = "gzip/samples/sample.txt",
    .demo = demo,
};
