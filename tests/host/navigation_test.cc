// Long-lived renderers (issue 36): navigation as a restart in place that is
// not a crash, a start-up allowance under the loop share, and a kind's
// warm-up in the zygote. Real hosts, real renderers, root and uid 65534.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "host/testing.h"
#include "renderer/runtime.h"
#include "tests/harness/command.h"
#include "tests/harness/host_fixture.h"

namespace {

// --- renderer side ----------------------------------------------------------

// "chat": logs "pid N line I" without end; "crash": SIGSEGV; "burst N":
// N LOG lines at once; "scribble": overwrites the warm-up's text in its
// own memory, then logs it.
char g_warm_text[64];   // filled by the warm-up, in the zygote
pid_t g_warm_pid;       // where the warm-up ran
int g_warm_fd = -1;     // the descriptor it read (closed since)
unsigned g_warm_calls;  // in this image

int WarmUp(const int *fds, unsigned nfds) {
  g_warm_calls++;
  g_warm_pid = getpid();
  if (nfds != 1) return -EINVAL;
  g_warm_fd = fds[0];
  ssize_t n = pread(fds[0], g_warm_text, sizeof g_warm_text - 1, 0);
  if (n < 0) return -errno;
  g_warm_text[n] = 0;
  // A descriptor of its own, left open: the zygote closes it.
  (void)open("/dev/null", O_RDONLY);
  return 0;
}
int FailingWarmUp(const int *, unsigned) {
  return -EIO;
}
int WarmUpA(const int *, unsigned) {
  return 0;
}
int WarmUpB(const int *, unsigned) {
  return 0;
}

int OnNavStart(capsa_rctx_t *r) {
  // What every renderer of a warmed kind starts with.
  errno = 0;
  int still_open = fcntl(g_warm_fd, F_GETFD) >= 0;
  return capsa_rctx_log(r, CAPSA_LOG_INFO,
                        "start pid=%d warm='%s' warm_pid=%d calls=%u "
                        "warm_fd_open=%d",
                        (int)getpid(), g_warm_text, (int)g_warm_pid,
                        g_warm_calls, g_warm_fd >= 0 && still_open);
}

int OnNavMessage(capsa_rctx_t *r, capsa_msg_t *m) {
  if (!capsa_test::AsRun(m)) return -EPROTO;
  std::string cmd = capsa_test::RunData(m);
  if (cmd == "chat") {
    for (unsigned i = 0;; i++) {
      capsa_rctx_log(r, CAPSA_LOG_INFO, "pid %d line %u", (int)getpid(), i);
      usleep(500);
    }
  } else if (cmd == "crash") {
    signal(SIGSEGV, SIG_DFL);
    *(volatile int *)nullptr = 1;
  } else if (cmd.rfind("burst ", 0) == 0) {
    int n = atoi(cmd.c_str() + 6);
    for (int i = 0; i < n; i++)
      capsa_rctx_log(r, CAPSA_LOG_INFO, "burst %d", i);
  } else if (cmd == "scribble") {
    memset(g_warm_text, 'X', 8);
    capsa_rctx_log(r, CAPSA_LOG_INFO, "scribbled '%s'", g_warm_text);
  }
  return 0;
}

// On start: 24 LOG lines before and after READY (a renderer asking for what
// it needs); they must not be held back by a 1 % share.
int OnChattyStart(capsa_rctx_t *r) {
  for (int i = 0; i < 24; i++) capsa_rctx_log(r, CAPSA_LOG_INFO, "hello %d", i);
  return 0;
}

const capsa_renderer_handlers_t kNav = {
    "nav", OnNavStart, OnNavMessage, nullptr, capsa_test::kCommand, 1};
const capsa_renderer_handlers_t kChatty = {"nav-chatty",         OnChattyStart,
                                           OnNavMessage,         nullptr,
                                           capsa_test::kCommand, 1};

CAPSA_RENDERER_KIND(k_nav, "nav", capsa_renderer_main, &kNav)
CAPSA_RENDERER_KIND(k_nav_warm, "nav-warm", capsa_renderer_main, &kNav)
CAPSA_RENDERER_WARM_UP(k_nav_warm, "nav-warm", WarmUp)
CAPSA_RENDERER_KIND(k_nav_fail, "nav-warm-fails", capsa_renderer_main, &kNav)
CAPSA_RENDERER_WARM_UP(k_nav_fail, "nav-warm-fails", FailingWarmUp)
CAPSA_RENDERER_KIND(k_nav_dup, "nav-warm-twice", capsa_renderer_main, &kNav)
CAPSA_RENDERER_WARM_UP(k_nav_dup_a, "nav-warm-twice", WarmUpA)
CAPSA_RENDERER_WARM_UP(k_nav_dup_b, "nav-warm-twice", WarmUpB)
CAPSA_RENDERER_KIND(k_nav_chatty, "nav-chatty", capsa_renderer_main, &kChatty)

// --- host side --------------------------------------------------------------

struct Seen {
  capsa_host_event_type_t type;
  std::string text;
  pid_t pid;
};

class Navigation : public capsa_test::HostFixture {
 public:
  void OnHostEvent(const capsa_host_event_t *ev) override {
    auto *t = this;
    pid_t pid = capsa_renderer_pid(ev->renderer);
    if (ev->type == CAPSA_EV_LOG) {
      t->logs_.push_back({ev->type, ev->text ? ev->text : "", pid});
      return;
    }
    t->seen_.push_back({ev->type, ev->text ? ev->text : "", pid});
    t->order_ += std::string(capsa_host_event_name(ev->type)) + " ";
    if (ev->type == CAPSA_EV_READY) t->ready_++;
    if (ev->type == CAPSA_EV_CLOSED) t->closed_++;
    if (ev->type == CAPSA_EV_CRASHED && t->navigate_on_crash_)
      t->navigate_in_callback_ = capsa_renderer_navigate(ev->renderer);
  }
  int Kind(const char *name, void (*tweak)(capsa_kind_options_t *) = nullptr) {
    capsa_kind_options_t k;
    capsa_kind_options_init(
        &k, name, capsa_renderer_main,
        (void *)(strcmp(name, "nav-chatty") == 0 ? &kChatty : &kNav));
    capsa_test::SpeakCommand(&k);
    k.limit_log_bytes_per_second = 64u << 20;  // "chat" is not a LOG flood
    if (tweak) tweak(&k);
    return capsa_host_define_kind(&host_, &k);
  }
  capsa_renderer_t *Start(int kind) {
    EXPECT_EQ(0, capsa_host_start(&host_)) << capsa_host_start_error(&host_);
    capsa_renderer_t *r = nullptr;
    EXPECT_EQ(0, capsa_host_spawn(&host_, kind, nullptr, &r));
    EXPECT_TRUE(Run([&] { return ready_ >= 1; }, 10000)) << order_;
    return r;
  }
  // Our children that are zombies (exited, not reaped).
  static unsigned ZombieChildren() {
    unsigned n = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    while (struct dirent *e = readdir(d)) {
      char path[300], buf[512];
      snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
      FILE *f = fopen(path, "r");
      if (!f) continue;
      size_t len = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      buf[len] = 0;
      const char *close_paren = strrchr(buf, ')');
      char state = 0;
      int ppid = 0;
      if (close_paren &&
          sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 &&
          ppid == (int)getpid() && state == 'Z') {
        n++;
        fprintf(stderr, "zombie child: %s\n", buf);  // for the failure
      }
    }
    closedir(d);
    return n;
  }
  bool CloseHost() {
    capsa_host_close(&host_, OnClosed);
    return Run([&] { return host_closed_; }, 10000);
  }
  static void OnClosed(capsa_host_t *h) {
    static_cast<Navigation *>(h->data)->host_closed_ = true;
  }
  const Seen *Find(capsa_host_event_type_t type) {
    for (auto &s : seen_)
      if (s.type == type) return &s;
    return nullptr;
  }
  bool Logged(const std::string &part) {
    for (auto &l : logs_)
      if (l.text.find(part) != std::string::npos) return true;
    return false;
  }

