// libcapsa's embedding API: a broker on the caller's libuv loop that spawns,
// serves and supervises sandboxed renderer processes.
//
//   #include <capsa/capsa.h>
//   #include "thumb.capsa.h"  // generated from thumb.fbs (<capsa/interface.h>)
//
//   // The PNG to decode, filled and sealed beforehand (<capsa/shm.h>).
//   static capsa_shm_region_t png;
//
//   static void on_done(capsa_renderer_t *r, int status, capsa_msg_t *reply,
//                       void *arg) {
//     (void)arg;  // status < 0: -ETIMEDOUT, or -ECANCELED (the renderer ended)
//     if (status == 0) {  // verified, typed
//       const thumb_done_t *done = reply->u.iface.value;
//       printf("decoded: %d\n", done->status);
//     }
//     capsa_renderer_shutdown(r, 1000);
//   }
//   static void on_event(capsa_host_t *h, const capsa_host_event_t *ev) {
//     if (ev->type == CAPSA_EV_READY) {  // sandbox verified
//       thumb_decode_t q;                // your interface's
//       thumb_decode_init(&q);           // generated struct
//       capsa_msg_t m;
//       capsa_msg_init_iface(&m, &thumb_interface, THUMB_DECODE, &q);
//       capsa_rights_t ro;
//       capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R);
//       int fd = dup(png.fd);  // the request takes it; on error it is ours
//       q.png = capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_SHM, &ro, png.size,
//                                    false);
//       if (capsa_renderer_request(ev->renderer, &m, 5000, on_done, NULL) < 0)
//         close(fd);
//     } else if (ev->type == CAPSA_EV_MESSAGE) {  // ev->msg from renderer
//     } else if (ev->type == CAPSA_EV_CLOSED) {   // handle gone
//       capsa_host_close(h, NULL);
//     }
//   }
//   static const capsa_interface_t *const kSpeaks[] = {&thumb_interface};
//   static const capsa_renderer_handlers_t kThumb = {  // <capsa/renderer.h>
//       .kind = "thumb",
//       .interfaces = kSpeaks,
//       .ninterfaces = 1};
//   CAPSA_RENDERER_KIND(thumb, "thumb", capsa_renderer_main, &kThumb)
//
//   int main(int argc, char **argv) {
//     // First: the zygote runs here (<capsa/kind_registry.h>).
//     if (capsa_main(argc, argv) < 0) return 1;
//     capsa_host_t host;
//     capsa_host_options_t o;
//     capsa_host_options_init(&o);
//     if (capsa_host_init(uv_default_loop(), &host, &o, on_event) < 0)
//       return 1;
//     capsa_kind_options_t k;
//     capsa_kind_options_init(&k, "thumb", capsa_renderer_main,
//                             (void *)&kThumb);
//     k.interfaces = kSpeaks;  // what it speaks
//     k.ninterfaces = 1;
//     int thumb = capsa_host_define_kind(&host, &k);  // before start
//     capsa_renderer_t *r;
//     if (thumb < 0 || capsa_host_start(&host) < 0 ||  // execs the zygote
//         capsa_host_spawn(&host, thumb, NULL, &r) < 0)
//       return 1;
//     return uv_run(uv_default_loop(), UV_RUN_DEFAULT);
//   }
//
// Renderers are forked by the zygote (host/zygote.h), a fresh exec of this
// very binary when the embedder called capsa_main() and registered its
// kinds by name (host/kind_registry.h); otherwise capsa_host_start fails
// (-ENOEXEC), unless the option allow_forked_zygote accepts a fork of the
// host (reported by capsa_host_image()). Or, with the option renderer_exe,
// a fresh exec of a renderer executable of the embedder's (its own main(),
// its own libraries: a parser linked there is never mapped in the host),
// whose registered kinds the zygote reports back at start.
// Each is, before it reads its first byte: in new
// user/ipc/mount (empty read-only root)/net namespaces as available and in a
// pid namespace of its own, with every descriptor but its channel and
// its own stderr pipe closed, rlimited, in capability mode with its kind's
// policy. On HELLO the host checks from outside (/proc/PID/status Seccomp: 2,
// NoNewPrivs: 1, /proc/PID/ns/* against its own, and its user namespace
// against the zygote's where each renderer gets one of its own); a renderer
// that fails is killed (CAPSA_EV_SANDBOX_REFUSED), never served.
//
// Supervision: exit and crash (pidfd), hang (PING every heartbeat_ms; no PONG
// within heartbeat_timeout_ms: killed), resource limits (cgroup v2 where
// usable, rlimits otherwise; see "Resource limits" below), bad message
// (killed at once, never restarted), restart policy (crash/hang/limit/abort/
// request deadline up to max_restarts times per restart_window_ms, after a
// backoff). How an incarnation ended is exactly one event: EXITED, CRASHED,
// ABORTED, HUNG, LIMIT, BAD_MESSAGE, SANDBOX_REFUSED, KILLED (the host's
// own decision: capsa_renderer_kill / _restart, a request deadline, host
// close) or SHUTDOWN (a clean exit the host asked for). Requests still in
// flight are answered (-ECANCELED) before that event. Renderers are
// independent processes: one failing never touches another. Every event
// reaches the callback.
//
// Broker services answer RESOURCE_REQUEST from renderers whose kind allows
// them: "file:REL/PATH" (opened by the host beneath resource_dir with
// openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, O_NOFOLLOW, read-only
// handle; a regular file with one link only: resource_dir_fd),
// "font:regular|bold|mono" (read-only sealed shared memory), "dns:NAME"
// (uv_getaddrinfo, addresses as text). LOG messages become CAPSA_EV_LOG events.
//
// stderr: a renderer never holds the host's stderr (a terminal it could read
// from or chmod). Its fd 2 is a pipe of its own, which the host reads: each
// line (cut at 512 bytes) arrives as a CAPSA_EV_LOG event with status
// CAPSA_HOST_LOG_STDERR, escaped as LOG text is, charged to the kind's
// limit_log_bytes_per_second; what it wrote just before exiting arrives
// before its exit event.
#ifndef CAPSA_HOST_CAPSA_HOST_H_
#define CAPSA_HOST_CAPSA_HOST_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "ipc/message.h"
#include "ipc/uv_channel.h"
#include "sandbox/capmode.h"
#include "sandbox/namespaces.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef struct capsa_host capsa_host_t;
// A renderer as the host sees it. Owned by the host: valid until the
// CAPSA_EV_CLOSED event for it returns.
typedef struct capsa_host_renderer capsa_renderer_t;

