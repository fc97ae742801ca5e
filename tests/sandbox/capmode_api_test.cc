// The capability-mode API: errors, features, getmode, irreversibility, the
// policy object, reports (violation tracing: capmode_trace_test.cc).
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "sandbox/seccomp.h"
#include "sandbox/selftest.h"
#include "tests/harness/child.h"
#include "tests/sandbox/capmode_test_util.h"

namespace {

TEST(CapsaErrors, NamesAndDescriptions) {
  EXPECT_STREQ("ECAPMODE", capsa_errno_name(ECAPMODE));
  EXPECT_STREQ("ECAPMODE", capsa_errno_name(-ECAPMODE));
  EXPECT_STREQ("ENOTCAPABLE", capsa_errno_name(-ENOTCAPABLE));
  EXPECT_STREQ("EACCES", capsa_errno_name(EACCES));
  EXPECT_EQ(nullptr, capsa_errno_name(4000));
  EXPECT_STREQ("Not permitted in capability mode", capsa_strerror(-ECAPMODE));
  EXPECT_STREQ("Capabilities insufficient", capsa_strerror(ENOTCAPABLE));
  EXPECT_STREQ(strerror(ENOENT), capsa_strerror(-ENOENT));
  EXPECT_NE(ECAPMODE, ENOTCAPABLE);
}

TEST(CapsaFeatures, ProbedOnceAndConsistent) {
  const struct capsa_features *a = capsa_features_get();
  const struct capsa_features *b = capsa_features_get();
  EXPECT_EQ(a, b);
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
  EXPECT_EQ(abi < 0 ? 0 : abi, a->landlock_abi);
  EXPECT_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0, a->seccomp_filter);
  char buf[1024];
  int n = capsa_features_format(a, true, buf, sizeof(buf));
  ASSERT_GT(n, 0);
  ASSERT_LT(n, (int)sizeof(buf));
  EXPECT_EQ('{', buf[0]);
  EXPECT_NE(nullptr, strstr(buf, "\"landlock_abi\":"));
  EXPECT_EQ(-EINVAL, capsa_features_format(nullptr, false, buf, sizeof(buf)));
}

// The i386 and x32 entries are probed in a child: the answer here agrees
// with the cache, and a probe whose child is killed (here by capability
// mode's architecture check, as a kernel without the entry kills it with
// SIGSEGV) leaves the caller running and says the entry is not usable.
TEST(CapsaFeatures, ForeignEntriesProbedInAChild) {
  const struct capsa_features *f = capsa_features_get();
  ASSERT_NE(nullptr, f->i386_detail);
  EXPECT_EQ(f, capsa_features_cached());
  struct capsa_features again = {};
  ASSERT_EQ(0, capsa_features_probe_entries(&again));
  EXPECT_EQ(f->i386_entry, again.i386_entry);
  EXPECT_EQ(f->x32_abi, again.x32_abi);
  EXPECT_STREQ(f->i386_detail, again.i386_detail);
  if (f->i386_entry)
    EXPECT_STREQ("present", f->i386_detail);
  else
    EXPECT_NE(nullptr, strstr(f->i386_detail, "absent")) << f->i386_detail;
  EXPECT_EQ(-EINVAL, capsa_features_probe_entries(nullptr));
  char buf[1024];
  ASSERT_GT(capsa_features_format(f, true, buf, sizeof buf), 0);
  EXPECT_NE(nullptr, strstr(buf, f->i386_entry ? "\"i386_entry\":true"
                                               : "\"i386_entry\":false"));
  ASSERT_GT(capsa_features_format(f, false, buf, sizeof buf), 0);
  EXPECT_NE(nullptr, strstr(buf, "i386_entry=")) << buf;
  // Under capability mode the entry answers ECAPMODE: not a yes.
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    struct capsa_features in = {};
    ASSERT_EQ(0, capsa_features_probe_entries(&in));
    EXPECT_FALSE(in.i386_entry);
    EXPECT_FALSE(in.x32_abi);
    if (capsa_features_get()->i386_entry) {
      EXPECT_STREQ("unknown (int 0x80 refused: probed under a filter)",
                   in.i386_detail);
    }
  }));
  // A filter that kills every non-x86_64 call: the probe's child dies, the
  // caller carries on and says so.
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    struct sock_filter kill_foreign[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {4, kill_foreign};
    ASSERT_EQ(0, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
    ASSERT_EQ(0, prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
    struct capsa_features in = {};
    ASSERT_EQ(0, capsa_features_probe_entries(&in));
    EXPECT_FALSE(in.i386_entry);
    if (capsa_features_get()->i386_entry) {
      EXPECT_STREQ("unknown (probed under a seccomp filter: SIGSYS)",
                   in.i386_detail);
    }
    EXPECT_EQ(capsa_features_get()->x32_abi, in.x32_abi);
  }));
}

