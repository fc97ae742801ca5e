// capsa bench host: what renderers cost the host, and what a greedy one
// costs its siblings, measured in one run.
//
//   per renderer   the host's descriptors, RSS and threads with 1, 10 and
//                  100 idle READY renderers, minus the same host with none
//                  (the zygote started): the cost each renderer adds
//   neighbours     the round-trip time of PING requests to three healthy
//                  renderers (p50, p99), alone and next to a greedy one
//                  that floods LOG messages as fast as it can, with its
//                  LOG budget lifted (the worst it can do and live): the
//                  ratio is the slowdown a greedy sibling causes; "host
//                  on CPU" is the host thread's CPU time over the wall time
//                  of the phase: the rest it spent waiting for renderers to
//                  be scheduled (or preempted, on shared cores)
//
// The three phases run in rounds (--rounds, default 3), each ratio against
// its own round's "alone" phase, and the medians over rounds are printed:
// on a shared 2-vCPU machine the same phase's p99 moves by several times
// between seconds. The greedy renderer runs under its kind's default
// host_share_percent unless --greedy-share says otherwise (100: no cap),
// to compare the two in one run of the machine.
//
// The thread pool is libuv's (4 threads, started at capsa_host_start, see
// host/broker/dns.c): it does not grow with renderers; dns lookups in flight
// are bounded per renderer and per host (capsa_kind_options_t).
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/capsa_host.h"
#include "host/cli/bench_util.h"
#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "renderer/runtime.h"

#define MAX_RENDERERS 100
#define MAX_SAMPLES 200000
#define MAX_ROUNDS 9

static long count_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return -1;
  long n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "re");
  if (!f) return -1;
  char line[256];
  long v = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &v) == 1) break;
  fclose(f);
  return v;
}

// --- renderers ---

// Healthy: the runtime answers PING itself; nothing else to do.
static const capsa_renderer_handlers_t kQuiet = {.kind = "bench-host"};

// Greedy: LOG messages until the channel refuses.
static int flood(capsa_rctx_t *r) {
  for (unsigned long i = 0;; i++)
    if (capsa_rctx_log(r, CAPSA_LOG_INFO, "greedy %lu: %s", i,
                       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") <
        0)
      return 0;
}
static const capsa_renderer_handlers_t kGreedy = {.kind = "bench-greedy",
                                                  .on_start = flood};

// Spinner: only burns CPU, says nothing: the part of a flood's cost that is
// the machine's (cores shared), not the host's.
static int spin(capsa_rctx_t *r) {
  (void)r;
  for (volatile unsigned long i = 0;; i++) {
  }
  return 0;
}
static const capsa_renderer_handlers_t kSpinner = {.kind = "bench-spinner",
                                                   .on_start = spin};

CAPSA_RENDERER_KIND(bench_host, "bench-host", capsa_renderer_main, &kQuiet)
CAPSA_RENDERER_KIND(bench_spinner, "bench-spinner", capsa_renderer_main,
                    &kSpinner)
CAPSA_RENDERER_KIND(bench_greedy, "bench-greedy", capsa_renderer_main, &kGreedy)

// --- host ---

struct bench;
struct pinger {  // a healthy renderer's PING loop
  struct bench *b;
  unsigned i;
};

struct bench {
  uv_loop_t loop;
  struct pinger pingers[3];
  capsa_host_t host;
  int quiet, greedy, spinner;
  unsigned ready, closed, logs, ended;
  capsa_renderer_t *r[MAX_RENDERERS + 1];
  unsigned n;
  // Round trips in flight / measured.
  double sent_us[4];
  double *rtt;
  unsigned nrtt, want, outstanding;
  int error;
};

static void on_event(capsa_host_t *h, const capsa_host_event_t *ev) {
  struct bench *b = h->data;
  switch (ev->type) {
    case CAPSA_EV_READY:
      b->ready++;
      break;
    case CAPSA_EV_LOG:
      b->logs++;
      break;
    case CAPSA_EV_CLOSED:
      b->closed++;
      break;
    case CAPSA_EV_MESSAGE:
    case CAPSA_EV_RESTARTED:
      break;
    default:  // an end: counted, and named when it is not ours
      b->ended++;
      if (ev->type != CAPSA_EV_KILLED)
        fprintf(stderr, "capsa bench host: renderer %s %s\n",
                capsa_host_event_name(ev->type), ev->text ? ev->text : "");
  }
}

// The greedy kind's host_share_percent (0: the default), for comparing.
static unsigned g_greedy_share;

static int open_host(struct bench *b) {
  memset(b, 0, sizeof *b);
  int err = uv_loop_init(&b->loop);
  if (err < 0) return err;
  err = capsa_host_init(&b->loop, &b->host, NULL, on_event);
  if (err < 0) return err;
  b->host.data = b;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "bench-host", capsa_renderer_main,
                          (void *)&kQuiet);
  k.heartbeat_ms = 0;
  b->quiet = capsa_host_define_kind(&b->host, &k);
  capsa_kind_options_init(&k, "bench-greedy", capsa_renderer_main,
                          (void *)&kGreedy);
  k.heartbeat_ms = 0;
  k.limit_log_bytes_per_second = CAPSA_LIMIT_NONE;  // greedy, yet alive
  k.host_share_percent = g_greedy_share;
  b->greedy = capsa_host_define_kind(&b->host, &k);
  capsa_kind_options_init(&k, "bench-spinner", capsa_renderer_main,
                          (void *)&kSpinner);
  k.heartbeat_ms = 0;
  b->spinner = capsa_host_define_kind(&b->host, &k);
  if (b->quiet < 0 || b->greedy < 0 || b->spinner < 0) return -EINVAL;
  return capsa_host_start(&b->host);
}