// A renderer's main, run in the renderer process after capability mode
// (renderer/runtime.h's capsa_renderer_main has this signature).
typedef int (*capsa_renderer_entry_fn)(int channel_fd,
                                       const capsa_sandbox_report_t *sandbox,
                                       void *arg);

typedef enum capsa_host_event_type {
  CAPSA_EV_READY = 1,        // HELLO received, sandbox verified from outside
  CAPSA_EV_MESSAGE,          // ev->msg: a message for the embedder
  CAPSA_EV_LOG,              // ev->text (escaped: one printable line of
                             // valid UTF-8, < 1 KiB), ev->status = level
  CAPSA_EV_EXITED,           // ev->status = exit code
  CAPSA_EV_CRASHED,          // ev->signal; ev->crash_report
  CAPSA_EV_HUNG,             // missed heartbeat; killed
  CAPSA_EV_BAD_MESSAGE,      // ev->text = reason; killed, never restarted
  CAPSA_EV_SANDBOX_REFUSED,  // ev->text = what failed; killed
  CAPSA_EV_LIMIT,            // ev->text = which limit; ev->signal
  CAPSA_EV_RESTARTED,        // a new process replaces the dead one;
                             // ev->text "navigation" (capsa_renderer_
                             // navigate) or NULL (the restart policy)
  CAPSA_EV_SPAWN_FAILED,     // ev->status = -errno (restart failed)
  CAPSA_EV_CLOSED,           // last event of a renderer handle
  CAPSA_EV_KILLED,           // ev->text = why: the host killed it (SIGKILL)
  CAPSA_EV_SHUTDOWN,         // exited 0 after capsa_renderer_shutdown
  // abort() (glibc's "stack smashing detected", assert...): SIGABRT, or,
  // for a renderer that is pid 1 of its pid namespace (where SIGABRT's
  // default action is ignored), the zygote's handler's exit code.
  CAPSA_EV_ABORTED,  // ev->crash_report
} capsa_host_event_type_t;

// How a renderer crashed (CRASHED, ABORTED), from its own fatal-signal
// handler: installed in every renderer at its fork from the zygote, before
// capability mode, it writes a fixed-size record to the renderer's stderr
// pipe and lets the signal end the process. The host symbolises the frames
// with the symbol tables of the image the renderer runs (the file the zygote
// execs) and of the libraries the host itself has loaded by the same name.
// The renderer's word: a compromised renderer can forge its own report and
// nothing else. ev->signal (from waitid) is authoritative; a report is
// attached only when its signal agrees, else ev->crash_report is NULL (as
// when the renderer died before writing one, or reset the handler).
// Owned by the host: valid during the callback only; copy what you keep.
typedef struct capsa_crash_frame {
  uintptr_t pc;             // in the renderer's address space
  const char *module;       // file name, escaped ("": the image), or NULL
  uintptr_t module_offset;  // pc - that module's load bias
  const char *symbol;       // the function (not demangled), or NULL
  uintptr_t symbol_offset;  // pc - the function's start
} capsa_crash_frame_t;

typedef struct capsa_crash_report {
  int signal;             // the same as ev->signal
  int code;               // si_code
  const char *code_name;  // "FPE_INTDIV", "SEGV_MAPERR", "SI_TKILL"...
  uintptr_t address;      // si_addr for a fault; 0 for abort(), kill
  // The crashing thread: [0] where it stopped, then return addresses
  // (frame-pointer walk: code built without frame pointers is skipped; a
  // thread other than the renderer's first: [0] only).
  const capsa_crash_frame_t *frames;
  unsigned nframes;
  bool truncated;  // more frames than recorded (48)
  // [0] is in code without frame pointers (libc's abort, memcpy): [1] on
  // were found by scanning its stack for a frame record, which can skip a
  // caller or, rarely, start at a stale one.
  bool scanned;
  // One line: "SIGFPE (FPE_INTDIV) at 0x5581... in layout_line+0x1c <-
  // paint+0x40 <- ...", escaped.
  const char *summary;
} capsa_crash_report_t;

// What the host saw from outside (/proc) before serving a renderer.
typedef struct capsa_renderer_check {
  int seccomp_mode;      // /proc/PID/status Seccomp: (2 = filter)
  int no_new_privs;      // NoNewPrivs:
  unsigned ns_differ;    // CAPSA_NAMESPACE_* differing from the host's
  unsigned ns_expected;  // what the launcher applied
  // Seccomp_filters: (-1 when the kernel does not say, before Linux 5.9).
  // A renderer of a staged zygote inherits its filters: it must show at
  // least one more, its own final step (0 = not checked).
  int seccomp_filters;
  int filters_expected;
  // The oom_score_adj the host gave it at launch (1000: the OOM killer's
  // first choice, before the host), or -errno when it could not (the
  // renderer then keeps the host's; not a refusal).
  int oom_score_adj;
  bool ok;
  char why[128];  // when !ok
} capsa_renderer_check_t;

typedef struct capsa_host_event {
  capsa_host_event_type_t type;
  capsa_renderer_t *renderer;
  int status;
  int signal;
  const char *text;                          // borrowed, valid during callback
  capsa_msg_t *msg;                          // MESSAGE; as in ipc/uv_channel.h
  const capsa_sandbox_report_t *sandbox;     // READY: the renderer's own claim
  const capsa_renderer_check_t *check;       // READY, SANDBOX_REFUSED
  const capsa_crash_report_t *crash_report;  // CRASHED, ABORTED; or NULL
} capsa_host_event_t;

typedef void (*capsa_host_event_cb)(capsa_host_t *host,
                                    const capsa_host_event_t *ev);
typedef void (*capsa_host_close_cb)(capsa_host_t *host);

