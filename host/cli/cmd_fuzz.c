// capsa fuzz: a live campaign against a real host. Fuzzing renderers
// (renderer/fuzz/) send structure-aware mutations of real messages; the
// host must catch every bad one (killing its sender) and keep serving. The
// campaign runs in a worker process watched by this one: a worker that
// dies or stops reporting progress (a host crash or hang) is a failure,
// saved as a reproducer that `capsa fuzz --replay FILE` replays: the same
// renderer seed gives the same records.
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/capsa_host.h"
#include "host/cli/commands.h"
#include "host/kind_registry.h"
#include "renderer/fuzz/fuzz_renderer.h"

static const char kUsage[] =
    "usage: capsa fuzz [--seconds N] [--seed S] [--replay FILE] "
    "[--hang-seconds N]";

CAPSA_RENDERER_KIND(fuzz, "fuzz", capsa_fuzz_renderer_main, NULL)

enum { kParallel = 2, kHangSeconds = 15 };  // default for --hang-seconds

// What the worker reports on its pipe, one fixed-size record at a time.
struct progress {
  uint64_t execs;       // renderer sequences finished
  uint64_t messages;    // records the host accepted
  uint64_t bad;         // bad messages caught
  uint64_t killed;      // renderers that ended (killed or exited)
  uint64_t respawned;   // renderers started after the first ones
  uint64_t exited;      // of those that ended: left on their own
  uint64_t crashed;     // of those: a signal the host did not send
  uint64_t current[2];  // the two renderer seeds most recently handed out
  int done;             // 1: campaign over, host closed cleanly
};

struct worker {
  uv_loop_t loop;
  capsa_host_t host;
  uv_timer_t tick;
  int kind, out_fd, live;
  uint64_t seed, index, deadline_ms, replay_seed[2];
  int replay, nreplay, replayed;
  bool stopping, closed;
  struct progress p;
};

