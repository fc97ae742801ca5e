// The task manager (capsa_host_renderer_info, host/capsa_host.h) against real
// hosts and renderers, root and uid 65534: the entries are the renderers the
// host's own events name (pid, kind, state), CPU and memory follow what a
// renderer does, an ended renderer leaves the list (or shows its restart),
// spares are found and are what a spawn then claims. And the /proc/PID/stat
// parser against command names with spaces and ')'.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "host/proc_info.h"
#include "renderer/runtime.h"
#include "tests/harness/command.h"
#include "tests/harness/host_fixture.h"

namespace {

// --- renderer side ----------------------------------------------------------
// Run events: "burn MS" spins for MS of CPU time, "touch MIB" maps and
// writes MIB MiB it keeps; each logs "done" when finished.

void Burn(long ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  do {
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 <
           ms);
}

bool Touch(size_t mib) {
  size_t len = mib << 20;
  void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  // Kept (never unmapped): the host is to see it. Through a volatile
  // pointer so that each page is really written.
  volatile char *c = static_cast<volatile char *>(p);
  for (size_t i = 0; i < len; i += 4096) c[i] = 1;
  return true;
}

int OnTmMessage(capsa_rctx_t *r, capsa_msg_t *m) {
  std::string cmd = capsa_test::RunData(m);
  if (cmd.rfind("burn ", 0) == 0) {
    Burn(atol(cmd.c_str() + 5));
  } else if (cmd.rfind("touch ", 0) == 0) {
    if (!Touch((size_t)atol(cmd.c_str() + 6))) return -ENOMEM;
  } else {
    return 0;
  }
  capsa_rctx_log(r, CAPSA_LOG_INFO, "done");
  return 0;
}

const capsa_renderer_handlers_t kTm = {
    "tm", nullptr, OnTmMessage, nullptr, capsa_test::kCommand, 1};

CAPSA_RENDERER_KIND(k_tm_a, "tm-a", capsa_renderer_main, &kTm)
CAPSA_RENDERER_KIND(k_tm_b, "tm-b", capsa_renderer_main, &kTm)

// --- host side --------------------------------------------------------------

class TaskManager : public capsa_test::HostFixture {
 public:
  void OnHostEvent(const capsa_host_event_t *ev) override {
    auto *t = this;
    t->order_ += std::string(capsa_host_event_name(ev->type)) + " ";
    if (ev->type == CAPSA_EV_READY) {
      t->ready_++;
      // The host's own word for the pid, from its event.
      t->ready_pid_[ev->renderer] = capsa_renderer_pid(ev->renderer);
    } else if (ev->type == CAPSA_EV_LOG && ev->text &&
               strcmp(ev->text, "done") == 0) {
      t->done_++;
    } else if (ev->type == CAPSA_EV_CLOSED) {
      t->closed_++;
    } else if (ev->type == CAPSA_EV_RESTARTED) {
      t->restarted_++;
    }
  }
  int Kind(const char *name, bool spare = false, unsigned max_restarts = 0) {
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, name, capsa_renderer_main, (void *)&kTm);
    capsa_test::SpeakCommand(&k);
    k.keep_spare = spare;
    k.max_restarts = max_restarts;
    return capsa_host_define_kind(&host_, &k);
  }
  capsa_renderer_t *Spawn(int kind) {
    capsa_renderer_t *r = nullptr;
    EXPECT_EQ(0, capsa_host_spawn(&host_, kind, nullptr, &r));
    return r;
  }
  std::vector<capsa_renderer_info_t> List() {
    std::vector<capsa_renderer_info_t> v(64);
    int n = capsa_host_renderer_info(&host_, v.data(), v.size());
    EXPECT_GE(n, 0);
    EXPECT_LE(n, 64);
    v.resize(n < 0 ? 0 : (size_t)n);
    return v;
  }
  // The entry of handle `r`, or nullptr.
  static const capsa_renderer_info_t *Of(
      const std::vector<capsa_renderer_info_t> &v, capsa_renderer_t *r) {
    for (auto &e : v)
      if (e.role == CAPSA_RINFO_RENDERER && e.renderer == r) return &e;
    return nullptr;
  }
  // Polls until handle r's entry satisfies `pred` (the figures come from
  // /proc, updated by the kernel at its own pace).
  template <typename Pred>
  bool WaitEntry(capsa_renderer_t *r, Pred pred, int timeout_ms) {
    return Run(
        [&] {
          auto v = List();
          const capsa_renderer_info_t *e = Of(v, r);
          return e && pred(*e);
        },
        timeout_ms);
  }