// Resource limits. The kind options limit_memory and limit_processes are
// enforced by a cgroup v2 per renderer (sandbox/cgroup.h: memory.max with
// memory.swap.max 0, pids.max) when the host can use one, else by rlimits
// (RLIMIT_AS, RLIMIT_NPROC); CPU time is RLIMIT_CPU per process and, on
// every heartbeat, the host's count of the whole process tree (host/limits/
// cpu_budget.c: the cgroup's cpu.stat, else /proc); descriptors always
// RLIMIT_NOFILE (no cgroup counts them). The renderer is moved into its cgroup
// when the zygote's fork returns, before the host reads its HELLO or sends it
// anything. Every limit reached is CAPSA_EV_LIMIT with ev->text naming it:
//   "cpu time (RLIMIT_CPU)"                      SIGXCPU / the zygote's code
//   "cpu time (process tree)"                    the heartbeat's tree count
//   "memory (cgroup memory.max)"                 memory.events oom_kill > 0
//   "processes (cgroup pids.max)"                pids.events max > 0 and the
//                                                renderer did not exit 0
//   "memory (RLIMIT_AS; reported by the renderer)"  exit code
//       CAPSA_HOST_EXIT_NOMEM of a kind with limit_memory: under rlimits the
//       kernel leaves the host no evidence (the renderer's mmap just fails),
//       so this is the renderer's own word, and it only ever classifies that
//       renderer's own exit. Under cgroup v2 the evidence is the kernel's.
//   "log budget: ...", "queue budget: ...", "broker budget: ..."  the
//       host's own budgets (see capsa_kind_options_t), the renderer killed.
// What rlimits do not hold (where no cgroup v2 controller is usable):
// RLIMIT_AS does not count memfd / shmem pages, so each process also gets
// RLIMIT_FSIZE = limit_memory / limit_open_files (SIGXFSZ ignored: a memfd
// grown past it fails with EFBIG) — shared memory then stays within about
// limit_memory per process (measured: 26 memfds held 54.5 MB under a 64 MiB
// limit), but a tree of P processes may hold P times that; RLIMIT_NOFILE is
// per process; RLIMIT_NPROC is per user namespace and uid (see
// limit_processes). The tree's
// CPU is counted by the host (above), up to one heartbeat late.
// capsa_host_limits_summary() says which mechanism is in use and why.
// Whatever holds them, every renderer starts with oom_score_adj 1000 (set
// by the host at launch; its children inherit it): under memory pressure
// the kernel kills a renderer before the host (capsa_renderer_check_t
// oom_score_adj says whether that was possible).
typedef enum capsa_cgroup_use {
  CAPSA_CGROUPS_AUTO = 0,  // cgroup v2 when usable, else rlimits (reported)
  CAPSA_CGROUPS_OFF,       // rlimits only
  // Every renderer in its own cgroup; capsa_host_start fails (the errno of
  // sandbox/cgroup.h's capsa_cgroup_parent_prepare: EOPNOTSUPP, EACCES,
  // EBUSY, ENOENT...) when that is not possible: never silently weaker.
  CAPSA_CGROUPS_REQUIRED,
} capsa_cgroup_use_t;

// Exit code of a renderer whose handler ran out of memory (renderer/runtime.h
// CAPSA_RENDERER_EXIT_NOMEM; renderers with their own main may use it).
#define CAPSA_HOST_EXIT_NOMEM 6

// ev->status of a CAPSA_EV_LOG event that is a line the renderer wrote to
// its stderr (LOG messages carry CAPSA_LOG_DEBUG..ERROR).
#define CAPSA_HOST_LOG_STDERR 16

typedef struct capsa_host_options {
  unsigned namespaces_wanted;    // CAPSA_NAMESPACE_*; default ALL
  unsigned namespaces_required;  // default 0 (best effort, reported)
  bool empty_root;               // default true
  // Font files the broker serves as "font:regular|bold|mono" (paths, read by
  // the host at start; NULL: none).
  const char *font_regular, *font_bold, *font_mono;
  capsa_cgroup_use_t cgroups;  // default CAPSA_CGROUPS_AUTO
  // Directory (borrowed path) of a cgroup v2 the renderers' cgroups are made
  // in: delegated to this process and holding no process itself (the "no
  // internal processes" rule). NULL: the host's own cgroup, usable only when
  // it is the hierarchy's root or already has the controllers enabled.
  const char *cgroup_parent;
  // capsa_host_start refuses (-ENOEXEC, capsa_host_start_error() says
  // why) unless renderers can descend from a fresh exec of this binary:
  // capsa_main() was called first in main() and every kind is registered
  // by name (CAPSA_RENDERER_KIND). So a binary that forgets the hook or a
  // registration fails loudly at start. true (default false: a zeroed
  // struct is the safe choice) lets the zygote be a fork of this process
  // instead — a copy of its heap, env, argv and mappings that every
  // renderer then starts with — reported by capsa_host_image(). Only for
  // tests and kinds whose entry is not static.
  bool allow_forked_zygote;
  // Processes and threads of all renderers together (every tree, spares
  // and the zygote included): the zygote's RLIMIT_NPROC, which each
  // renderer's own user namespace records as its ceiling when it is made,
  // and which the zygote's forks meet too. Each kind's limit_processes holds
  // per renderer below it. Past it a renderer's fork or thread fails with
  // EAGAIN and a spawn fails (CAPSA_EV_SPAWN_FAILED / -EAGAIN); the host's
  // own processes are not counted (a host whose uid the renderers share
  // keeps its headroom for threads: this is a part of its own RLIMIT_NPROC,
  // never more). 0: the default, 4096; CAPSA_LIMIT_NONE: the host's own
  // RLIMIT_NPROC, inherited.
  uint64_t limit_renderer_processes;
  // A renderer executable of its own (path, borrowed: read by
  // capsa_host_start only; NULL: the default, a fresh exec of this binary).
  // Why: the zygote image maps every library its binary links. A host whose
  // renderers parse with libpng or libjpeg would otherwise link those
  // parsers into the trusted process; with renderer_exe only the renderer
  // executable links them, and the host links libcapsa (+libuv) alone.
  // The executable registers its kinds with CAPSA_RENDERER_KIND and calls
  // capsa_main(argc, argv) first in its main() (host/kind_registry.h); the
  // zygote is a fresh exec of it (argv "capsa-zygote", empty environment,
  // no_new_privs set before the exec) and every renderer a fork of that.
  // capsa_host_start opens it once (O_RDONLY | O_CLOEXEC; the host holds
  // the descriptor until capsa_host_close, so a replaced zygote execs the
  // same file whatever becomes of the path) and fails before starting
  // anything, with capsa_host_start_error() naming the option and the path,
  // when it is not a regular file (-EACCES, -EISDIR), not executable by
  // this process (-EACCES, also on a noexec mount), set-user-ID or
  // set-group-ID (-EPERM: renderers never gain privileges), or not ELF
  // (-ENOEXEC: a script cannot be exec'd from a descriptor); open's own
  // errno otherwise (-ENOENT...). Then the zygote reports which kind names
  // the executable registers, and a defined kind it lacks fails the start
  // with -ENOENT: "kind 'jpeg' is not registered in renderer_exe
  // '/usr/libexec/app/renderer' (it registers: png)". An executable that
  // does not answer as a zygote (its main() does not call capsa_main()
  // first, or it is built against another capsa) fails with -EPROTO (or
  // -ETIMEDOUT after 5 s) and says so.
  // With renderer_exe, kinds are defined by name only: main and arg of
  // capsa_kind_options_t must be NULL (-EINVAL otherwise: the entry is the
  // executable's registration, and a function pointer of the host's means
  // nothing in its image), the host need not call capsa_main() nor
  // register anything, and allow_forked_zygote has no effect (there is
  // nothing to fork the kinds from). capsa_host_image() is "exec: PATH".
  const char *renderer_exe;
  // Renderers forked from one zygote share what its exec drew at random:
  // the stack canary and pointer guard (from AT_RANDOM) and the address of
  // every mapping (binary, libraries, heap, stack), across kinds, which an
  // exploit of one renderer can use against a sibling (docs/DESIGN.md,
  // "What renderers share"). With N > 0 the host replaces the zygote with a
  // fresh exec once it has forked N renderers, before the next spawn: at
  // most N renderers share a canary and a layout (1: none do, an exec per
  // renderer). The replacement costs that spawn the zygote's start (an
  // exec, the kinds' policies compiled again; `capsa bench spawn` measures
  // it); its spares are discarded with it. 0 (the default): one zygote for
  // the host's life. Needs an exec'd zygote (capsa_main() or renderer_exe):
  // capsa_host_start fails with -EINVAL, naming this option, when the
  // zygote would be a fork of the host (allow_forked_zygote), which always
  // has the host's canary and layout.
  unsigned zygote_renew_after;
} capsa_host_options_t;

