// Capability mode: FreeBSD's cap_enter(2) on a stock Linux kernel.
//
//   // A process sandboxing itself:
//   int sandbox_self(void) {
//     // 0, or -errno before the point of no return:
//     int err = capsa_cap_enter();
//     if (err < 0) fprintf(stderr, "%s\n", capsa_strerror(err));
//     return err;  // then open("/etc/passwd", O_RDONLY): -1, errno ECAPMODE
//   }
//
//   // A launcher: compile once in the parent, enter cheaply in each child.
//   int launch(void) {
//     capsa_capmode_policy *p = capsa_capmode_policy_new();
//     if (!p) return -ENOMEM;
//     capsa_capmode_policy_allow_name(p, "sysinfo", NULL, 0,
//                                     "renderer: memory pressure");
//     int err = capsa_capmode_policy_compile(p);
//     if (err == 0 && fork() == 0) {
//       // No allocation; _exit on a failure after the first irreversible step.
//       capsa_capmode_policy_enter(p);
//       /* ... the child's work ... */
//       _exit(0);
//     }
//     capsa_capmode_policy_free(p);
//     return err;
//   }
//
// Layers, each used when the kernel offers it and reported when not:
// no_new_privs, Landlock (filesystem beneath held directories only, no TCP
// bind/connect, abstract unix sockets and signals scoped to the domain), and a
// seccomp-bpf filter (sandbox/capmode/capmode_policy.c: one row per syscall
// with its condition and reason; default ERRNO(ECAPMODE)). Landlock + seccomp
// alone give capability mode: no root, no namespaces.
//
// CAPSA_TRACE=1 in the environment (read at compile time) or
// capsa_capmode_policy_set_trace() turns refusals into one stderr line each
// while the call still fails with ECAPMODE, as FreeBSD's ktrace
// capability-violation tracing. Arguments are decoded (AT_FDCWD, flags by
// name, the path read from the caller's memory), then the caller's address,
// the pid and the label of capsa_capmode_set_trace_label():
//   capsa: capmode violation: openat(AT_FDCWD, "/etc/passwd", O_RDONLY|
//   O_CLOEXEC, 0) at 0x7f3c1a2b3c4d layer=seccomp -> ECAPMODE [pid 1
//   renderer gzip]
// (one line). Landlock refusals (EACCES/EPERM) cannot be traced this way.
#ifndef CAPSA_SANDBOX_CAPMODE_H_
#define CAPSA_SANDBOX_CAPMODE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Enters capability mode with the default policy; directories the process
// holds open at this moment stay usable through *at(dirfd, ...). Returns 0
// (also when already in capability mode: idempotent, never widens), or
// -errno when something could not be prepared -- nothing irreversible has
// happened then. Once the first irreversible step is taken any failure is
// fatal (_exit(127)), never a half-entered state. Honours CAPSA_TRACE=1.
int capsa_cap_enter(void);

// *modep (owned by the caller) = 1 in capability mode, 0 otherwise. Correct in
// every thread and in children forked after entry. Returns 0 or -EFAULT when
// modep is NULL.
int capsa_cap_getmode(unsigned *modep);

// Layers of capability mode (bit flags).
#define CAPSA_LAYER_NNP (1u << 0)
#define CAPSA_LAYER_LANDLOCK (1u << 1)
#define CAPSA_LAYER_SECCOMP (1u << 2)
#define CAPSA_LAYER_ALL \
  (CAPSA_LAYER_NNP | CAPSA_LAYER_LANDLOCK | CAPSA_LAYER_SECCOMP)

// One comparison on a syscall argument, as libseccomp's: (arg & mask) op
// value for CAPSA_CMP_MASKED_EQ, arg op value otherwise (64-bit). C `int`
// arguments (fds, flags, ioctl requests) must be compared on their low 32
// bits: use CAPSA_CMP_MASKED_EQ with mask 0xffffffff.
enum capsa_cmp_op {
  CAPSA_CMP_NE = 1,
  CAPSA_CMP_LT,
  CAPSA_CMP_LE,
  CAPSA_CMP_EQ,
  CAPSA_CMP_GE,
  CAPSA_CMP_GT,
  CAPSA_CMP_MASKED_EQ,
};
struct capsa_arg_cmp {
  unsigned arg;  // 0..5
  enum capsa_cmp_op op;
  uint64_t mask;  // CAPSA_CMP_MASKED_EQ only
  uint64_t value;
};

