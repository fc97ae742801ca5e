// Violation tracing (CAPSA_TRACE=1): one line per refused syscall, its
// arguments decoded (AT_FDCWD, flags by name, paths read from the caller's
// memory, escaped), the caller's address, pid and label; the call still
// fails with ECAPMODE and the program continues.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>

#include "sandbox/capmode/capmode.h"
#include "sandbox/features.h"
#include "tests/harness/child.h"
#include "tests/sandbox/capmode_test_util.h"

namespace {

// Reads what the child wrote to stderr (redirected to a pipe).
std::string drain(int fd) {
  std::string s;
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) s.append(buf, n);
  return s;
}

// Traced capability mode with stderr going to a pipe; Lines() gives back
// what was written and restores stderr.
struct Traced {
  int p[2] = {-1, -1};
  int saved = -1;
  bool Enter() {
    if (pipe2(p, O_NONBLOCK) != 0) return false;
    capsa_capmode_policy *pol = capsa_capmode_policy_new();
    bool ok = pol && capsa_capmode_policy_set_trace(pol, true) == 0 &&
              capsa_capmode_policy_compile(pol) == 0;
    saved = dup(2);
    ok = ok && capsa_capmode_policy_enter(pol) == 0;
    // Freed on purpose once entered: the handler must not read the policy.
    capsa_capmode_policy_free(pol);
    return ok && dup2(p[1], 2) == 2;
  }
  std::string Lines() {
    dup2(saved, 2);
    return drain(p[0]);
  }
};

#define REQUIRE_TRAP()                            \
  do {                                            \
    REQUIRE_SECCOMP();                            \
    if (!capsa_features_get()->seccomp_trap)      \
      GTEST_SKIP() << "no SECCOMP_RET_TRAP here"; \
  } while (0)

bool Has(const std::string &out, const std::string &what) {
  return out.find(what) != std::string::npos;
}

TEST(CapModeTrace, ViolationsAreReportedAndTheProgramContinues) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_TRAP();
    // Probed in a child: where the entry is absent int 0x80 faults.
    bool has_i386 = capsa_features_get()->i386_entry;
    Traced t;
    ASSERT_TRUE(t.Enter());
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_openat, AT_FDCWD, "/etc/passwd", 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_ptrace, 0, 0, 0, 0));
    // Expected answers are not violations: clone3 (ENOSYS), getmode's marker.
    EXPECT_ERRNO(ENOSYS, syscall(SYS_clone3, nullptr, 0));
    unsigned m = 0;
    capsa_cap_getmode(&m);
    EXPECT_EQ(1u, m);
    // i386 calls are traced too, raw.
    long r32 = 0;
    if (has_i386) {
      r32 = 20;  // i386 getpid
      __asm__ volatile("int $0x80"
                       : "+a"(r32)
                       :
                       : "memory", "rcx", "r8", "r9", "r10", "r11");
    }
    std::string out = t.Lines();
    EXPECT_TRUE(Has(out,
                    "capsa: capmode violation: openat(AT_FDCWD, "
                    "\"/etc/passwd\", O_RDONLY) at 0x"))
        << out;
    EXPECT_TRUE(Has(out, "ptrace(0, 0, 0x0, 0x0) at 0x")) << out;
    EXPECT_TRUE(Has(out, "layer=seccomp -> ECAPMODE [pid ")) << out;
    EXPECT_FALSE(Has(out, "clone3")) << out;
    EXPECT_FALSE(Has(out, "prctl")) << out;
    if (has_i386) {
      EXPECT_EQ(-ECAPMODE, r32);
      EXPECT_TRUE(Has(out, "i386:syscall_20(0x")) << out;
    }
  }));
}