void capsa_host_options_init(capsa_host_options_t *o);

// A kind's limit that is explicitly no limit (see capsa_kind_options_t).
#define CAPSA_LIMIT_NONE UINT64_MAX
// capsa_kind_options_t.warm_up_fds: at most this many.
#define CAPSA_WARM_UP_MAX_FDS 4

typedef struct capsa_kind_options {
  const char *name;  // borrowed; must outlive the host
  // The entry and its argument (passed to main, in the renderer). Both NULL
  // with the host option renderer_exe: the kind is then the executable's
  // registration of `name`.
  capsa_renderer_entry_fn main;
  void *arg;
  // Extra syscalls etc. for this kind (borrowed, not yet compiled; the zygote
  // compiles its copy). NULL: the default capability-mode policy.
  capsa_capmode_policy *capmode;
  // Testing only: run this kind without capability mode. The host's outside
  // check then refuses it: nothing silently weakens.
  bool no_capmode;
  // Default true. false: renderers share the host's pid namespace; each is
  // then the leader of its own process group (setsid at fork) and, when it
  // ends, the host kills that group before reaping it, so a descendant that
  // stayed in the group cannot outlive it, and reaps the renderer's
  // CLONE_PARENT children (they are the host's; with exit signal 0 no
  // SIGCHLD tells anyone). Absent then: a descendant that left the group
  // (setsid, setpgid(0, 0): capability mode allows both) outlives the
  // renderer; only a pid namespace (or a cgroup, see cgroups) holds it.
  bool pid_namespace;
  // Limits (see "Resource limits" above). Every kind has finite ones:
  // capsa_kind_options_init sets the defaults below, and a field left 0 (a
  // zero-initialised struct) means that default too, never "none". No limit
  // is the explicit choice CAPSA_LIMIT_NONE.
  //   limit_memory       1 GiB   cgroup memory.max, else RLIMIT_AS plus
  //                               RLIMIT_FSIZE for memfds (see above).
  //                               RLIMIT_AS is not applied when a sanitizer
  //                               runtime that reserves address space
  //                               (ASan, MSan, TSan, HWASan, LSan) is in
  //                               the process, decided at run time: an
  //                               embedder built with -fsanitize=address
  //                               on the SDK's uninstrumented libcapsa
  //                               needs no CAPSA_LIMIT_NONE for its
  //                               renderers to start. Memory is then held
  //                               only by a memory cgroup (RLIMIT_FSIZE
  //                               still bounds memfds), and
  //                               capsa_host_limits_summary() says so
  //                               ("; RLIMIT_AS not applied
  //                               (AddressSanitizer runtime in this
  //                               process): ...").
  //   limit_cpu_seconds  300     over the incarnation's life: RLIMIT_CPU per
  //                               process, and the whole tree counted on
  //                               each heartbeat (CAPSA_EV_LIMIT "cpu time
  //                               (process tree)"). A long-lived worker
  //                               meets it eventually: recycle it first
  //                               (host/capsa_pool.h recycle_after_cpu_ms).
  //   limit_open_files   64      RLIMIT_NOFILE (always).
  //   limit_processes    128     cgroup pids.max (this renderer's tree),
  //                               else RLIMIT_NPROC, which the kernel counts
  //                               per user namespace and uid: each renderer
  //                               gets a user namespace of its own (nested,
  //                               unmapped), so the count is its own tree's
  //                               (processes and threads). Where the zygote
  //                               cannot make one (no user namespaces, or
  //                               user.max_user_namespaces reached) it is one
  //                               count for every renderer, and without any
  //                               user namespace for every process of that
  //                               uid, not enforced for uid 0.
  //                               capsa_host_limits_summary() says which
  //                               ("; processes per renderer ...").
  //   limit_broker_requests  4   "dns:" lookups of this renderer in flight;
  //                               one more: killed, CAPSA_EV_LIMIT "broker
  //                               budget: more than N dns lookups in flight"
  //                               (file: and font: are answered at once).
  //   limit_queued_fds   32      descriptors the host holds queued toward
  //   limit_queued_bytes 256 KiB  this renderer (answers it has not read);
  //                               past either: killed, CAPSA_EV_LIMIT "queue
  //                               budget: more than N descriptors queued" /
  //                               "... bytes queued". Descriptors count until
  //                               the renderer has read them, also those
  //                               already in its socket: the kernel holds
  //                               those for the host's user, at most
  //                               RLIMIT_NOFILE of them for all renderers
  //                               (capsa_channel_inflight_fds). All
  //                               renderers' together: at most 256; past
  //                               that, a renderer with answers unread gets
  //                               -EBUSY for a descriptor.
  //   limit_log_bytes_per_second 64 KiB
  //                               LOG text (+32 bytes per message), with a
  //                               burst of one second's worth; past it:
  //                               killed, CAPSA_EV_LIMIT "log budget: more
  //                               than N bytes per second". Nothing is
  //                               dropped silently.
  // Budgets of the host as a whole (not per kind): 16 dns lookups in flight
  // (beyond: answered -EBUSY at once), 256 queued descriptors (an answer
  // that would queue past it is -EBUSY; a renderer whose queue is empty is
  // always served) and capsa_host_options_t.limit_renderer_processes.
  uint64_t limit_memory;       // bytes
  uint64_t limit_cpu_seconds;  // seconds of CPU, per process
  uint64_t limit_open_files;   // descriptors
  uint64_t limit_processes;
  uint64_t limit_broker_requests;
  uint64_t limit_queued_fds;
  uint64_t limit_queued_bytes;
  uint64_t limit_log_bytes_per_second;
  // Share of the host loop's time (percent) that handling what one renderer
  // sends unasked may take (its LOG, events, broker and interface requests,
  // with the embedder's callbacks; not the answers to the host's own
  // requests), in bursts of at most percent x 0.4 ms (ipc/uv_channel.h
  // max_busy_percent). Past it the host stops reading from that renderer
  // for at least 1 ms (libuv timers count milliseconds, so a flooder gets
  // about 4% of the loop at the default 10): it is slowed, never killed,
  // and nothing it sent is lost (its sends block). Why: one renderer
  // flooding cheap messages within its budgets otherwise keeps the host
  // busy on one core and itself on the other, and on a small machine its
  // siblings wait a scheduler slice for a core to answer at all (capsa
  // bench host: their PING p99 went from 5.7-6.3x to 1.43-1.97x here,
  // nine runs). Default 10; 100: no cap (0: the default; above 100:
  // -EINVAL). k flooding renderers together take up to k times the share.
  // What it misses: a message whose callback alone costs more than a burst
  // is charged one burst (so that one slow callback never rests a renderer
  // for long), so such messages are only spaced 1-2 ms apart; what the
  // embedder's own handlers cost per message is theirs to bound.
  unsigned host_share_percent;
  unsigned heartbeat_ms;          // 0: no watchdog (default 1000)
  unsigned heartbeat_timeout_ms;  // default 5000
  // A PING that times out while the host rested the renderer's channel (its
  // share above) does not count: its PONG may wait, unread, behind what it
  // sent. It is asked again; once the host has read everything it sent,
  // the heartbeat judges it as any other.
  // A request the host sent (capsa_renderer_request) with a timeout is
  // work in progress: while one is outstanding, a missing PONG is not a
  // hang (the renderer answers PING between messages) — the request's own
  // deadline judges it. When that deadline passes the renderer is killed
  // (CAPSA_EV_KILLED "request deadline") and restarted per the policy
  // below, unless keep_on_request_timeout (the callback then just gets
  // -ETIMEDOUT and a late reply is dropped).
  bool keep_on_request_timeout;  // default false
  // Restarts: at most max_restarts within any restart_window_ms (0: over
  // the handle's whole life), each after a backoff that starts at
  // restart_backoff_ms and doubles per restart in the window (capped at
  // 30 s; 0: at once). A SHUTDOWN, a kill by capsa_renderer_kill, an exit
  // with status 0, a bad message or a refused sandbox is never restarted.
  unsigned max_restarts;        // default 0
  unsigned restart_window_ms;   // default 0
  unsigned restart_backoff_ms;  // default 0
  // Keep one renderer of this kind forked ahead by the zygote, already in
  // capability mode and waiting on its channel: a spawn then only hands it
  // over (and the zygote forks the next). Costs one idle process. A spare
  // runs its start (capsa_renderer_main's on_start) when it is forked, not
  // when claimed: work done there is done ahead, but a capsa_rctx_call in
  // on_start waits for the claim with its timeout running. What every
  // renderer of the kind needs belongs in a warm-up (CAPSA_RENDERER_WARM_UP,
  // <capsa/kind_registry.h>), what one incarnation needs in on_message.
  bool keep_spare;
  // Broker: directory (borrowed, must stay open) beneath which "file:" may
  // open; -1: none. Answers a renderer does not read wait in the host's
  // queue toward it, each file pinning a host descriptor: see
  // limit_queued_fds. Only regular files with one link are served; one
  // with more (st_nlink > 1) is answered -EMLINK: a hard link beneath the
  // directory may name an inode outside it, which RESOLVE_BENEATH (a check
  // of the path) cannot see. Put copies in the directory, not hard links
  // (a reflink copy, cp --reflink=auto, costs no space where the file
  // system has them).
  int resource_dir_fd;
  bool allow_fonts;
  // "dns:NAME" through the host's resolver, within limit_broker_requests;
  // a dead renderer's lookups not yet started are cancelled, running ones
  // are dropped when they finish. Note it is an exfiltration channel: the
  // name itself reaches the resolver (and the network behind it), so grant
  // it only to kinds that may talk to the outside that way.
  bool allow_dns;
  // The embedder interfaces this kind speaks (ipc/interface.h,
  // docs/interfaces.md): borrowed generated descriptors (static), in the
  // order the renderer's handlers list them (renderer/runtime.h); HELLO must
  // carry the same list at the same version (else CAPSA_EV_BAD_MESSAGE,
  // never restarted). Their messages arrive as CAPSA_EV_MESSAGE with
  // ev->msg->type CAPSA_MSG_INTERFACE, verified against the schema and
  // decoded (ev->msg->u.iface.value is the generated struct); a message that
  // breaks the schema kills its sender (CAPSA_EV_BAD_MESSAGE with the
  // reason). Send with capsa_msg_init_iface() and capsa_renderer_send /
  // _request / _reply; a reply callback gets the typed response the same way.
  const struct capsa_interface *const *interfaces;
  unsigned ninterfaces;  // <= CAPSA_IFACE_MAX_PER_CHANNEL (8)
  // What the kind's warm-up reads in the zygote (CAPSA_RENDERER_WARM_UP,
  // host/kind_registry.h), e.g. its fonts: borrowed descriptors, open until
  // capsa_host_close (each zygote the host starts gets its own copies, and
  // closes them once the warm-up returned: renderers never hold them).
  // Default none.
  int warm_up_fds[CAPSA_WARM_UP_MAX_FDS];
  unsigned nwarm_up_fds;  // <= CAPSA_WARM_UP_MAX_FDS
} capsa_kind_options_t;