  std::vector<Seen> seen_, logs_;
  std::string order_;
  unsigned ready_ = 0, closed_ = 0;
  bool navigate_on_crash_ = false;
  int navigate_in_callback_ = 1;
};

TEST_F(Navigation, IsARestartInPlaceThatSpendsNoRestartBudget) {
  int k = Kind("nav");  // max_restarts 0: a crash is not restarted
  capsa_renderer_t *r = Start(k);
  ASSERT_NE(nullptr, r);
  pid_t first = capsa_renderer_pid(r);
  for (unsigned n = 1; n <= 3; n++) {
    ASSERT_EQ(0, capsa_renderer_navigate(r)) << n;
    ASSERT_TRUE(Run([&] { return ready_ == n + 1; }, 10000)) << order_;
  }
  EXPECT_EQ(
      "ready killed restarted ready killed restarted ready killed "
      "restarted ready ",
      order_);
  EXPECT_EQ("navigation", Find(CAPSA_EV_KILLED)->text);
  EXPECT_EQ("navigation", Find(CAPSA_EV_RESTARTED)->text);
  EXPECT_EQ(0u, capsa_renderer_restarts(r)) << "not counted as restarts";
  EXPECT_EQ(3u, capsa_renderer_navigations(r));
  EXPECT_NE(first, capsa_renderer_pid(r)) << "a new process";
  // The old incarnations were detached to be reaped off the handle: none
  // is left a zombie (or alive) once the loop has run a little.
  Wait(300);
  EXPECT_EQ(0u, ZombieChildren());
  // The restart policy is untouched: a crash still ends the handle.
  ASSERT_EQ(0, capsa_test::SendRun(r, "crash"));
  ASSERT_TRUE(Run([&] { return closed_ == 1; }, 5000)) << order_;
  // (The handle is gone after CLOSED: AfterKillIsRefused asks before it.)
  EXPECT_EQ(-EINVAL, capsa_renderer_navigate(nullptr));
}

// Incarnations a navigation detached are reaped, also when the host closes
// right after a navigation. (Their pidfds were watched by libuv, so they
// are non-blocking: a waitid on one that has not exited answers EAGAIN,
// which the dying list's sweeps once took for "reaped", leaving zombies;
// host/reaper.c capsa__reaper_wait.)
TEST_F(Navigation, DetachedIncarnationsAreReapedWhenTheHostClosesAtOnce) {
  int k = Kind("nav");
  capsa_renderer_t *r = Start(k);
  ASSERT_NE(nullptr, r);
  for (unsigned n = 1; n <= 4; n++) {
    ASSERT_EQ(0, capsa_renderer_navigate(r)) << n;
    ASSERT_TRUE(Run([&] { return ready_ == n + 1; }, 10000)) << order_;
  }
  ASSERT_EQ(0, capsa_renderer_navigate(r));  // and close while it exits
  ASSERT_TRUE(CloseHost());
  EXPECT_EQ(0u, ZombieChildren());
}

TEST_F(Navigation, CutsTheOldIncarnationOffWhenItReturns) {
  int k = Kind("nav");
  capsa_renderer_t *r = Start(k);
  ASSERT_NE(nullptr, r);
  pid_t old = capsa_renderer_pid(r);
  ASSERT_EQ(0, capsa_test::SendRun(r, "chat"));
  ASSERT_TRUE(Run([&] { return logs_.size() >= 20; }, 5000));
  ASSERT_EQ(0, capsa_renderer_navigate(r));
  size_t at_navigate = logs_.size();
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 10000)) << order_;
  // Give a late line every chance to arrive.
  Wait(200);
  for (size_t i = at_navigate; i < logs_.size(); i++)
    EXPECT_EQ(logs_[i].text.find("pid " + std::to_string(old) + " "),
              std::string::npos)
        << "a line of the old incarnation after navigate: " << logs_[i].text;
  EXPECT_EQ("ready killed restarted ready ", order_);
}