TEST(CapMode, GetModeOutsideAndInside) {
  unsigned mode = 7;
  ASSERT_EQ(0, capsa_cap_getmode(&mode));
  EXPECT_EQ(0u, mode);
  EXPECT_EQ(-EFAULT, capsa_cap_getmode(nullptr));
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    unsigned m = 0;
    ASSERT_EQ(0, capsa_cap_getmode(&m));
    EXPECT_EQ(1u, m);
  }));
}

TEST(CapMode, CannotBeUndoneOrWidened) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    // Idempotent: a second entry succeeds and changes nothing.
    EXPECT_EQ(0, capsa_cap_enter());
    EXPECT_ERRNO(ECAPMODE, open("/etc/passwd", O_RDONLY));
    // no_new_privs stays set.
    EXPECT_EQ(1, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    EXPECT_ERRNO(ECAPMODE, prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0));
    EXPECT_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
    EXPECT_EQ(SECCOMP_MODE_FILTER, prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
    // Seccomp mode changes: strict mode, a listener, disabling speculation
    // mitigations are refused; Landlock is capsa's.
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                   SECCOMP_FILTER_FLAG_NEW_LISTENER, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                   SECCOMP_FILTER_FLAG_SPEC_ALLOW, nullptr));
    EXPECT_ERRNO(ECAPMODE, prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_landlock_create_ruleset, nullptr, 0, 1));
    EXPECT_ERRNO(ECAPMODE, prctl(PR_SET_DUMPABLE, 1));
    // An extra allow-everything filter can be added but widens nothing: the
    // stricter answer of all filters wins.
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    ASSERT_NE(nullptr, ctx);
    struct capsa_bpf bpf;
    ASSERT_EQ(0, capsa_bpf_compile(ctx, &bpf));
    seccomp_release(ctx);
    EXPECT_EQ(0, capsa_bpf_install(&bpf, 0));
    capsa_bpf_free(&bpf);
    EXPECT_ERRNO(ECAPMODE, open("/etc/passwd", O_RDONLY));
    unsigned m = 0;
    capsa_cap_getmode(&m);
    EXPECT_EQ(1u, m);
  }));
}

TEST(CapModePolicy, SettersValidateAndRecord) {
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_allow(nullptr, 0, nullptr, 0, "r"));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_allow(p, SYS_read, nullptr, 0, ""));
  EXPECT_EQ(-EINVAL,
            capsa_capmode_policy_allow(p, SYS_read, nullptr, 0, nullptr));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_allow(p, -1, nullptr, 0, "r"));
  struct capsa_arg_cmp bad = {6, CAPSA_CMP_EQ, 0, 0};
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_allow(p, SYS_read, &bad, 1, "r"));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_allow(p, SYS_read, nullptr, 1, "r"));
  EXPECT_EQ(-ENOENT, capsa_capmode_policy_allow_name(p, "no_such_call", nullptr,
                                                     0, "r"));
  // The table's refusals cannot be re-allowed.
  EXPECT_EQ(-EPERM, capsa_capmode_policy_allow_name(p, "execve", nullptr, 0,
                                                    "renderer wants exec"));
  EXPECT_EQ(-EPERM,
            capsa_capmode_policy_allow(p, SYS_ptrace, nullptr, 0, "debugger"));
  EXPECT_EQ(0, capsa_capmode_policy_allow_name(p, "sysinfo", nullptr, 0,
                                               "test: extra rule"));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_disable_layer(p, 1u << 7));
  EXPECT_EQ(-EBADF, capsa_capmode_policy_allow_dir(p, 12345));
  int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    EXPECT_EQ(-ENOTDIR, capsa_capmode_policy_allow_dir(p, fd));
    close(fd);
  }
  struct capsa_capmode_report r;
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_report(p, &r));  // not compiled
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_enter(p));       // not compiled
  if (capsa_features_get()->seccomp_filter) {
    ASSERT_EQ(0, capsa_capmode_policy_compile(p));
    EXPECT_EQ(-EBUSY, capsa_capmode_policy_compile(p));
    EXPECT_EQ(-EBUSY, capsa_capmode_policy_allow_name(p, "sysinfo", nullptr, 0,
                                                      "late"));
  }
  capsa_capmode_policy_free(p);
  capsa_capmode_policy_free(nullptr);
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_enter(nullptr));
}