void capsa_kind_options_init(capsa_kind_options_t *k, const char *name,
                             capsa_renderer_entry_fn main, void *arg);

struct capsa_host {
  void *data;                     // for the embedder
  struct capsa__host_impl *impl;  // private
};

// Binds a host to `loop` (borrowed; must outlive the host). `opts` is copied
// (NULL: defaults). Returns 0, -EINVAL, -ENOMEM.
int capsa_host_init(uv_loop_t *loop, capsa_host_t *host,
                    const capsa_host_options_t *opts, capsa_host_event_cb cb);

// Adds a renderer kind (copied). Only before capsa_host_start. Returns the
// kind id (>= 0), -EBUSY after start, -ENOSPC, -EINVAL, or -ENOENT when
// k->name is registered (CAPSA_RENDERER_KIND, host/kind_registry.h) with
// another main or arg (capsa_host_start_error() then says so). With the
// option renderer_exe: -EINVAL unless main and arg are NULL (said by
// capsa_host_start_error()); whether the executable registers the name is
// known at capsa_host_start.
int capsa_host_define_kind(capsa_host_t *host, const capsa_kind_options_t *k);

// Probes the kernel, starts the zygote (which compiles each kind's policy).
// Call early, while the process has no other threads. 0 or -errno: -EPERM
// when a namespace in namespaces_required is refused here (nothing is
// started then); capsa_host_start_error() says which and why. -ESRCH when
// /proc is of another pid namespace (a container's pid namespace without
// its own /proc: /proc/<pid> would name other processes), -ENOENT when /proc
// is not mounted; the start error says so and how to mount it.
// In a process that is pid 1 of its pid namespace or a child subreaper, the
// host also reaps the zombies it adopts from its renderers and zygotes (see
// README, "Inside containers": never a child of the embedder's own), woken
// by a libuv SIGCHLD watcher on the loop: as with uv_spawn, an embedder's
// own SIGCHLD handler is then libuv's to share (use uv_signal_t). With
// renderer_exe also what its comment lists (the file refused, a kind it
// does not register, an executable that is no zygote).
int capsa_host_start(capsa_host_t *host);

