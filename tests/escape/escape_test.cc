// The escape matrix: named escape attempts made from inside real renderers
// that a real host (capsa_host_t on a libuv loop) spawned through its
// zygote. An "attacker" renderer runs the attempts it is told to (the
// hostile renderer's list, demos/hostile/hostile.h, plus the rows of
// tests/escape/escape_attacks.c) against the host, a sibling renderer and the
// handles it was given (a sealed read-only region, a read-only file from the
// broker; both rights-limited as declared: capsa_renderer_main_limited),
// and reports one LOG line per attempt. Every row must be refused
// with its documented errno or killed by its documented signal; afterwards
// the host still serves: the sibling and the attacker both round-trip, the
// region is intact, nothing was reported as crashed or bad.
//
// Run as root and as uid 65534 (run_unprivileged). The table prints in the
// test output.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "demos/hostile/hostile.h"
#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "ipc/shm.h"
#include "renderer/runtime.h"
#include "sandbox/features.h"
#include "sandbox/rights/rights.h"
#include "tests/escape/escape_attacks.h"
#include "tests/harness/command.h"
#include "tests/harness/run_loop.h"

namespace {

// --- renderer side --------------------------------------------------------

const capsa_attack *FindAttack(const std::string &name) {
  if (const capsa_attack *a = capsa_attack_find(name.c_str())) return a;
  for (size_t i = 0; i < capsa_escape_attacks_count; i++)
    if (name == capsa_escape_attacks[i].name) return &capsa_escape_attacks[i];
  return nullptr;
}

// Before the first message: ask the broker for the read-only file the file
// attempts aim at (broker calls are made from on_start; see host_test.cc).
int AttackerStart(capsa_rctx_t *r) {
  capsa_msg_t req, rep;
  capsa_msg_init(&req, CAPSA_MSG_RESOURCE_REQUEST);
  req.u.resource_request.url = "file:ro.txt";
  int err = capsa_rctx_call(r, &req, 5000, &rep);
  if (err == 0 && rep.u.resource_response.status == 0 && rep.handle_count == 1)
    capsa_escape_ctx.file_fd = capsa_msg_take_handle(&rep, 0);
  struct stat st = {};
  fstat(capsa_escape_ctx.file_fd, &st);
  capsa_rctx_log(r, CAPSA_LOG_INFO, "file fd=%d pid=%d mode=%o flags=%x",
                 capsa_escape_ctx.file_fd, (int)getpid(), st.st_mode,
                 fcntl(capsa_escape_ctx.file_fd, F_GETFL));
  return 0;
}

// The hostile list's environment grows (sibling_pid, limited_fd): fill the
// fields this tree's struct has.
template <typename E>
auto SetSibling(E *e, pid_t p, int) -> decltype(e->sibling_pid = p, void()) {
  e->sibling_pid = p;
}
template <typename E>
void SetSibling(E *, pid_t, long) {}
template <typename E>
auto SetLimited(E *e, int fd, int) -> decltype(e->limited_fd = fd, void()) {
  e->limited_fd = fd;
}
template <typename E>
void SetLimited(E *, int, long) {}

// A Run (tests/harness/command.fbs) with url "run", mime "HOST_PID
// SIBLING_PID name,name,..." and the read-only region as its `region`; or
// one with data "echo TEXT".
int AttackerMessage(capsa_rctx_t *r, capsa_msg_t *m) {
  const capsa_test_command_run_t *run = capsa_test::AsRun(m);
  if (run == nullptr) return -EPROTO;
  std::string cmd = capsa_test::String(run->data);
  if (cmd.rfind("echo ", 0) == 0) {
    capsa_rctx_log(r, CAPSA_LOG_INFO, "%s", cmd.c_str());
    return 0;
  }
  std::string url = run->url ? run->url : "";
  if (url != "run" || run->mime == nullptr) return -EPROTO;
  cmd = run->mime;
  struct capsa_attack_env env;
  capsa_attack_env_init(&env);
  if (run->region >= 0) {
    env.ro_shm_size = m->handles[run->region].size;
    env.ro_shm_fd = capsa_msg_take_handle(m, (uint32_t)run->region);
    capsa_rights_t cur;
    capsa_rights_get(env.ro_shm_fd, &cur);
    capsa_rctx_log(r, CAPSA_LOG_INFO, "shm fd=%d rights %llx %llx",
                   env.ro_shm_fd, (unsigned long long)cur.cr_rights[0],
                   (unsigned long long)cur.cr_rights[1]);
  }
  std::istringstream in(cmd);
  long host = 0, sibling = 0;
  std::string names;
  in >> host >> sibling >> names;
  env.host_pid = (pid_t)host;
  capsa_escape_ctx.sibling_pid = (pid_t)sibling;
  SetSibling(&env, (pid_t)sibling, 0);
  SetLimited(&env, env.ro_shm_fd, 0);
  int n = 0;
  std::stringstream list(names);
  std::string name;
  while (std::getline(list, name, ',')) {
    const capsa_attack *a = FindAttack(name);
    if (a == nullptr) {
      capsa_rctx_log(r, CAPSA_LOG_INFO, "row %s unknown 0 0", name.c_str());
      continue;
    }
    capsa_attack_result res;
    capsa_attack_run(a, &env, &res);
    capsa_rctx_log(r, CAPSA_LOG_INFO, "row %s %d %d %d", name.c_str(),
                   (int)res.verdict, res.observed_errno, res.observed_signal);
    n++;
  }
  if (env.ro_shm_fd >= 0) close(env.ro_shm_fd);
  capsa_rctx_log(r, CAPSA_LOG_INFO, "done %d", n);
  return 0;
}

const capsa_renderer_handlers_t kAttacker = {
    "attacker", AttackerStart,        AttackerMessage,
    nullptr,    capsa_test::kCommand, 1};

// Registered by name: the attacker descends from the exec'd zygote, the
// limited and the plain entry each under its own name.
CAPSA_RENDERER_KIND(k_attacker, "attacker", capsa_renderer_main_limited,
                    &kAttacker)
CAPSA_RENDERER_KIND(k_attacker_plain, "attacker-plain", capsa_renderer_main,
                    &kAttacker)

// --- host side --------------------------------------------------------------

struct Row {
  int verdict = -1, err = 0, sig = 0;
};

struct Matrix {
  uv_loop_t loop;
  capsa_host_t host;
  capsa_renderer_t *attacker = nullptr, *sibling = nullptr;
  int ready = 0, closed = 0;
  bool host_closed = false;
  std::map<std::string, Row> rows;
  std::vector<std::string> attacker_logs, sibling_logs, bad_events;
  int done = -1;
};

void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
  Matrix *m = static_cast<Matrix *>(h->data);
  switch (ev->type) {
    case CAPSA_EV_READY:
      m->ready++;
      break;
    case CAPSA_EV_LOG: {
      std::string t = ev->text ? ev->text : "";
      if (ev->status == CAPSA_HOST_LOG_STDERR) {
        fprintf(stderr, "[renderer stderr] %s\n", t.c_str());
        break;
      }
      if (ev->renderer == m->sibling) {
        m->sibling_logs.push_back(t);
        break;
      }
      m->attacker_logs.push_back(t);
      std::istringstream in(t);
      std::string word, name;
      in >> word;
      if (word == "row") {
        Row row;
        in >> name >> row.verdict >> row.err >> row.sig;
        m->rows[name] = row;
      } else if (word == "done") {
        in >> m->done;
      }
      break;
    }
    case CAPSA_EV_CLOSED:
      m->closed++;
      break;
    default:
      // EXITED, CRASHED, HUNG, BAD_MESSAGE...: none is expected while the
      // matrix runs.
      m->bad_events.push_back(std::string(capsa_host_event_name(ev->type)) +
                              (ev->text ? std::string(": ") + ev->text : ""));
      break;
  }
}

class EscapeMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/capsa-escape-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir_ = tmpl;
    int fd = open((dir_ + "/ro.txt").c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(16, write(fd, "read-only bytes\n", 16));
    close(fd);
    chmod(dir_.c_str(), 0755);
    dirfd_ = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dirfd_, 0);
    ASSERT_EQ(0, uv_loop_init(&m_.loop));
    capsa_host_options_t o;
    capsa_host_options_init(&o);
    ASSERT_EQ(0, capsa_host_init(&m_.loop, &m_.host, &o, OnEvent));
    m_.host.data = &m_;
    inited_ = true;
    capsa_kind_options_t k;
    // Limited: received handles carry the rights their messages declare
    // (what the rights rows attack). The plain entry leaves them to the
    // kernel objects' own modes and seals.
    capsa_kind_options_init(
        &k, Limited() ? "attacker" : "attacker-plain",
        Limited() ? capsa_renderer_main_limited : capsa_renderer_main,
        (void *)&kAttacker);
    capsa_test::SpeakCommand(&k);
    k.resource_dir_fd = dirfd_;
    k.heartbeat_ms = 1000;
    k.heartbeat_timeout_ms = 60000;  // attempts run inside one message
    kind_ = capsa_host_define_kind(&m_.host, &k);
    ASSERT_GE(kind_, 0);
    ASSERT_EQ(0, capsa_host_start(&m_.host));
  }
  virtual bool Limited() const {
    return true;
  }
  void TearDown() override {
    if (inited_) {
      capsa_host_close(&m_.host, [](capsa_host_t *h) {
        static_cast<Matrix *>(h->data)->host_closed = true;
      });
      RunUntil([&] { return m_.host_closed; }, 10000);
      EXPECT_TRUE(m_.host_closed);
    }
    uv_loop_close(&m_.loop);
    if (dirfd_ >= 0) close(dirfd_);
    unlink((dir_ + "/ro.txt").c_str());
    rmdir(dir_.c_str());
  }
  template <typename Pred>
  bool RunUntil(Pred done, int timeout_ms) {
    return capsa_test::RunLoopUntil(&m_.loop, done, timeout_ms);
  }
  void Send(capsa_renderer_t *r, const std::string &text) {
    ASSERT_EQ(0, capsa_test::SendRun(r, text));
  }

  // Runs `names` inside an attacker, prints the table, asserts every row.
  void RunRows(const std::vector<std::string> &names,
               const std::vector<std::string> &absent_env = {}) {
    ASSERT_EQ(0, capsa_host_spawn(&m_.host, kind_, nullptr, &m_.attacker));
    ASSERT_EQ(0, capsa_host_spawn(&m_.host, kind_, nullptr, &m_.sibling));
    ASSERT_TRUE(RunUntil(
        [&] {
          return m_.ready == 2 && !m_.attacker_logs.empty() &&
                 !m_.sibling_logs.empty();
        },
        15000))
        << Dump();
    EXPECT_NE(std::string::npos, m_.attacker_logs[0].find("file fd="))
        << m_.attacker_logs[0];
    printf("%s\n", m_.attacker_logs[0].c_str());
    EXPECT_EQ(std::string::npos, m_.attacker_logs[0].find("fd=-1"))
        << m_.attacker_logs[0] << "the broker's read-only file did not arrive";
    int ns_pid = -1;
    size_t at = m_.attacker_logs[0].find(" pid=");
    if (at != std::string::npos)
      ns_pid = atoi(m_.attacker_logs[0].c_str() + at + 5);
    // The region the attacker may only read, with a pattern to check after.
    capsa_shm_region_t region;
    ASSERT_EQ(0, capsa_shm_create(4096, "escape-ro", CAPSA_SHM_CREATOR_WRITES,
                                  &region));
    void *dst = nullptr;
    ASSERT_EQ(0, capsa_shm_view_mut(&region, 0, 4096, &dst));
    memset(dst, 0x5a, 4096);
    int fd = dup(region.fd);
    ASSERT_GE(fd, 0);
    std::string list;
    for (auto &n : names) list += (list.empty() ? "" : ",") + n;
    std::string cmd = std::to_string(getpid()) + " " +
                      std::to_string(capsa_renderer_pid(m_.sibling)) + " " +
                      list;
    SendRun(cmd, fd, region.size);
    ASSERT_TRUE(RunUntil([&] { return m_.done >= 0; }, 90000)) << Dump();
    EXPECT_EQ((int)names.size(), m_.done);
    for (auto &l : m_.attacker_logs)
      if (l.rfind("shm fd=", 0) == 0) printf("%s\n", l.c_str());

    // The table, through the hostile list's formatter.
    std::vector<capsa_attack_result> res;
    for (auto &n : names) {
      auto it = m_.rows.find(n);
      const capsa_attack *a = FindAttack(n);
      if (it == m_.rows.end() || a == nullptr) {
        ADD_FAILURE() << n << ": no result";
        continue;
      }
      capsa_attack_result r{};
      r.attack = a;
      r.verdict = (capsa_attack_verdict)it->second.verdict;
      r.observed_errno = it->second.err;
      r.observed_signal = it->second.sig;
      res.push_back(r);
    }
    std::vector<char> table(32768);
    capsa_attacks_format(res.data(), res.size(), table.data(), table.size());
    printf("escape matrix (%s), uid %d, from inside renderer pid %d:\n%s",
           ::testing::UnitTest::GetInstance()->current_test_info()->name(),
           (int)getuid(), (int)capsa_renderer_pid(m_.attacker), table.data());
    for (auto &r : res) {
      bool absent = false;
      for (auto &a : absent_env) absent |= a == r.attack->name;
      if (absent) {
        EXPECT_EQ(CAPSA_VERDICT_SKIPPED, r.verdict) << r.attack->name;
        continue;
      }
      if (r.verdict == CAPSA_VERDICT_ABSENT) {
        // The renderer found the target missing from this kernel: true only
        // if this host, outside any sandbox, finds it missing too.
        EXPECT_EQ(CAPSA_ATTACK_NEEDS_I386, r.attack->need) << r.attack->name;
        EXPECT_FALSE(capsa_features_get()->i386_entry) << r.attack->name;
        printf("note: %s: i386 entry %s\n", r.attack->name,
               capsa_features_get()->i386_detail);
        continue;
      }
      if (Limited() &&
          (std::string(r.attack->name) == "int80-getpid" ||
           std::string(r.attack->name) == "x32-getpid") &&
          r.observed_signal == 0 && r.observed_errno == ENOSYS) {
        // The attacker holds rights-limited handles: the rights layer's
        // filter (sandbox/rights/rights_bpf.c) answers a foreign-arch call
        // ENOSYS, and among errno answers the most recently installed filter's
        // wins over capability mode's. The call never ran either way.
        printf("note: %s answered ENOSYS by the rights layer\n",
               r.attack->name);
        continue;
      }
      if (r.verdict == CAPSA_VERDICT_SKIPPED && ns_pid == getpid() &&
          (std::string(r.attack->name) == "kill-host" ||
           std::string(r.attack->name) == "tgkill-host" ||
           std::string(r.attack->name) == "kill-host-sigkill")) {
        // The host (this test) and the renderer are both pid N of their own
        // pid namespaces (the test runs as a container's pid 1): the host's
        // pid names the attacker itself, the host is not nameable from in
        // there, and the attempt declined to signal itself.
        printf("note: %s: the host's pid %d is the renderer's own\n",
               r.attack->name, (int)getpid());
        continue;
      }
      if (std::string(r.attack->name) == "kill-init" && ns_pid == 1) {
        // In its own pid namespace the renderer IS pid 1: the attempt (made
        // from a forked child of the renderer, which inherits the filter's
        // "own pid" value) reaches its own renderer, nothing outside. The
        // real init is not even nameable from in there.
        printf(
            "note: kill-init aimed at the renderer itself (pid 1 of its "
            "own pid namespace): %s\n",
            capsa_attack_verdict_name(r.verdict));
        EXPECT_TRUE(r.verdict == CAPSA_VERDICT_REFUSED ||
                    r.verdict == CAPSA_VERDICT_ESCAPED);
        continue;
      }
      EXPECT_TRUE(r.verdict == CAPSA_VERDICT_REFUSED ||
                  r.verdict == CAPSA_VERDICT_KILLED)
          << r.attack->name << ": " << capsa_attack_verdict_name(r.verdict)
          << " errno " << r.observed_errno << " signal " << r.observed_signal
          << " (expected errno " << r.attack->expect_errno[0] << " or signal "
          << r.attack->expect_signal << ")";
      if (r.verdict == CAPSA_VERDICT_KILLED) {
        EXPECT_EQ(r.attack->expect_signal, r.observed_signal);
      }
    }

    // The host keeps serving: both renderers answer, the region is intact,
    // nothing died or misbehaved, this process (the host) is alive.
    Send(m_.sibling, "echo sibling still here");
    Send(m_.attacker, "echo attacker still here");
    ASSERT_TRUE(RunUntil(
        [&] {
          return m_.sibling_logs.size() >= 2 &&
                 m_.attacker_logs.back() == "echo attacker still here";
        },
        10000))
        << Dump();
    EXPECT_EQ("echo sibling still here", m_.sibling_logs.back());
    const unsigned char *p = static_cast<const unsigned char *>(dst);
    size_t intact = 0;
    for (size_t i = 0; i < 4096; i++) intact += p[i] == 0x5a;
    EXPECT_EQ(4096u, intact) << "the read-only region changed";
    EXPECT_TRUE(m_.bad_events.empty()) << Dump();
    EXPECT_EQ(0, m_.closed);
    capsa_shm_close(&region);
    char buf[32] = {0};
    int f = openat(dirfd_, "ro.txt", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(f, 0);
    EXPECT_EQ(16, read(f, buf, sizeof buf));
    close(f);
    EXPECT_STREQ("read-only bytes\n", buf) << "the broker's file changed";
  }

  void SendRun(const std::string &cmd, int fd, size_t size) {
    // A Run: url "run", the command in the mime field, the region as its
    // read-only `region` handle.
    capsa_test_command_run_t run;
    capsa_msg_t msg;
    capsa_test::InitRun(&msg, &run, "");
    run.url = "run";
    run.mime = cmd.c_str();
    capsa_rights_t rights;
    capsa_rights_init(&rights, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R,
                      CAPSA_CAP_FSTAT);
    run.region =
        capsa_msg_add_handle(&msg, fd, CAPSA_HANDLE_SHM, &rights, size, false);
    ASSERT_EQ(0, run.region);
    int err = capsa_renderer_send(m_.attacker, &msg);
    if (err < 0) close(fd);
    ASSERT_EQ(0, err) << strerror(-err);
  }

  std::string Dump() {
    std::string s = "ready=" + std::to_string(m_.ready) + " attacker:";
    for (auto &l : m_.attacker_logs) s += " [" + l + "]";
    s += " sibling:";
    for (auto &l : m_.sibling_logs) s += " [" + l + "]";
    s += " other events:";
    for (auto &e : m_.bad_events) s += " [" + e + "]";
    return s;
  }

  Matrix m_;
  bool inited_ = false;
  int kind_ = -1;
  std::string dir_;
  int dirfd_ = -1;
};

