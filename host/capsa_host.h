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
// Renderers descend from a fresh exec of this binary (capsa_main() and
// CAPSA_RENDERER_KIND, <capsa/kind_registry.h>) or of the option
// renderer_exe; each is confined before it reads a byte and checked from
// outside on HELLO. The host supervises them (exit, crash, hang, limits,
// bad messages, restarts: each end is exactly one event), serves broker
// requests (file:, font:, dns:) and forwards their LOG and stderr lines.
// The details, option by option: docs/host_api.md.
#ifndef CAPSA_HOST_CAPSA_HOST_H_
#define CAPSA_HOST_CAPSA_HOST_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "ipc/message.h"
#include "ipc/uv_channel.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/launcher/namespaces.h"

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
// handler: the renderer's word, attached only when its signal agrees with
// ev->signal (docs/host_api.md, "Crash reports"). Owned by the host: valid
// during the callback only; copy what you keep.
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

// Resource limits: a cgroup v2 per renderer where usable, else rlimits;
// every limit reached is CAPSA_EV_LIMIT with ev->text naming it ("memory
// (cgroup memory.max)", "cpu time (process tree)", "queue budget: ...").
// The list and what rlimits do not hold: docs/host_api.md, "Resource limits".
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
  // true: the zygote may be a fork of this process when capsa_main() was
  // not called or a kind is not registered (default false: the start
  // fails -ENOEXEC). Only for tests (docs/host_api.md).
  bool allow_forked_zygote;
  // Processes and threads of all renderers together (the zygote's
  // RLIMIT_NPROC). 0: the default, 4096; CAPSA_LIMIT_NONE: the host's own,
  // inherited (docs/host_api.md).
  uint64_t limit_renderer_processes;
  // A renderer executable of the embedder's (path, borrowed; NULL: a fresh
  // exec of this binary): parsers it links are never mapped in the host.
  // Kinds are then defined by name only (main, arg NULL). Checks and
  // errors: docs/host_api.md.
  const char *renderer_exe;
  // N > 0: a fresh zygote after every N renderers forked, so at most N
  // share a canary and a layout; 0 (default): one for the host's life.
  // Needs an exec'd zygote (-EINVAL otherwise; docs/host_api.md).
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
  // Default true. false: renderers share the host's pid namespace, each
  // leading a process group the host kills at its end (docs/host_api.md).
  bool pid_namespace;
  // Limits: finite defaults (capsa_kind_options_init; 0 means the default,
  // CAPSA_LIMIT_NONE means none). Defaults and what each holds:
  // docs/host_api.md, "Limits".
  uint64_t limit_memory;                // bytes
  uint64_t limit_cpu_seconds;           // seconds of CPU, per process
  uint64_t limit_open_files;            // descriptors
  uint64_t limit_processes;             // processes and threads of its tree
  uint64_t limit_broker_requests;       // "dns:" lookups in flight
  uint64_t limit_queued_fds;            // unread answers' descriptors
  uint64_t limit_queued_bytes;          // unread answers' bytes
  uint64_t limit_log_bytes_per_second;  // LOG and stderr text
  // Share of the host loop's time (percent) handling what one renderer
  // sends unasked may take; past it the renderer is slowed, never killed.
  // Default 10; 100: no cap; above 100: -EINVAL (docs/host_api.md).
  unsigned host_share_percent;
  unsigned heartbeat_ms;          // 0: no watchdog (default 1000)
  unsigned heartbeat_timeout_ms;  // default 5000
  // While a request with a deadline is outstanding its deadline, not the
  // heartbeat, judges the renderer: past it CAPSA_EV_KILLED "request
  // deadline", unless keep_on_request_timeout (docs/host_api.md).
  bool keep_on_request_timeout;  // default false
  // Restarts: at most max_restarts within any restart_window_ms (0: the
  // handle's life), after a backoff doubling from restart_backoff_ms
  // (docs/host_api.md).
  unsigned max_restarts;        // default 0
  unsigned restart_window_ms;   // default 0
  unsigned restart_backoff_ms;  // default 0
  // One renderer forked ahead, in capability mode: a spawn only hands it
  // over. Costs one idle process (docs/host_api.md).
  bool keep_spare;
  // Broker: directory (borrowed, must stay open) beneath which "file:" may
  // open regular files with one link; -1: none (docs/host_api.md).
  int resource_dir_fd;
  bool allow_fonts;
  // "dns:NAME" through the host's resolver: an exfiltration channel, grant
  // it only to kinds that may talk to the outside that way (docs/host_api.md).
  bool allow_dns;
  // The interfaces this kind speaks (ipc/interface.h, docs/interfaces.md):
  // borrowed generated descriptors, in the renderer's order; HELLO must
  // carry the same list (else CAPSA_EV_BAD_MESSAGE).
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
// Call early, while the process has no other threads. 0 or -errno, with
// capsa_host_start_error() saying why (docs/host_api.md, "Starting").
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
// Answers a request the renderer sent (ev->msg, or a copy keeping
// `origin`), once: -ENOENT when answered already, -ESTALE when the
// incarnation that asked has ended or is ending (docs/host_api.md).
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
// Navigation or reload: CAPSA_EV_KILLED "navigation", then RESTARTED
// "navigation" at once (no backoff, not counted in max_restarts). 0;
// -ESRCH when the handle is ending for good; -EINVAL (docs/host_api.md).
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

