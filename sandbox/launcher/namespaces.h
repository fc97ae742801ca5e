// Launcher primitives: start a child in new namespaces with an empty root.
// Mechanism only: what runs in the child (and its capability mode) is the
// caller's business.
//
//   static int child_main(void *arg) {  // in the child, after every step below
//     return arg == NULL ? 0 : 1;
//   }
//   int spawn(int channel_fd, struct capsa_ns_child *c) {
//     capsa_ns_policy *p = capsa_ns_policy_new();
//     if (!p) return -ENOMEM;
//     capsa_ns_policy_set_namespaces(p, CAPSA_NAMESPACE_ALL,  // wanted
//                                    CAPSA_NAMESPACE_USER);   // required
//     capsa_ns_policy_set_empty_root(p, true, false);  // wanted, not required
//     capsa_ns_policy_keep_fd(p, channel_fd, 3);  // becomes fd 3 in the child
//     struct capsa_ns_report rep;
//     int err = capsa_ns_spawn(p, child_main, NULL, c, &rep);
//     // err == 0: c->pidfd (owned by the caller) and c->pid; the child runs
//     // child_main(arg) with every other descriptor closed.
//     char line[256];  // "user=yes net=no(...) ..."
//     capsa_ns_report_format(&rep, line, sizeof line);
//     capsa_ns_policy_free(p);
//     return err;
//   }
//
// What the child gets, each step reported:
//   - new user, pid, ipc, mount and network namespaces (clone3 with
//     CLONE_PIDFD); a wanted namespace the kernel refuses is left out and
//     reported with its errno; a required one makes the spawn fail.
//   - uid/gid maps written by the parent: uid 0 inside maps to the caller's
//     euid, or to 65534 (nobody) when the caller is root, so that a root host
//     never lends its own uid to a renderer. setgroups is denied.
//   - an empty root: a tmpfs made the root with pivot_root, the old root
//     detached, then remounted read-only, nosuid, nodev, noexec.
//   - every descriptor closed except those kept (close_range), stdin, stdout
//     and stderr on /dev/null unless kept; setsid(); PR_SET_PDEATHSIG.
// The parent waits until the child has done all of this (or failed) and
// returns the report, so nothing is claimed that did not happen.
//
// capsa_ns_fork() is the cheap variant for a zygote that is already in its
// namespaces: one clone3 (optionally CLONE_PARENT | CLONE_NEWPID |
// CLONE_NEWUSER), setsid, pdeathsig, descriptors, no round trip. A user
// namespace made here is nested in the caller's and left unmapped (the child
// shows the overflow uid inside; outside it keeps the caller's): what it
// gives is counts of its own, RLIMIT_NPROC above all, which the kernel keeps
// per user namespace and uid. Its capabilities there are dropped too. Where
// clone3 answers ENOSYS (a zygote in capability mode's launcher stage) it uses
// clone, whose flags seccomp can check.
//
// The child is a copy of the caller without exec: call these from a process
// whose other threads cannot hold libc locks (single-threaded, as a zygote),
// or keep the child function to async-signal-safe calls.
#ifndef CAPSA_SANDBOX_NAMESPACES_H_
#define CAPSA_SANDBOX_NAMESPACES_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Namespace bits (same values as ipc/message.h's CAPSA_NS_*).
#define CAPSA_NAMESPACE_USER 0x01u
#define CAPSA_NAMESPACE_PID 0x02u
#define CAPSA_NAMESPACE_IPC 0x04u
#define CAPSA_NAMESPACE_MOUNT 0x08u
#define CAPSA_NAMESPACE_NET 0x10u
#define CAPSA_NAMESPACE_ALL 0x1fu
#define CAPSA_NAMESPACE_COUNT 5

// Most descriptors a policy can delegate.
#define CAPSA_NS_MAX_KEEP 16

typedef struct capsa_ns_policy capsa_ns_policy;

// A policy with no namespaces, no empty root, nothing kept, pdeathsig SIGKILL.
// NULL on ENOMEM. Owned by the caller: capsa_ns_policy_free().
capsa_ns_policy *capsa_ns_policy_new(void);
void capsa_ns_policy_free(capsa_ns_policy *p);

// `wanted` and `required` are CAPSA_NAMESPACE_* sets; required must be a
// subset of wanted (else -EINVAL). A mount namespace is needed for the empty
// root, a user namespace for anything when unprivileged.
int capsa_ns_policy_set_namespaces(capsa_ns_policy *p, unsigned wanted,
                                   unsigned required);
// Empty read-only root (needs CAPSA_NAMESPACE_MOUNT). `required`: failing to
// build it fails the spawn; otherwise it is reported.
int capsa_ns_policy_set_empty_root(capsa_ns_policy *p, bool on, bool required);
// Delegates `fd` (borrowed: the parent keeps its copy) as `target` in the
// child. Targets 0..2 replace the /dev/null defaults. -E2BIG when full,
// -EINVAL for negative numbers or a target used twice.
int capsa_ns_policy_keep_fd(capsa_ns_policy *p, int fd, int target);
// Forgets every descriptor kept so far, so that one policy serves fork after
// fork with new descriptors (a zygote: no allocation per fork).
void capsa_ns_policy_clear_fds(capsa_ns_policy *p);
// Signal the child gets when its parent thread dies (0: none).
int capsa_ns_policy_set_pdeathsig(capsa_ns_policy *p, int sig);
// Keep the capabilities the child holds in its new user namespace (default:
// all dropped after setup). A zygote needs CAP_SYS_ADMIN there to create
// each renderer's pid namespace.
int capsa_ns_policy_set_keep_caps(capsa_ns_policy *p, bool on);
// capsa_ns_fork() only: the child becomes a child of the caller's parent
// (CLONE_PARENT), so a host can wait for the renderers its zygote forks.
int capsa_ns_policy_set_clone_parent(capsa_ns_policy *p, bool on);

