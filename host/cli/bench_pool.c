// capsa bench pool: the CPU a batch of untrusted inputs costs, three ways in
// one run, printed as ratios against the first:
//
//   in-process   capsa_gzip_compress in this process, one input after the
//                other (no isolation at all: the baseline)
//   in-process   the same, in min(workers, cores) unsandboxed forked
//    parallel    children at once: what running in parallel costs on this
//                machine by itself (shared caches, memory bandwidth, vCPUs
//                of a shared host), so the pool's own cost can be told apart
//   pool shared  capsa_pool_* with N sandboxed gzip workers (capability
//                mode, namespaces, rlimits) serving jobs in turn
//                (CAPSA_POOL_SHARED_WORKERS); a read-only input and a
//                write-only output region per worker process, never handed
//                to another process before it is gone and cleared
//   pool 1/proc  the same with one job per process (the default,
//                CAPSA_POOL_ONE_JOB_PER_PROCESS): each worker killed after
//                its job, its regions cleared (capsa_shm_clear) once it is
//                gone and reused for a later job
//   fork+exec    a fresh process per input: fork, exec this binary, which
//                compresses stdin to stdout with the same code (no sandbox)
//
// CPU is user+system time of every process involved: this one (getrusage
// SELF), reaped children (CHILDREN: fork+exec's, recycled workers), the
// pool's live workers (/proc/PID/schedstat, from READY on) and the zygote
// that forks them (/proc/PID/schedstat, over the run). Wall time is shown
// too, but with 2 cores it says little about cost; CPU per input is the
// figure (goal: pool <= 1.2x in-process at 8 workers).
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demos/gzip/gzip.capsa.h"
#include "demos/gzip/gzip.h"
#include "demos/gzip/gzip_renderer.h"
#include "host/capsa_host.h"
#include "host/capsa_pool.h"
#include "host/cli/bench_util.h"
#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "ipc/handle.h"
#include "ipc/shm.h"
#include "renderer/runtime.h"

#define MAX_WORKERS CAPSA_POOL_MAX_WORKERS
#define MAX_PIDS 4096

struct bench_opts {
  unsigned inputs, workers, recycle_after_jobs;
  size_t size;
  int level;
  bool json, limited;
  const char *only;                  // NULL: every row; else the row's name
  capsa_pool_isolation_t isolation;  // of the pool row being run
};

// The gzip renderer with the default runtime (handles not re-limited per
// number, so one process serves any number of jobs); --limited measures the
// CLI's "gzip" kind (capsa_renderer_main_limited), recycled every 20 jobs.
CAPSA_RENDERER_KIND(gzip_pool, "gzip-pool", capsa_renderer_main,
                    &capsa_gzip_renderer)

// In the zygote, before it forks any worker: one small input compressed, so
// that zlib's calls into libc (malloc, memcpy, memset: zlib is linked for
// lazy binding) are bound in the zygote's memory and every worker inherits
// them instead of resolving each again. Nothing of any job: a fixed input.
static int gzip_warm_up(const int *fds, unsigned nfds) {
  (void)fds, (void)nfds;
  static const char kText[] = "capsa warm-up: sandbox renderer region\n";
  int in = memfd_create("warm-in", MFD_CLOEXEC);
  int out = memfd_create("warm-out", MFD_CLOEXEC);
  int err = in < 0 || out < 0 ? -errno : 0;
  if (!err && write(in, kText, sizeof kText) != (ssize_t)sizeof kText)
    err = -EIO;
  if (!err && lseek(in, 0, SEEK_SET) < 0) err = -errno;
  struct capsa_gzip_options go = {.level = 6};
  if (!err) err = capsa_gzip_compress(in, out, &go, NULL);
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  return err < 0 ? err : 0;
}
CAPSA_RENDERER_WARM_UP(gzip_pool, "gzip-pool", gzip_warm_up)

static double now_ms(void) {
  return capsa_bench_now_us() / 1e3;
}