  std::string order_;
  unsigned ready_ = 0, done_ = 0, closed_ = 0, restarted_ = 0;
  std::map<capsa_renderer_t *, pid_t> ready_pid_;
};

pid_t ParentOf(pid_t pid) {
  struct capsa__proc_stat st;
  return capsa__proc_stat_read(pid, &st) == 0 ? st.ppid : -1;
}

TEST_F(TaskManager, BeforeStartNothingAndBadArgumentsRefused) {
  capsa_renderer_info_t e;
  EXPECT_EQ(0, capsa_host_renderer_info(&host_, &e, 1));
  EXPECT_EQ(-EINVAL, capsa_host_renderer_info(nullptr, &e, 1));
  EXPECT_EQ(-EINVAL, capsa_host_renderer_info(&host_, nullptr, 1));
}

TEST_F(TaskManager, ListsThreeRenderersOfTwoKindsAsTheHostsEventsNameThem) {
  int a = Kind("tm-a"), b = Kind("tm-b");
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *ra1 = Spawn(a), *ra2 = Spawn(a), *rb = Spawn(b);
  ASSERT_TRUE(Run([&] { return ready_ == 3; }, 20000)) << order_;

  auto v = List();
  ASSERT_EQ(4u, v.size()) << "the zygote and three renderers";
  // The zygote first, by the host's own accessor.
  EXPECT_EQ(CAPSA_RINFO_ZYGOTE, v[0].role);
  EXPECT_EQ(capsa_host_zygote_pid(&host_), v[0].pid);
  EXPECT_STREQ("zygote", v[0].kind_name);
  EXPECT_EQ(-1, v[0].kind);
  EXPECT_EQ(nullptr, v[0].renderer);
  // Then the handles in spawn order.
  capsa_renderer_t *want[] = {ra1, ra2, rb};
  int kinds[] = {a, a, b};
  const char *names[] = {"tm-a", "tm-a", "tm-b"};
  std::set<pid_t> pids;
  for (int i = 0; i < 3; i++) {
    const capsa_renderer_info_t &e = v[1 + i];
    SCOPED_TRACE(i);
    EXPECT_EQ(CAPSA_RINFO_RENDERER, e.role);
    EXPECT_EQ(want[i], e.renderer);
    EXPECT_EQ(ready_pid_[want[i]], e.pid) << "the pid READY named";
    EXPECT_EQ(kinds[i], e.kind);
    EXPECT_STREQ(names[i], e.kind_name);
    EXPECT_EQ(CAPSA_RINFO_READY, e.state);
    EXPECT_STREQ("ready", capsa_rinfo_state_name(e.state));
    EXPECT_EQ(0u, e.restarts);
    EXPECT_EQ(0, e.err);
    // A real process: ours (the zygote forks with CLONE_PARENT).
    EXPECT_EQ(getpid(), ParentOf(e.pid));
    EXPECT_NE(CAPSA_MEM_NONE, e.uss_source) << "some source is always readable";
    EXPECT_GT(e.uss_bytes, 0u);
    if (e.pss_source != CAPSA_MEM_NONE) {
      EXPECT_EQ(CAPSA_MEM_SMAPS_ROLLUP, e.pss_source);
      EXPECT_GE(e.pss_bytes, e.uss_bytes) << "its own pages are in its share";
    }
    pids.insert(e.pid);
  }
  EXPECT_EQ(3u, pids.size());

  // snprintf's contract: the count whatever the room.
  EXPECT_EQ(4, capsa_host_renderer_info(&host_, nullptr, 0));
  capsa_renderer_info_t two[2];
  memset(two, 0x5a, sizeof two);
  EXPECT_EQ(4, capsa_host_renderer_info(&host_, two, 2));
  EXPECT_EQ(v[0].pid, two[0].pid);
  EXPECT_EQ(v[1].pid, two[1].pid);

  // Uptime grows with the process's age.
  uint64_t up = v[1].uptime_ms;
  usleep(300 * 1000);
  auto w = List();
  ASSERT_EQ(4u, w.size());
  EXPECT_GE(w[1].uptime_ms, up + 200) << up << " then " << w[1].uptime_ms;
}

