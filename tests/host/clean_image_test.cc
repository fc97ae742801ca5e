// Issue 12 item 1: renderers of an exec'd zygote hold nothing of the host.
// A host (a forked child of the test) plants markers before
// capsa_host_start: an environment string and argv[0] rewritten in place
// (what /proc/PID/environ and cmdline show), a heap block, a global, a
// MAP_SHARED writable file mapping and shared anonymous memory. Each ready
// renderer is then searched from outside (/proc/PID/environ, cmdline, maps,
// and every readable mapping through /proc/PID/mem) and from inside (it
// reads the host's marker addresses, which the test sends it, through a
// pipe: EFAULT when unmapped). The same after the zygote is killed and
// replaced. A control kind that is not registered by name gets the old
// forked zygote: there the markers are found, so the search is shown to
// see them.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/host/ptrace_cap.h"

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "renderer/runtime.h"
#include "tests/harness/child.h"
#include "tests/harness/command.h"
#include "tests/harness/run_loop.h"

extern char **environ;

namespace {

// --- renderer side -----------------------------------------------------

std::string Hex(const unsigned char *p, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; i++) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

// A Run (tests/harness/command.fbs) whose data is "ADDR LEN ADDR LEN ...":
// logs "probe I unmapped" or "probe I HEX" for each, then "probe done".
int OnProbe(capsa_rctx_t *r, capsa_msg_t *m) {
  if (capsa_test::AsRun(m) == nullptr) return -EPROTO;
  std::string cmd = capsa_test::RunData(m);
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -errno;
  const char *s = cmd.c_str();
  char *end = nullptr;
  for (unsigned i = 0;; i++) {
    unsigned long addr = strtoul(s, &end, 16);
    if (end == s) break;
    s = end;
    unsigned long len = strtoul(s, &end, 10);
    s = end;
    unsigned char buf[128];
    if (len > sizeof buf) len = sizeof buf;
    // The kernel reads the address for us: EFAULT, not a crash, when it is
    // not mapped here.
    // A raw syscall: a sanitizer's write() interceptor would check the
    // address against its own heap (at the same fixed place in every
    // image) and abort instead.
    ssize_t w =
        syscall(SYS_write, p[1], reinterpret_cast<const void *>(addr), len);
    if (w < 0) {
      capsa_rctx_log(r, CAPSA_LOG_INFO, "probe %u unmapped", i);
      continue;
    }
    ssize_t n = read(p[0], buf, (size_t)w);
    capsa_rctx_log(r, CAPSA_LOG_INFO, "probe %u %s", i,
                   Hex(buf, n > 0 ? (size_t)n : 0).c_str());
  }
  close(p[0]);
  close(p[1]);
  capsa_rctx_log(r, CAPSA_LOG_INFO, "probe done");
  return 0;
}

const capsa_renderer_handlers_t kProbe = {
    "clean-image-probe", nullptr, OnProbe, nullptr, capsa_test::kCommand, 1};

}  // namespace

CAPSA_RENDERER_KIND(clean_probe, "clean-image-probe", capsa_renderer_main,
                    &kProbe)

namespace {

// --- host side ---------------------------------------------------------

char g_global_marker[64];

struct Marker {
  std::string what, text;
  const void *addr;
};

struct Host {
  uv_loop_t loop;
  capsa_host_t host;
  capsa_renderer_t *r = nullptr;
  bool ready = false, closed = false, host_closed = false;
  std::vector<std::string> logs;
};

void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
  Host *t = static_cast<Host *>(h->data);
  if (ev->renderer != t->r) return;
  if (ev->type == CAPSA_EV_READY) t->ready = true;
  if (ev->type == CAPSA_EV_LOG && ev->status == CAPSA_HOST_LOG_STDERR)
    fprintf(stderr, "[renderer stderr] %s\n", ev->text);
  else if (ev->type == CAPSA_EV_LOG && ev->text)
    t->logs.push_back(ev->text);
  if (ev->type == CAPSA_EV_CLOSED) t->closed = true;
  if (ev->type == CAPSA_EV_SANDBOX_REFUSED || ev->type == CAPSA_EV_SPAWN_FAILED)
    fprintf(stderr, "renderer: %s %s\n", capsa_host_event_name(ev->type),
            ev->text ? ev->text : "");
}

template <typename Pred>
bool RunUntil(Host *t, Pred done, int timeout_ms) {
  return capsa_test::RunLoopUntil(&t->loop, done, timeout_ms);
}

std::string ReadFile(const std::string &path) {
  std::string s;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "<" + std::string(strerror(errno)) + ">";
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, (size_t)n);
  close(fd);
  return s;
}