// Nothing silently weakens: leaving out no_new_privs alone would make the
// other layers fail past the point of no return, so it is refused.
TEST(CapModePolicy, NoNewPrivsCannotBeLeftOutAlone) {
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  ASSERT_NE(nullptr, p);
  ASSERT_EQ(0, capsa_capmode_policy_disable_layer(p, CAPSA_LAYER_NNP));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_compile(p));
  capsa_capmode_policy_free(p);
}

TEST(CapModePolicy, ExtraRuleAllowsOnlyWhatItNames) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(0, capsa_capmode_policy_allow_name(p, "sysinfo", nullptr, 0,
                                                 "test: system load"));
    // getpriority only for "which" == 7 (never valid): EINVAL from the kernel
    // proves the rule let it through.
    struct capsa_arg_cmp c = {0, CAPSA_CMP_MASKED_EQ, 0xffffffffu, 7};
    ASSERT_EQ(0, capsa_capmode_policy_allow_name(p, "getpriority", &c, 1,
                                                 "test: conditional"));
    ASSERT_EQ(0, capsa_capmode_policy_compile(p));
    ASSERT_EQ(0, capsa_capmode_policy_enter(p));
    struct sysinfo si;
    EXPECT_OK(sysinfo(&si));
    EXPECT_ERRNO(EINVAL, syscall(SYS_getpriority, 7, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_getpriority, 8, 0));
    EXPECT_ERRNO(ECAPMODE, open("/etc/passwd", O_RDONLY));
    capsa_capmode_policy_free(p);
  }));
  // Without the extra rule, the default policy refuses sysinfo.
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    ENTER_CAPMODE();
    struct sysinfo si;
    EXPECT_ERRNO(ECAPMODE, sysinfo(&si));
  }));
}

// A launcher compiles once in the parent; each child only loads it. The "own
// pid" of the signal rows is the child's, not the compiler's.
TEST(CapModePolicy, CompiledInParentEnteredInChild) {
  if (!capsa_features_get()->seccomp_filter) GTEST_SKIP() << "no seccomp";
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  ASSERT_NE(nullptr, p);
  ASSERT_EQ(0, capsa_capmode_policy_compile(p));
  struct capsa_capmode_report r;
  ASSERT_EQ(0, capsa_capmode_policy_report(p, &r));
  EXPECT_EQ(CAPSA_LAYER_ENFORCED, r.seccomp);
  EXPECT_EQ(CAPSA_LAYER_ENFORCED, r.nnp);
  EXPECT_GT(r.seccomp_bpf_len, 10u);
  EXPECT_EQ(0u, r.landlock_dirs);  // a policy grants no directory by default
  for (int i = 0; i < 2; i++) {
    CAPSA_EXPECT_CHILD_OK(([p] {
      ASSERT_EQ(0, capsa_capmode_policy_enter(p));
      unsigned m = 0;
      capsa_cap_getmode(&m);
      EXPECT_EQ(1u, m);
      EXPECT_OK(kill(getpid(), 0));
      EXPECT_ERRNO(ECAPMODE, kill(getppid(), 0));
      EXPECT_ERRNO(ECAPMODE, open("/etc/passwd", O_RDONLY));
    }));
  }
  capsa_capmode_policy_free(p);
}