TEST_F(TaskManager, CpuTimeGrowsForTheRendererThatBurnsCpu) {
  int a = Kind("tm-a");
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *burner = Spawn(a), *idle = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 20000)) << order_;
  auto v0 = List();
  ASSERT_NE(nullptr, Of(v0, burner));
  ASSERT_NE(nullptr, Of(v0, idle));
  uint64_t b0 = Of(v0, burner)->cpu_usec, i0 = Of(v0, idle)->cpu_usec;
  ASSERT_EQ(0, capsa_test::SendRun(burner, "burn 400"));
  ASSERT_TRUE(Run([&] { return done_ == 1; }, 20000)) << order_;
  auto v1 = List();
  uint64_t b1 = Of(v1, burner)->cpu_usec, i1 = Of(v1, idle)->cpu_usec;
  // 400 ms of CPU, counted in clock ticks (10 ms at 100 Hz).
  EXPECT_GE(b1 - b0, 350000u) << b0 << " -> " << b1;
  EXPECT_LT(i1 - i0, 100000u) << "the idle one: " << i0 << " -> " << i1;
}

TEST_F(TaskManager, MemoryGrowsForTheRendererThatTouches8MiB) {
  int a = Kind("tm-a");
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *toucher = Spawn(a), *idle = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 20000)) << order_;
  auto v0 = List();
  capsa_renderer_info_t t0 = *Of(v0, toucher), i0 = *Of(v0, idle);
  ASSERT_NE(CAPSA_MEM_NONE, t0.uss_source);
  ASSERT_EQ(0, capsa_test::SendRun(toucher, "touch 8"));
  ASSERT_TRUE(Run([&] { return done_ == 1; }, 20000)) << order_;
  auto v1 = List();
  capsa_renderer_info_t t1 = *Of(v1, toucher), i1 = *Of(v1, idle);
  EXPECT_EQ(t0.uss_source, t1.uss_source);
  EXPECT_GE(t1.uss_bytes, t0.uss_bytes + (7u << 20))
      << capsa_mem_source_name(t1.uss_source) << ": " << t0.uss_bytes << " -> "
      << t1.uss_bytes;
  if (t1.pss_source == CAPSA_MEM_SMAPS_ROLLUP) {
    EXPECT_GE(t1.pss_bytes, t0.pss_bytes + (7u << 20));
  }
  // The other renderer's figure did not take it.
  EXPECT_LT(i1.uss_bytes, i0.uss_bytes + (1u << 20));
}

// Without ptrace-read access (simulated): the figure comes from the
// renderer's cgroup when it has one, else statm, says so, and still shows
// the 8 MiB; PSS is then unknown, not guessed.
TEST_F(TaskManager, WithoutSmapsTheFallbackSaysWhereItsFigureCameFrom) {
  capsa__task_hide_smaps_for_test(true);
  struct Restore {
    ~Restore() {
      capsa__task_hide_smaps_for_test(false);
    }
  } restore;
  int a = Kind("tm-a");
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *toucher = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 1; }, 20000)) << order_;
  auto v0 = List();
  capsa_renderer_info_t t0 = *Of(v0, toucher);
  // A cgroup of its own exactly when the host runs limits on cgroup v2.
  char limits[512];
  ASSERT_GT(capsa_host_limits_summary(&host_, limits, sizeof limits), 0);
  bool cgroup = strstr(limits, "limits: cgroup v2") == limits;
  EXPECT_EQ(cgroup ? CAPSA_MEM_CGROUP : CAPSA_MEM_STATM, t0.uss_source)
      << limits;
  EXPECT_EQ(CAPSA_MEM_NONE, t0.pss_source);
  EXPECT_EQ(0u, t0.pss_bytes);
  // A cgroup counts only what was charged after the renderer entered it
  // (seen 0 at READY on Linux 6.1); statm counts all it holds.
  if (t0.uss_source != CAPSA_MEM_CGROUP) {
    EXPECT_GT(t0.uss_bytes, 0u);
  }
  ASSERT_EQ(0, capsa_test::SendRun(toucher, "touch 8"));
  ASSERT_TRUE(Run([&] { return done_ == 1; }, 20000)) << order_;
  auto v1 = List();
  capsa_renderer_info_t t1 = *Of(v1, toucher);
  EXPECT_EQ(t0.uss_source, t1.uss_source);
  EXPECT_GE(t1.uss_bytes, t0.uss_bytes + (7u << 20))
      << capsa_mem_source_name(t1.uss_source) << ": " << t0.uss_bytes << " -> "
      << t1.uss_bytes;
  // The zygote has no cgroup of the host's making: statm.
  EXPECT_EQ(CAPSA_MEM_STATM, v1[0].uss_source);
}