// Every readable mapping of `pid` through /proc/PID/mem; which markers it
// holds. Huge reservations (a sanitizer's shadow) are skipped: no marker is
// ever placed there.
std::vector<std::string> ScanMemory(pid_t pid,
                                    const std::vector<Marker> &markers,
                                    std::string *err) {
  std::vector<std::string> found;
  std::string maps = ReadFile("/proc/" + std::to_string(pid) + "/maps");
  int mem = open(("/proc/" + std::to_string(pid) + "/mem").c_str(),
                 O_RDONLY | O_CLOEXEC);
  if (mem < 0) {
    *err = std::string("open mem: ") + strerror(errno);
    return found;
  }
  size_t pos = 0;
  unsigned scanned = 0;
  while (pos < maps.size()) {
    size_t nl = maps.find('\n', pos);
    std::string line = maps.substr(pos, nl - pos);
    pos = nl == std::string::npos ? maps.size() : nl + 1;
    unsigned long lo, hi;
    char perm[5];
    if (sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perm) != 3) continue;
    if (perm[0] != 'r' || hi - lo > (256ul << 20)) continue;
    if (line.find("[vvar") != std::string::npos) continue;
    std::string data(hi - lo, '\0');
    ssize_t n = pread(mem, &data[0], data.size(), (off_t)lo);
    if (n <= 0) continue;
    data.resize((size_t)n);
    scanned++;
    for (const Marker &m : markers)
      if (data.find(m.text) != std::string::npos)
        found.push_back(m.what + "@" + line);
  }
  close(mem);
  if (scanned == 0) *err = "no mapping readable";
  return found;
}

// Spawns a renderer of `kind`, checks it from outside and inside. Returns
// the markers it could see, one line each.
std::vector<std::string> Probe(Host *t, int kind,
                               const std::vector<Marker> &markers,
                               const std::string &shared_path) {
  std::vector<std::string> seen;
  t->ready = t->closed = false;
  t->logs.clear();
  int err = capsa_host_spawn(&t->host, kind, nullptr, &t->r);
  EXPECT_EQ(0, err) << strerror(-err);
  if (err < 0) return seen;
  EXPECT_TRUE(RunUntil(
      t, [&] { return t->ready || t->closed; }, 10000));
  EXPECT_TRUE(t->ready);
  if (!t->ready) return seen;
  pid_t pid = capsa_renderer_pid(t->r);
  std::string proc = "/proc/" + std::to_string(pid);
  std::string environ_s = ReadFile(proc + "/environ");
  std::string cmdline = ReadFile(proc + "/cmdline");
  std::string maps = ReadFile(proc + "/maps");
  for (const Marker &m : markers) {
    if (environ_s.find(m.text) != std::string::npos)
      seen.push_back(m.what + " in /proc/PID/environ");
    if (cmdline.find(m.text) != std::string::npos)
      seen.push_back(m.what + " in /proc/PID/cmdline");
  }
  if (maps.find(shared_path) != std::string::npos)
    seen.push_back("shared file mapped (maps)");
  std::string scan_err;
  for (const std::string &s : ScanMemory(pid, markers, &scan_err))
    seen.push_back("mem: " + s);
  EXPECT_EQ("", scan_err);
  // From inside: the host's addresses.
  std::string cmd;
  for (const Marker &m : markers) {
    char b[64];
    snprintf(b, sizeof b, "%lx %zu ", (unsigned long)m.addr, m.text.size());
    cmd += b;
  }
  EXPECT_EQ(0, capsa_test::SendRun(t->r, cmd));
  auto done = [&] {
    for (auto &l : t->logs)
      if (l.find("probe done") != std::string::npos) return true;
    return t->closed;
  };
  EXPECT_TRUE(RunUntil(t, done, 10000));
  for (unsigned i = 0; i < markers.size(); i++) {
    std::string hex =
        Hex(reinterpret_cast<const unsigned char *>(markers[i].text.data()),
            markers[i].text.size());
    for (auto &l : t->logs)
      if (l.find("probe " + std::to_string(i) + " " + hex) != std::string::npos)
        seen.push_back(markers[i].what + " at its host address");
  }
  capsa_renderer_kill(t->r);
  EXPECT_TRUE(RunUntil(
      t, [&] { return t->closed; }, 10000));
  return seen;
}

// Puts `text` over the bytes of an original (stack) string of at least its
// length: what /proc/PID/environ or cmdline then shows.
bool Overwrite(char *orig, const std::string &text) {
  if (!orig || strlen(orig) < text.size()) return false;
  memcpy(orig, text.data(), text.size());
  return true;
}

