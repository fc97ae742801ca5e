// Shared between the files of capability mode (capmode.c, capmode_policy.c,
// trace.c, selftest.c). Not a public header.
#ifndef CAPSA_SANDBOX_CAPMODE_INTERNAL_H_
#define CAPSA_SANDBOX_CAPMODE_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/seccomp.h"

#include "sandbox/capmode/capmode.h"

enum capsa__row_action {
  CAPSA__ALLOW,
  // Refused with ECAPMODE. The default action already does this; the row is
  // there for review and so that a per-process-type rule cannot re-allow it.
  CAPSA__REFUSE,
  CAPSA__ERRNO,  // refused with row.err, never traced (an expected answer)
  // Refused with ENOTCAPABLE (row.err), never traced, unless the process
  // type grants the syscall with capsa_capmode_policy_allow() (an extra row
  // overlapping this one replaces it): descriptors hold no implicit right to
  // change the metadata of the object behind them (docs/freebsd-differences.md,
  // "lent identity").
  CAPSA__GRANT,
  // Answered with EBADF (row.err) when argument cmp[0].arg, as a 32-bit int,
  // is negative and not AT_FDCWD (-100); other values go on to the rest of
  // the table. Compiled as a prologue before libseccomp's program: its
  // comparisons cannot say "negative but not -100" on 32 bits.
  CAPSA__BADFD,
};

struct capsa__capmode_row {
  const char *syscall;  // x86_64 name, resolved by libseccomp
  enum capsa__row_action action;
  int err;  // CAPSA__ERRNO only
  unsigned ncmp;
  struct capsa_arg_cmp cmp[3];
  const char *reason;
};

extern const struct capsa__capmode_row capsa__capmode_table[];
extern const size_t capsa__capmode_table_len;

// Stands for "the caller's pid" in the table; enter() patches the compiled
// BPF with getpid(). Above PID_MAX_LIMIT (4M), so never a real pid.
#define CAPSA__SELF_PID 0x7ca95a11u

// cap_getmode()'s marker: prctl(CAPSA__GETMODE_OPTION, CAPSA__GETMODE_ARG)
// is an unknown option to the kernel (EINVAL), and the capability-mode
// filter answers it with ECAPMODE even when tracing.
#define CAPSA__GETMODE_OPTION 0x43415053u /* "CAPS" */
#define CAPSA__GETMODE_ARG 0x4d4f4445u    /* "MODE" */

// trace.c: the SIGSYS handler of violation tracing. Installs it for the
// calling process; `names` (borrowed, must outlive the process's use of it)
// maps x86_64 syscall numbers < nnames to names. No allocation.
int capsa__trace_install(const char *const *names, unsigned nnames);
// The process's syscall-name table, built at the first call and kept for
// the process's life (a handler may outlive the policy that installed it);
// NULL when out of memory. _free is a no-op kept for symmetry.
char **capsa__trace_names_new(unsigned *nnames);
void capsa__trace_names_free(char **names, unsigned nnames);

// The policy object, shared with capmode_wire.c (its encoding for a
// zygote image, see sandbox/capmode/capmode.h).
#define CAPSA__MAX_PID_PATCHES 16
struct extra_row {
  int nr;
  unsigned ncmp;
  struct capsa_arg_cmp cmp[3];
  char *reason;
};

struct capsa_capmode_policy {
  // Recorded by setters.
  struct extra_row *extra;
  unsigned nextra, cap_extra;
  int *dirs;
  unsigned ndirs, cap_dirs;
  bool held_dirs;
  bool trace_set, trace;
  unsigned disabled;
  // Built by compile().
  bool compiled;
  bool tsync;
  int ruleset_fd;        // -1: no Landlock layer
  struct capsa_bpf bpf;  // len 0: no seccomp layer
  unsigned pid_patch[CAPSA__MAX_PID_PATCHES];
  unsigned npid_patch;
  char **names;
  unsigned nnames;
  struct capsa_capmode_report report;
  // Staged entry (see capmode.h): launcher-only rows, recorded; the
  // launcher's filter (the table + those rows, signals to any pid) and the
  // final filter that takes them away again, built by compile().
  struct extra_row *launch;
  unsigned nlaunch, cap_launch;
  struct capsa_bpf launch_bpf;
  struct capsa_bpf final_bpf;
  unsigned final_pid_patch[CAPSA__MAX_PID_PATCHES];
  unsigned nfinal_pid_patch;
  // dup() of a compiled policy: a copy of its plain filter (len 0: none),
  // which compile() takes instead of building the same filter again while
  // what it was built from is unchanged: the extra rows (only ever
  // appended: the same count is the same rows), tracing and the disabled
  // layers; launcher rows and directories do not enter the plain filter. A
  // stage (a kind's dup plus launcher rows) then costs two libseccomp
  // builds, not three.
  struct capsa_bpf plain_cache;
  unsigned plain_cache_rows, plain_cache_nextra, plain_cache_disabled;
  bool plain_cache_trace;
};

// Appends a row (reason copied) to *rows. 0 or -ENOMEM.
int capsa__capmode_push_row(struct extra_row **rows, unsigned *n, unsigned *cap,
                            int nr, const struct capsa_arg_cmp *cmps,
                            unsigned ncmps, const char *reason);

// Set once a process has crossed the point of no return (inherited by fork
// and threads; exec is refused in capability mode).
extern volatile int capsa__in_capmode;

#endif  // CAPSA_SANDBOX_CAPMODE_INTERNAL_H_
