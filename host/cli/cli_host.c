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

#include "sandbox/memfd.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void capsa_cli_job_finish(struct capsa_cli_job *job, int status,
                          const char *what) {
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
      capsa_cli_job_finish(job, -EPERM, what);
      break;
    default:
      snprintf(what, sizeof what, "%s%s%s", capsa_host_event_name(ev->type),
               ev->text ? ": " : "", ev->text ? ev->text : "");
      if (ev->crash_report)
        snprintf(what, sizeof what, "%s: %s", capsa_host_event_name(ev->type),
                 ev->crash_report->summary);
      if (ev->type == CAPSA_EV_EXITED)
        snprintf(what, sizeof what, "exited with status %d", ev->status);
      capsa_cli_job_finish(job, -ECHILD, what);
      break;
  }
}

// A kind speaks what its renderer's handlers say it speaks (the host
// refuses a renderer whose HELLO names other interfaces).
static void speak_as(capsa_kind_options_t *k,
                     const capsa_renderer_handlers_t *hd) {
  k->interfaces = hd->interfaces;
  k->ninterfaces = hd->ninterfaces;
}

static void close_warm_up_fds(struct capsa_cli_host *h) {
  for (unsigned i = 0; i < h->nkinds; i++) {
    for (unsigned j = 0; j < h->kinds[i].nfds; j++)
      if (h->kinds[i].fds[j] >= 0) close(h->kinds[i].fds[j]);
    h->kinds[i].nfds = 0;
  }
}

int capsa_cli_host_open(struct capsa_cli_host *h,
                        const struct capsa_demo_kind *const *kinds, unsigned n,
                        bool warm) {
  memset(h, 0, sizeof *h);
  if (n > CAPSA_CLI_MAX_KINDS) return -E2BIG;
  h->nkinds = n;
  for (unsigned i = 0; i < n; i++) {
    h->kinds[i].demo = kinds[i];
    h->kinds[i].id = -1;
  }
  int err = uv_loop_init(&h->loop);
  if (err < 0) return err;
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  for (unsigned i = 0; i < n; i++)
    if (kinds[i]->host_options)
      kinds[i]->host_options(&o, warm, h->kinds[i].fds, &h->kinds[i].nfds);
  err = capsa_host_init(&h->loop, &h->host, &o, on_event);
  if (err < 0) {
    close_warm_up_fds(h);
    uv_loop_close(&h->loop);
    return err;
  }
  h->host.data = h;
  for (unsigned i = 0; i < n; i++) {
    const struct capsa_demo_kind *d = kinds[i];
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, d->name, d->entry, (void *)d->handlers);
    speak_as(&k, d->handlers);
    if (d->kind_options) d->kind_options(&k, h->kinds[i].fds, h->kinds[i].nfds);
    h->kinds[i].id = capsa_host_define_kind(&h->host, &k);
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

int capsa_cli_host_kind(const struct capsa_cli_host *h, const char *name) {
  for (unsigned i = 0; i < h->nkinds; i++)
    if (strcmp(h->kinds[i].demo->name, name) == 0) return h->kinds[i].id;
  return -ENOENT;
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
  close_warm_up_fds(h);  // borrowed by the host until now
}

static void on_timeout(uv_timer_t *t) {
  struct capsa_cli_job *job = t->data;
  capsa_cli_job_finish(job, -ETIMEDOUT, "timed out");
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
    capsa_cli_job_finish(job, err, "spawn failed");
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

// A memfd holding exactly `len` bytes of `data`, then sealed read-only for
// everyone (the renderer's read() sees EOF right after the data).
int capsa_cli_input_region(const uint8_t *data, size_t len) {
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