typedef struct capsa_capmode_policy capsa_capmode_policy;

// clone() flags that create namespaces (CLONE_NEWNS | CLONE_NEWCGROUP |
// CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
// CLONE_NEWNET): capability mode refuses clone with any of them. A launcher
// row on clone compares with this mask to be disjoint from the table's.
#define CAPSA_CLONE_NAMESPACES 0x7e020000ull

// A policy holding the default capability-mode table. NULL on ENOMEM. Owned by
// the caller; release with capsa_capmode_policy_free().
capsa_capmode_policy *capsa_capmode_policy_new(void);

// Records an extra allow rule (per process type: renderer policy lives with
// its user). `cmps` (borrowed; copied) holds up to 3 comparisons that must all
// hold; NULL/0 allows the syscall unconditionally. `reason` (borrowed; copied)
// is required: the table is reviewable data. Rules only add to what the
// default table allows; they cannot re-allow syscalls the table refuses
// for safety (execve, ptrace, bpf, ...): -EPERM. -EINVAL for a bad argument,
// -ENOENT for an unknown syscall name, -EBUSY after _compile().
int capsa_capmode_policy_allow(capsa_capmode_policy *p, int syscall_nr,
                               const struct capsa_arg_cmp *cmps, unsigned ncmps,
                               const char *reason);
int capsa_capmode_policy_allow_name(capsa_capmode_policy *p,
                                    const char *syscall_name,
                                    const struct capsa_arg_cmp *cmps,
                                    unsigned ncmps, const char *reason);

// Keeps directory `dirfd` usable through *at(dirfd, ...) in capability mode
// (Landlock rule beneath it). `dirfd` is borrowed: it must stay open until
// _compile(), which records the directory itself. By default (no call) a
// policy grants no filesystem access at all; capsa_cap_enter() grants every
// directory held at entry.
int capsa_capmode_policy_allow_dir(capsa_capmode_policy *p, int dirfd);
// Same for every directory descriptor the calling process holds at _compile().
int capsa_capmode_policy_allow_held_dirs(capsa_capmode_policy *p);

// Violation tracing on/off (default: CAPSA_TRACE=1 in the environment).
int capsa_capmode_policy_set_trace(capsa_capmode_policy *p, bool on);

// Names the calling process in its violation lines ("renderer gzip"), for
// when many sandboxed processes share one stderr. `label` is copied
// (borrowed for the call); NULL or "" removes it. Process-wide, callable
// before or after entering. 0, -ENAMETOOLONG (over CAPSA_TRACE_LABEL_MAX
// bytes) or -EINVAL (a byte outside printable ASCII).
#define CAPSA_TRACE_LABEL_MAX 63
int capsa_capmode_set_trace_label(const char *label);

// Leaves out layers (CAPSA_LAYER_* bits), to simulate a kernel without them.
// The report then says "disabled" and complete == false: nothing silently
// weakens.
int capsa_capmode_policy_disable_layer(capsa_capmode_policy *p,
                                       unsigned layers);

// In the parent: probes kernel features, compiles the seccomp table to BPF
// (libseccomp, binary tree), creates the Landlock ruleset. Returns 0 or
// -errno (-ENOSYS when no layer at all is available). Call once.
int capsa_capmode_policy_compile(capsa_capmode_policy *p);

// Child side (after fork, or the process itself): crosses the point of no
// return. No allocation, async-signal-safe. Returns -EINVAL (not compiled)
// before doing anything irreversible; otherwise 0, or _exit(127) if a layer
// that compile() prepared cannot be installed. Several threads: call before
// creating them (seccomp is installed with TSYNC so existing threads follow).
// With tracing on, `p` must stay allocated in the entered process (the
// SIGSYS handler reads its syscall names); freeing the parent's copy after
// fork is fine.
int capsa_capmode_policy_enter(const capsa_capmode_policy *p);

void capsa_capmode_policy_free(capsa_capmode_policy *p);