// Why the last capsa_host_start failed, one line owned by the host ("" when
// it did not): for missing required namespaces each with the kernel's errno
// and the sysctl that explains it, "required namespaces refused:
// user=no(ENOSPC:max_user_namespaces=0) pid=no(EPERM:no-userns)"; else the
// step and its error ("zygote: Operation not permitted").
const char *capsa_host_start_error(const capsa_host_t *host);

// What renderers descend from, after capsa_host_start: "exec" (a fresh
// image of this binary: host/kind_registry.h), "exec: PATH" (the option
// renderer_exe, PATH as given, cut at 128 bytes) or, downgraded, "fork: " and
// why ("capsa_main() was not called", "kind 'x' is not registered with
// CAPSA_RENDERER_KIND"). Owned by the host; "" before start.
const char *capsa_host_image(const capsa_host_t *host);

// Starts a renderer of `kind`. On success *out is the handle (owned by the
// host) and events follow: READY, or a failure event, then eventually
// CLOSED. `data` is stored in the handle. Returns 0, -EINVAL, -EAGAIN (not
// started), or the launcher's error (no event then).
int capsa_host_spawn(capsa_host_t *host, int kind, void *data,
                     capsa_renderer_t **out);

// Sends to a READY renderer. Ownership of msg's descriptors as
// capsa_channel_send. -ENOTCONN when not (or no longer) ready. Shared
// memory: make a region with ipc/shm.h (capsa_shm_create; CREATOR_WRITES
// for data the renderer may only read, PEER_WRITES for a frame it draws
// into) and attach a dup of its fd with capsa_msg_add_handle().
int capsa_renderer_send(capsa_renderer_t *r, capsa_msg_t *msg);

// A request's outcome: `reply` (borrowed, valid during the call) with
// status 0, or NULL with -ETIMEDOUT (timeout_ms passed) or -ECANCELED (the
// renderer died or the host is closing: called before the event that
// reports why). `r` is the renderer the request went to; it stays valid
// during the call (it may already be restarting).
typedef void (*capsa_renderer_reply_cb)(capsa_renderer_t *r, int status,
                                        capsa_msg_t *reply, void *arg);
// Sends `msg` as a request (ownership as capsa_renderer_send) and calls
// `cb` exactly once, unless this returns < 0: -EINVAL, -ENOTCONN (not
// ready), -ENOMEM, -EAGAIN (too many outstanding), or the channel's error.
// timeout_ms 0: no deadline (the heartbeat still judges the renderer).
int capsa_renderer_request(capsa_renderer_t *r, capsa_msg_t *msg,
                           uint64_t timeout_ms, capsa_renderer_reply_cb cb,
                           void *arg);
// Answers a request the renderer sent (ev->msg of a MESSAGE event, or a
// copy of that capsa_msg_t kept to answer later: keep `origin`). The answer
// is bound to the incarnation that asked: once the renderer has been
// restarted (capsa_renderer_restart, a crash, a request deadline...) it is
// refused with -ESTALE and never sent, since the next incarnation numbers
// its requests from 1 again and would take it for the answer to its own.
// Each request is answered once: -ENOENT for one already answered (or
// never made by this renderer; a capsa_msg_t no channel delivered, origin
// 0, is -ESTALE). -ESTALE also once the incarnation that
// asked is ending (killed, restarting, exited): nothing reaches it now.
int capsa_renderer_reply(capsa_renderer_t *r, const capsa_msg_t *request,
                         capsa_msg_t *reply);
