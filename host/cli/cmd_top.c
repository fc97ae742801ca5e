// capsa top: the task manager (capsa_host_renderer_info) on a demo host.
// Starts a host with renderers of two kinds (two "page", one "gzip"; the
// page kind keeps a spare), waits until they are READY and prints a table
// of the host's processes as top does, once or -n times, --interval apart.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demos/gzip/gzip_demo.h"
#include "demos/page/page_demo.h"
#include "host/capsa_host.h"
#include "host/cli/commands.h"
#include "renderer/runtime.h"

#define TOP_USAGE "[-n COUNT] [--interval MS]"
#define TOP_PAGES 2
#define TOP_MAX 32
#define READY_TIMEOUT_MS 20000

struct top {
  uv_loop_t loop;
  capsa_host_t host;
  unsigned ready, failed;
  bool closed;
  char failure[200];
};

static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  struct top *t = host->data;
  if (ev->type == CAPSA_EV_READY) {
    t->ready++;
  } else if (ev->type == CAPSA_EV_LOG) {
    if (ev->status == CAPSA_HOST_LOG_STDERR)
      fprintf(stderr, "capsa top: renderer pid %d stderr: %s\n",
              (int)capsa_renderer_pid(ev->renderer), ev->text);
  } else if (ev->type != CAPSA_EV_MESSAGE && ev->type != CAPSA_EV_CLOSED &&
             ev->type != CAPSA_EV_KILLED) {
    t->failed++;
    snprintf(t->failure, sizeof t->failure, "%s%s%s",
             capsa_host_event_name(ev->type), ev->text ? ": " : "",
             ev->text ? ev->text : "");
  }
}

static void on_closed(capsa_host_t *host) {
  ((struct top *)host->data)->closed = true;
}

// "812K", "3.4M", "1.2G"; "-" without a source.
static void fmt_bytes(char *buf, size_t len, uint64_t b, capsa_mem_source_t s) {
  if (s == CAPSA_MEM_NONE)
    snprintf(buf, len, "-");
  else if (b < (10u << 20))
    snprintf(buf, len, "%lluK", (unsigned long long)(b >> 10));
  else if (b < (10ull << 30))
    snprintf(buf, len, "%.1fM", (double)b / (1 << 20));
  else
    snprintf(buf, len, "%.1fG", (double)b / (1 << 30));
}

static void print_table(const capsa_renderer_info_t *info, int n) {
  printf("%7s  %-8s %-10s %8s %8s %8s %8s %8s  %s\n", "PID", "KIND", "STATE",
         "UPTIME", "RESTARTS", "USS", "PSS", "CPU", "MEM-SOURCE");
  for (int i = 0; i < n && i < TOP_MAX; i++) {
    const capsa_renderer_info_t *e = &info[i];
    char uss[16], pss[16];
    fmt_bytes(uss, sizeof uss, e->uss_bytes, e->uss_source);
    fmt_bytes(pss, sizeof pss, e->pss_bytes, e->pss_source);
    const char *state = e->role == CAPSA_RINFO_SPARE
                            ? "spare"
                            : capsa_rinfo_state_name(e->state);
    printf("%7d  %-8s %-10s %7.1fs %8u %8s %8s %7.2fs  %s\n", (int)e->pid,
           e->kind_name ? e->kind_name : "?", state, (double)e->uptime_ms / 1e3,
           e->restarts, uss, pss, (double)e->cpu_usec / 1e6,
           capsa_mem_source_name(e->uss_source));
  }
}

static void on_tick(uv_timer_t *tm) {
  *(bool *)tm->data = true;
}

// Runs the loop for `ms` (or until `stop` returns true, when given).
static void run_for(struct top *t, uint64_t ms, bool (*stop)(struct top *)) {
  uv_timer_t timer;
  bool fired = false;
  uv_timer_init(&t->loop, &timer);
  timer.data = &fired;
  uv_timer_start(&timer, on_tick, ms, 0);
  while (!fired && !(stop && stop(t))) uv_run(&t->loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&timer, NULL);
  uv_run(&t->loop, UV_RUN_NOWAIT);  // the timer's close
}

static bool all_ready(struct top *t) {
  return t->ready >= TOP_PAGES + 1 || t->failed > 0;
}

// The page kind's next spare is forked once the zygote's control socket has
// been quiet a moment after the last hand-over: the first sample waits for
// it (bounded by SPARE_TIMEOUT_MS), so that it shows what a settled host
// holds rather than a race with the zygote.
#define SPARE_TIMEOUT_MS 2000
static bool spare_listed(struct top *t) {
  capsa_renderer_info_t info[TOP_MAX];
  int n = capsa_host_renderer_info(&t->host, info, TOP_MAX);
  for (int i = 0; i < n && i < TOP_MAX; i++)
    if (info[i].role == CAPSA_RINFO_SPARE) return true;
  return false;
}