TEST(CapModeTrace, ArgumentsAreDecodedByName) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_TRAP();
    Traced t;
    ASSERT_TRUE(t.Enter());
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_openat, AT_FDCWD, "/etc/shadow",
                                   O_WRONLY | O_CREAT | O_CLOEXEC, 0640));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_unlinkat, AT_FDCWD, "/x", AT_REMOVEDIR));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_newfstatat, AT_FDCWD, "/proc/1", nullptr,
                                   AT_SYMLINK_NOFOLLOW));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_access, "/root", R_OK | W_OK));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNET));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_rename, "/a", "/b"));
    std::string out = t.Lines();
    EXPECT_TRUE(Has(out,
                    "openat(AT_FDCWD, \"/etc/shadow\", "
                    "O_WRONLY|O_CREAT|O_CLOEXEC, 0640)"))
        << out;
    EXPECT_TRUE(Has(out, "unlinkat(AT_FDCWD, \"/x\", AT_REMOVEDIR)")) << out;
    EXPECT_TRUE(Has(out,
                    "newfstatat(AT_FDCWD, \"/proc/1\", 0x0, "
                    "AT_SYMLINK_NOFOLLOW)"))
        << out;
    EXPECT_TRUE(Has(out, "access(\"/root\", R_OK|W_OK)")) << out;
    EXPECT_TRUE(Has(out, "socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, 0)"))
        << out;
    EXPECT_TRUE(Has(out, "unshare(CLONE_NEWUSER|CLONE_NEWNET)")) << out;
    EXPECT_TRUE(Has(out, "rename(\"/a\", \"/b\")")) << out;
    // Seven lines, each with the caller's address and the pid.
    std::regex line(
        "capsa: capmode violation: [a-z0-9_]+\\(.*\\) at 0x[0-9a-f]+ "
        "layer=seccomp -> ECAPMODE \\[pid [0-9]+\\]\n");
    size_t n = 0;
    for (std::sregex_iterator i(out.begin(), out.end(), line), e; i != e; ++i)
      n++;
    EXPECT_EQ(7u, n) << out;
  }));
}

// What a path pointer points at is the caller's (maybe hostile) memory:
// unreadable or unmapped -> the pointer in hex; control characters, quotes
// and non-ASCII escaped; a long one cut; a string running into an unmapped
// page shown up to there.
TEST(CapModeTrace, PathsFromHostileMemoryAreSafe) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_TRAP();
    long page = sysconf(_SC_PAGESIZE);
    char *two =
        static_cast<char *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, two);
    ASSERT_EQ(0, munmap(two + page, page));  // the second page is gone
    memset(two, 'z', page);                  // no NUL before the hole
    char *none = static_cast<char *>(
        mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, none);
    std::string lng(1000, 'a');
    Traced t;
    ASSERT_TRUE(t.Enter());
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, none, 0700));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, (void *)0x10, 0700));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, nullptr, 0700));
    EXPECT_ERRNO(ECAPMODE,
                 syscall(SYS_mkdir, "a\nb\"c\\d\x1b[2J\xc3\xa9", 0700));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, lng.c_str(), 0700));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, two + page - 5, 0700));
    std::string out = t.Lines();
    char hex[32];
    snprintf(hex, sizeof hex, "mkdir(%p, 0700)", (void *)none);
    EXPECT_TRUE(Has(out, hex)) << out;
    EXPECT_TRUE(Has(out, "mkdir(0x10, 0700)")) << out;
    EXPECT_TRUE(Has(out, "mkdir(NULL, 0700)")) << out;
    EXPECT_TRUE(Has(out,
                    "mkdir(\"a\\x0ab\\\"c\\\\d\\x1b[2J\\xc3\\xa9\", "
                    "0700)"))
        << out;
    EXPECT_TRUE(Has(out, "mkdir(\"" + std::string(192, 'a') + "\"..., 0700)"))
        << out;
    EXPECT_TRUE(Has(out, "mkdir(\"zzzzz\"..., 0700)")) << out;
    // One line per call: no raw newline or escape from the paths.
    EXPECT_EQ(6, std::count(out.begin(), out.end(), '\n')) << out;
    EXPECT_FALSE(Has(out, "\x1b")) << out;
  }));
}