static void run_until(struct bench *b, bool (*done)(struct bench *),
                      double ms) {
  double end = capsa_bench_now_us() + ms * 1e3;
  while (!done(b) && capsa_bench_now_us() < end) uv_run(&b->loop, UV_RUN_ONCE);
}

static bool all_ready(struct bench *b) {
  return b->ready >= b->n;
}
static bool all_closed(struct bench *b) {
  return b->closed >= b->n;
}

static int spawn(struct bench *b, int kind) {
  if (b->n > MAX_RENDERERS) return -E2BIG;
  int err = capsa_host_spawn(&b->host, kind, NULL, &b->r[b->n]);
  if (err == 0) b->n++;
  return err;
}

static void close_host(struct bench *b) {
  for (unsigned i = 0; i < b->n; i++) capsa_renderer_kill(b->r[i]);
  run_until(b, all_closed, 10000);
  capsa_host_close(&b->host, NULL);
  uv_run(&b->loop, UV_RUN_DEFAULT);
  uv_loop_close(&b->loop);
}

// --- per renderer ---

struct cost {
  unsigned n;
  long fds, rss_kb, threads;
  int error;
};

static void measure_cost(unsigned n, struct cost *c) {
  struct bench b;
  c->n = n;
  c->error = open_host(&b);
  long fd0 = count_dir("/proc/self/fd"), rss0 = rss_kb();
  long th0 = count_dir("/proc/self/task");
  for (unsigned i = 0; i < n && !c->error; i++) c->error = spawn(&b, b.quiet);
  if (!c->error) {
    run_until(&b, all_ready, 30000);
    if (b.ready < n) c->error = -ETIMEDOUT;
  }
  c->fds = count_dir("/proc/self/fd") - fd0;
  c->rss_kb = rss_kb() - rss0;
  c->threads = count_dir("/proc/self/task") - th0;
  close_host(&b);
}

// --- neighbours ---

static void on_pong(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                    void *arg);

static int ping(struct bench *b, unsigned i) {
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_PING);
  b->sent_us[i] = capsa_bench_now_us();
  b->pingers[i] = (struct pinger){b, i};
  int err = capsa_renderer_request(b->r[i], &m, 10000, on_pong, &b->pingers[i]);
  if (err == 0) b->outstanding++;
  return err;
}

