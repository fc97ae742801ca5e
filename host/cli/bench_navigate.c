// capsa bench navigate: what a browser-style embedder pays to put a new
// page in a tab (issue 36), measured side by side in one run, each row on
// a host of its own with the kind's keep_spare, printed as ratios against
// the first:
//
//   spawn -> READY          capsa_host_spawn of a pre-forked spare until its
//                           READY (the baseline: `capsa bench spawn`'s
//                           "host spawn -> READY, spare")
//   spawn -> READY -> reply the same and the first request's answer (a
//                           Probe): where every row below ends
//   navigate                capsa_renderer_navigate until the new
//                           incarnation's READY and its answer to the
//                           host's first request (a Probe; goal <= 1.5x)
//   kill + spawn            what embedders did before navigate existed:
//                           capsa_renderer_kill, a new handle from
//                           capsa_host_spawn, READY, the same first answer
//   crash -> reload         the renderer crashes on a Probe; the embedder
//                           navigates from the CRASHED event (the sad tab's
//                           "reload"); until the new incarnation answers
//   page, warm-up           the demo page kind (FreeType, three fonts):
//                           capsa_host_spawn until its first frame of a
//                           short page, the fonts mapped and their faces
//                           loaded once in the zygote (the kind's warm-up)
//   page, no warm-up        the same, each renderer fetching its three
//                           fonts from the broker and loading them at start
//
// The old incarnation's exit is part of every row but the first: its
// process must be gone (and its handles closed) before the next starts.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "demos/demos.h"
#include "demos/page/page_demo.h"
#include "host/capsa_host.h"
#include "host/cli/bench_echo.capsa.h"
#include "host/cli/bench_util.h"
#include "host/cli/cli_host.h"
#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "renderer/runtime.h"

#define NAV_RUNS 200

// --- the renderer: answers a Probe, or crashes when asked -------------------

static int nav_on_message(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE || m->u.iface.id != CAPSA_BENCH_PROBE)
    return 0;
  const capsa_bench_probe_t *p = m->u.iface.value;
  // A fault, not raise(): a renderer that is pid 1 of its namespace
  // ignores a SIGSEGV sent to itself, not one the kernel forces.
  if (p->crash) *(volatile int *)NULL = 1;
  capsa_bench_probed_t a;
  capsa_bench_probed_init(&a);
  a.seq = p->seq;
  capsa_msg_t rep;
  capsa_msg_init_iface(&rep, &capsa_bench_interface, CAPSA_BENCH_PROBED, &a);
  return capsa_rctx_reply(r, m, &rep);
}

static const capsa_interface_t *const kNavIfaces[] = {&capsa_bench_interface};
static const capsa_renderer_handlers_t kNav = {.kind = "bench-nav",
                                               .on_message = nav_on_message,
                                               .interfaces = kNavIfaces,
                                               .ninterfaces = 1};
CAPSA_RENDERER_KIND(bench_nav, "bench-nav", capsa_renderer_main, &kNav)

// --- the host ---------------------------------------------------------------

enum row {
  R_SPAWN,
  R_SPAWN_REPLY,
  R_NAVIGATE,
  R_KILL_SPAWN,
  R_CRASH_RELOAD,
  R_PAGE_WARM,
  R_PAGE_COLD,
  R_COUNT
};
static const char *const kRowName[R_COUNT] = {
    "spawn -> READY, spare",           "spawn -> READY -> reply, spare",
    "navigate -> READY -> reply",      "kill + spawn -> READY -> reply",
    "crash -> reload -> reply",        "page: spawn -> frame, warm-up",
    "page: spawn -> frame, no warm-up"};

// --- the page rows: the CLI's demo host, with and without the warm-up -------

static const char kPageMd[] = "# A page\n\nSome *text* and `code`.\n";

struct page_rows {
  struct capsa_cli_host warm, cold;
  int md_fd, null_fd;
  bool warm_open, cold_open;
};