TEST(CapModePolicy, DisabledLayerIsReportedNotHidden) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    REQUIRE_LANDLOCK(1);
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(0, capsa_capmode_policy_disable_layer(p, CAPSA_LAYER_SECCOMP));
    ASSERT_EQ(0, capsa_capmode_policy_compile(p));
    struct capsa_capmode_report r;
    ASSERT_EQ(0, capsa_capmode_policy_report(p, &r));
    EXPECT_EQ(CAPSA_LAYER_DISABLED, r.seccomp);
    EXPECT_EQ(CAPSA_LAYER_ENFORCED, r.landlock);
    EXPECT_FALSE(r.complete);
    char line[512];
    ASSERT_GT(capsa_capmode_report_format(&r, false, line, sizeof(line)), 0);
    EXPECT_NE(nullptr, strstr(line, "INCOMPLETE")) << line;
    EXPECT_NE(nullptr, strstr(line, "seccomp=disabled")) << line;
    ASSERT_EQ(0, capsa_capmode_policy_enter(p));
    // Landlock alone still refuses the file system (with its own errno)...
    EXPECT_ERRNO(EACCES, open("/etc/passwd", O_RDONLY));
    // ...but the syscall layer is gone, as the report says.
    EXPECT_OK(getppid());
    unsigned m = 0;
    capsa_cap_getmode(&m);
    EXPECT_EQ(1u, m);
    capsa_capmode_policy_free(p);
  }));
}

TEST(CapModeReport, DefaultReportOnThisKernel) {
  struct capsa_capmode_report r;
  ASSERT_EQ(0, capsa_capmode_default_report(&r));
  const struct capsa_features *f = capsa_features_get();
  EXPECT_EQ(f->seccomp_filter ? CAPSA_LAYER_ENFORCED : CAPSA_LAYER_UNAVAILABLE,
            r.seccomp);
  EXPECT_EQ(
      f->landlock_abi > 0 ? CAPSA_LAYER_ENFORCED : CAPSA_LAYER_UNAVAILABLE,
      r.landlock);
  EXPECT_EQ(f->landlock_abi, r.landlock_abi);
  EXPECT_EQ(f->landlock_abi >= 6, r.landlock_scope_signal);
  EXPECT_EQ(f->seccomp_filter && f->landlock_abi >= 6, r.complete);
  char json[1024];
  int n = capsa_capmode_report_format(&r, true, json, sizeof(json));
  ASSERT_GT(n, 0);
  ASSERT_LT(n, (int)sizeof(json));
  EXPECT_EQ('{', json[0]);
  EXPECT_EQ('}', json[n - 1]);
  EXPECT_NE(nullptr, strstr(json, "\"seccomp\":\"")) << json;
  // Truncation is reported like snprintf.
  char small[8];
  EXPECT_EQ(n, capsa_capmode_report_format(&r, true, small, sizeof(small)));
  EXPECT_EQ('\0', small[7]);
  EXPECT_EQ(-EINVAL, capsa_capmode_report_format(nullptr, true, json, 10));
  EXPECT_STREQ("disabled", capsa_layer_state_name(CAPSA_LAYER_DISABLED));
}

// The doctor's escape list: every escape this kernel can refuse is refused
// with the errno of the layer meant to refuse it; the caller is unaffected.
TEST(CapModeSelftest, EveryEscapeRefused) {
  EXPECT_EQ(-EINVAL, capsa_capmode_selftest(nullptr, 0, nullptr));
  struct capsa_selftest_result res[CAPSA_SELFTEST_MAX];
  size_t n = 0;
  int failed = capsa_capmode_selftest(res, CAPSA_SELFTEST_MAX, &n);
  ASSERT_GE(failed, 0) << capsa_strerror(failed);
  EXPECT_EQ(0, failed);
  ASSERT_GE(n, 12u);
  size_t ran = 0;
  for (size_t i = 0; i < n; i++) {
    if (res[i].skipped) continue;
    ran++;
    EXPECT_TRUE(res[i].passed)
        << res[i].name << ": got " << capsa_strerror(res[i].got_errno);
    EXPECT_EQ(res[i].expected_errno, res[i].got_errno) << res[i].name;
  }
  // Every skip says why; the i386 row is skipped exactly when the probe
  // (in a child, outside the sandbox) found no i386 entry.
  const struct capsa_features *f = capsa_features_get();
  bool saw_i386 = false;
  for (size_t i = 0; i < n; i++) {
    EXPECT_EQ(res[i].skipped, res[i].skip_reason != nullptr) << res[i].name;
    if (strstr(res[i].name, "i386") == nullptr) continue;
    saw_i386 = true;
    if (f->seccomp_filter) {
      EXPECT_EQ(!f->i386_entry, res[i].skipped);
      if (!f->i386_entry) {
        EXPECT_STREQ(f->i386_detail, res[i].skip_reason);
      }
    }
  }
  EXPECT_TRUE(saw_i386);
  if (ran == 0) GTEST_SKIP() << "no layer available on this kernel";
  unsigned mode = 1;
  capsa_cap_getmode(&mode);
  EXPECT_EQ(0u, mode);  // the test process itself stayed outside
}