// The hostile list's directory escapes need a directory handle; renderers
// are given none (the broker opens files for them), so they cannot even be
// aimed: asserted as skipped, and the path-based rows below cover "..",
// symlinks and /proc/self/fd without one.
const std::vector<std::string> kNoDirectory = {
    "openat-dotdot", "openat-absolute", "symlink-escape"};

const std::vector<std::string> kFilesystem = {
    "open-etc-passwd",       "openat-cwd",      "stat-path",
    "openat-dotdot",         "openat-absolute", "symlink-escape",
    "proc-fd-reopen",        "open-by-handle",  "openat-cwd-dotdot",
    "symlinkat-cwd",         "linkat-handle",   "chdir-root",
    "file-reopen-rw",        "file-write",      "file-truncate",
    "file-mmap-shared-write"};
const std::vector<std::string> kNamespaces = {
    "mount",          "chroot",       "unshare-user", "unshare-net",
    "unshare-mount",  "unshare-pid",  "unshare-ipc",  "unshare-uts",
    "unshare-cgroup", "unshare-time", "setns",        "setns-handle",
    "clone-newns",    "clone-newpid", "clone-newnet", "clone-newuser",
    "clone3-newuser"};
const std::vector<std::string> kOtherProcesses = {
    "ptrace-host",     "ptrace-attach-host", "sibling-ptrace",
    "ptrace-traceme",  "process-vm-read",    "process-vm-write-host",
    "sibling-vm-read", "sibling-vm-write",   "kill-init",
    "kill-host",       "tgkill-host",        "kill-host-sigkill",
    "sibling-kill",    "sibling-tgkill",     "kill-all",
    "pidfd-open-host"};