TEST_F(Navigation, FromACrashReportRestartsAtOnceDespiteAZeroBudget) {
  navigate_on_crash_ = true;  // the sad tab's "reload"
  int k = Kind("nav");        // max_restarts 0
  capsa_renderer_t *r = Start(k);
  ASSERT_EQ(0, capsa_test::SendRun(r, "crash"));
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 10000)) << order_;
  EXPECT_EQ(0, navigate_in_callback_);
  EXPECT_EQ("ready crashed restarted ready ", order_);
  EXPECT_EQ(0u, closed_);
}

TEST_F(Navigation, DuringABackoffStartsAtOnce) {
  int k = Kind("nav", [](capsa_kind_options_t *o) {
    o->max_restarts = 1;
    o->restart_backoff_ms = 60000;  // a minute: the test cannot wait it out
  });
  capsa_renderer_t *r = Start(k);
  ASSERT_EQ(0, capsa_test::SendRun(r, "crash"));
  ASSERT_TRUE(Run([&] { return Find(CAPSA_EV_CRASHED) != nullptr; }, 5000));
  Wait(100);  // now backing off
  EXPECT_EQ(1u, ready_);
  ASSERT_EQ(0, capsa_renderer_navigate(r));
  ASSERT_TRUE(Run([&] { return ready_ == 2; }, 10000)) << order_;
  EXPECT_EQ("ready crashed restarted ready ", order_);
}

