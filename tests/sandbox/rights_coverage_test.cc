// The capability-mode table and the rights table, walked together: every
// syscall capability mode allows is classified here, from its man page, by
// the descriptors it takes, and every descriptor argument of an allowed
// syscall has a rights row (sandbox/rights/rights_policy.c) or a reviewed
// exemption (capsa__rights_exempt, same file). Adding an ALLOW row for a
// syscall that acts on a descriptor without deciding which right it needs
// fails here, naming it: the rights filter lets any syscall it has no row
// for through, whatever the descriptor's limits.
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode_internal.h"
#include "sandbox/rights/rights_internal.h"

namespace {

// x86_64 syscalls and the register arguments that are descriptors (man 2).
// AT_FDCWD-style directory arguments count: a limited directory is a
// descriptor like any other.
const std::map<std::string, std::vector<int>> kDescriptorArgs = {
    {"accept", {0}},
    {"accept4", {0}},
    {"close", {0}},
    {"close_range", {0}},
    {"copy_file_range", {0, 2}},
    {"dup", {0}},
    {"dup2", {0, 1}},
    {"dup3", {0, 1}},
    {"epoll_ctl", {0, 2}},
    {"epoll_pwait", {0}},
    {"epoll_pwait2", {0}},
    {"epoll_wait", {0}},
    {"faccessat", {0}},
    {"faccessat2", {0}},
    {"fadvise64", {0}},
    {"fallocate", {0}},
    {"fchmod", {0}},
    {"fchmodat", {0}},
    {"fchown", {0}},
    {"fchownat", {0}},
    {"fcntl", {0}},
    {"fdatasync", {0}},
    {"fgetxattr", {0}},
    {"flistxattr", {0}},
    {"flock", {0}},
    {"fremovexattr", {0}},
    {"fsetxattr", {0}},
    {"fstat", {0}},
    {"fstatfs", {0}},
    {"fsync", {0}},
    {"ftruncate", {0}},
    {"futimesat", {0}},
    {"getdents", {0}},
    {"getdents64", {0}},
    {"getpeername", {0}},
    {"getsockname", {0}},
    {"getsockopt", {0}},
    {"ioctl", {0}},
    {"linkat", {0, 2}},
    {"lseek", {0}},
    {"mkdirat", {0}},
    {"mknodat", {0}},
    {"mmap", {4}},
    {"newfstatat", {0}},
    {"openat", {0}},
    {"openat2", {0}},
    {"pidfd_send_signal", {0}},
    {"pread64", {0}},
    {"preadv", {0}},
    {"preadv2", {0}},
    {"pwrite64", {0}},
    {"pwritev", {0}},
    {"pwritev2", {0}},
    {"read", {0}},
    {"readahead", {0}},
    {"readlinkat", {0}},
    {"readv", {0}},
    {"recvfrom", {0}},
    {"recvmmsg", {0}},
    {"recvmsg", {0}},
    {"renameat", {0, 2}},
    {"renameat2", {0, 2}},
    {"sendfile", {0, 1}},
    {"sendmmsg", {0}},
    {"sendmsg", {0}},
    {"sendto", {0}},
    {"setsockopt", {0}},
    {"shutdown", {0}},
    {"signalfd", {0}},
    {"signalfd4", {0}},
    {"splice", {0, 2}},
    {"statx", {0}},
    {"symlinkat", {1}},
    {"sync_file_range", {0}},
    {"syncfs", {0}},
    {"tee", {0, 1}},
    {"timerfd_gettime", {0}},
    {"timerfd_settime", {0}},
    {"unlinkat", {0}},
    {"utimensat", {0}},
    {"vmsplice", {0}},
    {"waitid", {1}},
    {"write", {0}},
    {"writev", {0}},
    // Refused in capability mode, with rows for processes outside it.
    {"bind", {0}},
    {"connect", {0}},
    {"listen", {0}},
    {"fchdir", {0}},
    {"execveat", {0}},
    {"name_to_handle_at", {0}},
    {"fchmodat2", {0}},
    {"pidfd_getfd", {0, 1}},
};

// Descriptors passed in memory, which a seccomp filter cannot read: the
// documented gap (docs/rights.md, docs/freebsd-differences.md).
const std::set<std::string> kDescriptorsInMemory = {"poll", "ppoll", "select",
                                                    "pselect6"};

// Allowed syscalls that take no descriptor argument (they may create one).
const std::set<std::string> kNoDescriptor = {
    "alarm",
    "arch_prctl",
    "brk",
    "capget",
    "clock_getres",
    "clock_gettime",
    "clock_nanosleep",
    "clone",
    "epoll_create",
    "epoll_create1",
    "eventfd",
    "eventfd2",
    "exit",
    "exit_group",
    "fork",
    "futex",
    "futex_waitv",
    "get_robust_list",
    "getcpu",
    "getegid",
    "geteuid",
    "getgid",
    "getgroups",
    "getitimer",
    "getpgid",
    "getpgrp",
    "getpid",
    "getppid",
    "getpriority",
    "getrandom",
    "getresgid",
    "getresuid",
    "getrlimit",
    "getrusage",
    "getsid",
    "gettid",
    "gettimeofday",
    "getuid",
    "kill",
    "madvise",
    "membarrier",
    "memfd_create",
    "mincore",
    "mlock",
    "mlock2",
    "mlockall",
    "mprotect",
    "mremap",
    "msync",
    "munlock",
    "munlockall",
    "munmap",
    "nanosleep",
    "pause",
    "pipe",
    "pipe2",
    "pkey_mprotect",
    "prctl",
    "prlimit64",
    "restart_syscall",
    "rseq",
    "rt_sigaction",
    "rt_sigpending",
    "rt_sigprocmask",
    "rt_sigqueueinfo",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "rt_tgsigqueueinfo",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_getaffinity",
    "sched_getattr",
    "sched_getparam",
    "sched_getscheduler",
    "sched_rr_get_interval",
    "sched_setaffinity",
    "sched_setparam",
    "sched_setscheduler",
    "sched_yield",
    "seccomp",
    "set_robust_list",
    "set_tid_address",
    "setitimer",
    "setpgid",
    "setpriority",
    "setrlimit",
    "setsid",
    "sigaltstack",
    "socket",
    "socketpair",
    "sync",
    "tgkill",
    "time",
    "timer_create",
    "timer_delete",
    "timer_getoverrun",
    "timer_gettime",
    "timer_settime",
    "timerfd_create",
    "times",
    "umask",
    "uname",
    "vfork",
    "wait4",
};

bool Allows(enum capsa__row_action a) {
  return a == CAPSA__ALLOW || a == CAPSA__GRANT;
}

std::set<std::string> AllowedSyscalls() {
  std::set<std::string> out;
  for (size_t i = 0; i < capsa__capmode_table_len; i++)
    if (Allows(capsa__capmode_table[i].action))
      out.insert(capsa__capmode_table[i].syscall);
  return out;
}

int Nr(const std::string &name) {
  return seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name.c_str());
}