static void on_pong(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                    void *arg) {
  struct pinger *p = arg;
  struct bench *b = p->b;
  unsigned i = p->i;
  b->outstanding--;
  if (status < 0) {
    if (!b->error) b->error = status;
    return;
  }
  if (b->nrtt < b->want)
    b->rtt[b->nrtt++] = capsa_bench_now_us() - b->sent_us[i];
  if (b->nrtt + b->outstanding < b->want) ping(b, i);
}

static bool rtt_done(struct bench *b) {
  return b->error || (b->nrtt >= b->want && b->outstanding == 0);
}

// CPU time of the calling thread, µs.
static double thread_cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct latency {
  double p50, p99, host_on_cpu;
  unsigned logs;
  long peak_fds, peak_rss_kb;
  int error;
};

static void sample_peaks(uv_timer_t *t) {
  struct latency *l = t->data;
  long fds = count_dir("/proc/self/fd"), rss = rss_kb();
  if (fds > l->peak_fds) l->peak_fds = fds;
  if (rss > l->peak_rss_kb) l->peak_rss_kb = rss;
}

// Three healthy renderers, each with one PING in flight at a time, `want`
// round trips in all; with a greedy fourth one flooding LOG if asked.
enum neighbour { NONE, FLOOD, SPIN };

static void measure_latency(enum neighbour nb, unsigned want,
                            struct latency *l) {
  struct bench b;
  memset(l, 0, sizeof *l);
  l->error = open_host(&b);
  double *rtt = calloc(want, sizeof *rtt);
  if (!rtt && !l->error) l->error = -ENOMEM;
  for (unsigned i = 0; i < 3 && !l->error; i++) l->error = spawn(&b, b.quiet);
  if (nb != NONE && !l->error)
    l->error = spawn(&b, nb == FLOOD ? b.greedy : b.spinner);
  if (!l->error) {
    run_until(&b, all_ready, 30000);
    if (b.ready < b.n) l->error = -ETIMEDOUT;
  }
  if (!l->error) {
    b.rtt = rtt;
    b.want = want;
    // Let the flood get going first.
    double settle = capsa_bench_now_us() + 200e3;
    while (capsa_bench_now_us() < settle) uv_run(&b.loop, UV_RUN_NOWAIT);
    // Peaks are sampled on a timer, not every iteration: reading /proc on
    // each wakeup would be most of the host's work and of the latency.
    uv_timer_t sampler;
    uv_timer_init(&b.loop, &sampler);
    sampler.data = l;
    uv_timer_start(&sampler, sample_peaks, 0, 10);
    double wall0 = capsa_bench_now_us(), cpu0 = thread_cpu_us();
    for (unsigned i = 0; i < 3 && !l->error; i++) l->error = ping(&b, i);
    double end = capsa_bench_now_us() + 120e6;
    while (!rtt_done(&b) && capsa_bench_now_us() < end) {
      uv_run(&b.loop, UV_RUN_ONCE);
    }
    double wall = capsa_bench_now_us() - wall0;
    uv_close((uv_handle_t *)&sampler, NULL);
    if (wall > 0) l->host_on_cpu = (thread_cpu_us() - cpu0) / wall;
    if (!l->error)
      l->error = b.error ? b.error : (rtt_done(&b) ? 0 : -ETIMEDOUT);
  }
  if (!l->error && b.nrtt > 0) {
    qsort(rtt, b.nrtt, sizeof *rtt, capsa_bench_cmp_double);
    l->p50 = rtt[b.nrtt / 2];
    l->p99 = rtt[(size_t)(b.nrtt * 0.99)];
  }
  l->logs = b.logs;
  close_host(&b);
  free(rtt);
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof *v, capsa_bench_cmp_double);
  return n ? v[n / 2] : 0;
}

static int usage(void) {
  fprintf(stderr,
          "usage: capsa bench host [--pings N] [--rounds R] "
          "[--greedy-share PERCENT]\n");
  return CAPSA_EXIT_USAGE;
}