// Past the point of no return a failure is fatal, never a half-entered
// process: here the Landlock ruleset descriptor the policy prepared is gone
// when the child enters (no_new_privs is already set by then).
TEST(CapModePolicy, FailureAfterPointOfNoReturnIsFatal) {
  if (capsa_features_get()->landlock_abi < 1) GTEST_SKIP() << "no Landlock";
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  ASSERT_NE(nullptr, p);
  ASSERT_EQ(0, capsa_capmode_policy_compile(p));
  capsa_test::ChildResult r = capsa_test::RunInChild([p] {
    close_range(3, ~0U, 0);
    capsa_capmode_policy_enter(p);
    _exit(0);  // must not be reached
  });
  EXPECT_TRUE(r.exited) << r.Describe();
  EXPECT_EQ(127, r.exit_code) << r.Describe();
  capsa_capmode_policy_free(p);
}

TEST(SeccompBpf, CompileInstallAndErrors) {
  struct capsa_bpf bpf = {nullptr, 0};
  EXPECT_EQ(-EINVAL, capsa_bpf_compile(nullptr, &bpf));
  EXPECT_EQ(-EINVAL, capsa_bpf_install(nullptr, 0));
  EXPECT_EQ(-EINVAL, capsa_bpf_install(&bpf, 0));
  EXPECT_EQ(-EINVAL, capsa_bpf_copy(&bpf, &bpf));
  capsa_bpf_free(nullptr);
  if (!capsa_features_get()->seccomp_filter) GTEST_SKIP() << "no seccomp";
  CAPSA_EXPECT_CHILD_OK(([] {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    ASSERT_NE(nullptr, ctx);
    ASSERT_EQ(
        0, seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTCAPABLE), SCMP_SYS(dup), 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, 0)));
    struct capsa_bpf b;
    ASSERT_EQ(0, capsa_bpf_compile(ctx, &b));
    seccomp_release(ctx);
    struct capsa_bpf copy;
    ASSERT_EQ(0, capsa_bpf_copy(&b, &copy));
    EXPECT_EQ(b.len, copy.len);
    EXPECT_EQ(0, memcmp(b.insns, copy.insns, b.len * sizeof(*b.insns)));
    capsa_bpf_free(&copy);
    EXPECT_EQ(nullptr, copy.insns);
    // Without no_new_privs only CAP_SYS_ADMIN may install a filter.
    if (geteuid() != 0) {
      EXPECT_EQ(-EACCES, capsa_bpf_install(&b, 0));
    }
    ASSERT_EQ(0, capsa_nnp_set());
    ASSERT_EQ(0, capsa_bpf_install(&b, SECCOMP_FILTER_FLAG_TSYNC));
    EXPECT_ERRNO(ENOTCAPABLE, dup(0));
    int d = dup(1);
    EXPECT_LE(0, d);
    capsa_bpf_free(&b);
  }));
}

// Each Landlock layer on its own (seccomp left out): TCP bind/connect (ABI
// 4) answer EACCES, signals outside the sandbox (ABI 6) EPERM.
TEST(CapModeLandlock, SecondLayerWithoutSeccomp) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_LANDLOCK(4);
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    ASSERT_NE(nullptr, p);
    ASSERT_EQ(0, capsa_capmode_policy_disable_layer(p, CAPSA_LAYER_SECCOMP));
    ASSERT_EQ(0, capsa_capmode_policy_compile(p));
    ASSERT_EQ(0, capsa_capmode_policy_enter(p));
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_LE(0, s);  // seccomp would have refused this; Landlock does not
    struct sockaddr_in in = {};
    in.sin_family = AF_INET;
    in.sin_port = htons(1);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_ERRNO(EACCES, connect(s, (struct sockaddr *)&in, sizeof(in)));
    in.sin_port = htons(0);
    EXPECT_ERRNO(EACCES, bind(s, (struct sockaddr *)&in, sizeof(in)));
    if (capsa_features_get()->landlock_abi >= 6) {
      EXPECT_ERRNO(EPERM, kill(getppid(), 0));
      EXPECT_OK(kill(getpid(), 0));
    }
    capsa_capmode_policy_free(p);
  }));
}

