// The README's pool example: a batch of untrusted inputs converted by a
// pool of sandboxed workers, with the convert interface of convert.fbs.
// One input triggers a bug in the worker's parser (here: a deliberate
// crash); the pool fails that job with the reason, replaces the worker and
// serves the rest, with its default options.
//
//   capsa_pool_example [TEXT...]   converts each TEXT to upper case
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capsa/capsa.h>  // the SDK: pkg-config --cflags --libs capsa

#include "host/examples/convert.capsa.h"  // generated from convert.fbs

static const capsa_interface_t *const kConvert[] = {
    &capsa_example_convert_interface};

// --- Renderer side: in capability mode, one request at a time. ------------

static int convert(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.id != CAPSA_EXAMPLE_CONVERT_CONVERT)
    return -EPROTO;
  const capsa_example_convert_convert_t *q = m->u.iface.value;
  capsa_example_convert_converted_t res;
  capsa_example_convert_converted_init(&res);
  capsa_shm_region_t in, out;
  uint64_t in_size = m->handles[q->input].size;
  uint64_t out_size = m->handles[q->output].size;
  int in_fd = capsa_msg_take_handle(m, (uint32_t)q->input);
  int out_fd = capsa_msg_take_handle(m, (uint32_t)q->output);
  const uint8_t *src = NULL;
  uint8_t *dst = NULL;
  if (capsa_shm_map_fd(in_fd, in_size, CAPSA_SHM_PEER_READS, &in) < 0) {
    res.status = -EBADF;
  } else if (capsa_shm_map_fd(out_fd, out_size, CAPSA_SHM_PEER_READWRITE,
                              &out) < 0) {
    res.status = -EBADF;
    capsa_shm_close(&in);
  } else {
    if (capsa_shm_view(&in, 0, q->in_size, (const void **)&src) < 0 ||
        capsa_shm_view_mut(&out, 0, q->in_size, (void **)&dst) < 0) {
      res.status = -ERANGE;
    } else {
      // The "parser bug" an input can reach.
      if (q->in_size >= 5 && memcmp(src, "crash", 5) == 0)
        *(volatile int *)NULL = 1;
      for (uint64_t i = 0; i < q->in_size; i++)
        dst[i] = (uint8_t)toupper(src[i]);
      res.out_size = q->in_size;
    }
    capsa_shm_close(&in);
    capsa_shm_close(&out);
  }
  capsa_msg_t reply;
  capsa_msg_init_iface(&reply, &capsa_example_convert_interface,
                       CAPSA_EXAMPLE_CONVERT_CONVERTED, &res);
  return capsa_rctx_reply(r, m, &reply);
}
static const capsa_renderer_handlers_t kConverter = {.kind = "convert",
                                                     .on_message = convert,
                                                     .interfaces = kConvert,
                                                     .ninterfaces = 1};
CAPSA_RENDERER_KIND(converter, "convert", capsa_renderer_main, &kConverter)

// --- Host side. -------------------------------------------------------------

struct job {
  const char *text;
  capsa_example_convert_convert_t q;
  capsa_shm_region_t out;  // fresh for each job: no job sees another's bytes
  char result[128];
};

static capsa_host_t g_host;
static capsa_pool_t g_pool;
static capsa_pool_stats_t g_stats;
static unsigned g_pending;

static void on_pool_closed(capsa_pool_t *pool) {
  (void)pool;
  capsa_host_close(&g_host, NULL);  // the loop ends once it has closed
}