static int page_rows_open(struct page_rows *p) {
  memset(p, 0, sizeof *p);
  // A regular file (the page kind takes a Load's file handle, not a memfd).
  // Read-only, as `capsa render` opens its input: the page's handle may
  // not carry more than the rights it declares.
  char path[] = "/tmp/capsa-bench-page-XXXXXX";
  int rw = mkostemp(path, O_CLOEXEC);
  bool wrote = rw >= 0 && write(rw, kPageMd, sizeof kPageMd - 1) ==
                              (ssize_t)(sizeof kPageMd - 1);
  p->md_fd = wrote ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (rw >= 0) {
    close(rw);
    unlink(path);
  }
  p->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (p->md_fd < 0 || p->null_fd < 0) return -EIO;
  // The CLI's host (every demo kind), with and without the warm-up.
  p->warm_open = capsa_cli_host_open(&p->warm, capsa__demo_kinds,
                                     capsa__ndemo_kinds, true) == 0;
  p->cold_open = capsa_cli_host_open(&p->cold, capsa__demo_kinds,
                                     capsa__ndemo_kinds, false) == 0;
  bool fonts = false;  // the page kind's warm-up has its fonts
  for (unsigned i = 0; p->warm_open && i < p->warm.nkinds; i++)
    if (p->warm.kinds[i].demo == &capsa__demo_page)
      fonts = p->warm.kinds[i].nfds > 0;
  if (p->warm_open && !fonts) return -ENOENT;  // no fonts
  return p->warm_open && p->cold_open ? 0 : -ENOEXEC;
}

static void page_rows_close(struct page_rows *p) {
  if (p->warm_open) capsa_cli_host_close(&p->warm);
  if (p->cold_open) capsa_cli_host_close(&p->cold);
  if (p->md_fd >= 0) close(p->md_fd);
  if (p->null_fd >= 0) close(p->null_fd);
}

// capsa_host_spawn to the page's first frame (the CLI job's own clock).
static int page_one(struct page_rows *p, bool warm, double *us) {
  struct capsa_cli_job job;
  int err = capsa_cli_render(warm ? &p->warm : &p->cold, p->md_fd, 320,
                             p->null_fd, NULL, NULL, &job);
  *us = job.ms * 1000.0;
  if (err < 0) {  // what the renderer said, for the row's error line
    fprintf(stderr, "capsa bench navigate: page%s: %s\n",
            warm ? "" : " (no warm-up)", job.outcome);
    for (size_t i = 0; i < job.nlogs; i++)
      fprintf(stderr, "  renderer: %s\n", job.logs[i]);
  }
  capsa_cli_job_free(&job);
  return err;
}

struct nav {
  uv_loop_t loop;
  capsa_host_t host;
  capsa_renderer_t *r;
  unsigned ready, closed, replies, crashed;
  int failed;  // an event that should not happen in this bench, or -errno
  bool reload_on_crash;
};

static void nav_event(capsa_host_t *h, const capsa_host_event_t *ev) {
  struct nav *n = h->data;
  switch (ev->type) {
    case CAPSA_EV_READY:
      n->ready++;
      break;
    case CAPSA_EV_CLOSED:
      n->closed++;
      break;
    case CAPSA_EV_CRASHED:
      n->crashed++;
      if (n->reload_on_crash && capsa_renderer_navigate(ev->renderer) < 0)
        n->failed = -ESRCH;
      break;
    case CAPSA_EV_SANDBOX_REFUSED:
    case CAPSA_EV_BAD_MESSAGE:
    case CAPSA_EV_SPAWN_FAILED:
      n->failed = -EPROTO;
      break;
    default:
      break;
  }
}

static int nav_open(struct nav *n) {
  memset(n, 0, sizeof *n);
  uv_loop_init(&n->loop);
  int err = capsa_host_init(&n->loop, &n->host, NULL, nav_event);
  n->host.data = n;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "bench-nav", capsa_renderer_main, (void *)&kNav);
  k.interfaces = kNavIfaces;
  k.ninterfaces = 1;
  k.keep_spare = true;
  k.heartbeat_ms = 0;
  if (err == 0) err = capsa_host_define_kind(&n->host, &k);
  if (err >= 0) err = capsa_host_start(&n->host);
  if (err < 0)
    fprintf(stderr, "capsa bench navigate: host: %s (%s)\n", strerror(-err),
            capsa_host_start_error(&n->host));
  return err < 0 ? err : 0;
}

static void nav_close(struct nav *n) {
  capsa_host_close(&n->host, NULL);
  uv_run(&n->loop, UV_RUN_DEFAULT);
  uv_loop_close(&n->loop);
}