// A new, uncompiled policy recording what `p` (borrowed) recorded: extra and
// launcher rows, directories, tracing, disabled layers. NULL on ENOMEM or
// when p is NULL. Owned by the caller. When `p` is compiled, the copy also
// keeps p's plain filter, which its own compile takes instead of building
// it again as long as nothing that enters it changed (extra rows, tracing,
// disabled layers; launcher rows do not enter it): a stage dup'ed from a
// compiled kind policy costs two filter builds, not three.
capsa_capmode_policy *capsa_capmode_policy_dup(const capsa_capmode_policy *p);

// Encoding: what a policy recorded (rows, launcher rows, directories,
// tracing, disabled layers), as bytes, for a process that shares no memory
// with the recorder: a zygote that is a fresh exec of the host's binary.
// Both ends must be the same binary (host byte order, no versioning).
//
//   unsigned char buf[8192];
//   int dirs[4];
//   unsigned ndirs;
//   ssize_t n = capsa_capmode_policy_encode(p, buf, sizeof buf, dirs, 4,
//                                           &ndirs);  // send buf + dirs
//   capsa_capmode_policy *q;   // in the other process, with its copies of
//   capsa_capmode_policy_decode(buf, n, its_dirs, ndirs, &q);  // the dirs
//
// encode: `p` borrowed, uncompiled (-EBUSY otherwise); tracing left unset
// is resolved now from this process's CAPSA_TRACE. dirfds[0..*ndirfds) are
// p's directory descriptors, borrowed (still the caller's), to send beside
// the bytes in that order. Returns the byte count, -ENOSPC (buf too small),
// -E2BIG (more directories than max_dirfds) or -EINVAL.
ssize_t capsa_capmode_policy_encode(const capsa_capmode_policy *p, void *buf,
                                    size_t len, int *dirfds,
                                    unsigned max_dirfds, unsigned *ndirfds);
// decode: `dirfds` borrowed; as with _allow_dir they must stay open until
// the new policy is compiled. *out is owned by the caller. 0, -EBADMSG
// (malformed or truncated), -ENOMEM, or allow_dir's error for a dirfd.
int capsa_capmode_policy_decode(const void *buf, size_t len, const int *dirfds,
                                unsigned ndirfds, capsa_capmode_policy **out);

// --- Staged entry: a launcher (a zygote) pays for capability mode once ---
//
// Loading the ~400-instruction filter costs ~150+ us per process; a launcher
// that forks many sandboxed children enters the policy itself, once, with a
// few rows only it needs between forks, and each child then takes a small
// final step that removes exactly those rows:
//
//   capsa_capmode_policy *stage = capsa_capmode_policy_dup(kind_policy);
//   capsa_capmode_policy_allow_launcher(stage, "capset", NULL, 0,
//                                       "children drop capabilities");
//   capsa_capmode_policy_compile(stage);       // and kind_policy
//   if (capsa_capmode_policy_stage_serves(stage, kind_policy) == 1)
//     capsa_capmode_policy_enter_launcher(stage);   // in the launcher
//   ... fork ...
//   capsa_capmode_policy_enter(kind_policy);   // child: the final step only
//
// Stage = the plain policy + the launcher rows + signals to any pid (each
// child has another pid) + landlock_restrict_self. The final step, in the
// child: landlock_restrict_self with the child's own ruleset (a domain of its
// own: signals and abstract sockets scoped to it, as a plain entry), then a
// small filter refusing (ECAPMODE) the launcher rows, landlock_restrict_self
// and signals to any pid but the child's own. Stacked, the result is exactly
// the plain policy: compile() checks that every launcher row is disjoint
// from the plain rows of its syscall.

// Records a row the launcher stage allows and the final step refuses.
// `syscall_name`, `cmps` (up to 3, all must hold), `reason` (required) are
// borrowed and copied. Unlike capsa_capmode_policy_allow(), it may name a
// syscall the table refuses (clone with CLONE_NEWPID, capset): no child ever
// holds it. compile() returns -EINVAL when a launcher row is not provably
// disjoint from the plain rows of the same syscall (a comparison on the same
// argument and mask with another value). -EINVAL for a bad argument,
// -ENOENT for an unknown name, -EBUSY after _compile().
int capsa_capmode_policy_allow_launcher(capsa_capmode_policy *p,
                                        const char *syscall_name,
                                        const struct capsa_arg_cmp *cmps,
                                        unsigned ncmps, const char *reason);

