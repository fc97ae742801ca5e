// The live fuzzing driver of capsa fuzz (fuzz_live.h): workers, watcher,
// campaign, replay, minimiser.
#include "host/fuzz/live.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/fuzz/replay.h"
#include "host/fuzz/repro.h"
#include "host/fuzz/stack.h"

enum {
  kLogKeep = 1 << 20,  // bytes of a worker's stderr kept for its report
};

// The kind replaying renderers are (never registered: a forked zygote).
static const char kReplayKind[] = "capsa-fuzz-replay";

// What the worker reports on its pipe, one fixed-size record at a time.
struct progress {
  uint64_t execs;       // renderer sequences finished
  uint64_t received;    // records the host received
  uint64_t messages;    // of those: messages and LOG lines it accepted
  uint64_t bad;         // bad messages caught
  uint64_t killed;      // renderers that ended (killed or exited)
  uint64_t respawned;   // renderers started after the first ones
  uint64_t exited;      // of those that ended: left on their own
  uint64_t crashed;     // of those: a signal the host did not send
  uint64_t next_index;  // the campaign's next renderer seed index
  int done;             // 1: campaign over, host closed cleanly
};

// --- the worker: a host, fuzzing or replaying renderers

enum mode { kCampaign, kSeeds, kRecords };

static const capsa__fz_live_options_t *g_opt;  // the worker's

// What messages name the program by.
static const char *prog(void) {
  return g_opt && g_opt->prog ? g_opt->prog : "capsa fuzz";
}

struct worker {
  uv_loop_t loop;
  capsa_host_t host;
  uv_timer_t tick;
  enum mode mode;
  int kind, out_fd, live, nreplay, replayed;
  uint64_t seed, index, deadline_ms, replay_seed[2];
  capsa__fz_replay_t *rp;
  bool stopping, closed, verbose;
  const capsa__fz_recorder_t *rec;
  struct progress p;
};

static void report(struct worker *w) {
  w->p.next_index = w->index;
  if (w->rec) w->p.received = capsa__fz_recorder_arrivals(w->rec);
  ssize_t n = write(w->out_fd, &w->p, sizeof w->p);
  (void)n;
}

static void spawn_one(struct worker *w) {
  capsa_renderer_t *r;
  if (capsa_host_spawn(&w->host, w->kind, NULL, &r) == 0) w->live++;
}

static void on_closed(capsa_host_t *h) {
  struct worker *w = h->data;
  w->closed = true;
}

static void on_event(capsa_host_t *h, const capsa_host_event_t *ev) {
  struct worker *w = h->data;
  // A replaying renderer the host ended: the turns of its records left
  // are skipped at once (fuzz_repro.h).
  if (w->rp && ev->renderer &&
      (ev->type == CAPSA_EV_BAD_MESSAGE || ev->type == CAPSA_EV_KILLED ||
       ev->type == CAPSA_EV_EXITED || ev->type == CAPSA_EV_CRASHED ||
       ev->type == CAPSA_EV_CLOSED))
    capsa__fz_replay_closed(w->rp, capsa_renderer_pid(ev->renderer));
  if (w->verbose)  // a replay says what the host made of each renderer
    fprintf(stderr, "replay: renderer %d: %s%s%s\n",
            ev->renderer ? (int)capsa_renderer_pid(ev->renderer) : 0,
            capsa_host_event_name(ev->type), ev->text ? ": " : "",
            ev->text ? ev->text : "");
  switch (ev->type) {
    case CAPSA_EV_READY: {
      if (w->mode == kRecords) {  // it sends what it was given
        if (g_opt->on_replay_ready)
          g_opt->on_replay_ready(ev->renderer, g_opt->arg);
        break;
      }
      uint64_t index = w->index;
      uint64_t rs = w->mode == kSeeds
                        ? w->replay_seed[w->replayed++ % w->nreplay]
                        : g_opt->renderer_seed(w->seed, w->index++);
      report(w);  // the next index, before this renderer's records
      if (g_opt->on_ready) g_opt->on_ready(ev->renderer, rs, index, g_opt->arg);
      break;
    }
    case CAPSA_EV_MESSAGE:
      w->p.messages++;
      if (g_opt->on_message)
        g_opt->on_message(ev->renderer, ev->msg, g_opt->arg);
      break;
    case CAPSA_EV_LOG:
      w->p.messages++;
      break;
    case CAPSA_EV_BAD_MESSAGE:
      w->p.bad++;
      break;
    case CAPSA_EV_EXITED:
      w->p.exited++;
      break;
    case CAPSA_EV_CRASHED:
      if (ev->signal != SIGKILL) w->p.crashed++;
      break;
    case CAPSA_EV_CLOSED:
      w->p.killed++;
      w->p.execs++;
      w->live--;
      if (!w->stopping && w->mode == kCampaign) {
        w->p.respawned++;
        spawn_one(w);
      }
      if (w->mode != kCampaign && w->live == 0 && !w->stopping) {
        w->stopping = true;
        capsa_host_close(&w->host, on_closed);
      }
      break;
    default:
      break;
  }
}