static uint64_t rusage_us(int who) {
  struct rusage ru;
  if (getrusage(who, &ru) < 0) return 0;
  return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
         (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// CPU time of a live process, in microseconds (0 when it is gone):
// /proc/PID/schedstat's run time, in nanoseconds — /proc/PID/stat's clock
// ticks (10 ms) would be too coarse for a few hundred jobs.
static uint64_t proc_cpu_us(pid_t pid) {
  char path[64], buf[128];
  snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  unsigned long long ns = 0;
  return sscanf(buf, "%llu", &ns) == 1 ? ns / 1000 : 0;
}

// Text-like input (words from a small vocabulary): compresses about 3:1,
// as logs or markup do. Deterministic per seed.
static void make_input(uint8_t *buf, size_t n, unsigned seed) {
  static const char *const kWords[] = {
      "sandbox ", "renderer ", "capability ", "descriptor ", "host ",
      "the ",     "of ",       "seccomp ",    "region ",     "<div> ",
      "\n",       "rights ",   "untrusted ",  "input ",      "42 "};
  uint32_t x = seed * 2654435761u + 1;
  size_t off = 0;
  while (off < n) {
    x = x * 1103515245u + 12345u;
    const char *w = kWords[(x >> 16) % (sizeof kWords / sizeof *kWords)];
    size_t l = strlen(w);
    if (l > n - off) l = n - off;
    memcpy(buf + off, w, l);
    off += l;
  }
}

// One input memfd of `len` bytes, mapped: every way writes each input in
// place, as the pool writes its reused regions.
static int input_memfd(size_t len, uint8_t **map) {
  int fd = memfd_create("bench-in", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  if (ftruncate(fd, (off_t)len) < 0) {
    close(fd);
    return -errno;
  }
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return -ENOMEM;
  }
  *map = p;
  return fd;
}

// The input memfd (mapped) and an output memfd, or -errno with nothing
// left open.
static int open_pair(size_t len, uint8_t **map, int *in, int *out) {
  *in = input_memfd(len, map);
  if (*in < 0) return *in;
  *out = memfd_create("bench-out", MFD_CLOEXEC);
  if (*out < 0) {
    int e = -errno;
    munmap(*map, len);
    close(*in);
    return e;
  }
  return 0;
}

static void close_pair(size_t len, uint8_t *map, int in, int out) {
  munmap(map, len);
  close(in);
  close(out);
}

static int rewind_both(int in, int out) {
  if (lseek(in, 0, SEEK_SET) < 0 || ftruncate(out, 0) < 0 ||
      lseek(out, 0, SEEK_SET) < 0)
    return -errno;
  return 0;
}

struct row {
  const char *name;
  uint64_t cpu_us;
  double wall_ms;
  uint64_t out_bytes;
  int error;
};

// --- in-process ---

static void run_inproc(const struct bench_opts *o, struct row *r) {
  uint8_t *map;
  int in, out;
  if ((r->error = open_pair(o->size, &map, &in, &out)) < 0) return;
  uint64_t c0 = rusage_us(RUSAGE_SELF);
  double t0 = now_ms();
  struct capsa_gzip_options go = {.level = o->level};
  for (unsigned i = 0; i < o->inputs && !r->error; i++) {
    make_input(map, o->size, i);
    struct capsa_gzip_stats st = {0};
    int err = rewind_both(in, out);
    if (!err) err = capsa_gzip_compress(in, out, &go, &st);
    if (err < 0) r->error = err;
    r->out_bytes += st.bytes_out;
  }
  r->wall_ms = now_ms() - t0;
  r->cpu_us = rusage_us(RUSAGE_SELF) - c0;
  close_pair(o->size, map, in, out);
}

// The in-process loop in `n` forked children at once, child k taking inputs
// k, k+n, ...; each reports its output bytes through a pipe.
static void run_inproc_parallel(const struct bench_opts *o, unsigned n,
                                struct row *r) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    r->error = -errno;
    return;
  }
  uint64_t c0 = rusage_us(RUSAGE_CHILDREN);
  double t0 = now_ms();
  unsigned started = 0;
  for (unsigned k = 0; k < n; k++) {
    pid_t pid = fork();
    if (pid < 0) {
      r->error = -errno;
      break;
    }
    if (pid == 0) {
      close(fds[0]);
      uint8_t *map;
      int in, out;
      uint64_t bytes = 0;
      if (open_pair(o->size, &map, &in, &out) < 0) _exit(1);
      struct capsa_gzip_options go = {.level = o->level};
      for (unsigned i = k; i < o->inputs; i += n) {
        make_input(map, o->size, i);
        struct capsa_gzip_stats st = {0};
        if (rewind_both(in, out) < 0 ||
            capsa_gzip_compress(in, out, &go, &st) < 0)
          _exit(1);
        bytes += st.bytes_out;
      }
      _exit(write(fds[1], &bytes, sizeof bytes) == sizeof bytes ? 0 : 1);
    }
    started++;
  }
  close(fds[1]);
  uint64_t bytes;
  while (read(fds[0], &bytes, sizeof bytes) == sizeof bytes)
    r->out_bytes += bytes;
  close(fds[0]);
  for (unsigned k = 0; k < started; k++) {
    int st;
    if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      if (!r->error) r->error = -ECHILD;
  }
  r->wall_ms = now_ms() - t0;
  r->cpu_us = rusage_us(RUSAGE_CHILDREN) - c0;
}