TEST_F(Navigation, AfterKillIsRefused) {
  int k = Kind("nav");
  capsa_renderer_t *r = Start(k);
  ASSERT_EQ(0, capsa_renderer_kill(r));
  EXPECT_EQ(-ESRCH, capsa_renderer_navigate(r));
  ASSERT_TRUE(Run([&] { return closed_ == 1; }, 5000)) << order_;
  EXPECT_EQ("ready killed closed ", order_);
}

// A new incarnation's first messages are not held back by a 1 % share
// (its bucket is 4 us: each message used to cost it a rest of >= 1 ms);
// once the allowance is spent, the share holds as before.
TEST_F(Navigation, StartUpMessagesAreNotThrottledButAFloodStillIs) {
  int k = Kind("nav-chatty",
               [](capsa_kind_options_t *o) { o->host_share_percent = 1; });
  capsa_renderer_t *r = Start(k);
  ASSERT_TRUE(Run([&] { return logs_.size() >= 24; }, 5000));
  EXPECT_EQ(0u, capsa__renderer_rests_for_test(r))
      << "the start-up messages rested the channel";
  ASSERT_EQ(0, capsa_renderer_navigate(r));
  ASSERT_TRUE(Run([&] { return ready_ == 2 && logs_.size() >= 48; }, 10000));
  EXPECT_EQ(0u, capsa__renderer_rests_for_test(r)) << "nor a navigation's";
  ASSERT_EQ(0, capsa_test::SendRun(r, "burst 200"));
  ASSERT_TRUE(Run([&] { return logs_.size() >= 248; }, 10000));
  EXPECT_GT(capsa__renderer_rests_for_test(r), 0u)
      << "beyond the allowance the share applies";
}