static void on_tick(uv_timer_t *t) {
  struct worker *w = t->data;
  report(w);
  if (!w->stopping && uv_now(&w->loop) >= w->deadline_ms) {
    w->stopping = true;
    capsa_host_close(&w->host, on_closed);
  }
  if (w->closed) uv_close((uv_handle_t *)&w->tick, NULL);
}

struct job {
  enum mode mode;
  uint64_t seed, first_index, run_ms;
  const capsa__fz_repro_t *repro;  // kSeeds, kRecords
  capsa__fz_recorder_t *rec;       // records what the host receives
  bool echo;                       // the worker's stderr to ours
  bool show;                       // progress lines on stdout
};

static int run_worker(const struct job *j, int out_fd) {
  static struct worker w;
  memset(&w, 0, sizeof w);
  w.mode = j->mode;
  w.seed = j->seed;
  w.index = j->first_index;
  w.out_fd = out_fd;
  w.rec = j->rec;
  w.verbose = j->mode != kCampaign && j->echo;
  if (j->mode == kSeeds) {
    w.nreplay = j->repro->nseeds;
    w.replay_seed[0] = j->repro->seeds[0];
    w.replay_seed[1] = j->repro->seeds[1];
  }
  if (uv_loop_init(&w.loop) < 0) return 1;
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  capsa_kind_options_t k;
  if (j->mode == kRecords) {
    // The records reach the renderers in memory a forked zygote inherits.
    w.rp = capsa__fz_replay_new(j->repro);
    if (w.rp == NULL) return 1;
    capsa__fz_replay_set_hello(w.rp, kReplayKind, g_opt->interfaces,
                               g_opt->ninterfaces);
    o.allow_forked_zygote = true;
    capsa_kind_options_init(&k, kReplayKind, capsa__fz_replay_renderer_main,
                            w.rp);
    k.pid_namespace = false;  // the pid it knows itself by is the host's
  } else {
    o.allow_forked_zygote = g_opt->forked_zygote;
    capsa_kind_options_init(&k, g_opt->kind, g_opt->renderer_main,
                            g_opt->renderer_arg);
  }
  if (capsa_host_init(&w.loop, &w.host, &o, on_event) < 0) return 1;
  w.host.data = &w;
  k.interfaces = g_opt->interfaces;  // the renderer's HELLO names them
  k.ninterfaces = g_opt->ninterfaces;
  k.heartbeat_ms =
      0;  // it need not answer PING: the host kills it on bad input
  w.kind = capsa_host_define_kind(&w.host, &k);
  if (w.kind < 0 || capsa_host_start(&w.host) < 0) return 1;
  w.deadline_ms = uv_now(&w.loop) + j->run_ms;
  uv_timer_init(&w.loop, &w.tick);
  w.tick.data = &w;
  uv_timer_start(&w.tick, on_tick, 250, 250);
  int n = j->mode == kCampaign ? (int)g_opt->parallel
          : j->mode == kSeeds  ? w.nreplay
                               : (int)capsa__fz_replay_channels(w.rp);
  for (int i = 0; i < n; i++) spawn_one(&w);
  if (w.live == 0) {
    w.stopping = true;
    capsa_host_close(&w.host, on_closed);
  }
  uv_run(&w.loop, UV_RUN_DEFAULT);
  uv_loop_close(&w.loop);
  w.p.done = 1;
  report(&w);
  return 0;
}