// --- fork+exec ---

static void run_forkexec(const struct bench_opts *o, struct row *r) {
  char level[8];
  snprintf(level, sizeof level, "%d", o->level);
  uint8_t *map;
  int in, out;
  if ((r->error = open_pair(o->size, &map, &in, &out)) < 0) return;
  uint64_t c0 = rusage_us(RUSAGE_SELF) + rusage_us(RUSAGE_CHILDREN);
  double t0 = now_ms();
  for (unsigned i = 0; i < o->inputs && !r->error; i++) {
    make_input(map, o->size, i);
    r->error = rewind_both(in, out);
    if (r->error) break;
    pid_t pid = fork();
    if (pid == 0) {
      if (dup2(in, 0) < 0 || dup2(out, 1) < 0) _exit(126);
      char *argv[] = {"capsa", "bench", "pool", "--child", level, NULL};
      execv("/proc/self/exe", argv);
      _exit(127);
    }
    int ws = 0;
    if (pid < 0)
      r->error = -errno;
    else if (waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
      r->error = -ECHILD;
    struct stat sb;
    if (!r->error && fstat(out, &sb) == 0) r->out_bytes += (uint64_t)sb.st_size;
  }
  r->wall_ms = now_ms() - t0;
  r->cpu_us = rusage_us(RUSAGE_SELF) + rusage_us(RUSAGE_CHILDREN) - c0;
  close_pair(o->size, map, in, out);
}

// The fork+exec child: stdin to stdout, the same code as the renderer.
static int child_main(int level) {
  struct capsa_gzip_options go = {.level = level};
  return capsa_gzip_compress(0, 1, &go, NULL) < 0 ? 1 : 0;
}

// --- pool ---

struct slot {
  capsa_shm_region_t in, out;
  bool busy;
  pid_t bound;  // shared workers: the process that has seen these regions
};

struct pool_bench {
  const struct bench_opts *o;
  uv_loop_t loop;
  capsa_host_t host;
  capsa_pool_t pool;
  struct slot slots[2 * MAX_WORKERS];
  unsigned next_input, done, ready;
  uint64_t out_bytes;
  int error;
  bool host_closed, pool_closed;
  pid_t pids[MAX_PIDS];  // workers seen READY, with their CPU then
  uint64_t pid_cpu0[MAX_PIDS];
  unsigned npids;
};

struct pool_job {
  struct pool_bench *b;
  unsigned input;
  int slot;
  capsa_demo_gzip_job_t q;  // the message's value: encoded when the pool sends
};

static void on_host_event(capsa_host_t *h, const capsa_host_event_t *ev) {
  struct pool_bench *b = h->data;
  if (ev->type == CAPSA_EV_CLOSED || ev->type == CAPSA_EV_RESTARTED) {
    // Its regions may go to another process only once it is gone: cleared.
    pid_t pid = capsa_renderer_pid(ev->renderer);
    for (unsigned i = 0; i < b->o->workers * 2; i++)
      if (b->slots[i].bound == pid && pid > 0 && !b->slots[i].busy) {
        capsa_shm_clear(&b->slots[i].out);
        b->slots[i].bound = 0;
      }
  }
  if (ev->type == CAPSA_EV_READY) {
    b->ready++;
    if (b->npids < MAX_PIDS) {
      pid_t pid = capsa_renderer_pid(ev->renderer);
      b->pid_cpu0[b->npids] = proc_cpu_us(pid);
      b->pids[b->npids++] = pid;
    }
  } else if (ev->type == CAPSA_EV_CRASHED || ev->type == CAPSA_EV_HUNG ||
             ev->type == CAPSA_EV_LIMIT || ev->type == CAPSA_EV_BAD_MESSAGE ||
             ev->type == CAPSA_EV_ABORTED || ev->type == CAPSA_EV_EXITED ||
             ev->type == CAPSA_EV_SANDBOX_REFUSED) {
    fprintf(stderr, "capsa bench pool: worker %s: %s\n",
            capsa_host_event_name(ev->type), ev->text ? ev->text : "");
  }
}

static int fill_job(capsa_pool_t *p, capsa_renderer_t *worker, capsa_msg_t *m,
                    void *arg) {
  (void)p;
  struct pool_job *j = arg;
  struct pool_bench *b = j->b;
  // A region goes only to the process that has already seen it, or to a
  // new one once the last that saw it is gone and it was cleared.
  pid_t pid = capsa_renderer_pid(worker);
  int s = -1;
  for (unsigned i = 0; i < b->o->workers * 2 && s < 0; i++)
    if (!b->slots[i].busy && b->slots[i].bound == pid) s = (int)i;
  for (unsigned i = 0; i < b->o->workers * 2 && s < 0; i++)
    if (!b->slots[i].busy && b->slots[i].bound == 0) s = (int)i;
  if (s < 0) return -EBUSY;  // cannot happen: one job per worker in flight
  struct slot *sl = &b->slots[s];
  sl->bound = pid;
  make_input(sl->in.base, b->o->size, j->input);  // region reuse
  capsa_demo_gzip_job_init(&j->q);
  j->q.job_id = j->input;
  j->q.op = CAPSA_GZIP_OP_COMPRESS;
  j->q.level = b->o->level;
  j->q.in_size = b->o->size;
  capsa_msg_init_iface(m, &capsa_demo_gzip_interface, CAPSA_DEMO_GZIP_JOB,
                       &j->q);
  capsa_rights_t ro, wo;
  capsa_handle_max_rights(CAPSA_HANDLE_SHM, false, &ro);
  capsa_rights_init(&wo, CAPSA_CAP_WRITE, CAPSA_CAP_SEEK, CAPSA_CAP_FSTAT);
  int in = fcntl(sl->in.fd, F_DUPFD_CLOEXEC, 0);
  if (in < 0) return -errno;
  int err = j->q.input =
      capsa_msg_add_handle(m, in, CAPSA_HANDLE_SHM, &ro, sl->in.size, false);
  if (err < 0) {
    close(in);
    return err;
  }
  int out = fcntl(sl->out.fd, F_DUPFD_CLOEXEC, 0);
  if (out < 0) return -errno;
  err = j->q.output =
      capsa_msg_add_handle(m, out, CAPSA_HANDLE_SHM, &wo, sl->out.size, true);
  if (err < 0) {
    close(out);
    return err;
  }
  sl->busy = true;
  j->slot = s;
  return 0;
}

static void submit_next(struct pool_bench *b);

static void on_pool_closed(capsa_pool_t *p) {
  struct pool_bench *b = p->data;
  b->pool_closed = true;
}

static void job_done(capsa_pool_t *p, const capsa_pool_result_t *result,
                     void *arg) {
  (void)p;
  struct pool_job *j = arg;
  int status = result->status;
  capsa_msg_t *reply = result->reply;
  if (status < 0)
    fprintf(stderr, "capsa bench pool: job %u: %s\n", j->input, result->reason);
  struct pool_bench *b = j->b;
  struct slot *sl = j->slot >= 0 ? &b->slots[j->slot] : NULL;
  const capsa_demo_gzip_result_t *res =
      status == 0 && reply && reply->type == CAPSA_MSG_INTERFACE &&
              reply->u.iface.id == CAPSA_DEMO_GZIP_RESULT
          ? reply->u.iface.value
          : NULL;
  if (res && res->status == 0 && res->out_size <= b->slots[0].out.size)
    b->out_bytes += res->out_size;
  else if (!b->error)
    b->error = status < 0 ? status : -EPROTO;
  if (sl) {
    sl->busy = false;
    // One job per process: its worker is gone by now (the pool's promise).
    if (b->o->isolation == CAPSA_POOL_ONE_JOB_PER_PROCESS) {
      capsa_shm_clear(&sl->out);
      sl->bound = 0;
    }
  }
  free(j);
  b->done++;
  submit_next(b);
}

// Keeps every worker busy plus one job queued each: the queue never holds
// more than that, as a real producer with backpressure would.
static void submit_next(struct pool_bench *b) {
  while (b->next_input < b->o->inputs &&
         b->next_input - b->done < 2 * b->o->workers) {
    struct pool_job *j = calloc(1, sizeof *j);
    if (!j) {
      b->error = -ENOMEM;
      return;
    }
    j->b = b;  // calloc: j->q is set by fill_job
    j->input = b->next_input;
    j->slot = -1;
    int err = capsa_pool_submit(&b->pool, 60000, fill_job, job_done, j);
    if (err < 0) {
      free(j);
      if (!b->error) b->error = err;
      b->done = b->o->inputs;  // nothing more will come back
      return;
    }
    b->next_input++;
  }
}

static bool run_loop_until(struct pool_bench *b, bool *flag, double ms) {
  double end = now_ms() + ms;
  while (!*flag && now_ms() < end) uv_run(&b->loop, UV_RUN_ONCE);
  return *flag;
}

static void run_pool(const struct bench_opts *o, struct row *r) {
  struct pool_bench *b = calloc(1, sizeof *b);
  if (!b) {
    r->error = -ENOMEM;
    return;
  }
  b->o = o;
  int err = uv_loop_init(&b->loop);
  if (err < 0) {
    free(b);
    r->error = err;
    return;
  }
  for (unsigned i = 0; i < o->workers * 2 && !err; i++) {
    b->slots[i].in.fd = b->slots[i].out.fd = -1;
    err = capsa_shm_create(o->size, "bench-in", CAPSA_SHM_CREATOR_WRITES,
                           &b->slots[i].in);
    if (!err)
      err = capsa_shm_create(o->size + o->size / 8 + 4096, "bench-out",
                             CAPSA_SHM_PEER_WRITES, &b->slots[i].out);
  }
  capsa_kind_options_t k;
  if (o->limited)
    capsa_kind_options_init(&k, "gzip", capsa_renderer_main_limited,
                            (void *)&capsa_gzip_renderer);
  else
    capsa_kind_options_init(&k, "gzip-pool", capsa_renderer_main,
                            (void *)&capsa_gzip_renderer);
  k.interfaces = capsa_gzip_renderer.interfaces;  // as its handlers say
  k.ninterfaces = capsa_gzip_renderer.ninterfaces;
  k.max_restarts = 2;
  if (!err) err = capsa_host_init(&b->loop, &b->host, NULL, on_host_event);
  bool host_inited = err == 0;
  b->host.data = b;
  if (!err) err = capsa_host_define_kind(&b->host, &k);
  int kind = err;
  if (err >= 0) err = capsa_host_start(&b->host);
  capsa_pool_options_t po;
  capsa_pool_options_init(&po);
  po.isolation = o->isolation;
  po.workers = o->workers;
  po.recycle_after_jobs = o->recycle_after_jobs;
  if (err >= 0) err = capsa_pool_init(&b->host, &b->pool, kind, &po);
  b->pool.data = b;
  bool pool_inited = err >= 0;
  if (err >= 0) err = capsa_pool_start(&b->pool);
  if (err >= 0) {
    // Steady state: the workers are up before the clock starts.
    double end = now_ms() + 20000;
    while (b->ready < o->workers && now_ms() < end)
      uv_run(&b->loop, UV_RUN_ONCE);
    if (b->ready < o->workers) err = -ETIMEDOUT;
  }
  if (err >= 0) {
    uint64_t c0 = rusage_us(RUSAGE_SELF) + rusage_us(RUSAGE_CHILDREN);
    // The zygote forks every worker (copies its page tables): its CPU is
    // the pool's too, and it is reaped only when the host closes.
    pid_t zygote = capsa_host_zygote_pid(&b->host);
    uint64_t z0 = zygote > 0 ? proc_cpu_us(zygote) : 0;
    double t0 = now_ms();
    unsigned first_pids = b->npids;
    submit_next(b);
    double end = now_ms() + 600000;
    while (b->done < o->inputs && now_ms() < end) uv_run(&b->loop, UV_RUN_ONCE);
    r->wall_ms = now_ms() - t0;
    uint64_t workers = 0;
    for (unsigned i = 0; i < b->npids; i++) {
      uint64_t now = proc_cpu_us(b->pids[i]);
      // Spawned during the run: its start-up counts too.
      uint64_t base = i < first_pids ? b->pid_cpu0[i] : 0;
      if (now > base) workers += now - base;
    }
    uint64_t z1 = zygote > 0 ? proc_cpu_us(zygote) : 0;
    if (zygote > 0 && capsa_host_zygote_pid(&b->host) == zygote && z1 > z0)
      workers += z1 - z0;  // a zygote replaced meanwhile: its CPU is lost
    r->cpu_us =
        rusage_us(RUSAGE_SELF) + rusage_us(RUSAGE_CHILDREN) - c0 + workers;
    r->out_bytes = b->out_bytes;
    err = b->done < o->inputs ? -ETIMEDOUT : b->error;
  }
  r->error = err < 0 ? err : 0;
  if (pool_inited) {
    capsa_pool_close(&b->pool, on_pool_closed);
    run_loop_until(b, &b->pool_closed, 10000);
  }
  if (host_inited) {
    capsa_host_close(&b->host, NULL);
    uv_run(&b->loop, UV_RUN_DEFAULT);
  }
  uv_loop_close(&b->loop);
  for (unsigned i = 0; i < o->workers * 2; i++) {
    capsa_shm_close(&b->slots[i].in);
    capsa_shm_close(&b->slots[i].out);
  }
  free(b);
}

// --- driver ---

static void usage(FILE *f) {
  fprintf(f,
          "usage: capsa bench pool [--inputs N] [--workers N] [--size KIB]\n"
          "                        [--level 1-9] [--recycle-after N] "
          "[--limited] [--json]\n"
          "                        [--only 'pool shared'|'pool 1/proc'|...]\n"
          "  defaults: 200 inputs of 256 KiB, 8 workers, level 6\n");
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = (unsigned)v;
  return 0;
}

int capsa_bench_pool(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0)
    return child_main(atoi(argv[2]));
  struct bench_opts o = {
      200, 8, 0, 256u << 10, 6, false, false, NULL, CAPSA_POOL_SHARED_WORKERS};
  for (int i = 1; i < argc; i++) {
    unsigned v;
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--json") == 0) {
      o.json = true;
      continue;
    }
    if (strcmp(a, "--limited") == 0) {
      o.limited = true;
      if (!o.recycle_after_jobs) o.recycle_after_jobs = 20;
      continue;
    }
    if (strcmp(a, "--only") == 0 && val) {
      o.only = val;
      i++;
      continue;
    }
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    int bad = !val;
    if (!bad && strcmp(a, "--inputs") == 0)
      bad = parse_uint(val, 1, 100000, &o.inputs);
    else if (!bad && strcmp(a, "--workers") == 0)
      bad = parse_uint(val, 1, MAX_WORKERS, &o.workers);
    else if (!bad && strcmp(a, "--size") == 0)
      bad = parse_uint(val, 4, 65536, &v) || (o.size = (size_t)v << 10, 0);
    else if (!bad && strcmp(a, "--level") == 0)
      bad = parse_uint(val, 1, 9, &v) || (o.level = (int)v, 0);
    else if (!bad && strcmp(a, "--recycle-after") == 0)
      bad = parse_uint(val, 0, 1000000, &o.recycle_after_jobs);
    else
      bad = 1;
    if (bad) {
      fprintf(stderr, "capsa bench pool: bad argument '%s%s%s'\n", a,
              val ? " " : "", val ? val : "");
      usage(stderr);
      return CAPSA_EXIT_USAGE;
    }
    i++;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned par = cores > 0 && (unsigned long)cores < o.workers ? (unsigned)cores
                                                               : o.workers;
  char par_name[32];
  snprintf(par_name, sizeof par_name, "in-proc x%u", par);
  struct row rows[5] = {{"in-process", 0, 0, 0, 0},
                        {par_name, 0, 0, 0, 0},
                        {"pool shared", 0, 0, 0, 0},
                        {"pool 1/proc", 0, 0, 0, 0},
                        {"fork+exec", 0, 0, 0, 0}};
  // --only ROW (for a profiler): the baseline and that row.
#define WANT(i) (!o.only || i == 0 || strcmp(o.only, rows[i].name) == 0)
  run_inproc(&o, &rows[0]);
  if (WANT(1)) run_inproc_parallel(&o, par, &rows[1]);
  o.isolation = CAPSA_POOL_SHARED_WORKERS;
  if (WANT(2)) run_pool(&o, &rows[2]);
  o.isolation = CAPSA_POOL_ONE_JOB_PER_PROCESS;
  if (WANT(3)) run_pool(&o, &rows[3]);
  if (WANT(4)) run_forkexec(&o, &rows[4]);
  double base = rows[0].cpu_us ? (double)rows[0].cpu_us / o.inputs : 0;
  if (!o.json)
    printf(
        "capsa bench pool: %u inputs of %zu KiB (text-like, gzip -%d), "
        "pool of %u %s workers%s\n"
        "  %-11s %12s %8s %10s %10s %12s\n",
        o.inputs, o.size >> 10, o.level, o.workers,
        o.limited ? "rights-limited" : "gzip",
        o.recycle_after_jobs ? ", recycled" : "", "", "cpu us/input", "ratio",
        "wall ms", "inputs/s", "output bytes");
  int rc = 0;
  for (int i = 0; i < 5; i++) {
    struct row *r = &rows[i];
    if (!WANT(i)) continue;
    double per = (double)r->cpu_us / o.inputs;
    if (r->error) {
      rc = 1;
      if (o.json)
        printf("{\"bench\":\"pool\",\"mode\":\"%s\",\"error\":%d}\n", r->name,
               r->error);
      else
        printf("  %-11s error: %s\n", r->name, strerror(-r->error));
      continue;
    }
    double ratio = base > 0 ? per / base : 0;
    double rate = r->wall_ms > 0 ? o.inputs * 1000.0 / r->wall_ms : 0;
    if (o.json)
      printf(
          "{\"bench\":\"pool\",\"mode\":\"%s\",\"inputs\":%u,"
          "\"workers\":%u,\"cpu_us_per_input\":%.1f,\"ratio\":%.3f,"
          "\"wall_ms\":%.1f,\"output_bytes\":%llu}\n",
          r->name, o.inputs, o.workers, per, ratio, r->wall_ms,
          (unsigned long long)r->out_bytes);
    else
      printf("  %-11s %12.1f %7.2fx %10.1f %10.1f %12llu\n", r->name, per,
             ratio, r->wall_ms, rate, (unsigned long long)r->out_bytes);
  }
  if (!o.json && !o.only && !rows[1].error && !rows[2].error &&
      !rows[3].error && rows[1].cpu_us)
    printf(
        "  goals: shared <= 1.10x, one job per process <= 1.30x (256 KiB) / "
        "2x (16 KiB) in-process CPU per input\n"
        "  against %s (the same parallelism, no capsa): shared %.2fx, "
        "1/proc %.2fx\n",
        par_name, (double)rows[2].cpu_us / rows[1].cpu_us,
        (double)rows[3].cpu_us / rows[1].cpu_us);
  return rc;
}