const std::vector<std::string> kNetwork = {
    "tcp-connect",        "tcp6-connect",
    "tcp-bind",           "udp-sendto",
    "udp-bind",           "netlink",
    "packet-socket",      "unix-abstract-connect",
    "unix-abstract-bind", "unix-path-connect",
    "unix-path-bind",     "unix-dgram-sendto"};
const std::vector<std::string> kKernelSurface = {
    "sysv-shmget",       "sysv-msgget",     "sysv-semget",
    "mq-open",           "io-uring-setup",  "bpf",
    "userfaultfd",       "perf-event-open", "keyctl",
    "add-key",           "finit-module",    "tiocsti",
    "tiocsti-high-bits", "int80-getpid",    "x32-getpid"};
const std::vector<std::string> kExecAndCode = {
    "execve-sh",          "execveat",     "execve-su", "execve-proc-self",
    "fexecve-handle",     "setuid-root",  "mmap-exec", "mprotect-exec",
    "pkey-mprotect-exec", "shm-mmap-exec"};
const std::vector<std::string> kSharedMemoryAndRights = {
    "shm-write",
    "shm-grow",
    "shm-shrink",
    "shm-mmap-writable",
    "shm-mprotect-writable",
    "rights-widen-shm",
    "rights-widen-file",
    "dup-limited-shm"};