// The warm-up ran once in the zygote, read its descriptor there, and every
// renderer starts with its result; the descriptor is not theirs, and a
// renderer's write to that memory is its own.
TEST_F(Navigation, AWarmUpRunsInTheZygoteAndEveryRendererInheritsIt) {
  int fd = memfd_create("warm", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(11, write(fd, "glyphs-done", 11));
  int warm_fd = fd;
  int k = capsa_host_define_kind(&host_, [&] {
    static capsa_kind_options_t o;
    capsa_kind_options_init(&o, "nav-warm", capsa_renderer_main, (void *)&kNav);
    capsa_test::SpeakCommand(&o);
    o.warm_up_fds[0] = warm_fd;
    o.nwarm_up_fds = 1;
    return &o;
  }());
  ASSERT_GE(k, 0) << capsa_host_start_error(&host_);
  int plain = Kind("nav");
  ASSERT_EQ(0, capsa_host_start(&host_)) << capsa_host_start_error(&host_);
  EXPECT_EQ(CAPSA_WARM_UP_DONE, capsa_host_kind_warm_up(&host_, k));
  EXPECT_EQ(CAPSA_WARM_UP_NONE, capsa_host_kind_warm_up(&host_, plain));
  capsa_renderer_t *a = nullptr, *b = nullptr;
  ASSERT_EQ(0, capsa_host_spawn(&host_, k, nullptr, &a));
  ASSERT_TRUE(Run([&] { return ready_ == 1 && logs_.size() >= 1; }, 10000));
  ASSERT_EQ(0, capsa_test::SendRun(a, "scribble"));
  ASSERT_TRUE(Run([&] { return Logged("scribbled"); }, 5000));
  ASSERT_EQ(0, capsa_host_spawn(&host_, k, nullptr, &b));
  ASSERT_TRUE(Run([&] { return ready_ == 2 && logs_.size() >= 3; }, 10000));
  unsigned starts = 0;
  for (auto &l : logs_) {
    if (l.text.rfind("start ", 0) != 0) continue;
    starts++;
    EXPECT_NE(std::string::npos, l.text.find("warm='glyphs-done'")) << l.text;
    EXPECT_NE(std::string::npos, l.text.find("calls=1 ")) << l.text;
    EXPECT_NE(std::string::npos, l.text.find("warm_fd_open=0")) << l.text;
    // Its own pid (1 in a pid namespace of its own) is not the pid the
    // warm-up saw, nor is the host's.
    int self = -1, warm = -1;
    ASSERT_EQ(2, sscanf(l.text.c_str(),
                        "start pid=%d warm='glyphs-done' "
                        "warm_pid=%d",
                        &self, &warm))
        << l.text;
    EXPECT_NE(self, warm) << "the warm-up ran in the renderer: " << l.text;
    EXPECT_NE((int)getpid(), warm) << "the warm-up ran in the host";
    EXPECT_GT(warm, 0);
  }
  EXPECT_EQ(2u, starts);
  EXPECT_TRUE(Logged("scribbled 'XXXXXXXXone'"));
  EXPECT_EQ(g_warm_calls, 0u) << "the host's own image never warms up";
  close(fd);
}

TEST_F(Navigation, AFailingWarmUpFailsTheStartAndSaysWhich) {
  ASSERT_GE(Kind("nav-warm-fails"), 0);
  EXPECT_EQ(-EIO, capsa_host_start(&host_));
  std::string why = capsa_host_start_error(&host_);
  EXPECT_NE(std::string::npos, why.find("nav-warm-fails")) << why;
  EXPECT_NE(std::string::npos, why.find("CAPSA_RENDERER_WARM_UP")) << why;
}

TEST_F(Navigation, TwoWarmUpsForOneNameFailTheStart) {
  ASSERT_GE(Kind("nav-warm-twice"), 0);
  EXPECT_EQ(-ENOTUNIQ, capsa_host_start(&host_));
  std::string why = capsa_host_start_error(&host_);
  EXPECT_NE(std::string::npos, why.find("two warm-ups")) << why;
}

TEST_F(Navigation, BadWarmUpDescriptorsAreRefusedByDefineKind) {
  capsa_kind_options_t o;
  capsa_kind_options_init(&o, "nav-warm", capsa_renderer_main, (void *)&kNav);
  capsa_test::SpeakCommand(&o);
  o.nwarm_up_fds = CAPSA_WARM_UP_MAX_FDS + 1;
  EXPECT_EQ(-EINVAL, capsa_host_define_kind(&host_, &o));
  EXPECT_NE(std::string::npos, std::string(capsa_host_start_error(&host_))
                                   .find("CAPSA_WARM_UP_MAX_FDS"));
  o.nwarm_up_fds = 1;
  o.warm_up_fds[0] = 1000;  // not open
  EXPECT_EQ(-EBADF, capsa_host_define_kind(&host_, &o));
}

}  // namespace