TEST(RightsCoverage, EveryAllowedSyscallIsClassifiedByItsDescriptors) {
  std::set<std::string> allowed = AllowedSyscalls();
  ASSERT_GT(allowed.size(), 100u) << "the table was not read";
  for (const std::string &s : allowed) {
    int kinds = kDescriptorArgs.count(s) + kDescriptorsInMemory.count(s) +
                kNoDescriptor.count(s);
    EXPECT_EQ(1, kinds)
        << s << ": capability mode allows it; say here (once) whether it "
        << "takes descriptors, and give them rights rows or exemptions";
  }
}

TEST(RightsCoverage, EveryDescriptorOfAnAllowedSyscallHasARowOrAnExemption) {
  std::set<std::string> allowed = AllowedSyscalls();
  unsigned checked = 0;
  for (const auto &[name, args] : kDescriptorArgs) {
    if (!allowed.count(name)) continue;  // refused: no descriptor reached
    int nr = Nr(name);
    ASSERT_GE(nr, 0) << name;
    for (int arg : args) {
      checked++;
      int rows = 0, exempt = 0;
      for (size_t i = 0; i < capsa__rights_nrows; i++)
        rows += capsa__rights_rows[i].nr == nr &&
                capsa__rights_rows[i].fd_arg == arg;
      for (size_t i = 0; i < capsa__rights_nexempt; i++)
        exempt += capsa__rights_exempt[i].nr == nr &&
                  capsa__rights_exempt[i].fd_arg == arg;
      EXPECT_TRUE(rows > 0 || exempt > 0)
          << name << " argument " << arg
          << ": allowed in capability mode, but no right is checked on it "
          << "(add a row to capsa__rights_rows, or an exemption with its "
          << "reason to capsa__rights_exempt)";
      EXPECT_FALSE(rows > 0 && exempt > 0)
          << name << " argument " << arg << ": both a row and an exemption";
    }
  }
  EXPECT_GT(checked, 80u);
}

// An exemption names a real descriptor argument of a syscall capability
// mode allows (no stale entries), with a reason.
TEST(RightsCoverage, ExemptionsAreCurrentAndGiveAReason) {
  std::set<std::string> allowed = AllowedSyscalls();
  ASSERT_GT(capsa__rights_nexempt, 0u);
  for (size_t i = 0; i < capsa__rights_nexempt; i++) {
    const struct capsa__rights_exempt &e = capsa__rights_exempt[i];
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, e.nr);
    ASSERT_NE(nullptr, name) << e.nr;
    std::string s = name;
    free(name);
    EXPECT_TRUE(allowed.count(s)) << s << ": exempt but refused anyway";
    auto it = kDescriptorArgs.find(s);
    ASSERT_NE(it, kDescriptorArgs.end()) << s << ": takes no descriptor";
    bool is_fd = false;
    for (int a : it->second) is_fd |= a == e.fd_arg;
    EXPECT_TRUE(is_fd) << s << " argument " << (int)e.fd_arg
                       << " is not a descriptor";
    EXPECT_GT(strlen(e.reason), 10u) << s;
  }
}

// And every row is about a descriptor argument (a wrong index would check
// the wrong register: the descriptor it meant would go unchecked).
TEST(RightsCoverage, EveryRowChecksADescriptorArgument) {
  for (size_t i = 0; i < capsa__rights_nrows; i++) {
    const capsa__rights_row &r = capsa__rights_rows[i];
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, r.nr);
    ASSERT_NE(nullptr, name) << r.nr;
    std::string s = name;
    free(name);
    auto it = kDescriptorArgs.find(s);
    ASSERT_NE(it, kDescriptorArgs.end()) << s << ": classify it above";
    bool is_fd = false;
    for (int a : it->second) is_fd |= a == r.fd_arg;
    EXPECT_TRUE(is_fd) << s << " row on argument " << (int)r.fd_arg << ": "
                       << r.reason;
  }
}

}  // namespace