TEST_F(TaskManager, AKilledRendererLeavesTheList) {
  int a = Kind("tm-a");
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *victim = Spawn(a), *other = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 20000)) << order_;
  pid_t vpid = ready_pid_[victim];
  ASSERT_EQ(0, capsa_renderer_kill(victim));
  // Right after the kill: still listed, ending.
  auto v = List();
  ASSERT_NE(nullptr, Of(v, victim));
  EXPECT_EQ(CAPSA_RINFO_ENDING, Of(v, victim)->state);
  ASSERT_TRUE(Run([&] { return closed_ == 1; }, 20000)) << order_;
  v = List();
  EXPECT_EQ(2u, v.size()) << "the zygote and the survivor";
  EXPECT_EQ(nullptr, Of(v, victim));
  for (auto &e : v) EXPECT_NE(vpid, e.pid);
  ASSERT_NE(nullptr, Of(v, other));
  EXPECT_EQ(CAPSA_RINFO_READY, Of(v, other)->state);
}

TEST_F(TaskManager, ARendererKilledFromOutsideShowsItsRestart) {
  int a = Kind("tm-a", false, 1);
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *r = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 1; }, 20000)) << order_;
  pid_t first = ready_pid_[r];
  ASSERT_EQ(0, kill(first, SIGKILL));
  ASSERT_TRUE(Run([&] { return restarted_ == 1 && ready_ == 2; }, 20000))
      << order_;
  auto v = List();
  const capsa_renderer_info_t *e = Of(v, r);
  ASSERT_NE(nullptr, e);
  EXPECT_EQ(1u, e->restarts);
  EXPECT_EQ(CAPSA_RINFO_READY, e->state);
  EXPECT_EQ(ready_pid_[r], e->pid) << "the new incarnation's";
  EXPECT_NE(first, e->pid);
  EXPECT_EQ(capsa_renderer_restarts(r), e->restarts);
}

TEST_F(TaskManager, TheSpareIsListedAndIsWhatTheNextSpawnClaims) {
  int a = Kind("tm-a", true);
  ASSERT_EQ(0, capsa_host_start(&host_));
  capsa_renderer_t *first = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 1; }, 20000)) << order_;
  // The zygote forks the next spare once it is idle.
  pid_t spare = -1;
  ASSERT_TRUE(Run(
      [&] {
        for (auto &e : List())
          if (e.role == CAPSA_RINFO_SPARE) spare = e.pid;
        return spare > 0;
      },
      10000));
  auto v = List();
  unsigned spares = 0;
  for (auto &e : v) {
    if (e.role != CAPSA_RINFO_SPARE) continue;
    spares++;
    EXPECT_EQ(CAPSA_RINFO_IDLE, e.state);
    EXPECT_EQ(a, e.kind) << "the only kind that keeps a spare";
    EXPECT_STREQ("tm-a", e.kind_name);
    EXPECT_EQ(nullptr, e.renderer);
    EXPECT_NE(ready_pid_[first], e.pid);
    EXPECT_NE(capsa_host_zygote_pid(&host_), e.pid);
    EXPECT_EQ(getpid(), ParentOf(e.pid));
    EXPECT_NE(CAPSA_MEM_NONE, e.uss_source);
  }
  EXPECT_EQ(1u, spares);
  capsa_renderer_t *second = Spawn(a);
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 20000)) << order_;
  EXPECT_EQ(spare, ready_pid_[second]) << "the spare listed was claimed";
  const capsa_renderer_info_t *e = nullptr;
  v = List();
  e = Of(v, second);
  ASSERT_NE(nullptr, e);
  EXPECT_EQ(spare, e->pid);
  for (auto &x : v) {
    if (x.role == CAPSA_RINFO_SPARE) {
      EXPECT_NE(spare, x.pid);
    }
  }
}