// --- the watcher: runs a worker, tells how it ended

struct outcome {
  struct progress last;
  bool failed;
  char why[96];   // "host crash: signal 11", ...
  char cls[16];   // crash, hang, leak, exit: the file name's prefix
  char key[512];  // the signature (fuzz_stack.h)
  uint64_t hash;
};

static double since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) +
         (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

struct totals {
  struct progress sum;  // of the workers that ended
  struct timespec t0;
  double shown;
};

static void add(struct progress *a, const struct progress *b) {
  a->execs += b->execs;
  a->received += b->received;
  a->messages += b->messages;
  a->bad += b->bad;
  a->killed += b->killed;
  a->respawned += b->respawned;
  a->exited += b->exited;
  a->crashed += b->crashed;
}

static void show(struct totals *t, const struct progress *cur) {
  double el = since(&t->t0);
  if (el - t->shown < 1.0) return;
  t->shown = el;
  struct progress s = t->sum;
  add(&s, cur);
  printf("[%5.1fs] execs %" PRIu64 " (%.0f/s), records received %" PRIu64
         " (%.0f/s), bad messages caught %" PRIu64 ", renderers killed %" PRIu64
         ", respawned %" PRIu64 "\n",
         el, s.execs, s.execs / el, s.received, s.received / el, s.bad,
         s.killed, s.respawned);
  fflush(stdout);
}

// The worker's stderr, its first kLogKeep bytes (a report is short and
// comes last: a worker that wrote a megabyte before it has other trouble).
static void keep_log(char *log, size_t *len, const char *buf, size_t n) {
  if (log == NULL || *len >= kLogKeep) return;
  if (n > kLogKeep - *len) n = kLogKeep - *len;
  memcpy(log + *len, buf, n);
  *len += n;
}

static void run_job(const struct job *j, unsigned hang_seconds,
                    struct totals *t, struct outcome *out) {
  memset(out, 0, sizeof *out);
  if (j->rec) capsa__fz_recorder_reset(j->rec);
  int pfd[2], efd[2];
  if (pipe2(pfd, O_CLOEXEC) < 0) goto cannot;
  if (pipe2(efd, O_CLOEXEC) < 0) {
    close(pfd[0]), close(pfd[1]);
    goto cannot;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(pfd[0]), close(pfd[1]), close(efd[0]), close(efd[1]);
    goto cannot;
  }
  if (pid == 0) {
    close(pfd[0]);
    close(efd[0]);
    dup2(efd[1], 2);
    setpgid(0, 0);
    if (j->rec) capsa__fz_recorder_attach(j->rec);
    // exit(), not _exit(): under LeakSanitizer the host's leaks are checked
    // at the worker's exit and turn into its exit code.
    exit(run_worker(j, pfd[1]));
  }
  close(pfd[1]);
  close(efd[1]);
  fcntl(efd[0], F_SETFL, O_NONBLOCK);
  char *log = malloc(kLogKeep + 1);
  size_t loglen = 0;
  struct timespec lastp;
  clock_gettime(CLOCK_MONOTONIC, &lastp);
  bool hang = false, eof = false, err_open = true;
  while (!eof) {
    struct pollfd p[2] = {{.fd = pfd[0], .events = POLLIN},
                          {.fd = err_open ? efd[0] : -1, .events = POLLIN}};
    int r = poll(p, 2, 250);
    if (r > 0 && (p[1].revents & (POLLIN | POLLHUP))) {
      char buf[4096];
      ssize_t n;
      while ((n = read(efd[0], buf, sizeof buf)) > 0) {
        if (j->echo) {
          ssize_t k = write(2, buf, (size_t)n);
          (void)k;
        }
        keep_log(log, &loglen, buf, (size_t)n);
      }
      if (n == 0) err_open = false;
    }
    if (r > 0 && (p[0].revents & (POLLIN | POLLHUP))) {
      struct progress in;
      ssize_t n = read(pfd[0], &in, sizeof in);
      if (n == 0) eof = true;  // the worker is gone
      if (n == (ssize_t)sizeof in) {
        out->last = in;
        clock_gettime(CLOCK_MONOTONIC, &lastp);
      }
    }
    if (since(&lastp) >= (double)hang_seconds) {
      hang = true;
      break;
    }
    if (j->show && t) show(t, &out->last);
  }
  int status = 0;
  if (hang) {
    // Where it is stuck: SIGABRT has the crash handler (fuzz_stack.h)
    // write the stack down before the process ends, so hangs are told
    // apart by where they hang. At most a second, then SIGKILL.
    bool gone = false;
    if (j->rec && kill(pid, SIGABRT) == 0) {
      for (int i = 0; i < 100 && !gone; i++) {
        gone = waitpid(pid, &status, WNOHANG) == pid;
        if (!gone) usleep(10000);
      }
    }
    kill(-pid, SIGKILL);
    if (!gone) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  } else {
    waitpid(pid, &status, 0);
  }
  // What the worker wrote last (an ASan report ends as it exits).
  for (int i = 0; i < 20; i++) {
    char buf[4096];
    ssize_t n = read(efd[0], buf, sizeof buf);
    if (n <= 0) break;
    if (j->echo) {
      ssize_t k = write(2, buf, (size_t)n);
      (void)k;
    }
    keep_log(log, &loglen, buf, (size_t)n);
  }
  close(pfd[0]);
  close(efd[0]);
  if (!out->last.done) kill(-pid, SIGKILL);  // the zygote and renderers left
  const char *fallback = NULL;
  char fb[32];
  if (hang) {
    snprintf(out->why, sizeof out->why, "host hang: no progress");
    snprintf(out->cls, sizeof out->cls, "hang");
    fallback = "hang";
  } else if (!out->last.done) {
    if (WIFSIGNALED(status))
      snprintf(out->why, sizeof out->why, "host crash: signal %d",
               WTERMSIG(status));
    else
      snprintf(out->why, sizeof out->why, "host exited %d mid-campaign",
               WEXITSTATUS(status));
    snprintf(out->cls, sizeof out->cls, "crash");
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    snprintf(out->why, sizeof out->why,
             "host ended badly after the campaign (%s %d)",
             WIFSIGNALED(status) ? "signal" : "exit code",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    snprintf(out->cls, sizeof out->cls, "exit");
  }
  if (out->why[0]) {
    out->failed = true;
    if (!fallback) {
      snprintf(fb, sizeof fb, "%s %d", WIFSIGNALED(status) ? "signal" : "exit",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      fallback = fb;
    }
    out->hash =
        capsa__fz_signature(hang ? NULL : log, loglen,
                            !j->rec ? NULL : capsa__fz_recorder_crash(j->rec),
                            fallback, out->key, sizeof out->key);
    if (strncmp(out->key, "leak", 4) == 0)
      snprintf(out->cls, sizeof out->cls, "leak");
  }
  free(log);
  return;
cannot:
  out->failed = true;
  snprintf(out->why, sizeof out->why, "cannot start a worker: %s",
           strerror(errno));
  snprintf(out->cls, sizeof out->cls, "error");
}

static void print_summary(double el, const struct progress *s,
                          const char *end) {
  printf(
      "summary: %.1f s, execs %" PRIu64 " (%.0f/s), records received %" PRIu64
      " (messages and LOG lines accepted %" PRIu64
      "), bad messages caught %" PRIu64 ", renderers ended %" PRIu64
      " (exited %" PRIu64 ", crashed %" PRIu64 "), respawned %" PRIu64 "; %s\n",
      el, s->execs, s->execs / (el > 0 ? el : 1), s->received, s->messages,
      s->bad, s->killed, s->exited, s->crashed, s->respawned, end);
}

// --- campaign

int capsa__fz_live_campaign(const capsa__fz_live_options_t *opt) {
  g_opt = opt;
  uint64_t seed = opt->seed;
  unsigned long seconds = opt->seconds;
  unsigned hang_seconds = opt->hang_seconds;
  const char *out_dir = opt->out_dir ? opt->out_dir : ".";
  printf("%s: seed %" PRIu64 ", %lu s, %u renderers at a time\n", prog(), seed,
         seconds, opt->parallel);
  fflush(stdout);
  capsa__fz_recorder_t *rec = capsa__fz_recorder_new();
  if (rec == NULL) {
    fprintf(stderr, "%s: cannot map the recorder: %s\n", prog(),
            strerror(errno));
    return 1;
  }
  struct totals t = {0};
  clock_gettime(CLOCK_MONOTONIC, &t.t0);
  uint64_t index = 0, seen[64];
  unsigned failures = 0, unique = 0, fruitless = 0;
  char files[1024] = "";
  for (;;) {
    double left = (double)seconds - since(&t.t0);
    if (left <= 0.05) break;
    struct job j = {.mode = kCampaign,
                    .seed = seed,
                    .first_index = index,
                    .run_ms = (uint64_t)(left * 1000),
                    .rec = rec,
                    .echo = true,
                    .show = true};
    struct outcome o;
    run_job(&j, hang_seconds, &t, &o);
    add(&t.sum, &o.last);
    // Go on after the renderers the last worker handed out (their records
    // are what failed; a new worker must not meet them again).
    index =
        o.last.next_index > index ? o.last.next_index : index + opt->parallel;
    if (!o.failed) break;
    failures++;
    // A worker that fails before anything ran would fail forever.
    fruitless = o.last.execs == 0 && o.last.messages == 0 ? fruitless + 1 : 0;
    bool known = false;
    for (unsigned i = 0; i < unique && i < 64; i++) known |= seen[i] == o.hash;
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s-%016" PRIx64 ".repro",
             strcmp(out_dir, ".") ? out_dir : "",
             strcmp(out_dir, ".") ? "/" : "", o.cls, o.hash);
    fprintf(stderr, "%s: FAILURE (%s) stack %016" PRIx64 ": %s\n", prog(),
            o.why, o.hash, o.key);
    if (known) {
      fprintf(stderr, "%s: same stack as before: %s\n", prog(), path);
    } else {
      if (unique < 64) seen[unique] = o.hash;
      unique++;
      capsa__fz_repro_t r;
      int err = capsa__fz_recorder_collect(rec, &r);
      if (err == 0) {
        snprintf(r.why, sizeof r.why, "%s", o.why);
        snprintf(r.stack, sizeof r.stack, "%016" PRIx64 " %s", o.hash, o.key);
        err = capsa__fz_repro_save(&r, path);
      }
      if (err < 0)
        fprintf(stderr, "%s: cannot save %s: %s\n", prog(), path,
                strerror(-err));
      else
        fprintf(stderr,
                "%s: reproducer saved: %s (%zu records from %u "
                "renderers)\n",
                prog(), path, r.nrec, r.nch);
      capsa__fz_repro_free(&r);
      if (strlen(files) + strlen(path) + 3 < sizeof files)
        snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s",
                 files[0] ? ", " : "", path);
      if (opt->stop_after_unique && unique >= opt->stop_after_unique) {
        fprintf(stderr, "%s: %u different stacks found: stopping\n", prog(),
                unique);
        break;
      }
    }
    if (opt->stop_after_failures && failures >= opt->stop_after_failures) {
      fprintf(stderr, "%s: %u failures: stopping\n", prog(), failures);
      break;
    }
    if (fruitless >= 3) {
      fprintf(stderr,
              "%s: the worker fails before it fuzzes: "
              "stopping\n",
              prog());
      break;
    }
  }
  char end[1200];
  if (failures == 0)
    snprintf(end, sizeof end, "host survived");
  else
    snprintf(end, sizeof end, "failures %u, unique %u: %s", failures, unique,
             files);
  print_summary(since(&t.t0), &t.sum, end);
  return failures ? 1 : 0;
}

// --- replay and minimise

// One replay of `r` in a fresh worker; quiet: nothing echoed.
static void replay_once(const capsa__fz_repro_t *r, bool quiet,
                        struct outcome *o) {
  struct job j = {.mode = r->version == 1 ? kSeeds : kRecords,
                  .seed = r->seed,
                  .run_ms = 30000,
                  .repro = r,
                  .echo = !quiet};
  // The records need no recording; the crash handler does (its frames).
  static capsa__fz_recorder_t *rec;
  if (rec == NULL) rec = capsa__fz_recorder_new();
  j.rec = rec;
  run_job(&j, g_opt->hang_seconds < 10 ? g_opt->hang_seconds : 10, NULL, o);
}

static int load(const char *path, capsa__fz_repro_t *r) {
  char err[256];
  if (capsa__fz_repro_load(path, r, err, sizeof err) < 0) {
    fprintf(stderr, "%s: %s: %s\n", prog(), path, err);
    return -1;
  }
  return 0;
}

int capsa__fz_live_replay(const capsa__fz_live_options_t *opt,
                          const char *path) {
  g_opt = opt;
  capsa__fz_repro_t r;
  if (load(path, &r) < 0) return 1;
  if (r.version == 1) {
    printf("replaying renderer seed %" PRIu64, r.seeds[0]);
    if (r.nseeds == 2) printf(" and %" PRIu64, r.seeds[1]);
    printf(" (campaign seed %" PRIu64 ")\n", r.seed);
  } else {
    printf("replaying %zu records from %u renderers in arrival order\n", r.nrec,
           r.nch);
  }
  fflush(stdout);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct outcome o;
  replay_once(&r, false, &o);
  char end[1024];
  if (o.failed) {
    snprintf(end, sizeof end, "FAILURE (%s) stack %016" PRIx64 ": %s", o.why,
             o.hash, o.key);
  } else {
    snprintf(end, sizeof end, "host survived");
  }
  print_summary(since(&t0), &o.last, end);
  if (o.failed && r.stack[0]) {
    uint64_t saved = strtoull(r.stack, NULL, 16);
    printf("replay: %s the saved stack %016" PRIx64 "\n",
           saved == o.hash ? "same stack as" : "a stack other than", saved);
  }
  capsa__fz_repro_free(&r);
  return o.failed ? 1 : 0;
}

struct minimizer {
  const capsa__fz_repro_t *r;
  uint64_t want;
  struct timespec t0;
  double budget;
  unsigned trials;
};

// Does the subset `keep` still fail with the same signature?
static bool still_fails(struct minimizer *m, const bool *keep) {
  capsa__fz_repro_t sub;
  if (capsa__fz_repro_subset(m->r, keep, &sub) < 0) return false;
  bool any = sub.nrec > 0;
  struct outcome o = {0};
  if (any) replay_once(&sub, true, &o);
  capsa__fz_repro_free(&sub);
  m->trials++;
  return any && o.failed && o.hash == m->want;
}

static bool out_of_time(const struct minimizer *m) {
  return since(&m->t0) > m->budget;
}

int capsa__fz_live_minimize(const capsa__fz_live_options_t *opt,
                            const char *path, unsigned long seconds) {
  g_opt = opt;
  capsa__fz_repro_t r;
  if (load(path, &r) < 0) return 1;
  if (r.version != 2 || r.nrec == 0) {
    fprintf(stderr,
            "%s: %s: --minimize needs a reproducer with "
            "records (version 2)\n",
            prog(), path);
    capsa__fz_repro_free(&r);
    return 1;
  }
  struct minimizer m = {.r = &r, .budget = (double)seconds};
  clock_gettime(CLOCK_MONOTONIC, &m.t0);
  struct outcome o;
  replay_once(&r, true, &o);
  if (!o.failed) {
    fprintf(stderr,
            "%s: %s: does not fail when replayed: nothing to "
            "minimize\n",
            prog(), path);
    capsa__fz_repro_free(&r);
    return 1;
  }
  m.want = o.hash;
  printf("minimizing %zu records from %u renderers (stack %016" PRIx64
         ": %s)\n",
         r.nrec, r.nch, o.hash, o.key);
  fflush(stdout);
  bool *keep = malloc(r.nrec * sizeof *keep), *trial = malloc(r.nrec);
  if (!keep || !trial) return 1;
  for (size_t i = 0; i < r.nrec; i++) keep[i] = true;
  // Whole renderers first, then runs of records, halving.
  for (unsigned c = 0; c < r.nch && r.nch > 1 && !out_of_time(&m); c++) {
    memcpy(trial, keep, r.nrec);
    for (size_t i = 0; i < r.nrec; i++)
      if (r.rec[i].channel == c) trial[i] = false;
    if (memcmp(trial, keep, r.nrec) && still_fails(&m, trial))
      memcpy(keep, trial, r.nrec);
  }
  size_t left = 0;
  for (size_t i = 0; i < r.nrec; i++) left += keep[i];
  for (size_t chunk = left / 2 ? left / 2 : 1; chunk >= 1 && !out_of_time(&m);
       chunk /= 2) {
    // Runs of `chunk` kept records, from the end (later records matter
    // least to the ones before them).
    size_t idx[CAPSA__FZ_MAX_RECORDS], n = 0;
    for (size_t i = 0; i < r.nrec; i++)
      if (keep[i]) idx[n++] = i;
    for (size_t end = n; end > 0 && !out_of_time(&m);) {
      size_t start = end > chunk ? end - chunk : 0;
      memcpy(trial, keep, r.nrec);
      for (size_t k = start; k < end; k++) trial[idx[k]] = false;
      if (still_fails(&m, trial)) memcpy(keep, trial, r.nrec);
      end = start;
    }
    if (chunk == 1) break;
  }
  capsa__fz_repro_t out;
  int err = capsa__fz_repro_subset(&r, keep, &out);
  char dst[4096];
  snprintf(dst, sizeof dst, "%s.min", path);
  if (err == 0) err = capsa__fz_repro_save(&out, dst);
  if (err < 0) {
    fprintf(stderr, "%s: cannot write %s: %s\n", prog(), dst, strerror(-err));
  } else {
    printf(
        "minimized: records %zu -> %zu, renderers %u -> %u, %u replays in "
        "%.1f s%s: %s\n",
        r.nrec, out.nrec, r.nch, out.nch, m.trials, since(&m.t0),
        out_of_time(&m) ? " (time budget reached)" : "", dst);
  }
  capsa__fz_repro_free(&out);
  capsa__fz_repro_free(&r);
  free(keep);
  free(trial);
  return err < 0 ? 1 : 0;
}

void capsa__fz_live_options_init(capsa__fz_live_options_t *o) {
  memset(o, 0, sizeof *o);
  o->parallel = 2;
  o->seconds = 10;
  o->hang_seconds = 15;
  o->out_dir = ".";
}