TEST_F(EscapeMatrix, Filesystem) {
  RunRows(kFilesystem, kNoDirectory);
}

TEST_F(EscapeMatrix, Namespaces) {
  RunRows(kNamespaces);
}

TEST_F(EscapeMatrix, OtherProcesses) {
  RunRows(kOtherProcesses);
}

TEST_F(EscapeMatrix, Network) {
  RunRows(kNetwork);
}

TEST_F(EscapeMatrix, KernelSurface) {
  RunRows(kKernelSurface);
}

TEST_F(EscapeMatrix, ExecAndCode) {
  RunRows(kExecAndCode);
}

TEST_F(EscapeMatrix, SharedMemoryAndRights) {
  RunRows(kSharedMemoryAndRights);
}

// The same kernel-surface rows from a renderer whose handles are not
// rights-limited: capability mode's own answers, arch check included.
class EscapeMatrixPlain : public EscapeMatrix {
 protected:
  bool Limited() const override {
    return false;
  }
};
TEST_F(EscapeMatrixPlain, KernelSurface) {
  RunRows(kKernelSurface);
}

// Rows the hostile list has beyond those named above (it is still growing):
// all run here, with the same assertions.
TEST_F(EscapeMatrix, RemainingHostileRows) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < capsa_attacks_count; i++) {
    bool named = false;
    for (auto *c : {&kFilesystem, &kNamespaces, &kOtherProcesses, &kNetwork,
                    &kKernelSurface, &kExecAndCode, &kSharedMemoryAndRights})
      for (auto &n : *c) named |= n == capsa_attacks[i].name;
    if (!named) rest.push_back(capsa_attacks[i].name);
  }
  if (rest.empty()) GTEST_SKIP() << "every hostile row is in a category";
  RunRows(rest);
}