void RunHost(bool registered) {
  char tag[32];
  snprintf(tag, sizeof tag, "%08x%04x", (unsigned)time(nullptr) ^ 0x5a5a5a5au,
           (unsigned)getpid() & 0xffff);
  auto mark = [&](const char *what) {
    return std::string("capsa-mark-") + what + "-" + tag;
  };
  std::vector<Marker> markers;
  // Environment: the longest original string, rewritten in place.
  char *longest = nullptr;
  for (char **e = environ; *e; e++)
    if (!longest || strlen(*e) > strlen(longest)) longest = *e;
  std::string env_m = mark("env");
  ASSERT_TRUE(Overwrite(longest, env_m)) << "no environment string to use";
  markers.push_back({"env", env_m, longest});
  // argv[0] (glibc keeps a pointer to it).
  std::string argv_m = mark("argv").substr(0, strlen(program_invocation_name));
  ASSERT_GE(argv_m.size(), 16u) << program_invocation_name;
  ASSERT_TRUE(Overwrite(program_invocation_name, argv_m));
  markers.push_back({"argv", argv_m, program_invocation_name});
  // Heap and a global.
  std::string heap_m = mark("heap");
  char *heap = static_cast<char *>(malloc(heap_m.size() + 1));
  memcpy(heap, heap_m.c_str(), heap_m.size() + 1);
  markers.push_back({"heap", heap_m, heap});
  std::string glob_m = mark("global");
  memcpy(g_global_marker, glob_m.c_str(), glob_m.size() + 1);
  markers.push_back({"global", glob_m, g_global_marker});
  // A writable MAP_SHARED file mapping and shared anonymous memory.
  char path[] = "/tmp/capsa-clean-image-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(0, ftruncate(fd, 4096));
  char *shf = static_cast<char *>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(MAP_FAILED, shf);
  close(fd);
  std::string shf_m = mark("sharedfile");
  memcpy(shf, shf_m.c_str(), shf_m.size() + 1);
  markers.push_back({"shared-file", shf_m, shf});
  char *sha = static_cast<char *>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                       MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(MAP_FAILED, sha);
  std::string sha_m = mark("sharedanon");
  memcpy(sha, sha_m.c_str(), sha_m.size() + 1);
  markers.push_back({"shared-anon", sha_m, sha});

  Host t;
  ASSERT_EQ(0, uv_loop_init(&t.loop));
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  o.allow_forked_zygote = !registered;
  ASSERT_EQ(0, capsa_host_init(&t.loop, &t.host, &o, OnEvent));
  t.host.data = &t;
  capsa_kind_options_t k;
  // The control kind has another name: not registered, so forked.
  capsa_kind_options_init(
      &k, registered ? "clean-image-probe" : "clean-image-probe-unregistered",
      capsa_renderer_main, (void *)&kProbe);
  capsa_test::SpeakCommand(&k);
  k.heartbeat_ms = 0;
  int kind = capsa_host_define_kind(&t.host, &k);
  ASSERT_GE(kind, 0);
  ASSERT_EQ(0, capsa_host_start(&t.host)) << capsa_host_start_error(&t.host);
  if (registered) {
    EXPECT_STREQ("exec", capsa_host_image(&t.host));
    // The zygote is the fresh image: its own argv, no environment.
    std::string zp = "/proc/" + std::to_string(capsa_host_zygote_pid(&t.host));
    EXPECT_EQ(std::string("capsa-zygote", 13), ReadFile(zp + "/cmdline"));
    EXPECT_EQ("", ReadFile(zp + "/environ"));
  } else {
    EXPECT_NE(nullptr, strstr(capsa_host_image(&t.host), "fork: kind"))
        << capsa_host_image(&t.host);
  }
  // Markers planted after start reach no zygote image either.
  std::string late_m = mark("late");
  char *late = static_cast<char *>(malloc(late_m.size() + 1));
  memcpy(late, late_m.c_str(), late_m.size() + 1);
  markers.push_back({"late-heap", late_m, late});

  std::vector<std::string> seen = Probe(&t, kind, markers, path);
  // The zygote killed and replaced: the new one is a fresh image too.
  pid_t z = capsa_host_zygote_pid(&t.host);
  ASSERT_GT(z, 0);
  ASSERT_EQ(0, kill(z, SIGKILL));
  usleep(100 * 1000);
  std::vector<std::string> seen2 = Probe(&t, kind, markers, path);
  EXPECT_GE(capsa_host_zygote_restarts(&t.host), 1u);
  EXPECT_NE(z, capsa_host_zygote_pid(&t.host));
  if (registered) {
    std::string all;
    for (auto &s : seen) all += "  first: " + s + "\n";
    for (auto &s : seen2) all += "  after zygote restart: " + s + "\n";
    EXPECT_TRUE(seen.empty() && seen2.empty()) << "host markers seen:\n" << all;
  } else {
    // The control: the forked image holds them, and the search finds them
    // (the late marker only in the replaced zygote, forked after it).
    auto has = [](const std::vector<std::string> &v, const std::string &w) {
      for (auto &s : v)
        if (s.compare(0, w.size(), w) == 0) return true;
      return false;
    };
    for (const char *w :
         {"env in /proc", "argv in /proc", "mem: heap", "mem: global",
          "mem: shared-file", "mem: shared-anon", "heap at", "global at",
          "shared-file at", "shared-anon at", "shared file mapped"})
      EXPECT_TRUE(has(seen, w)) << w;
    EXPECT_TRUE(has(seen2, "mem: late-heap"));
  }
  capsa_host_close(&t.host, [](capsa_host_t *h) {
    static_cast<Host *>(h->data)->host_closed = true;
  });
  EXPECT_TRUE(RunUntil(
      &t, [&] { return t.host_closed; }, 10000));
  EXPECT_EQ(0, uv_loop_close(&t.loop));
  munmap(shf, 4096);
  munmap(sha, 4096);
  unlink(path);
  free(heap);
  free(late);
}