static void report(struct worker *w) {
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
  switch (ev->type) {
    case CAPSA_EV_READY: {
      uint64_t rs = w->replay ? w->replay_seed[w->replayed++ % w->nreplay]
                              : capsa_fuzz_renderer_seed(w->seed, w->index++);
      // Two renderers run at once: a failure may come from either of the
      // last two seeds, so both go into a reproducer.
      w->p.current[1] = w->p.current[0];
      w->p.current[0] = rs;
      report(w);  // before the first mutated record can reach the host
      // Tests of the watchdog itself: CAPSA_FUZZ_INJECT=crash makes the
      // host crash here, as a bug reached by these records would.
      const char *inject = getenv("CAPSA_FUZZ_INJECT");
      if (inject && strcmp(inject, "crash") == 0 && w->index > 3)
        raise(SIGSEGV);
      if (inject && strcmp(inject, "hang") == 0 && w->index > 3)
        for (;;) pause();
      capsa_fuzz_seed_t sd;
      capsa_fuzz_seed_init(&sd);
      sd.seed = rs;
      capsa_msg_t m;
      capsa_msg_init_iface(&m, &capsa_fuzz_interface, CAPSA_FUZZ_SEED, &sd);
      capsa_renderer_send(ev->renderer, &m);
      break;
    }
    case CAPSA_EV_MESSAGE:
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
      if (!w->stopping && !w->replay) {
        w->p.respawned++;
        spawn_one(w);
      }
      if (w->replay && w->live == 0 && !w->stopping) {
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

static int run_worker(uint64_t seed, unsigned seconds, int nreplay,
                      const uint64_t *replay_seed, int out_fd) {
  static struct worker w;
  memset(&w, 0, sizeof w);
  w.seed = seed;
  w.out_fd = out_fd;
  w.replay = nreplay > 0;
  w.nreplay = nreplay;
  for (int i = 0; i < nreplay && i < 2; i++) w.replay_seed[i] = replay_seed[i];
  if (uv_loop_init(&w.loop) < 0) return 1;
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  if (capsa_host_init(&w.loop, &w.host, &o, on_event) < 0) return 1;
  w.host.data = &w;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "fuzz", capsa_fuzz_renderer_main, NULL);
  k.interfaces = capsa_fuzz_interfaces;  // the renderer's HELLO names them
  k.ninterfaces = 1;
  k.heartbeat_ms = 0;  // it never answers PING: the host kills it on bad input
  w.kind = capsa_host_define_kind(&w.host, &k);
  if (w.kind < 0 || capsa_host_start(&w.host) < 0) return 1;
  w.deadline_ms = uv_now(&w.loop) + (w.replay ? 30000u : seconds * 1000ull);
  uv_timer_init(&w.loop, &w.tick);
  w.tick.data = &w;
  uv_timer_start(&w.tick, on_tick, 250, 250);
  for (int i = 0; i < (w.replay ? nreplay : kParallel); i++) spawn_one(&w);
  uv_run(&w.loop, UV_RUN_DEFAULT);
  uv_loop_close(&w.loop);
  w.p.done = 1;
  report(&w);
  return 0;
}

static int save_repro(uint64_t seed, const uint64_t *rseed, const char *why) {
  char path[96];
  snprintf(path, sizeof path, "capsa-fuzz-%" PRIu64 "-%016" PRIx64 ".repro",
           seed, rseed[0]);
  FILE *f = fopen(path, "w");
  if (!f) return -errno;
  fprintf(f, "capsa-fuzz-repro 1\nseed %" PRIu64 "\nrenderer_seed %" PRIu64,
          seed, rseed[0]);
  if (rseed[1] != 0) fprintf(f, " %" PRIu64, rseed[1]);
  fprintf(f, "\nwhy %s\n", why);
  fclose(f);
  fprintf(stderr, "capsa fuzz: FAILURE (%s); reproducer saved: %s\n", why,
          path);
  return 0;
}

int capsa_cmd_fuzz(int argc, char **argv) {
  unsigned long seconds = 10, hang_seconds = kHangSeconds;
  uint64_t seed = 1, replay_seed[2] = {0, 0};
  int nreplay = 0;
  const char *replay = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      printf("%s\n", kUsage);
      return 0;
    }
    if (i + 1 >= argc)
      return capsa_cli_usage_error("fuzz", kUsage, "missing value for",
                                   argv[i]);
    char *end = NULL;
    if (strcmp(argv[i], "--seconds") == 0) {
      seconds = strtoul(argv[++i], &end, 10);
      if (*end || seconds == 0 || seconds > 86400)
        return capsa_cli_usage_error("fuzz", kUsage, "bad --seconds", argv[i]);
    } else if (strcmp(argv[i], "--seed") == 0) {
      seed = strtoull(argv[++i], &end, 10);
      if (*end)
        return capsa_cli_usage_error("fuzz", kUsage, "bad --seed", argv[i]);
    } else if (strcmp(argv[i], "--hang-seconds") == 0) {
      hang_seconds = strtoul(argv[++i], &end, 10);
      if (*end || hang_seconds == 0 || hang_seconds > 3600)
        return capsa_cli_usage_error("fuzz", kUsage, "bad --hang-seconds",
                                     argv[i]);
    } else if (strcmp(argv[i], "--replay") == 0) {
      replay = argv[++i];
    } else {
      return capsa_cli_usage_error("fuzz", kUsage, "unknown option", argv[i]);
    }
  }
  if (replay) {
    FILE *f = fopen(replay, "r");
    if (!f) {
      fprintf(stderr, "capsa fuzz: %s: %s\n", replay, strerror(errno));
      return 1;
    }
    int ok =
        fscanf(f, "capsa-fuzz-repro 1 seed %" SCNu64 " renderer_seed %" SCNu64,
               &seed, &replay_seed[0]) == 2;
    nreplay = ok;
    // An optional second seed on the same line (the other renderer).
    int c = ' ';
    while (ok && c == ' ') c = fgetc(f);
    if (ok && c != EOF && c != '\n') {
      ungetc(c, f);
      if (fscanf(f, "%" SCNu64, &replay_seed[1]) == 1) nreplay = 2;
    }
    fclose(f);
    if (!ok) {
      fprintf(stderr, "capsa fuzz: %s: not a capsa fuzz reproducer\n", replay);
      return 1;
    }
    printf("replaying renderer seed %" PRIu64, replay_seed[0]);
    if (nreplay == 2) printf(" and %" PRIu64, replay_seed[1]);
    printf(" (campaign seed %" PRIu64 ")\n", seed);
  } else {
    printf("capsa fuzz: seed %" PRIu64 ", %lu s, %d renderers at a time\n",
           seed, seconds, kParallel);
  }
  fflush(stdout);
  int pfd[2];
  if (pipe(pfd) < 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(pfd[0]);
    setpgid(0, 0);
    // exit(), not _exit(): under LeakSanitizer the host's leaks are checked
    // at the worker's exit and turn into its exit code.
    exit(run_worker(seed, (unsigned)seconds, nreplay, replay_seed, pfd[1]));
  }
  close(pfd[1]);
  struct progress last = {0};
  struct timespec t0, now, lastp;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  lastp = t0;
  double shown = 0;
  const char *failure = NULL;
  for (;;) {
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    int r = poll(&p, 1, 1000);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (r > 0) {
      struct progress in;
      ssize_t n = read(pfd[0], &in, sizeof in);
      if (n == 0) break;  // the worker is gone
      if (n == (ssize_t)sizeof in) {
        last = in;
        lastp = now;
      }
    }
    double el = (double)(now.tv_sec - t0.tv_sec) +
                (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
    if (now.tv_sec - lastp.tv_sec >= (time_t)hang_seconds) {
      failure = "host hang: no progress";
      break;
    }
    if (el - shown >= 1.0 && !replay) {
      shown = el;
      printf("[%5.1fs] execs %" PRIu64 " (%.0f/s), records accepted %" PRIu64
             ", bad messages caught %" PRIu64 ", renderers killed %" PRIu64
             ", respawned %" PRIu64 "\n",
             el, last.execs, last.execs / el, last.messages, last.bad,
             last.killed, last.respawned);
      fflush(stdout);
    }
  }
  int status = 0;
  if (failure) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  waitpid(pid, &status, 0);
  close(pfd[0]);
  if (!last.done) kill(-pid, SIGKILL);  // the zygote and renderers it left
  if (!failure && !last.done) {
    static char why[64];
    if (WIFSIGNALED(status))
      snprintf(why, sizeof why, "host crash: signal %d", WTERMSIG(status));
    else
      snprintf(why, sizeof why, "host exited %d mid-campaign",
               WEXITSTATUS(status));
    failure = why;
  } else if (!failure && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    static char why[64];
    snprintf(why, sizeof why, "host ended badly after the campaign (%s %d)",
             WIFSIGNALED(status) ? "signal" : "exit code",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    failure = why;
  }
  clock_gettime(CLOCK_MONOTONIC, &now);
  double el = (double)(now.tv_sec - t0.tv_sec) +
              (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
  printf("summary: %.1f s, execs %" PRIu64
         " (%.0f/s), records accepted %" PRIu64 ", bad messages caught %" PRIu64
         ", renderers ended %" PRIu64 " (exited %" PRIu64 ", crashed %" PRIu64
         "), respawned %" PRIu64 "; %s\n",
         el, last.execs, last.execs / (el > 0 ? el : 1), last.messages,
         last.bad, last.killed, last.exited, last.crashed, last.respawned,
         failure ? failure : "host survived");
  if (failure) {
    save_repro(seed, last.current, failure);
    return 1;
  }
  return 0;
}