// Every attempt of our list is in exactly one test above, no name twice.
TEST(EscapeMatrixList, AtLeastFortyNamedAttemptsAllCovered) {
  size_t total = capsa_attacks_count + capsa_escape_attacks_count;
  EXPECT_GE(total, 40u);
  std::map<std::string, int> seen;
  for (auto *c : {&kFilesystem, &kNamespaces, &kOtherProcesses, &kNetwork,
                  &kKernelSurface, &kExecAndCode, &kSharedMemoryAndRights})
    for (auto &n : *c) {
      seen[n]++;
      EXPECT_NE(nullptr, FindAttack(n)) << n;
    }
  for (size_t i = 0; i < capsa_attacks_count; i++)
    EXPECT_GE(1, seen[capsa_attacks[i].name]) << capsa_attacks[i].name;
  for (size_t i = 0; i < capsa_escape_attacks_count; i++)
    EXPECT_EQ(1, seen[capsa_escape_attacks[i].name])
        << capsa_escape_attacks[i].name;
  for (size_t i = 0; i < capsa_escape_attacks_count; i++) {
    EXPECT_EQ(nullptr, capsa_attack_find(capsa_escape_attacks[i].name))
        << "duplicate name " << capsa_escape_attacks[i].name;
    EXPECT_NE(0, capsa_escape_attacks[i].expect_errno[0]);
  }
}

}  // namespace