// What the launcher gives renderers here, one line ("user=yes pid=yes
// ... landlock=abi7 zygote=capmode-stage"). Valid after start
// (docs/host_api.md).
int capsa_host_sandbox_summary(const capsa_host_t *host, char *buf, size_t len);
// How renderer limits are enforced, one line ("limits: cgroup v2 (DIR:
// memory,pids)" or "limits: rlimits (cgroup v2: WHY NOT); ..."). Valid
// after start; the length (as snprintf) or -EINVAL / -EAGAIN
// (docs/host_api.md).
int capsa_host_limits_summary(const capsa_host_t *host, char *buf, size_t len);
// The zygote's pid (host's pid namespace), -1 before start; and how many
// times a dead or wedged zygote was replaced (on the next spawn).
pid_t capsa_host_zygote_pid(const capsa_host_t *host);
unsigned capsa_host_zygote_restarts(const capsa_host_t *host);

// The capability-mode report of `kind` as compiled in the zygote.
int capsa_host_kind_report(const capsa_host_t *host, int kind,
                           struct capsa_capmode_report *out);

// --- Task manager: the host's processes, as `top` would list them ----------
// One call takes a snapshot of every renderer handle, the zygote and its
// spares, from /proc (docs/host_api.md, "Task manager").

typedef enum capsa_rinfo_role {
  CAPSA_RINFO_RENDERER = 0,  // a renderer handle (capsa_host_spawn)
  // Forked ahead for a kind with keep_spare, found in /proc (docs/host_api.md).
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
// spares. Returns how many there are, which may be more than n (as snprintf:
// call again with room for all), 0 before capsa_host_start, or -EINVAL (host
// NULL or not initialised, out NULL with n > 0). Pointers in the entries are
// borrowed as each field says; nothing is allocated.
int capsa_host_renderer_info(const capsa_host_t *host,
                             capsa_renderer_info_t *out, size_t n);
// "starting", "ready", "ending", "restarting", "idle"; "?" otherwise. Static.
const char *capsa_rinfo_state_name(capsa_rinfo_state_t s);
// "smaps_rollup", "cgroup", "statm", "none"; "?" otherwise. Static.
const char *capsa_mem_source_name(capsa_mem_source_t s);

// Whether the kind's warm-up (CAPSA_RENDERER_WARM_UP, host/kind_registry.h)
// ran in the current zygote: CAPSA_WARM_UP_DONE, CAPSA_WARM_UP_NONE (none
// registered for its name), CAPSA_WARM_UP_NOT_RUN (a forked zygote runs
// none); -EINVAL before capsa_host_start or for an unknown kind. A warm-up
// that failed failed the start (capsa_host_start_error says why).
#define CAPSA_WARM_UP_NONE 0
#define CAPSA_WARM_UP_DONE 1
#define CAPSA_WARM_UP_NOT_RUN 2
int capsa_host_kind_warm_up(const capsa_host_t *host, int kind);

// Kills every renderer (each still gets CAPSA_EV_KILLED "host closing",
// unless it had already ended, and CLOSED; outstanding requests get
// -ECANCELED first), stops the zygote and closes the host's handles; `cb`
// (may be NULL) runs from the loop once everything is closed. The loop can
// then finish.
void capsa_host_close(capsa_host_t *host, capsa_host_close_cb cb);

const char *capsa_host_event_name(capsa_host_event_type_t t);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_CAPSA_HOST_H_