// Called when a worker is free to take the job: fresh regions, handed to
// that worker only.
static int fill(capsa_pool_t *pool, capsa_renderer_t *worker, capsa_msg_t *m,
                void *arg) {
  (void)pool, (void)worker;
  struct job *j = arg;
  size_t n = strlen(j->text);
  capsa_shm_region_t in;
  int err = capsa_shm_create(n ? n : 1, "input", CAPSA_SHM_CREATOR_WRITES, &in);
  if (err < 0) return err;
  if ((err = capsa_shm_write(&in, 0, j->text, n)) < 0 ||
      (err = capsa_shm_unmap(&in)) < 0 ||
      (err = capsa_shm_create(n ? n : 1, "output", CAPSA_SHM_PEER_WRITES,
                              &j->out)) < 0) {
    capsa_shm_close(&in);
    return err;
  }
  capsa_example_convert_convert_init(&j->q);
  j->q.in_size = n;
  capsa_msg_init_iface(m, &capsa_example_convert_interface,
                       CAPSA_EXAMPLE_CONVERT_CONVERT, &j->q);
  capsa_rights_t ro, rw;
  capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R, CAPSA_CAP_FSTAT);
  capsa_rights_init(&rw, CAPSA_CAP_READ, CAPSA_CAP_WRITE, CAPSA_CAP_MMAP_RW,
                    CAPSA_CAP_FSTAT);
  // Attached handles are the pool's from here on, even on error.
  j->q.input = capsa_msg_add_handle(m, capsa_shm_release_fd(&in),
                                    CAPSA_HANDLE_SHM, &ro, in.size, false);
  j->q.output = capsa_msg_add_handle(m, dup(j->out.fd), CAPSA_HANDLE_SHM, &rw,
                                     j->out.size, true);
  return j->q.input < 0 ? j->q.input : j->q.output < 0 ? j->q.output : 0;
}

static void done(capsa_pool_t *pool, const capsa_pool_result_t *res,
                 void *arg) {
  (void)pool;
  struct job *j = arg;
  const capsa_example_convert_converted_t *c =
      res->status == 0 ? res->reply->u.iface.value : NULL;
  char text[sizeof j->result - 1];
  if (res->status < 0) {
    snprintf(j->result, sizeof j->result, "failed: %s", res->reason);
  } else if (c->status == 0 && c->out_size < sizeof text &&
             capsa_shm_read(&j->out, 0, text, c->out_size) == 0) {
    text[c->out_size] = '\0';  // copied out first: the worker may still write
    snprintf(j->result, sizeof j->result, "%s", text);
  } else {
    snprintf(j->result, sizeof j->result, "failed: status %d", c->status);
  }
  capsa_shm_close(&j->out);
  if (--g_pending == 0) {
    capsa_pool_get_stats(&g_pool, &g_stats);
    capsa_pool_close(&g_pool, on_pool_closed);
  }
}

static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  (void)host, (void)ev;  // the pool watches its own workers
}

int main(int argc, char **argv) {
  if (capsa_main(argc, argv) < 0) return 1;  // first: the zygote runs here
  static const char *kDefault[] = {"hello", "crash me", "world", "capsa",
                                   "pools"};
  const char **texts = argc > 1 ? (const char **)argv + 1 : kDefault;
  unsigned n = argc > 1 ? (unsigned)argc - 1 : 5;
  struct job *jobs = calloc(n, sizeof *jobs);
  if (!jobs) return 1;
  uv_loop_t *loop = uv_default_loop();
  capsa_kind_options_t kind;
  capsa_kind_options_init(&kind, "convert", capsa_renderer_main,
                          (void *)&kConverter);
  kind.interfaces = kConvert;
  kind.ninterfaces = 1;
  int k, err;
  if ((err = capsa_host_init(loop, &g_host, NULL, on_event)) < 0 ||
      (err = k = capsa_host_define_kind(&g_host, &kind)) < 0 ||
      (err = capsa_host_start(&g_host)) < 0) {
    fprintf(stderr, "host: %s %s\n", strerror(-err),
            capsa_host_start_error(&g_host));
    return 1;
  }
  capsa_pool_options_t po;
  capsa_pool_options_init(&po);  // the defaults are for untrusted input
  po.workers = 2;
  if ((err = capsa_pool_init(&g_host, &g_pool, k, &po)) < 0 ||
      (err = capsa_pool_start(&g_pool)) < 0) {
    fprintf(stderr, "pool: %s\n", strerror(-err));
    return 1;
  }
  for (unsigned i = 0; i < n; i++) {
    jobs[i].text = texts[i];
    if ((err = capsa_pool_submit(&g_pool, 5000, fill, done, &jobs[i])) < 0) {
      fprintf(stderr, "submit: %s: %s\n", strerror(-err),
              capsa_pool_error(&g_pool));
      return 1;
    }
    g_pending++;
  }
  uv_run(loop, UV_RUN_DEFAULT);
  for (unsigned i = 0; i < n; i++)
    printf("%s -> %s\n", texts[i], jobs[i].result);
  printf("%llu served, %llu failed\n", (unsigned long long)g_stats.completed,
         (unsigned long long)g_stats.failed);
  free(jobs);
  return g_stats.completed + g_stats.failed == n ? 0 : 1;
}