static void on_probed(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                      void *arg) {
  struct nav *n = arg;
  if (status == 0)
    n->replies++;
  else if (status != -ECANCELED)  // the crash row's probe: cancelled
    n->failed = status;
}

static int probe(struct nav *n, bool crash) {
  capsa_bench_probe_t p;
  capsa_bench_probe_init(&p);
  p.seq = n->replies + 1;
  p.crash = crash;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_bench_interface, CAPSA_BENCH_PROBE, &p);
  return capsa_renderer_request(n->r, &m, 5000, on_probed, n);
}

// Sleeps `ms` with nothing asked of the loop, then lets it handle what
// came meanwhile: the previous row's CLOSED lands and the zygote makes its
// spare again (after a quiet millisecond), as between an application's
// navigations.
// Sleeps `ms` with nothing asked of the loop, then lets it handle what
// came meanwhile: the previous row's CLOSED lands and the zygote makes its
// spare again (after a quiet millisecond), as between an application's
// navigations.
static long g_settle_ms = 5;
static void settle_ms(struct nav *n, long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  uv_run(&n->loop, UV_RUN_NOWAIT);
}

// Runs the loop until `*counter` exceeds `was` (or a failure).
static int wait_for(struct nav *n, const unsigned *counter, unsigned was) {
  while (*counter == was && !n->failed) uv_run(&n->loop, UV_RUN_ONCE);
  return n->failed;
}

// Until READY, then a probe answered: the part every row but the first
// ends with.
static int ready_then_reply(struct nav *n, unsigned ready) {
  int err = wait_for(n, &n->ready, ready);
  unsigned replies = n->replies;
  if (err == 0) err = probe(n, false);
  if (err == 0) err = wait_for(n, &n->replies, replies);
  return err;
}

static struct page_rows g_pages;
static int g_pages_err;

static int one(struct nav *n, enum row row, double *us) {
  if (row == R_PAGE_WARM || row == R_PAGE_COLD)
    return g_pages_err < 0 ? g_pages_err
                           : page_one(&g_pages, row == R_PAGE_WARM, us);
  // Off the clock: a READY renderer to act on, its spare made again.
  if (!n->r) {
    unsigned ready = n->ready;
    int err = capsa_host_spawn(&n->host, 0, NULL, &n->r);
    if (err == 0) err = wait_for(n, &n->ready, ready);
    if (err < 0) return err;
  }
  settle_ms(n, g_settle_ms);
  unsigned ready = n->ready, closed = n->closed, crashed = n->crashed;
  double t0 = capsa_bench_now_us();
  int err = 0;
  switch (row) {
    case R_SPAWN:
    case R_SPAWN_REPLY: {
      // A new handle from the spare; the second row also asks it the first
      // request (a navigation's own end point, without the navigation).
      capsa_renderer_t *fresh = NULL, *kept = n->r;
      err = capsa_host_spawn(&n->host, 0, NULL, &fresh);
      if (err == 0 && row == R_SPAWN) err = wait_for(n, &n->ready, ready);
      if (err == 0 && row == R_SPAWN_REPLY) {
        n->r = fresh;
        err = ready_then_reply(n, ready);
        n->r = kept;
      }
      *us = capsa_bench_now_us() - t0;
      if (fresh) capsa_renderer_kill(fresh);  // off the clock
      if (err == 0) err = wait_for(n, &n->closed, closed);
      return err;
    }
    case R_NAVIGATE:
      err = capsa_renderer_navigate(n->r);
      if (err == 0) err = ready_then_reply(n, ready);
      break;
    case R_KILL_SPAWN:
      err = capsa_renderer_kill(n->r);
      n->r = NULL;
      if (err == 0) err = capsa_host_spawn(&n->host, 0, NULL, &n->r);
      if (err == 0) err = ready_then_reply(n, ready);
      break;
    case R_CRASH_RELOAD:
      n->reload_on_crash = true;
      err = probe(n, true);
      if (err == 0) err = wait_for(n, &n->crashed, crashed);
      if (err == 0) err = ready_then_reply(n, ready);
      n->reload_on_crash = false;
      break;
    default:
      return -EINVAL;
  }
  *us = capsa_bench_now_us() - t0;
  return err;
}

static int cmp(const void *a, const void *b) {
  return capsa_bench_cmp_double(a, b);
}