// Why the last capsa_renderer_send / _request / _reply to `r` failed, one
// line owned by the handle ("handle 0: a FIFO, not a regular file: ..."),
// or "" when it went. Valid until the next send to `r`.
const char *capsa_renderer_send_error(const capsa_renderer_t *r);

// Kills the renderer (SIGKILL through its pidfd) and does not restart it:
// CAPSA_EV_KILLED "killed by the host" now, then CLOSED. 0, or -ESRCH when
// it is already gone (its last events are on their way).
int capsa_renderer_kill(capsa_renderer_t *r);
// What the schema cannot check is the embedder's to check (a geometry
// against the region it gave, an id it never issued): a message that breaks
// such a rule is a bad message, as one the channel refuses. Kills the
// renderer as the channel would: CAPSA_EV_BAD_MESSAGE with `reason`
// (borrowed, copied into the event's text; NULL: "bad message"), never
// restarted, then CLOSED. 0, or -ESRCH when it is already ending, -EINVAL.
int capsa_renderer_report_bad_message(capsa_renderer_t *r, const char *reason);
// The same, but the kind's restart policy applies ("abort this job"):
// CAPSA_EV_KILLED "restart requested", then RESTARTED (or CLOSED when the
// policy allows no more). 0 or -ESRCH.
int capsa_renderer_restart(capsa_renderer_t *r);
// Navigation or reload: a new incarnation in place of the current one, the
// embedder's decision and not a failure. CAPSA_EV_KILLED "navigation" (or,
// when it was already ending — a CRASHED being reported, a backoff — how
// it ended, as it was), then RESTARTED with text "navigation" as soon as
// the old process is gone: no backoff, not counted against max_restarts
// (capsa_renderer_navigations counts them). The old incarnation is cut off
// when this returns: nothing more of it reaches the embedder (its
// messages are no longer read, the requests it was asked are answered
// -ECANCELED first, answers to what it asked are refused -ESTALE).
// With keep_spare the next incarnation is the kind's pre-forked spare.
// 0; -ESRCH when the handle is ending for good (killed, shut down, a bad
// message, a refused sandbox, the policy's last CLOSED, the host closing):
// spawn a new one; -EINVAL.
int capsa_renderer_navigate(capsa_renderer_t *r);
// Asks the renderer to exit (CAPSA_MSG_SHUTDOWN): exiting 0 within
// timeout_ms is CAPSA_EV_SHUTDOWN; otherwise it is killed (CAPSA_EV_KILLED
// "no exit within the shutdown timeout"). Never restarted. 0, -ENOTCONN
// (not ready), -EINVAL, or the channel's error.
int capsa_renderer_shutdown(capsa_renderer_t *r, uint64_t timeout_ms);

void *capsa_renderer_get_data(const capsa_renderer_t *r);
void capsa_renderer_set_data(capsa_renderer_t *r, void *data);
pid_t capsa_renderer_pid(const capsa_renderer_t *r);  // host's pid namespace
int capsa_renderer_kind(const capsa_renderer_t *r);
unsigned capsa_renderer_restarts(const capsa_renderer_t *r);
unsigned capsa_renderer_navigations(const capsa_renderer_t *r);

// Checks a process from outside as the host does on HELLO. `expect_ns` is
// the CAPSA_NAMESPACE_* set that must differ. Returns 0 (see out->ok) or
// -errno when /proc cannot be read.
int capsa_renderer_check_pid(pid_t pid, unsigned expect_ns,
                             capsa_renderer_check_t *out);

// What the launcher gives renderers here, one line ("user=yes pid=yes ...
// root=empty-ro fds=closed uid0->65534 landlock=abi7 zygote=capmode-stage";
// refusals with their errno and reason as capsa_ns_report_format says:
// "user=no(ENOSPC:max_user_namespaces=0) ... uid=0(unmapped)", and
// "landlock=no(kernel)" without Landlock): the namespaces, Landlock, and what
// the zygote holds itself to - the kinds' capability-mode stage (one policy
// serves every kind), else the capability-mode baseline (what no policy may
// ever allow; "zygote=baseline(N refused)"), else nothing
// ("zygote=no-filter": the kernel does not report seccomp filter counts, so
// the host could not tell a renderer's own filter from an inherited one).
// Valid after start.
int capsa_host_sandbox_summary(const capsa_host_t *host, char *buf, size_t len);
// How renderer limits are enforced, one line: "limits: cgroup v2 (DIR:
// memory,pids)" or "limits: rlimits (cgroup v2: WHY NOT); processes per
// renderer (own user namespace)" — or, where renderers cannot have a user
// namespace each, "...; processes one count for all renderers (no user
// namespace each: ENOSPC)" (or "(no user namespace)": the host's namespaces
// are off or refused; "(the kernel counts per uid)": before Linux 5.14). With
// a sanitizer runtime in the process, where RLIMIT_AS would have held a kind
// (see limit_memory): "...; RLIMIT_AS not applied (AddressSanitizer runtime
// in this process): renderer memory not limited (memfds still by
// RLIMIT_FSIZE)". Valid after start; returns the length (as snprintf) or
// -EINVAL / -EAGAIN.
int capsa_host_limits_summary(const capsa_host_t *host, char *buf, size_t len);
// The zygote's pid (host's pid namespace), -1 before start; and how many
// times a dead or wedged zygote was replaced (on the next spawn).
pid_t capsa_host_zygote_pid(const capsa_host_t *host);
unsigned capsa_host_zygote_restarts(const capsa_host_t *host);

// The capability-mode report of `kind` as compiled in the zygote.
int capsa_host_kind_report(const capsa_host_t *host, int kind,
                           struct capsa_capmode_report *out);

// --- Task manager: the host's processes, as `top` would list them ----------
// (host/task_manager.c). One call takes a snapshot: every renderer handle,
// the zygote and the spares it forked ahead (kinds with keep_spare), each
// with its pid, kind, state, age, restarts, memory and CPU time, read from
// /proc on the caller's thread (a few small reads per process, plus one
// scan of /proc when a kind keeps a spare). A process whose files cannot be
// read is still listed, with what could be read and why not (`err`, the
// figures' sources): one unreadable renderer never fails the listing.
//
//   static void print_tasks(capsa_host_t *host) {
//     capsa_renderer_info_t info[16];
//     int n = capsa_host_renderer_info(host, info, 16);  // may be > 16
//     for (int i = 0; i < n && i < 16; i++)
//       printf("%d %s %s uss=%llu(%s) cpu=%llu us\n", (int)info[i].pid,
//              info[i].kind_name ? info[i].kind_name : "?",
//              capsa_rinfo_state_name(info[i].state),
//              (unsigned long long)info[i].uss_bytes,
//              capsa_mem_source_name(info[i].uss_source),
//              (unsigned long long)info[i].cpu_usec);
//   }