// 1 when a child of a process in `stage`'s launcher stage entering `p` takes
// only the final step and ends exactly as confined as a plain
// capsa_capmode_policy_enter(p) (same layers, tracing, plain filter); 0 when
// it would need p's full filter on top as well (still correct, not cheaper).
// Both compiled, `stage` with launcher rows; else -EINVAL.
int capsa_capmode_policy_stage_serves(const capsa_capmode_policy *stage,
                                      const capsa_capmode_policy *p);

// In the launcher: enters the stage (no_new_privs, Landlock, the launcher
// filter). Afterwards capsa_cap_getmode() says 1 here and in children, and
// capsa_capmode_policy_enter(q) in a forked child takes the final step (plus
// q's full filter when the stage does not serve q). `p` must stay allocated
// in this process and its children. Returns -EINVAL (not compiled, or no
// launcher rows), -EOPNOTSUPP (no seccomp layer to stage), -EBUSY (already
// in capability mode) before anything irreversible; else 0 or _exit(127).
int capsa_capmode_policy_enter_launcher(const capsa_capmode_policy *p);

// What capability mode gives here, per layer.
enum capsa_layer_state {
  CAPSA_LAYER_ENFORCED = 0,
  CAPSA_LAYER_UNAVAILABLE,  // the kernel lacks it
  CAPSA_LAYER_DISABLED,     // capsa_capmode_policy_disable_layer()
};
struct capsa_capmode_report {
  enum capsa_layer_state nnp;
  enum capsa_layer_state landlock;
  enum capsa_layer_state seccomp;
  int landlock_abi;                   // 0 when unavailable
  bool landlock_fs;                   // filesystem beneath held dirs
  bool landlock_fs_truncate;          // ABI >= 3
  bool landlock_fs_ioctl_dev;         // ABI >= 5
  bool landlock_net_tcp;              // ABI >= 4: TCP bind/connect
  bool landlock_scope_abstract_unix;  // ABI >= 6
  bool landlock_scope_signal;         // ABI >= 6
  unsigned landlock_dirs;             // directories granted
  unsigned seccomp_rows;              // policy table rows (default + extra)
  unsigned seccomp_bpf_len;           // BPF instructions
  bool trace;
  bool complete;  // every layer capability mode needs is enforced
};

// --- Baseline: what no capability-mode policy can ever allow ---
// A launcher that cannot stage (its children's policies differ) can still
// refuse, for itself and everything it forks, what the table refuses outright
// and no policy may re-allow (capsa_capmode_policy_allow: -EPERM): ptrace,
// execve, mount, bpf, io_uring, module loading, set*id, ... Compiles a
// default-allow filter giving those syscalls the table's own answer, except
// the names in `keep` (what the launcher and its children still call before
// entering their policy; borrowed). Stacked under any policy it takes away
// nothing the policy allows. *out is owned by the caller (capsa_bpf_free);
// *refused (may be NULL) counts the syscalls refused. 0 or -errno: -ENOENT
// for a name libseccomp does not know, -EINVAL for bad arguments.
struct capsa_bpf;
int capsa_capmode_baseline_compile(const char *const *keep, unsigned nkeep,
                                   struct capsa_bpf *out, unsigned *refused);

// Fills *out (owned by the caller) for a compiled policy. -EINVAL otherwise.
int capsa_capmode_policy_report(const capsa_capmode_policy *p,
                                struct capsa_capmode_report *out);
// The report of the default policy on this kernel (what capsa_cap_enter()
// gives), without entering anything.
int capsa_capmode_default_report(struct capsa_capmode_report *out);

// Formats a report into buf (owned by the caller; always NUL-terminated when
// len > 0): one line of text, or a JSON object when json is true. Returns the
// length it needed (as snprintf) or -EINVAL.
int capsa_capmode_report_format(const struct capsa_capmode_report *r, bool json,
                                char *buf, size_t len);

const char *capsa_layer_state_name(enum capsa_layer_state s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_CAPMODE_H_
