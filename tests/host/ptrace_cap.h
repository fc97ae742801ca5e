// Whether this process is root without CAP_SYS_PTRACE, as in a container
// with Docker's default capability set. Such a host cannot read
// /proc/PID/ns of a process whose credentials changed without an exec (a
// renderer of a forked zygote, a capsa_ns_spawn child mapped to another
// uid): the kernel made it non-dumpable and asks CAP_SYS_PTRACE of the
// reader. The host then refuses the renderer ("cannot read /proc"): it
// fails closed. With capsa_main's exec'd zygote (the default) renderers are
// dumpable to their user namespace's owner and checked normally.
#ifndef CAPSA_TESTS_HOST_PTRACE_CAP_H_
#define CAPSA_TESTS_HOST_PTRACE_CAP_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

inline bool RootWithoutPtraceCapability() {
  if (geteuid() != 0) return false;
  FILE *f = fopen("/proc/self/status", "re");
  if (!f) return false;
  char line[256];
  unsigned long long eff = ~0ull;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "CapEff:", 7) == 0) eff = strtoull(line + 7, NULL, 16);
  fclose(f);
  return !((eff >> 19) & 1);  // CAP_SYS_PTRACE
}

#define CAPSA_SKIP_IF_ROOT_WITHOUT_PTRACE()                                   \
  if (RootWithoutPtraceCapability())                                          \
  GTEST_SKIP() << "root without CAP_SYS_PTRACE (a container's default "       \
                  "capabilities): /proc/PID/ns of a process made without an " \
                  "exec is unreadable here, and the host refuses it"
#endif  // CAPSA_TESTS_HOST_PTRACE_CAP_H_