// --- staged entry: a launcher enters once, each child takes a final step ---

// A policy's launcher stage, with the rows a zygote records.
capsa_capmode_policy *NewStage(const capsa_capmode_policy *like) {
  capsa_capmode_policy *s = capsa_capmode_policy_dup(like);
  if (!s) return nullptr;
  struct capsa_arg_cmp newpid = {0, CAPSA_CMP_MASKED_EQ, CAPSA_CLONE_NAMESPACES,
                                 CLONE_NEWPID};
  if (capsa_capmode_policy_allow_launcher(s, "capset", nullptr, 0, "test") ||
      capsa_capmode_policy_allow_launcher(s, "clone", &newpid, 1, "test")) {
    capsa_capmode_policy_free(s);
    return nullptr;
  }
  return s;
}

long CloneNewPid() {
  long r = syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
  if (r == 0) _exit(0);
  if (r > 0) waitpid((pid_t)r, nullptr, 0);
  return r;
}

long CapsetCurrent() {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2] = {};
  if (syscall(SYS_capget, &h, d) < 0) return -2;
  return syscall(SYS_capset, &h, d);
}

// Runs `check` in a forked child of the (staged) caller; it returns the
// number of failed checks, printed to stderr.
int InGrandchild(int (*check)(const capsa_capmode_policy *),
                 const capsa_capmode_policy *p) {
  pid_t pid = fork();
  if (pid == 0) _exit(check(p));
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define CHECK_ERRNO(err, call)                                                \
  do {                                                                        \
    errno = 0;                                                                \
    long rv_ = (long)(call);                                                  \
    if (rv_ != -1 || errno != (err)) {                                        \
      fprintf(stderr, "%s: %ld errno %d, want %d\n", #call, rv_, errno, err); \
      bad++;                                                                  \
    }                                                                         \
  } while (0)

int FinalStepChecks(const capsa_capmode_policy *p) {
  int bad = 0;
  if (capsa_capmode_policy_enter(p) != 0) return 100;
  unsigned mode = 0;
  capsa_cap_getmode(&mode);
  if (mode != 1) bad++;
  // The launcher's rows are gone...
  CHECK_ERRNO(ECAPMODE, CapsetCurrent());
  CHECK_ERRNO(ECAPMODE, CloneNewPid());
  CHECK_ERRNO(ECAPMODE, syscall(446 /* landlock_restrict_self */, -1, 0));
  CHECK_ERRNO(ECAPMODE, kill(getppid(), 0));
  // ...and the plain policy holds as it would without a stage.
  CHECK_ERRNO(ECAPMODE, open("/etc/hostname", O_RDONLY));
  CHECK_ERRNO(ECAPMODE, syscall(SYS_sysinfo, nullptr));
  CHECK_ERRNO(ENOSYS, syscall(SYS_clone3, nullptr, 0));
  if (kill(getpid(), 0) != 0) bad++;
  pid_t c = fork();  // plain fork still works, and inherits the final step
  if (c == 0) _exit(CapsetCurrent() == -1 && errno == ECAPMODE ? 0 : 1);
  int st = 1;
  if (c < 0 || waitpid(c, &st, 0) != c || st != 0) bad++;
  return bad;
}

TEST(CapsaCapmodeStaged, ChildTakesOnlyTheFinalStepAndLosesLauncherRows) {
  CAPSA_EXPECT_CHILD_OK([] {
    REQUIRE_SECCOMP();
    capsa_capmode_policy *k = capsa_capmode_policy_new();
    capsa_capmode_policy *s = NewStage(k);
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, capsa_capmode_policy_compile(k));
    ASSERT_EQ(0, capsa_capmode_policy_compile(s));
    ASSERT_EQ(1, capsa_capmode_policy_stage_serves(s, k));
    ASSERT_EQ(0, capsa_capmode_policy_enter_launcher(s));
    unsigned mode = 0;
    EXPECT_EQ(0, capsa_cap_getmode(&mode));
    EXPECT_EQ(1u, mode);
    // The launcher is in capability mode too, with its few rows.
    EXPECT_ERRNO(ECAPMODE, open("/etc/hostname", O_RDONLY));
    EXPECT_OK(CapsetCurrent());
    errno = 0;
    if (CloneNewPid() < 0) {
      EXPECT_NE(ECAPMODE, errno);  // EPERM without CAP_SYS_ADMIN
    }
    if (capsa_features_get()->landlock_abi > 0)
      EXPECT_ERRNO(EBADF, syscall(446 /* landlock_restrict_self */, -1, 0));
    EXPECT_EQ(-EBUSY, capsa_capmode_policy_enter_launcher(s));
    EXPECT_EQ(0, InGrandchild(FinalStepChecks, k));
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
}

int UnservedChecks(const capsa_capmode_policy *p) {
  int bad = 0;
  if (capsa_capmode_policy_enter(p) != 0) return 100;
  // Its own extra row is not in the stage: the intersection refuses it
  // (never wider than either), and the launcher's rows are gone too.
  CHECK_ERRNO(ECAPMODE, syscall(SYS_sysinfo, nullptr));
  CHECK_ERRNO(ECAPMODE, CapsetCurrent());
  CHECK_ERRNO(ECAPMODE, open("/etc/hostname", O_RDONLY));
  return bad;
}

TEST(CapsaCapmodeStaged, UnservedPolicyGetsTheIntersection) {
  CAPSA_EXPECT_CHILD_OK([] {
    REQUIRE_SECCOMP();
    capsa_capmode_policy *plain = capsa_capmode_policy_new();
    capsa_capmode_policy *k = capsa_capmode_policy_new();
    ASSERT_EQ(0, capsa_capmode_policy_allow_name(k, "sysinfo", nullptr, 0,
                                                 "test: memory pressure"));
    capsa_capmode_policy *s = NewStage(plain);
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, capsa_capmode_policy_compile(k));
    ASSERT_EQ(0, capsa_capmode_policy_compile(s));
    EXPECT_EQ(0, capsa_capmode_policy_stage_serves(s, k));
    ASSERT_EQ(0, capsa_capmode_policy_enter_launcher(s));
    EXPECT_EQ(0, InGrandchild(UnservedChecks, k));
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
}

// A stage dup'ed from a policy compiled already takes that policy's plain
// filter instead of building it again (the zygote's case: its kinds are
// compiled before the stage). It must be just as good as one built afresh.
TEST(CapsaCapmodeStaged, StageOfACompiledPolicyReusesItsFilterAndHolds) {
  CAPSA_EXPECT_CHILD_OK([] {
    REQUIRE_SECCOMP();
    capsa_capmode_policy *k = capsa_capmode_policy_new();
    ASSERT_EQ(0, capsa_capmode_policy_compile(k));
    capsa_capmode_policy *s = NewStage(k);  // dup of a compiled policy
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, capsa_capmode_policy_compile(s));
    ASSERT_EQ(1, capsa_capmode_policy_stage_serves(s, k));
    struct capsa_capmode_report a;
    struct capsa_capmode_report b;
    ASSERT_EQ(0, capsa_capmode_policy_report(k, &a));
    ASSERT_EQ(0, capsa_capmode_policy_report(s, &b));
    EXPECT_EQ(a.seccomp_rows, b.seccomp_rows);
    EXPECT_EQ(a.seccomp_bpf_len, b.seccomp_bpf_len);
    // The same as a stage built from an uncompiled copy.
    capsa_capmode_policy *fresh = NewStage(capsa_capmode_policy_new());
    ASSERT_NE(nullptr, fresh);
    ASSERT_EQ(0, capsa_capmode_policy_compile(fresh));
    EXPECT_EQ(1, capsa_capmode_policy_stage_serves(fresh, k));
    ASSERT_EQ(0, capsa_capmode_policy_enter_launcher(s));
    EXPECT_ERRNO(ECAPMODE, open("/etc/hostname", O_RDONLY));
    EXPECT_OK(CapsetCurrent());
    EXPECT_EQ(0, InGrandchild(FinalStepChecks, k));
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
}

// A dup changed after the copy (a row of its own, other tracing) builds its
// own filter: the source's would lack the row.
TEST(CapsaCapmodeStaged, DupChangedAfterTheCopyBuildsItsOwnFilter) {
  CAPSA_EXPECT_CHILD_OK([] {
    REQUIRE_SECCOMP();
    capsa_capmode_policy *k = capsa_capmode_policy_new();
    ASSERT_EQ(0, capsa_capmode_policy_compile(k));
    capsa_capmode_policy *s = NewStage(k);
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, capsa_capmode_policy_allow_name(s, "sysinfo", nullptr, 0,
                                                 "test: memory pressure"));
    ASSERT_EQ(0, capsa_capmode_policy_compile(s));
    EXPECT_EQ(0, capsa_capmode_policy_stage_serves(s, k));
    struct capsa_capmode_report a;
    struct capsa_capmode_report b;
    ASSERT_EQ(0, capsa_capmode_policy_report(k, &a));
    ASSERT_EQ(0, capsa_capmode_policy_report(s, &b));
    EXPECT_EQ(a.seccomp_rows + 1, b.seccomp_rows);
    capsa_capmode_policy *t = NewStage(k);
    ASSERT_NE(nullptr, t);
    ASSERT_EQ(0, capsa_capmode_policy_set_trace(t, !a.trace));
    ASSERT_EQ(0, capsa_capmode_policy_compile(t));
    if (capsa_features_get()->seccomp_trap) {
      ASSERT_EQ(0, capsa_capmode_policy_report(t, &b));
      EXPECT_NE(a.trace, b.trace);
      EXPECT_EQ(0, capsa_capmode_policy_stage_serves(t, k));
    }
    // The stage with its own row really allows it (its own filter).
    ASSERT_EQ(0, capsa_capmode_policy_enter_launcher(s));
    struct sysinfo si;
    EXPECT_OK(syscall(SYS_sysinfo, &si));
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  });
}

TEST(CapsaCapmodeStaged, LauncherRowsAreCheckedAndErrorsAreClear) {
  if (!capsa_features_get()->seccomp_filter)
    GTEST_SKIP() << "kernel without seccomp filters";
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(-EINVAL,
            capsa_capmode_policy_allow_launcher(p, "capset", nullptr, 0, ""));
  EXPECT_EQ(-EINVAL,
            capsa_capmode_policy_allow_launcher(p, nullptr, nullptr, 0, "r"));
  EXPECT_EQ(-EINVAL,
            capsa_capmode_policy_allow_launcher(p, "capset", nullptr, 1, "r"));
  EXPECT_EQ(-ENOENT, capsa_capmode_policy_allow_launcher(p, "no_such_call",
                                                         nullptr, 0, "r"));
  // Not disjoint from what the plain policy allows: the final step would
  // take that away as well. Refused at compile.
  capsa_capmode_policy *overlap = capsa_capmode_policy_dup(p);
  ASSERT_EQ(0, capsa_capmode_policy_allow_launcher(overlap, "clone", nullptr, 0,
                                                   "any clone"));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_compile(overlap));
  capsa_capmode_policy_free(overlap);
  overlap = capsa_capmode_policy_dup(p);
  ASSERT_EQ(0, capsa_capmode_policy_allow_launcher(overlap, "read", nullptr, 0,
                                                   "already allowed"));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_compile(overlap));
  capsa_capmode_policy_free(overlap);
  // A plain policy has no stage to enter.
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_enter_launcher(p));
  capsa_capmode_policy *s = NewStage(p);
  ASSERT_NE(nullptr, s);
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_enter_launcher(s));  // not compiled
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_stage_serves(s, p));
  ASSERT_EQ(0, capsa_capmode_policy_compile(p));
  ASSERT_EQ(0, capsa_capmode_policy_compile(s));
  EXPECT_EQ(-EBUSY,
            capsa_capmode_policy_allow_launcher(s, "capset", nullptr, 0, "r"));
  EXPECT_EQ(1, capsa_capmode_policy_stage_serves(s, p));
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_stage_serves(p, s));  // p: no rows
  EXPECT_EQ(-EINVAL, capsa_capmode_policy_stage_serves(nullptr, p));
  // The stage is the plain policy plus its rows: the same report.
  struct capsa_capmode_report a, b;
  ASSERT_EQ(0, capsa_capmode_policy_report(p, &a));
  ASSERT_EQ(0, capsa_capmode_policy_report(s, &b));
  EXPECT_EQ(a.seccomp_bpf_len, b.seccomp_bpf_len);
  EXPECT_EQ(nullptr, capsa_capmode_policy_dup(nullptr));
  capsa_capmode_policy_free(s);
  capsa_capmode_policy_free(p);
}

}  // namespace
