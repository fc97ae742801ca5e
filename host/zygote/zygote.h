// The zygote: a pre-initialised, already-restricted process that forks
// renderers on request, so that a spawn costs a fork plus the final sandbox
// step (capability mode) instead of an exec and dynamic linking.
//
//   static int echo_main(int channel_fd, const capsa_sandbox_report_t *sb,
//                        void *arg);  // the renderer, on its channel
//   capsa__zygote z;
//   struct capsa__zygote_kind kinds[1] = {
//       {.name = "echo", .main = echo_main, .capmode = policy}};
//   int err = capsa__zygote_start(&z, kinds, 1, CAPSA_NAMESPACE_ALL, 0,
//                                 true, STDERR_FILENO,
//                                 RLIM_INFINITY);  // RLIMIT_NPROC kept
//   struct capsa_ns_child c;
//   int chan = -1, err_fd = -1;  // a spare's own channel; its stderr pipe
//   if (err == 0)
//     err = capsa__zygote_fork(&z, 0, channel_fd, &c, &chan, &err_fd);
//   // c.pidfd, chan (when >= 0) and err_fd are owned by the caller; the
//   // renderer is our child (CLONE_PARENT)
//   capsa__zygote_stop(&z);
//
// Internal to //host: the host (host.c, renderer_exe.c) and, through
// //host:zygote_for_benchmarks, `capsa bench spawn` use it. The files of
// host/zygote/ by job: host/zygote/zygote_internal.h.
//
// The zygote runs in the launcher's namespaces (user, mount with an empty
// read-only root, ipc, net as available), with no_new_privs, every
// descriptor but its control socket (and stderr if delegated) closed. It
// keeps CAP_SYS_ADMIN in its own user namespace only to give each renderer
// a fresh pid namespace. Renderers are forked with CLONE_PARENT: the host is
// their parent, waits for them through pidfds and gets their exit status.
// In each renderer: rlimits, then capsa_capmode_policy_enter (policy compiled
// once in the zygote), then the kind's main on fd 3 -- before any input.
//
// Staged capability mode (sandbox/capmode/capmode.h): when one policy serves
// every kind exactly, the zygote itself enters it once, as a launcher stage:
// the full filter and Landlock, plus the few rows it needs between forks (clone
// with CLONE_NEWPID, capset/PR_CAP_AMBIENT for the renderer to drop the
// zygote's capabilities; see stage.c). A renderer's
// capsa_capmode_policy_enter is then only the final step (its own Landlock
// domain and a small filter refusing those rows): the same confinement for
// a fraction of the cost. A kind without capability mode, or kinds with
// different policies, and the zygote stays outside capability mode while each
// renderer enters in full (z->staged says which).
//
// Two images: capsa__zygote_start forks the zygote from the caller (a
// copy of the host: its heap, env, argv and mappings; kept for kinds not
// registered by name and binaries that did not call capsa_main), and
// capsa__zygote_exec_start makes it a fresh exec of the binary (issue 12:
// nothing of the host's reaches a renderer but what it is sent).
//
// The zygote reads only the host's requests, never renderer data.
#ifndef CAPSA_HOST_ZYGOTE_ZYGOTE_H_
#define CAPSA_HOST_ZYGOTE_ZYGOTE_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "host/capsa_host.h"
#include "ipc/message.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/launcher/namespaces.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__ZYGOTE_MAX_KINDS 16
// Room for the names an exec'd image reports (capsa__zygote.registered).
#define CAPSA__ZYGOTE_REGISTERED 256

// Exit code of a renderer that reached its RLIMIT_CPU soft limit.
#define CAPSA__EXIT_CPU_LIMIT 152
// Exit code of a renderer (pid 1 of its pid namespace, where SIGABRT's
// default action is ignored) that called abort().
#define CAPSA__EXIT_ABORTED 153

// A renderer's entry point, run after capability mode. `sandbox` (valid
// for the process's life) is what the launcher did, to report in HELLO.
typedef int (*capsa__renderer_main_fn)(int channel_fd,
                                       const capsa_sandbox_report_t *sandbox,
                                       void *arg);

// A kind's flags and limits as they cross from the host to an exec'd
// zygote, listed once: X(type here, field, type in the configuration
// datagram). image.c derives the datagram's fields and both copies (host
// -> datagram, datagram -> zygote) from this list.
//   pid_namespace  a fresh pid namespace per renderer
//   keep_spare     one renderer forked ahead (already in capability mode,
//                  waiting on its channel), so a spawn only hands it over
//   no_stage       enter the whole policy in each renderer even when the
//                  zygote could stage it (any kind set so: no staging); to
//                  measure what staging saves
//   limit_*        the rlimits (CAPSA__ZYGOTE_KIND_RLIMITS below)
#define CAPSA__ZYGOTE_KIND_SCALARS(X) \
  X(bool, pid_namespace, uint32_t)    \
  X(bool, keep_spare, uint32_t)       \
  X(bool, no_stage, uint32_t)         \
  CAPSA__ZYGOTE_KIND_RLIMITS(CAPSA__ZYGOTE_RLIMIT_SCALAR, X)