TEST(CleanImage, RenderersOfTheExecdZygoteHoldNothingOfTheHost) {
  CAPSA_EXPECT_CHILD_OK_T([] { RunHost(true); }, 60000);
}

TEST(CleanImage, ForkedZygoteControlShowsTheSearchFindsMarkers) {
  CAPSA_SKIP_IF_ROOT_WITHOUT_PTRACE();
  CAPSA_EXPECT_CHILD_OK_T([] { RunHost(false); }, 60000);
}

// An unregistered kind (by default: no allow_forked_zygote): refused at
// start, with why.
TEST(CleanImage, AnUnregisteredKindIsRefusedByDefault) {
  CAPSA_EXPECT_CHILD_OK([] {
    uv_loop_t loop;
    ASSERT_EQ(0, uv_loop_init(&loop));
    capsa_host_t host;
    capsa_host_options_t o;
    capsa_host_options_init(&o);
    ASSERT_EQ(0, capsa_host_init(&loop, &host, &o, nullptr));
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, "clean-image-nobody", capsa_renderer_main,
                            (void *)&kProbe);
    capsa_test::SpeakCommand(&k);
    ASSERT_GE(capsa_host_define_kind(&host, &k), 0);
    EXPECT_EQ(-ENOEXEC, capsa_host_start(&host));
    EXPECT_NE(nullptr, strstr(capsa_host_start_error(&host),
                              "kind 'clean-image-nobody' is not registered"))
        << capsa_host_start_error(&host);
    EXPECT_STREQ("", capsa_host_image(&host));
    capsa_host_close(&host, nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(0, uv_loop_close(&loop));
  });
}

}  // namespace

namespace {

// A kind's policy reaches the exec'd zygote whole: a directory it grants
// travels as a descriptor and is in the compiled Landlock ruleset.
TEST(CleanImage, PolicyWithADirectoryReachesTheExecdZygote) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        uv_loop_t loop;
        ASSERT_EQ(0, uv_loop_init(&loop));
        capsa_host_t host;
        capsa_host_options_t o;
        capsa_host_options_init(&o);
        ASSERT_EQ(0, capsa_host_init(&loop, &host, &o, nullptr));
        int dir = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(dir, 0);
        capsa_capmode_policy *p = capsa_capmode_policy_new();
        ASSERT_EQ(0, capsa_capmode_policy_allow_dir(p, dir));
        ASSERT_EQ(0, capsa_capmode_policy_allow_name(p, "sysinfo", nullptr, 0,
                                                     "clean image test"));
        capsa_kind_options_t k;
        capsa_kind_options_init(&k, "clean-image-probe", capsa_renderer_main,
                                (void *)&kProbe);
        capsa_test::SpeakCommand(&k);
        k.capmode = p;
        ASSERT_EQ(0, capsa_host_define_kind(&host, &k));
        ASSERT_EQ(0, capsa_host_start(&host)) << capsa_host_start_error(&host);
        EXPECT_STREQ("exec", capsa_host_image(&host));
        struct capsa_capmode_report r;
        ASSERT_EQ(0, capsa_host_kind_report(&host, 0, &r));
        if (r.landlock == CAPSA_LAYER_ENFORCED) {
          EXPECT_EQ(1u, r.landlock_dirs);
        }
        EXPECT_EQ(CAPSA_LAYER_ENFORCED, r.seccomp);
        capsa_host_close(&host, nullptr);
        uv_run(&loop, UV_RUN_DEFAULT);
        EXPECT_EQ(0, uv_loop_close(&loop));
        capsa_capmode_policy_free(p);
        close(dir);
      },
      30000);
}

}  // namespace
