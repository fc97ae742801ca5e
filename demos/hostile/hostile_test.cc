// demos/hostile: the attack list is well-formed; its attempts are real
// (outside a sandbox several of them succeed); inside capability mode every
// one is refused with its documented errno or killed.
#include "demos/hostile/hostile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/errors.h"
#include "sandbox/features.h"
#include "sandbox/memfd.h"
#include "sandbox/rights/rights.h"
#include "tests/harness/child.h"
#include "tests/workloads/test_util.h"

namespace {

TEST(HostileList, WellFormed) {
  EXPECT_GE(capsa_attacks_count, 40u);
  EXPECT_LE(capsa_attacks_count, static_cast<size_t>(CAPSA_ATTACKS_MAX));
  std::set<std::string> names;
  for (size_t i = 0; i < capsa_attacks_count; i++) {
    const capsa_attack &a = capsa_attacks[i];
    ASSERT_NE(nullptr, a.name);
    EXPECT_TRUE(names.insert(a.name).second) << "duplicate " << a.name;
    EXPECT_NE(nullptr, a.attempt) << a.name;
    EXPECT_NE(nullptr, a.what) << a.name;
    EXPECT_NE(nullptr, a.layer) << a.name;
    EXPECT_NE(0, a.expect_errno[0]) << a.name;
    EXPECT_EQ(&a, capsa_attack_find(a.name));
  }
  EXPECT_EQ(nullptr, capsa_attack_find("no-such-attack"));
  EXPECT_EQ(nullptr, capsa_attack_find(nullptr));
  // The list, by name.
  for (const char *n :
       {"open-etc-passwd", "openat-cwd",       "openat-dotdot",
        "proc-fd-reopen",  "tcp-connect",      "unix-abstract-connect",
        "ptrace-host",     "kill-init",        "kill-host",
        "mount",           "unshare-user",     "setns",
        "execve-sh",       "io-uring-setup",   "bpf",
        "perf-event-open", "userfaultfd",      "keyctl",
        "mmap-exec",       "mprotect-exec",    "tiocsti-high-bits",
        "int80-getpid",    "x32-getpid",       "shm-write",
        "shm-grow",        "shm-mmap-writable"})
    EXPECT_NE(nullptr, capsa_attack_find(n)) << n;
}

TEST(HostileList, Classify) {
  const capsa_attack *open = capsa_attack_find("open-etc-passwd");
  ASSERT_NE(nullptr, open);
  EXPECT_EQ(CAPSA_VERDICT_REFUSED, capsa_attack_classify(open, -ECAPMODE, 0));
  EXPECT_EQ(CAPSA_VERDICT_ESCAPED, capsa_attack_classify(open, 0, 0));
  EXPECT_EQ(CAPSA_VERDICT_UNEXPECTED, capsa_attack_classify(open, -EACCES, 0));
  EXPECT_EQ(CAPSA_VERDICT_UNEXPECTED, capsa_attack_classify(open, 0, SIGSYS));
  EXPECT_EQ(CAPSA_VERDICT_SKIPPED,
            capsa_attack_classify(open, CAPSA_ATTACK_NOT_APPLICABLE, 0));
  const capsa_attack *x32 = capsa_attack_find("x32-getpid");
  ASSERT_NE(nullptr, x32);
  EXPECT_EQ(CAPSA_VERDICT_KILLED, capsa_attack_classify(x32, 0, SIGSYS));
  EXPECT_EQ(CAPSA_VERDICT_UNEXPECTED, capsa_attack_classify(x32, 0, SIGSEGV));
  EXPECT_EQ(CAPSA_VERDICT_UNEXPECTED, capsa_attack_classify(x32, -ENOSYS, 0));
  EXPECT_STREQ("ESCAPED", capsa_attack_verdict_name(CAPSA_VERDICT_ESCAPED));
  EXPECT_STREQ("refused", capsa_attack_verdict_name(CAPSA_VERDICT_REFUSED));
  EXPECT_STREQ("absent", capsa_attack_verdict_name(CAPSA_VERDICT_ABSENT));
}

// An attack on an entry this kernel lacks (probed outside the sandbox) is
// reported ABSENT without being tried; with the entry present, or unknown,
// it runs. Only the i386 row depends on the kernel.
TEST(HostileList, AbsentKernelEntryIsNotTried) {
  const capsa_attack *i386 = capsa_attack_find("int80-getpid");
  ASSERT_NE(nullptr, i386);
  EXPECT_EQ(CAPSA_ATTACK_NEEDS_I386, i386->need);
  for (size_t i = 0; i < capsa_attacks_count; i++) {
    if (&capsa_attacks[i] == i386) continue;
    EXPECT_EQ(CAPSA_ATTACK_NEEDS_NOTHING, capsa_attacks[i].need)
        << capsa_attacks[i].name;
  }
  capsa_attack_env env;
  capsa_attack_env_init(&env);
  // Outside capability mode env_init probed the kernel itself.
  EXPECT_EQ(capsa_features_get()->i386_entry ? 1 : 0, env.i386_entry);
  env.i386_entry = 0;
  env.i386_detail = "absent in this kernel (int 0x80 faults: SIGSEGV)";
  capsa_attack_result r;
  ASSERT_EQ(0, capsa_attack_run(i386, &env, &r));
  EXPECT_EQ(CAPSA_VERDICT_ABSENT, r.verdict);
  EXPECT_EQ(0, r.observed_signal);
  EXPECT_TRUE(capsa_attacks_all_refused(&r, 1));
  char buf[1024];
  ASSERT_GT(capsa_attacks_format(&r, 1, buf, sizeof buf), 0);
  EXPECT_NE(nullptr, strstr(buf, "absent")) << buf;
  EXPECT_NE(nullptr, strstr(buf, "1 attacks, 0 not refused")) << buf;
  // Absence of one entry does not make other attacks absent.
  ASSERT_EQ(0, capsa_attack_run(capsa_attack_find("x32-getpid"), &env, &r));
  EXPECT_NE(CAPSA_VERDICT_ABSENT, r.verdict);
  // Present: it is tried (outside capability mode the call just works).
  if (capsa_features_get()->i386_entry) {
    env.i386_entry = 1;
    ASSERT_EQ(0, capsa_attack_run(i386, &env, &r));
    EXPECT_EQ(CAPSA_VERDICT_ESCAPED, r.verdict);
  }
}

TEST(HostileList, FormatAndArguments) {
  capsa_attack_result r[2] = {};
  r[0].attack = capsa_attack_find("mount");
  r[0].verdict = CAPSA_VERDICT_REFUSED;
  r[0].observed_errno = ECAPMODE;
  r[1].attack = capsa_attack_find("int80-getpid");
  r[1].verdict = CAPSA_VERDICT_ESCAPED;
  char buf[2048];
  int n = capsa_attacks_format(r, 2, buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(static_cast<size_t>(n), strlen(buf));
  std::string t = buf;
  EXPECT_NE(std::string::npos, t.find("mount"));
  EXPECT_NE(std::string::npos, t.find("ECAPMODE"));
  EXPECT_NE(std::string::npos, t.find("ECAPMODE|SIGSYS"));
  EXPECT_NE(std::string::npos, t.find("ESCAPED"));
  EXPECT_NE(std::string::npos, t.find("2 attacks, 1 not refused"));
  // Too small a buffer: truncated, NUL-terminated, full length returned.
  char small[16];
  EXPECT_EQ(n, capsa_attacks_format(r, 2, small, sizeof small));
  EXPECT_EQ(15u, strlen(small));
  EXPECT_EQ(-EINVAL, capsa_attacks_format(nullptr, 1, buf, sizeof buf));
  EXPECT_FALSE(capsa_attacks_all_refused(r, 2));
  EXPECT_TRUE(capsa_attacks_all_refused(r, 1));
  capsa_attack_env env;
  capsa_attack_env_init(&env);
  EXPECT_EQ(getppid(), env.host_pid);
  EXPECT_EQ(-1, env.ro_shm_fd);
  EXPECT_EQ(-1, env.dir_fd);
  EXPECT_EQ(-EINVAL, capsa_attack_run(nullptr, &env, r));
  EXPECT_EQ(-EINVAL, capsa_attacks_run_all(nullptr, r, 2));
}

// What an attacker holds in the tests: a directory and a read-only sealed
// region, as a host would delegate them.
struct Held {
  capsa_workloads::TempDir dir;
  int dir_fd = -1, shm_fd = -1, limited_fd = -1;
  pid_t sibling = 0;
  size_t shm_size = 8192;
  void Make() {
    ASSERT_TRUE(dir.ok());
    dir_fd = open(dir.File("").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_fd, 0);
    int w = capsa_memfd_create("hostile-test", shm_size);
    ASSERT_GE(w, 0);
    ASSERT_EQ(0, capsa_memfd_seal_readonly(w));
    // The receiver's copy: read-only access mode, as a handle carries.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", w);
    shm_fd = open(path, O_RDONLY | O_CLOEXEC);
    ASSERT_GE(shm_fd, 0);
    close(w);
    // Another "renderer": a process that is not the attacker's, dying with
    // the test child (capability mode could not kill it).
    pid_t parent = getpid();
    sibling = fork();
    ASSERT_GE(sibling, 0);
    if (sibling == 0) {
      // It must not outlive the test child, whose stdout it shares: the
      // death signal, and a poll for the race where the parent is gone
      // before prctl().
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      while (getppid() == parent) usleep(50 * 1000);
      _exit(0);
    }
  }
  // A file descriptor limited to reading (installs a rights filter on the
  // calling process: only in a forked child).
  void Limit() {
    limited_fd =
        open(dir.File("limited").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(limited_fd, 0);
    capsa_rights_t r;
    capsa_rights_init(&r, CAPSA_CAP_READ, CAPSA_CAP_FSTAT);
    ASSERT_EQ(0, capsa_rights_limit(limited_fd, &r));
  }
  void Fill(capsa_attack_env *env) {
    capsa_attack_env_init(env);
    env->dir_fd = dir_fd;
    env->ro_shm_fd = shm_fd;
    env->ro_shm_size = shm_size;
    env->sibling_pid = sibling;
    env->limited_fd = limited_fd;
  }
};

TEST(HostileRun, AttemptsAreRealOutsideTheSandbox) {
  // Without a sandbox these succeed: the attempts do what they say.
  CAPSA_EXPECT_CHILD_OK([] {
    Held h;
    h.Make();
    capsa_attack_env env;
    h.Fill(&env);
    for (const char *n :
         {"open-etc-passwd", "openat-cwd", "openat-dotdot", "openat-absolute",
          "stat-path", "kill-host", "mmap-exec", "mprotect-exec", "execve-sh",
          "sysv-shmget", "kill-sibling"}) {
      capsa_attack_result r;
      ASSERT_EQ(0, capsa_attack_run(capsa_attack_find(n), &env, &r));
      EXPECT_EQ(CAPSA_VERDICT_ESCAPED, r.verdict)
          << n << ": errno " << r.observed_errno << " signal "
          << r.observed_signal;
    }
    // The read-only region is read-only even without capability mode: the
    // descriptor's access mode and the memfd seals refuse these.
    for (const char *n : {"shm-write", "shm-grow", "shm-shrink",
                          "shm-mmap-writable", "shm-mprotect-writable"}) {
      capsa_attack_result r;
      ASSERT_EQ(0, capsa_attack_run(capsa_attack_find(n), &env, &r));
      EXPECT_EQ(CAPSA_VERDICT_REFUSED, r.verdict)
          << n << ": errno " << r.observed_errno;
    }
    // With nothing held, those are not applicable.
    capsa_attack_env bare;
    capsa_attack_env_init(&bare);
    capsa_attack_result r;
    ASSERT_EQ(0, capsa_attack_run(capsa_attack_find("shm-write"), &bare, &r));
    EXPECT_EQ(CAPSA_VERDICT_SKIPPED, r.verdict);
  });
}

TEST(HostileRun, EveryAttackRefusedInCapabilityMode) {
  CAPSA_EXPECT_CHILD_OK_T(
      ([] {
        Held h;
        h.Make();
        h.Limit();
        capsa_attack_env env;
        h.Fill(&env);
        struct capsa_capmode_report rep;
        ASSERT_EQ(0, capsa_capmode_default_report(&rep));
        if (!rep.complete) GTEST_SKIP() << "capability mode incomplete here";
        ASSERT_EQ(0, capsa_cap_enter());
        capsa_attack_result res[CAPSA_ATTACKS_MAX];
        int n = capsa_attacks_run_all(&env, res, CAPSA_ATTACKS_MAX);
        ASSERT_EQ(static_cast<int>(capsa_attacks_count), n);
        char table[16384];
        ASSERT_GT(capsa_attacks_format(res, n, table, sizeof table), 0);
        for (int i = 0; i < n; i++) {
          const capsa_attack *a = res[i].attack;
          if (res[i].verdict == CAPSA_VERDICT_ABSENT) {
            // Only the i386 entry, and only where the probe before entry
            // (outside the sandbox) found it missing.
            EXPECT_EQ(CAPSA_ATTACK_NEEDS_I386, a->need) << a->name;
            EXPECT_FALSE(capsa_features_get()->i386_entry) << a->name;
            continue;
          }
          EXPECT_TRUE(res[i].verdict == CAPSA_VERDICT_REFUSED ||
                      res[i].verdict == CAPSA_VERDICT_KILLED)
              << a->name << ": " << capsa_attack_verdict_name(res[i].verdict)
              << " errno " << res[i].observed_errno << " signal "
              << res[i].observed_signal;
          // Capsicum's answers where seccomp and the rights table refuse.
          if (strcmp(a->layer, "seccomp") == 0) {
            EXPECT_EQ(ECAPMODE, res[i].observed_errno) << a->name;
          }
          if (strcmp(a->layer, "rights") == 0) {
            EXPECT_EQ(ENOTCAPABLE, res[i].observed_errno) << a->name;
          }
        }
        EXPECT_TRUE(capsa_attacks_all_refused(res, n));
        if (getenv("CAPSA_HOSTILE_PRINT") != nullptr) fputs(table, stdout);
        fflush(stdout);
      }),
      60000);
}

}  // namespace