// The embedder's own children are not spares: not in capability mode.
TEST_F(TaskManager, TheEmbeddersOwnChildIsNoSpare) {
  int a = Kind("tm-a", true);
  ASSERT_EQ(0, capsa_host_start(&host_));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  bool found_spare = Run(
      [&] {
        for (auto &e : List())
          if (e.role == CAPSA_RINFO_SPARE) return true;
        return false;
      },
      10000);
  auto v = List();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(found_spare);
  for (auto &e : v) EXPECT_NE(child, e.pid);
  (void)a;
}

// --- /proc/PID/stat
// -----------------------------------------------------------

TEST(ProcStat, CommandNamesWithSpacesAndParenthesesParse) {
  // Fields 1..22 with a name that tries to end early.
  const char *line =
      "4242 (a) b) S 1 (c) R 77 4242 4242 0 -1 4194560 100 0 0 0 123 45 6 7 "
      "20 0 1 0 98765 1000 10 18446744073709551615\n";
  struct capsa__proc_stat st;
  ASSERT_EQ(0, capsa__proc_stat_parse(line, &st));
  EXPECT_EQ('R', st.state);
  EXPECT_EQ(77, st.ppid);
  EXPECT_EQ(168u, st.cpu_ticks);
  EXPECT_EQ(98765u, st.start_ticks);
  EXPECT_EQ(-EPROTO, capsa__proc_stat_parse("4242 noparen S 1\n", &st));
  EXPECT_EQ(-EPROTO, capsa__proc_stat_parse("4242 (x) S 1 2 3\n", &st));
  EXPECT_EQ(-EPROTO, capsa__proc_stat_parse("", &st));
}

TEST(ProcStat, ARealProcessNamedWithParenthesesReadsRight) {
  int p[2];
  ASSERT_EQ(0, pipe(p));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "x) R 1 (y", 0, 0, 0);
    Burn(150);
    char c = 1;
    if (write(p[1], &c, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(p[1]);
  char c;
  ASSERT_EQ(1, read(p[0], &c, 1));
  close(p[0]);
  struct capsa__proc_stat st;
  int err = capsa__proc_stat_read(child, &st);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(0, err);
  EXPECT_EQ(getpid(), st.ppid);
  EXPECT_GE(capsa__proc_ticks_usec(st.cpu_ticks), 100000u);
  EXPECT_LT(capsa__proc_age_ms(&st), 60000u);
  EXPECT_EQ(-ESRCH, capsa__proc_stat_read(child, &st)) << "reaped: gone";
}

TEST(ProcStat, FallbackReadersGiveOwnFigures) {
  uint64_t statm = 0;
  ASSERT_EQ(0, capsa__proc_statm_private(getpid(), &statm));
  EXPECT_GT(statm, 0u);
  uint64_t uss = 0, pss = 0;
  ASSERT_EQ(0, capsa__proc_smaps_rollup(getpid(), &uss, &pss));
  EXPECT_GT(uss, 0u);
  EXPECT_GE(pss, uss) << "what only we hold is all in our share";
  bool capmode = true;
  ASSERT_EQ(0, capsa__proc_in_capmode(getpid(), &capmode));
  EXPECT_FALSE(capmode);
  EXPECT_EQ(-ENOENT, capsa__cgroup_memory_current("/nonexistent", &uss));
}

}  // namespace
