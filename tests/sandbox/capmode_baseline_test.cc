// The capability-mode baseline (sandbox/capmode/capmode.h): a default-allow
// filter refusing exactly what no capability-mode policy can ever allow, with
// the table's own answers; what it keeps and everything else still works, and a
// full policy still stacks on top of it.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/seccomp.h"
#include "tests/harness/child.h"
#include "tests/sandbox/capmode_test_util.h"

namespace {

// In a child: compiles and installs the baseline keeping `keep`.
void InstallBaseline(const char *const *keep, unsigned nkeep) {
  struct capsa_bpf bpf;
  unsigned refused = 0;
  ASSERT_EQ(0, capsa_capmode_baseline_compile(keep, nkeep, &bpf, &refused));
  // Most of the table's refusals are never allowed under any condition.
  EXPECT_GT(refused, 50u);
  ASSERT_EQ(0, capsa_nnp_set());
  ASSERT_EQ(0, capsa_bpf_install(&bpf, 0));
  capsa_bpf_free(&bpf);
}

TEST(CapModeBaseline, ArgumentsAreChecked) {
  struct capsa_bpf bpf;
  EXPECT_EQ(-EINVAL,
            capsa_capmode_baseline_compile(nullptr, 0, nullptr, nullptr));
  EXPECT_EQ(-EINVAL, capsa_capmode_baseline_compile(nullptr, 1, &bpf, nullptr));
  const char *bogus[] = {"no_such_syscall"};
  EXPECT_EQ(-ENOENT, capsa_capmode_baseline_compile(bogus, 1, &bpf, nullptr));
  ASSERT_EQ(0, capsa_capmode_baseline_compile(nullptr, 0, &bpf, nullptr));
  EXPECT_GT(bpf.len, 0);
  capsa_bpf_free(&bpf);
}

TEST(CapModeBaseline, RefusesWhatNoPolicyAllowsAndNothingElse) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    static const char *const keep[] = {"capset"};
    InstallBaseline(keep, 1);
    // Never allowed by any capability-mode policy: refused, ECAPMODE.
    EXPECT_ERRNO(ECAPMODE, ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
    EXPECT_ERRNO(ECAPMODE, unshare(CLONE_NEWUTS));
    EXPECT_ERRNO(ECAPMODE, mount("none", "/", nullptr, MS_REMOUNT, nullptr));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_open, "/dev/null", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_setuid, getuid()));
    // The table's own answer where it has one: clone3 -> ENOSYS, so that
    // libc falls back to clone.
    EXPECT_ERRNO(ENOSYS, syscall(SYS_clone3, nullptr, 0));
    // Calls a policy may allow (under conditions) are not the baseline's
    // business: openat from AT_FDCWD still works here.
    int fd = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
    EXPECT_LE(0, fd) << strerror(errno);
    if (fd >= 0) close(fd);
    EXPECT_OK(getpid());
    // Kept: capset (dropping to nothing is always permitted).
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2] = {};
    EXPECT_OK(syscall(SYS_capset, &h, d));
    // The baseline is not capability mode: getmode still says 0.
    unsigned mode = 7;
    ASSERT_EQ(0, capsa_cap_getmode(&mode));
    EXPECT_EQ(0u, mode);  // the baseline is not capability mode
  }));
}

TEST(CapModeBaseline, NotKeptMeansRefused) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    InstallBaseline(nullptr, 0);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2] = {};
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_capset, &h, d));
  }));
}

// Under the baseline, capability mode still enters in full and behaves as
// usual: the baseline takes away nothing a policy allows.
TEST(CapModeBaseline, FullPolicyStacksOnTop) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    static const char *const keep[] = {"landlock_create_ruleset",
                                       "landlock_add_rule",
                                       "landlock_restrict_self"};
    InstallBaseline(keep, 3);
    ENTER_CAPMODE();
    unsigned mode = 0;
    ASSERT_EQ(0, capsa_cap_getmode(&mode));
    EXPECT_EQ(1u, mode);
    EXPECT_ERRNO(ECAPMODE, openat(AT_FDCWD, "/dev/null", O_RDONLY));
    EXPECT_ERRNO(ECAPMODE, ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
    int p[2];
    ASSERT_EQ(0, pipe(p));
    EXPECT_EQ(1, write(p[1], "x", 1));
    char c = 0;
    EXPECT_EQ(1, read(p[0], &c, 1));
    EXPECT_EQ('x', c);
  }));
}

}  // namespace