typedef enum capsa_rinfo_role {
  CAPSA_RINFO_RENDERER = 0,  // a renderer handle (capsa_host_spawn)
  // Forked ahead by the zygote for a kind with keep_spare, not claimed yet.
  // The host learns a spare's pid only when it claims it, so spares are
  // found in /proc: the host's children (the zygote forks with
  // CLONE_PARENT) that are no handle's and not the zygote, alive, and in
  // seccomp filter mode with no_new_privs (capability mode) — which the
  // embedder's own children are not unless it sandboxes them too. A second
  // host in the same process with spares of its own would see those also.
  CAPSA_RINFO_SPARE,
  CAPSA_RINFO_ZYGOTE,  // the process renderers are forked from
} capsa_rinfo_role_t;

typedef enum capsa_rinfo_state {
  CAPSA_RINFO_STARTING = 0,  // forked; its HELLO not yet received and checked
  CAPSA_RINFO_READY,         // checked from outside, serving
  // Killed, exiting or exited (its last messages being drained): the event
  // that says how it ended, then RESTARTED or CLOSED, is on its way. The
  // process may already be gone (pid then names the one that was).
  CAPSA_RINFO_ENDING,
  // Between incarnations, waiting out the restart backoff: no process
  // (pid -1, no figures).
  CAPSA_RINFO_RESTARTING,
  CAPSA_RINFO_IDLE,  // a spare or the zygote: running, serving no one
} capsa_rinfo_state_t;

// Where a memory figure comes from, best first.
typedef enum capsa_mem_source {
  CAPSA_MEM_NONE = 0,  // not readable: the figure is 0
  // /proc/PID/smaps_rollup: USS = Private_Clean + Private_Dirty, PSS = Pss,
  // exact. Needs ptrace-read access to the process (root, or the same uid
  // and a dumpable process or one in a user namespace the host owns).
  CAPSA_MEM_SMAPS_ROLLUP,
  // memory.current of the renderer's own cgroup (limits under cgroup v2):
  // its whole process tree, page cache and kernel memory charged to it
  // included. For USS only.
  CAPSA_MEM_CGROUP,
  // /proc/PID/statm resident minus shared pages (its anonymous pages;
  // readable by anyone). Close to USS; a shared-memory region it mapped
  // counts as shared, not private. For USS only.
  CAPSA_MEM_STATM,
} capsa_mem_source_t;

typedef struct capsa_renderer_info {
  capsa_rinfo_role_t role;
  capsa_rinfo_state_t state;
  // RENDERER: the handle (owned by the host; valid until its
  // CAPSA_EV_CLOSED event returns, so only until the caller next runs the
  // loop, for certain). NULL for a spare or the zygote.
  capsa_renderer_t *renderer;
  pid_t pid;  // host's pid namespace; -1 while RESTARTING
  // The kind id, and its name: the string given to capsa_kind_options_init
  // (borrowed by the host from the embedder, so valid as long as the
  // embedder keeps it) or "zygote" (static). A spare's kind is known when
  // one kind only keeps a spare; else kind -1 and kind_name NULL.
  int kind;
  const char *kind_name;
  unsigned restarts;   // RENDERER: restarts so far (capsa_renderer_restarts)
  uint64_t uptime_ms;  // this process's age (its start time in /proc)
  // User + system time of this process (its threads included, its children
  // not), /proc/PID/stat utime + stime.
  uint64_t cpu_usec;
  uint64_t uss_bytes;  // memory only it holds: see uss_source
  capsa_mem_source_t uss_source;
  uint64_t pss_bytes;  // proportional share: smaps_rollup only
  capsa_mem_source_t pss_source;
  // 0, or -errno of /proc/PID/stat (uptime and CPU time then 0): -ESRCH for
  // a process that ended meanwhile (state ENDING soon follows).
  int err;
} capsa_renderer_info_t;

// Fills out[0..n-1] (caller-owned; may be NULL when n is 0) with the zygote
// (when running) first, then the renderer handles in spawn order, then the
// spares. Returns how many there
// are, which may be more than n (as snprintf: call again with room for all), 0
// before capsa_host_start, or -EINVAL (host NULL or not initialised, out NULL
// with n > 0). Pointers in the entries are borrowed as each field says; nothing
// is allocated.
int capsa_host_renderer_info(const capsa_host_t *host,
                             capsa_renderer_info_t *out, size_t n);
// "starting", "ready", "ending", "restarting", "idle"; "?" otherwise. Static.
const char *capsa_rinfo_state_name(capsa_rinfo_state_t s);
// "smaps_rollup", "cgroup", "statm", "none"; "?" otherwise. Static.
const char *capsa_mem_source_name(capsa_mem_source_t s);

// Kills every renderer (each still gets CAPSA_EV_KILLED "host closing",
// unless it had already ended, and CLOSED; outstanding requests get
// -ECANCELED first), stops
// the zygote and closes the host's handles; `cb` (may be NULL) runs from the
// loop once everything is closed. The loop can then finish.
// Whether the kind's warm-up (CAPSA_RENDERER_WARM_UP, host/kind_registry.h)
// ran in the current zygote: CAPSA_WARM_UP_DONE, CAPSA_WARM_UP_NONE (none
// registered for its name), CAPSA_WARM_UP_NOT_RUN (a forked zygote runs
// none); -EINVAL before capsa_host_start or for an unknown kind. A warm-up
// that failed failed the start (capsa_host_start_error says why).
#define CAPSA_WARM_UP_NONE 0
#define CAPSA_WARM_UP_DONE 1
#define CAPSA_WARM_UP_NOT_RUN 2
int capsa_host_kind_warm_up(const capsa_host_t *host, int kind);

void capsa_host_close(capsa_host_t *host, capsa_host_close_cb cb);

const char *capsa_host_event_name(capsa_host_event_type_t t);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_CAPSA_HOST_H_