int capsa_bench_host(int argc, char **argv) {
  unsigned want = 20000, rounds = 3;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) return usage();
    char *end = NULL;
    unsigned long v = strtoul(argv[i + 1], &end, 10);
    bool num = *argv[i + 1] && *end == 0;
    if (strcmp(argv[i], "--pings") == 0 && num && v > 0 && v <= MAX_SAMPLES)
      want = (unsigned)v;
    else if (strcmp(argv[i], "--rounds") == 0 && num && v > 0 &&
             v <= MAX_ROUNDS)
      rounds = (unsigned)v;
    else if (strcmp(argv[i], "--greedy-share") == 0 && num && v <= 100)
      g_greedy_share = (unsigned)v;
    else
      return usage();
  }
  capsa_kind_options_t defaults;
  capsa_kind_options_init(&defaults, "bench-greedy", capsa_renderer_main,
                          (void *)&kGreedy);
  unsigned share =
      g_greedy_share ? g_greedy_share : defaults.host_share_percent;
  int rc = 0;
  printf(
      "host cost per renderer (idle, READY; minus a started host with "
      "none)\n  %-10s %10s %12s %14s %10s\n",
      "renderers", "host fds", "fds each", "host RSS kB", "threads");
  unsigned ns[] = {1, 10, 100};
  for (unsigned i = 0; i < 3; i++) {
    struct cost c;
    measure_cost(ns[i], &c);
    if (c.error) {
      printf("  %-10u error: %s\n", ns[i], strerror(-c.error));
      rc = 1;
      continue;
    }
    printf("  %-10u %10ld %12.1f %14ld %10ld\n", c.n, c.fds,
           (double)c.fds / c.n, c.rss_kb, c.threads);
  }
  // Rounds of the three phases back to back: a shared machine's stalls come
  // and go over seconds, so each ratio is taken against the "alone" phase of
  // its own round, and the median over rounds is what is reported.
  printf(
      "PING round trips to 3 healthy renderers (%u per phase, %u rounds, "
      "µs; greedy host share %u%%)\n"
      "  %-5s %-22s %9s %9s %10s %12s %9s %12s\n",
      want, rounds, share, "round", "", "p50", "p99", "p99 ratio",
      "host on CPU", "peak fds", "peak RSS kB");
  const char *names[3] = {"alone", "next to a LOG flood",
                          "next to a CPU spinner"};
  enum neighbour order[3] = {NONE, FLOOD, SPIN};
  double ratio[3][MAX_ROUNDS], p99s[3][MAX_ROUNDS];
  unsigned good[3] = {0, 0, 0};
  unsigned long logs = 0;
  for (unsigned round = 0; round < rounds; round++) {
    struct latency l[3];
    for (int i = 0; i < 3; i++) measure_latency(order[i], want, &l[i]);
    for (int i = 0; i < 3; i++) {
      if (l[i].error) {
        printf("  %-5u %-22s error: %s\n", round + 1, names[i],
               strerror(-l[i].error));
        rc = 1;
        continue;
      }
      double r = !l[0].error && l[0].p99 > 0 ? l[i].p99 / l[0].p99 : 0;
      if (!l[0].error) {
        ratio[i][good[i]] = r;
        p99s[i][good[i]++] = l[i].p99;
      }
      printf("  %-5u %-22s %9.1f %9.1f %9.2fx %11.0f%% %9ld %12ld\n", round + 1,
             names[i], l[i].p50, l[i].p99, r, l[i].host_on_cpu * 100,
             l[i].peak_fds, l[i].peak_rss_kb);
    }
    logs += l[1].logs;
  }
  printf("  median over rounds:\n");
  for (int i = 0; i < 3; i++)
    if (good[i])
      printf("  %-5s %-22s %9s %9.1f %9.2fx\n", "", names[i], "",
             median(p99s[i], good[i]), median(ratio[i], good[i]));
  printf(
      "  the floods delivered %lu LOG events in all (goal: p99 ratio <= 2x); "
      "a spinner that sends nothing shows what the shared cores alone cost "
      "(%ld cores here)\n",
      logs, sysconf(_SC_NPROCESSORS_ONLN));
  return rc;
}