int capsa_bench_navigate(int argc, char **argv) {
  int runs = 100;
  bool json = false;
  const char *only = NULL;  // one row (and the baseline), for profiling
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--settle") == 0 && i + 1 < argc) {
      g_settle_ms = atol(argv[++i]);
      if (g_settle_ms < 1 || g_settle_ms > 1000) g_settle_ms = 5;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      fprintf(stderr,
              "usage: capsa bench navigate [--runs N (1..%d, default 100)] "
              "[--only ROW] [--settle MS (default 5)] [--json]\n",
              NAV_RUNS);
      return CAPSA_EXIT_USAGE;
    }
  }
  if (runs < 1 || runs > NAV_RUNS) {
    fprintf(stderr, "capsa bench navigate: --runs %d: give 1..%d\n", runs,
            NAV_RUNS);
    return CAPSA_EXIT_USAGE;
  }
  g_pages_err = page_rows_open(&g_pages);
  struct nav n;
  if (nav_open(&n) < 0) return 1;
  static double t[R_COUNT][NAV_RUNS];
  int k[R_COUNT] = {0}, err[R_COUNT] = {0};
  // Interleaved, one of each per round, after one untimed round.
  for (int i = -1; i < runs; i++) {
    for (int row = 0; row < R_COUNT; row++) {
      if (err[row]) continue;
      // --only takes a row's name or its start ("navigate").
      if (only && row != R_SPAWN &&
          strncmp(only, kRowName[row], strlen(only)) != 0)
        continue;
      double us = 0;
      int e = one(&n, (enum row)row, &us);
      if (e < 0) {
        err[row] = e;
        n.failed = 0;
        continue;
      }
      if (i >= 0) t[row][k[row]++] = us;
    }
  }
  nav_close(&n);
  page_rows_close(&g_pages);
  double med[R_COUNT] = {0}, min[R_COUNT] = {0};
  for (int row = 0; row < R_COUNT; row++) {
    if (!k[row]) continue;
    qsort(t[row], (size_t)k[row], sizeof t[row][0], cmp);
    med[row] = t[row][k[row] / 2];
    min[row] = t[row][0];
  }
  double base = med[R_SPAWN];
  if (json) {
    printf("{\"bench\":\"navigate\",\"unit\":\"us\",\"results\":[");
    for (int row = 0; row < R_COUNT; row++)
      printf(
          "%s{\"name\":\"%s\",\"runs\":%d,\"min\":%.1f,"
          "\"median\":%.1f,\"ratio\":%.2f,\"error\":%d}",
          row ? "," : "", kRowName[row], k[row], min[row], med[row],
          base > 0 ? med[row] / base : 0.0, err[row]);
    printf("]}\n");
  } else {
    printf(
        "navigation, interleaved in one run (us; ratio = median / spawn "
        "-> READY of a spare)\n");
    printf("  %-32s %5s %9s %9s %7s\n", "row", "runs", "min", "median",
           "ratio");
    for (int row = 0; row < R_COUNT; row++) {
      if (!k[row] && !err[row]) continue;  // not asked for (--only)
      if (err[row])
        printf("  %-32s failed: %s\n", kRowName[row], strerror(-err[row]));
      else
        printf("  %-32s %5d %9.1f %9.1f %6.2fx\n", kRowName[row], k[row],
               min[row], med[row], base > 0 ? med[row] / base : 0.0);
    }
    if (med[R_PAGE_WARM] > 0 && med[R_PAGE_COLD] > 0)
      printf(
          "page kind, spawn -> first frame: with the warm-up %.2fx the "
          "time without it\n",
          med[R_PAGE_WARM] / med[R_PAGE_COLD]);
    if (med[R_SPAWN_REPLY] > 0 && med[R_NAVIGATE] > 0)
      printf(
          "navigate -> READY -> first reply / a spare's spawn -> READY -> "
          "first reply = %.2fx\n",
          med[R_NAVIGATE] / med[R_SPAWN_REPLY]);
    if (base > 0 && med[R_NAVIGATE] > 0)
      printf(
          "navigate -> READY -> first reply / spawn -> READY of a spare = "
          "%.2fx (goal <= 1.5x)\n",
          med[R_NAVIGATE] / base);
  }
  for (int row = 0; row < R_COUNT; row++)
    if (err[row]) return 1;
  return 0;
}