// Each renderer's rlimits, listed once: R(X, field here, RLIMIT_*, field of
// capsa_kind_options_t, its default). A row (and the public field) is all a
// new rlimit-style limit needs: its field here, its place in the
// configuration datagram, its default and copy from the kind options
// (host/limits/rlimit.c, capsa__zygote_kind_set_limits) and its setrlimit
// in each renderer (server.c) follow from it. RLIM_INFINITY or 0 = leave as
// inherited: bytes of address space, seconds of CPU, descriptors, processes
// of the (namespaced) uid. Special cases stay in server.c (RLIMIT_CPU's
// hard limit a second later and SIGXCPU; RLIMIT_AS under a sanitizer;
// RLIMIT_FSIZE derived from limit_as and limit_nofile).
#define CAPSA__ZYGOTE_KIND_RLIMITS(R, X)                   \
  R(X, limit_as, RLIMIT_AS, limit_memory, 1ull << 30)      \
  R(X, limit_cpu, RLIMIT_CPU, limit_cpu_seconds, 300u)     \
  R(X, limit_nofile, RLIMIT_NOFILE, limit_open_files, 64u) \
  R(X, limit_nproc, RLIMIT_NPROC, limit_processes, 128u)
#define CAPSA__ZYGOTE_RLIMIT_SCALAR(X, field, resource, option, def) \
  X(rlim_t, field, uint64_t)

#define CAPSA__ZYGOTE_KIND_FIELD(type, name, wire) type name;

struct capsa__zygote_kind {
  const char *name;  // borrowed; must outlive the zygote
  // Runs in the renderer after capability mode; returns its exit code.
  capsa__renderer_main_fn main;
  void *arg;
  // Compiled in the zygote; NULL runs the renderer without capability mode
  // (reported as such, and the host's outside check refuses it unless the
  // embedder disabled the check for that kind).
  capsa_capmode_policy *capmode;
  CAPSA__ZYGOTE_KIND_SCALARS(CAPSA__ZYGOTE_KIND_FIELD)  // see above
  // The kind's warm-up input (capsa_kind_options_t.warm_up_fds): borrowed
  // by the host; the exec'd zygote receives copies and closes them after
  // the warm-up (host/kind_registry.h).
  int warm_fds[CAPSA_WARM_UP_MAX_FDS];
  unsigned nwarm;
};

// The kind options' rlimits (capsa_kind_options_t: CAPSA_LIMIT_NONE means
// none) as the zygote's: every row of CAPSA__ZYGOTE_KIND_RLIMITS.
#define CAPSA__ZYGOTE_RLIMIT_COPY(X, field, resource, option, def) \
  z->field = k->option == CAPSA_LIMIT_NONE ? 0 : (rlim_t)k->option;
static inline void capsa__zygote_kind_set_limits(
    struct capsa__zygote_kind *z, const capsa_kind_options_t *k) {
  CAPSA__ZYGOTE_KIND_RLIMITS(CAPSA__ZYGOTE_RLIMIT_COPY, )
}

// The public CAPSA_WARM_UP_* (host/capsa_host.h), as the zygote says them.
#define CAPSA__WARM_UP_NONE CAPSA_WARM_UP_NONE
#define CAPSA__WARM_UP_DONE CAPSA_WARM_UP_DONE
#define CAPSA__WARM_UP_NOT_RUN CAPSA_WARM_UP_NOT_RUN

// capsa__zygote.own_userns (also the zygote's ready message).
#define CAPSA__OWN_USERNS 0
#define CAPSA__OWN_USERNS_NONE 1
#define CAPSA__OWN_USERNS_PER_UID 2