// The handler reads paths through a pipe of its own; if the program closes
// those descriptors and the numbers are reused, nothing is written into
// whatever now holds them.
TEST(CapModeTrace, ReusedNumbersOfTheHandlersPipeAreNotWrittenTo) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_TRAP();
    Traced t;
    ASSERT_TRUE(t.Enter());
    int before[64] = {0};
    for (int fd = 3; fd < 64; fd++) before[fd] = fcntl(fd, F_GETFD) >= 0;
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/first", 0700));
    int taken = 0;
    for (int fd = 3; fd < 64; fd++) {
      if (before[fd] || fcntl(fd, F_GETFD) < 0) continue;
      // The handler's pipe end: replaced by a file of the program's.
      int mf = memfd_create("victim", MFD_CLOEXEC);
      ASSERT_GE(mf, 0);
      ASSERT_EQ(fd, dup2(mf, fd));
      close(mf);
      taken++;
    }
    EXPECT_EQ(2, taken);  // the pipe, made at the first violation
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/second", 0700));
    std::string out = t.Lines();
    EXPECT_TRUE(Has(out, "mkdir(\"/first\", 0700)")) << out;
    EXPECT_TRUE(Has(out, "mkdir(\"/second\", 0700)")) << out;
    for (int fd = 3; fd < 64; fd++) {
      struct stat st;
      if (!before[fd] && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        EXPECT_EQ(0, st.st_size) << "fd " << fd << " was written to";
      }
    }
  }));
}

TEST(CapModeTrace, LabelNamesTheProcess) {
  EXPECT_EQ(-ENAMETOOLONG,
            capsa_capmode_set_trace_label(std::string(64, 'x').c_str()));
  EXPECT_EQ(-EINVAL, capsa_capmode_set_trace_label("bad\nlabel"));
  EXPECT_EQ(0, capsa_capmode_set_trace_label(
                   std::string(CAPSA_TRACE_LABEL_MAX, 'x').c_str()));
  EXPECT_EQ(0, capsa_capmode_set_trace_label(nullptr));
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_TRAP();
    ASSERT_EQ(0, capsa_capmode_set_trace_label("renderer thumbnail"));
    Traced t;
    ASSERT_TRUE(t.Enter());
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/x", 0700));
    ASSERT_EQ(0, capsa_capmode_set_trace_label(""));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/y", 0700));
    std::string out = t.Lines();
    std::string pid = std::to_string(getpid());
    EXPECT_TRUE(Has(out, "mkdir(\"/x\", 0700) at 0x")) << out;
    EXPECT_TRUE(Has(out, "-> ECAPMODE [pid " + pid + " renderer thumbnail]\n"))
        << out;
    EXPECT_TRUE(Has(out, "-> ECAPMODE [pid " + pid + "]\n")) << out;
  }));
}

TEST(CapModeTrace, EnvironmentVariableTurnsItOn) {
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_TRAP();
    int p[2];
    ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
    setenv("CAPSA_TRACE", "1", 1);
    ENTER_CAPMODE();
    int saved = dup(2);
    ASSERT_EQ(2, dup2(p[1], 2));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/tmp/capsa-trace", 0700));
    dup2(saved, 2);
    std::string out = drain(p[0]);
    EXPECT_TRUE(Has(out,
                    "capmode violation: mkdir(\"/tmp/capsa-trace\", "
                    "0700)"))
        << out;
  }));
  // Without it: refused silently.
  CAPSA_EXPECT_CHILD_OK(([] {
    REQUIRE_SECCOMP();
    int p[2];
    ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
    unsetenv("CAPSA_TRACE");
    ENTER_CAPMODE();
    int saved = dup(2);
    ASSERT_EQ(2, dup2(p[1], 2));
    EXPECT_ERRNO(ECAPMODE, syscall(SYS_mkdir, "/tmp/capsa-trace", 0700));
    dup2(saved, 2);
    EXPECT_EQ("", drain(p[0]));
  }));
}

}  // namespace