// A demo kind (its row: name, entry, handlers) with top's own options.
static int define(struct top *t, const struct capsa_demo_kind *d, bool spare) {
  const capsa_renderer_handlers_t *hd = d->handlers;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, d->name, d->entry, (void *)hd);
  k.interfaces = hd->interfaces;  // what its HELLO will name
  k.ninterfaces = hd->ninterfaces;
  k.keep_spare = spare;
  k.allow_fonts = spare;  // the page kind
  return capsa_host_define_kind(&t->host, &k);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *v) {
  char *end;
  errno = 0;
  unsigned long x = strtoul(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || x == 0 || x > max)
    return -EINVAL;
  *v = x;
  return 0;
}

static int top_run(struct top *t, unsigned long count, unsigned long interval) {
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  // The page kind's fonts for the broker (no warm-up: no descriptors).
  int fds[CAPSA_WARM_UP_MAX_FDS];
  unsigned nfds = 0;
  capsa__demo_page.host_options(&o, false, fds, &nfds);
  int err = capsa_host_init(&t->loop, &t->host, &o, on_event);
  if (err < 0) return err;
  t->host.data = t;
  int page = define(t, &capsa__demo_page, true);
  int gzip = define(t, &capsa__demo_gzip, false);
  if (page < 0 || gzip < 0) {
    fprintf(stderr, "capsa top: defining the demo kinds: %s\n",
            capsa_host_start_error(&t->host));
    return page < 0 ? page : gzip;
  }
  err = capsa_host_start(&t->host);
  if (err < 0) {
    fprintf(stderr, "capsa top: host start: %s (%s)\n", strerror(-err),
            capsa_host_start_error(&t->host));
    return err;
  }
  capsa_renderer_t *r;
  for (int i = 0; i < TOP_PAGES + 1 && err == 0; i++)
    err = capsa_host_spawn(&t->host, i < TOP_PAGES ? page : gzip, NULL, &r);
  if (err < 0) {
    fprintf(stderr, "capsa top: spawn: %s\n", strerror(-err));
    return err;
  }
  run_for(t, READY_TIMEOUT_MS, all_ready);
  if (t->failed || t->ready < TOP_PAGES + 1) {
    fprintf(stderr, "capsa top: %u of %d demo renderers ready%s%s\n", t->ready,
            TOP_PAGES + 1, t->failed ? "; " : " (timed out)", t->failure);
    return -ECHILD;
  }
  run_for(t, SPARE_TIMEOUT_MS, spare_listed);
  for (unsigned long i = 0; i < count; i++) {
    if (i > 0) run_for(t, interval, NULL);
    capsa_renderer_info_t info[TOP_MAX];
    int n = capsa_host_renderer_info(&t->host, info, TOP_MAX);
    if (n < 0) {
      fprintf(stderr, "capsa top: capsa_host_renderer_info: %s\n",
              strerror(-n));
      return n;
    }
    if (i > 0) printf("\n");
    printf("capsa top: %d processes, zygote %d (sample %lu of %lu)\n", n,
           (int)capsa_host_zygote_pid(&t->host), i + 1, count);
    print_table(info, n);
    fflush(stdout);
  }
  return 0;
}

int capsa_cmd_top(int argc, char **argv) {
  unsigned long count = 1, interval = 1000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
      if (parse_uint(argv[++i], 100000, &count) < 0)
        return capsa_cli_usage_error("top", TOP_USAGE,
                                     "-n wants a count from 1 to 100000, not",
                                     argv[i]);
    } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
      if (parse_uint(argv[++i], 3600000, &interval) < 0)
        return capsa_cli_usage_error(
            "top", TOP_USAGE,
            "--interval wants milliseconds from 1 to 3600000, not", argv[i]);
    } else if (strcmp(argv[i], "--help") == 0) {
      printf(
          "usage: capsa top %s\n"
          "Starts a host with demo renderers (2 page, 1 gzip; page keeps a "
          "spare) and\nprints its processes COUNT times (default 1), MS "
          "apart (default 1000):\npid, kind, state, uptime, restarts, USS, "
          "PSS, CPU time and where the memory\nfigures came from "
          "(smaps_rollup, cgroup or statm).\n",
          TOP_USAGE);
      return 0;
    } else {
      return capsa_cli_usage_error("top", TOP_USAGE, "unknown argument",
                                   argv[i]);
    }
  }
  struct top t;
  memset(&t, 0, sizeof t);
  if (uv_loop_init(&t.loop) < 0) return 1;
  int err = top_run(&t, count, interval);
  capsa_host_close(&t.host, on_closed);
  while (!t.closed && uv_run(&t.loop, UV_RUN_ONCE)) {
  }
  uv_run(&t.loop, UV_RUN_DEFAULT);
  uv_loop_close(&t.loop);
  return err < 0 ? 1 : 0;
}