typedef struct capsa__zygote {
  int sock;   // host end of the control socket, -1 when stopped
  int pidfd;  // the zygote process
  pid_t pid;
  struct capsa_ns_report ns;  // where the zygote (and so renderers) live
  int kind_error[CAPSA__ZYGOTE_MAX_KINDS];  // compile result per kind
  struct capsa_capmode_report capmode[CAPSA__ZYGOTE_MAX_KINDS];
  // Per kind: CAPSA__WARM_UP_NONE (none registered), _DONE, _NOT_RUN (a
  // forked zygote), or the -errno the warm-up returned (-ENOTUNIQ: two
  // registered for the name).
  int warm_up[CAPSA__ZYGOTE_MAX_KINDS];
  // The zygote is in the kinds' capability-mode launcher stage: renderers
  // take only the final step (see the comment at the top).
  bool staged;
  // Not staged: how many syscalls the zygote's capability-mode baseline
  // refuses for itself and every renderer (0: none installed).
  unsigned baseline;
  // CAPSA__OWN_USERNS: each renderer is in a user namespace of its own
  // (nested, unmapped), so RLIMIT_NPROC counts its own tree. Else why not:
  // CAPSA__OWN_USERNS_NONE (the zygote is in none), CAPSA__OWN_USERNS_PER_UID
  // (the kernel counts per uid, before Linux 5.14) or -errno of the zygote's
  // probe; RLIMIT_NPROC is then one count shared by every renderer.
  int own_userns;
  // A fresh exec of the binary (capsa__zygote_exec_start), not a fork of
  // the caller.
  bool exec;
  // An exec'd zygote's start: the errno of the exec itself when that failed
  // (0: it did not, or the failure came later); and, once it answered, the
  // kind names its image registers (", " between them; "" when none), so
  // that the caller can say what a kind_error -ENOENT lacked.
  int exec_error;
  char registered[CAPSA__ZYGOTE_REGISTERED];
} capsa__zygote;

// Starts the zygote. `kinds` (borrowed; the zygote keeps its copy of the
// memory) must be complete: kinds added later are unknown to it.
// `ns_wanted` / `ns_required` (CAPSA_NAMESPACE_*) and `empty_root` are the
// launcher policy for the zygote (PID is applied per renderer, see
// capsa__zygote_kind.pid_namespace); z->ns reports what was applied, also
// on failure. `stderr_fd` (borrowed) becomes
// the zygote's own fd 2, or -1 for /dev/null; renderers never get it (each
// has a pipe of its own, see capsa__zygote_fork). Returns 0 or -errno
// (-ETIMEDOUT when the zygote does not report ready in 5 s).
// `nproc_total` is the zygote's own RLIMIT_NPROC (lowered to it, never
// raised; RLIM_INFINITY: inherited): the ceiling of all renderers' processes
// and threads together (capsa_host_options_t.limit_renderer_processes).
int capsa__zygote_start(capsa__zygote *z,
                        const struct capsa__zygote_kind *kinds, unsigned nkinds,
                        unsigned ns_wanted, unsigned ns_required,
                        bool empty_root, int stderr_fd, rlim_t nproc_total);

// The same, but the zygote is a fresh image: the launcher's child execs
// `exe_fd` (borrowed; the binary, as capsa_main opened it) with argv
// {"capsa-zygote"}, an empty environment and only fds 2 and 3 (its control
// socket), builds the empty root itself, and gets its kinds (names, limits,
// encoded policies and their directories) over the control socket. It runs
// each kind's entry as the new image registered it under that name
// (host/kind_registry.h); `kinds[i].main` and `.arg` are not used, and a
// name the image does not know is kind_error -ENOENT. Nothing of the
// caller's memory, environment, argv or mappings reaches it. -EBADF
// without `exe_fd`; otherwise as capsa__zygote_start, and the exec's own
// errno when it fails (z->exec_error says so). `foreign`: exe_fd is a
// renderer executable of the embedder's (capsa_host_options_t.renderer_exe),
// not the caller's binary: no_new_privs is set before its exec, so that a
// set-user-ID bit or file capabilities added to it later grant nothing. A
// name its image does not register is kind_error -ENOENT, one it registers
// twice -ENOTUNIQ (z->registered lists what it has).
int capsa__zygote_exec_start(capsa__zygote *z,
                             const struct capsa__zygote_kind *kinds,
                             unsigned nkinds, unsigned ns_wanted,
                             unsigned ns_required, bool empty_root,
                             int stderr_fd, int exe_fd, bool foreign,
                             rlim_t nproc_total);

// Forks a renderer of `kind` whose fd 3 is `channel_fd` (borrowed: the
// caller still closes its copy). On success *child holds the renderer's pidfd
// (owned by the caller) and pid, and the caller is its parent. When the kind
// keeps a spare, the spare is handed over instead: *channel_out is then the
// host end of the spare's channel (owned by the caller, to use instead of
// its own), else -1. *stderr_out is the read end of the renderer's own
// stderr pipe (owned by the caller; the renderer holds the write end as fd
// 2, and nothing else). Blocks for the zygote's answer (at most 5 s).
// Returns 0, -EINVAL, -EPIPE (zygote gone), -ETIMEDOUT, or the zygote's
// fork error.
int capsa__zygote_fork(capsa__zygote *z, unsigned kind, int channel_fd,
                       struct capsa_ns_child *child, int *channel_out,
                       int *stderr_out);

// Takes back the spares (kills and reaps them: they are the caller's
// children), closes the control socket (the zygote exits), reaps the zygote.
// Idempotent.
void capsa__zygote_stop(capsa__zygote *z);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_ZYGOTE_ZYGOTE_H_