struct capsa_ns_report {
  unsigned requested;                   // CAPSA_NAMESPACE_* wanted
  unsigned applied;                     // CAPSA_NAMESPACE_* the child is in
  int ns_error[CAPSA_NAMESPACE_COUNT];  // per bit index: 0 or -errno
  bool uid_mapped;                      // uid/gid maps written
  unsigned uid_outside;                 // what uid 0 inside is outside
  bool empty_root;                      // pivoted into the read-only tmpfs
  int empty_root_error;                 // 0 or -errno of the step that failed
  bool fds_closed;                      // every non-kept descriptor closed
  bool setsid;
  int pdeathsig;  // 0 when not set
  // Why the kernel refused the user namespace, when a sysctl says so
  // ("max_user_namespaces=0", "unprivileged_userns_clone=0",
  // "apparmor_restrict_unprivileged_userns=1"); "" otherwise.
  char user_why[48];
};

// A started child. pidfd is owned by the caller (close it when done; waitid
// with P_PIDFD reaps).
struct capsa_ns_child {
  int pidfd;
  pid_t pid;  // in the caller's pid namespace
};

// Starts `fn(arg)` in a child as the policy says and waits until the child
// has set itself up. `fn`'s return value is the child's exit code. `report`
// (may be NULL; owned by the caller) is filled on success and on -EPERM /
// -ENOSYS failures of required layers. Errors: -EINVAL, -ENOMEM, the errno
// of clone3 for a required namespace, or the child's setup error (the child
// is then reaped). `p`, `arg` are borrowed.
int capsa_ns_spawn(const capsa_ns_policy *p, int (*fn)(void *arg), void *arg,
                   struct capsa_ns_child *child,
                   struct capsa_ns_report *report);

// In a child started by capsa_ns_spawn (and its forks): what the launcher
// applied to it (uid_outside is not known inside). 0, -EINVAL, or -ENOENT in
// any other process.
int capsa_ns_self(struct capsa_ns_report *out);

// The empty read-only root for the calling process itself: for a process
// that was exec'd after capsa_ns_spawn (an exec needs the binary's dynamic
// loader and libraries, which the empty root no longer has), so it builds
// the root once its image is loaded. The caller must be alone in its own
// mount namespace with CAP_SYS_ADMIN there. 0 or -errno (the step that
// failed; the root may then be half built: treat as fatal if required).
int capsa_ns_enter_empty_root(void);

// The zygote's fork: clone3 with CLONE_PIDFD and, from the policy, only
// CLONE_NEWPID / CLONE_NEWIPC / CLONE_NEWNET (the caller is already in its
// user and mount namespaces) and CLONE_PARENT. No round trip: returns 0 in
// the child (which has done setsid, pdeathsig, descriptors), > 0 (the pid)
// in the parent with *child filled, or -errno. Async-signal-safe.
// The namespaces applied are exactly those of the policy (clone3 is all or
// nothing): a failure is returned, never a silently weaker child.
int capsa_ns_fork(const capsa_ns_policy *p, struct capsa_ns_child *child);

// Which namespaces this process can create here (tried in a short-lived
// child with all of them, once, cached; only if that is refused, in one
// child per namespace, to tell which). Call before entering any sandbox.
unsigned capsa_ns_available(void);

// The same probe as a report (requested: all, applied: what is available,
// ns_error: each refusal's errno, user_why), for `capsa doctor` and for the
// error of a host whose required namespaces are missing. 0 or -EINVAL.
int capsa_ns_available_report(struct capsa_ns_report *out);

// One line: "user=yes pid=yes ipc=yes mount=yes net=no(EPERM) root=empty-ro
// fds=closed uid0->65534". A refusal names its errno and, when known, why:
// "user=no(ENOSPC:max_user_namespaces=0)", and a namespace refused because
// there is no user namespace to make it in "pid=no(EPERM:no-userns)". With
// the user namespace wanted but not applied, the uid the children keep is
// said too: "uid=0(unmapped)". Returns the length needed (as snprintf) or
// -EINVAL.
int capsa_ns_report_format(const struct capsa_ns_report *r, char *buf,
                           size_t len);

// "user", "pid", "ipc", "mnt", "net" for a single bit; NULL otherwise. These
// are also the names of the links in /proc/PID/ns/.
const char *capsa_namespace_name(unsigned bit);

// Compares the namespaces of `pid` with the caller's through /proc/PID/ns
// and returns the CAPSA_NAMESPACE_* set in which they differ, or -errno
// (-ESRCH when gone, -EACCES when not readable).
int capsa_ns_of_pid_differ(pid_t pid);

// The identity of each namespace of a process: device and inode of
// /proc/PID/ns/NAME, indexed as the CAPSA_NAMESPACE_* bits. A host that
// checks many processes reads its own once (they do not change unless it
// calls unshare or setns) and compares each child's with
// capsa_ns_ids_differ: half the /proc lookups of capsa_ns_of_pid_differ.
typedef struct capsa_ns_ids {
  dev_t dev[CAPSA_NAMESPACE_COUNT];
  ino_t ino[CAPSA_NAMESPACE_COUNT];
} capsa_ns_ids;

// Fills *out for `pid` (0: the caller). 0 or -errno as above.
int capsa_ns_ids_of(pid_t pid, capsa_ns_ids *out);

// The CAPSA_NAMESPACE_* set in which two snapshots differ.
unsigned capsa_ns_ids_differ(const capsa_ns_ids *a, const capsa_ns_ids *b);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_NAMESPACES_H_
