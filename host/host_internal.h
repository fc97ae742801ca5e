// Shared between the host library's files (capsa__ prefix): the host and
// renderer structures behind host/capsa_host.h.
#ifndef CAPSA_HOST_HOST_INTERNAL_H_
#define CAPSA_HOST_HOST_INTERNAL_H_

#include <stdlib.h>

#include "host/broker/broker.h"
#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "host/limits/limits.h"
#include "host/zygote/zygote.h"
#include "ipc/shm.h"
#include "sandbox/cgroup.h"

#define CAPSA__MAX_KINDS CAPSA__ZYGOTE_MAX_KINDS
// Longest stderr line passed on in one LOG event (longer ones are split).
#define CAPSA__STDERR_LINE 512
// A new incarnation's start-up allowance under host_share_percent: its
// first 32 messages within 250 ms are not charged (HELLO, READY, a
// renderer's first requests: measured, charging them cost ~1 ms of every
// navigation and ~1.5 ms of a crash reload). A flooder gains 32 messages'
// worth of loop time once per incarnation, and incarnations are the
// embedder's (spawn, navigate) or the restart policy's to make.
#define CAPSA__STARTUP_FREE_MESSAGES 32u
#define CAPSA__STARTUP_FREE_MS 250u

enum capsa__rstate { R_STARTING, R_READY, R_DYING };

// Who owns what: the renderer's top-level fields are the state machine's
// (host/incarnation.c); each sub-struct is its file's, read elsewhere at
// most.

// The heartbeat's (host/heartbeat.c).
struct capsa__heartbeat {
  bool ping_outstanding;
  bool ping_excused;    // its last PING timed out while its input was unread
  uint64_t ping_rests;  // the channel's rest count when the PING was sent
};

// The outside check's (host/sandbox_check.c): its first half, taken at
// launch; err < 0 when /proc could not be read then. With the zygote's
// own_userns, userns_of_zygote: this one is in the zygote's user
// namespace, not one of its own (refused at HELLO).
struct capsa__outside {
  capsa_renderer_check_t check;
  int err;
  bool userns_of_zygote;
};

// Its stderr pipe (host/renderer_stderr.c): the read end, a poll on it
// (one of open_handles), the line being collected, and a crash record
// being read from it, and the last one (host/crash_report.h; NULL until
// its stderr starts one).
struct capsa__stderr {
  int fd;
  uv_poll_t poll;
  bool polled;  // poll initialised (counted in open_handles)
  bool reading;
  size_t len;
  char line[CAPSA__STDERR_LINE];
  struct capsa__crash_rx *crash;
  capsa__broker_verdict_fn verdict;  // past the LOG budget: r must end
};

// The reaper's (host/reaper.c): what outlived a reaped renderer, retried
// from h->closer until gone, for about a second. Cgroups still busy (a
// killed descendant still exiting); process groups of renderers without a
// pid namespace whose members (killed) were still exiting; killed
// renderers detached from their handle by a navigation, reaped through
// their pidfds.
struct capsa__reaper {
  capsa_cgroup_t *cg_busy[CAPSA__CG_BUSY_MAX];
  unsigned cg_busy_tries[CAPSA__CG_BUSY_MAX];
  unsigned ncg_busy;
  pid_t group_busy[CAPSA__CG_BUSY_MAX];
  unsigned group_busy_tries[CAPSA__CG_BUSY_MAX];
  unsigned ngroup_busy;
  int dying_pidfd[CAPSA__CG_BUSY_MAX];
  unsigned ndying;
};

// A renderer forked by the zygote (or its spare handed over), not yet
// attached to its handle (host/claim.c).
struct capsa__claimed {
  bool valid;
  struct capsa_ns_child child;
  int chan, err_fd;
};

struct capsa_host_renderer {
  struct capsa__host_impl *h;
  int kind;
  void *data;
  int pidfd;
  pid_t pid;
  enum capsa__rstate state;
  capsa_channel_t ch;
  int chan_fd;  // the channel's socket (owned by ch), for unread_input
  // msg->origin of this incarnation's channel (0 until its first message):
  // capsa_renderer_reply refuses an answer to any other (-ESTALE).
  uint64_t origin;
  uv_poll_t exit_poll;
  // The heartbeat, or the grace period after EPIPE, the drain deadline, a
  // backoff, a shutdown's deadline: one at a time.
  uv_timer_t timer;
  int open_handles;  // uv handles + channel of this incarnation still open
  bool timer_inited;
  struct capsa__heartbeat hb;
  bool no_restart;                      // bad message, refused, killed
  capsa_host_event_type_t kill_reason;  // 0 or what we killed it for
  // Reaped, but its last messages may still be in the socket: the exit is
  // reported once the channel saw the peer close (or DRAIN_MS passed).
  bool exited;
  bool peer_closed;
  siginfo_t exit_info;
  struct capsa__outside outside;
  struct capsa__renderer_limits limits;  // host/limits/
  unsigned restarts;                     // over the handle's life
  // Restart policy (host/incarnation.c after_incarnation): restarts in the
  // current restart_window_ms, since window_start_ms; waiting out a backoff
  // on `timer` (no process then).
  unsigned window_restarts;
  uint64_t window_start_ms;
  bool backing_off;
  // capsa_renderer_navigate: the next incarnation starts as soon as this
  // one is gone, whatever the restart policy says (not counted in it).
  bool navigating;
  unsigned navigations;  // over the handle's life
  // The next incarnation's process, claimed from the zygote by a
  // navigation while this one exits (host/incarnation.c claim_ahead).
  struct capsa__claimed next_claim;
  bool shutdown_asked;         // capsa_renderer_shutdown: exit 0 = SHUTDOWN
  bool not_serving;            // the last send was refused for not being READY
  bool reporting_end;          // finish_exit is reporting how it ended
  unsigned deadline_requests;  // host requests with a timeout outstanding
  unsigned pending;            // requests in flight (keep the memory alive)
  struct capsa__renderer_broker broker;  // host/broker/
  bool closing;  // CLOSED about to be sent: free when pending == 0
  struct capsa__stderr err;
  // Sees every event of this handle before the embedder's callback (a
  // worker pool, host/pool.c); NULL: none.
  void (*observer)(struct capsa_host_renderer *r, const capsa_host_event_t *ev,
                   void *ctx);
  void *observer_ctx;
  struct capsa_host_renderer *next;
};

struct capsa__host_impl {
  capsa_host_t *pub;
  uv_loop_t *loop;
  capsa_host_event_cb cb;
  capsa_host_options_t opts;
  capsa_kind_options_t kinds[CAPSA__MAX_KINDS];
  struct capsa__zygote_kind zkinds[CAPSA__MAX_KINDS];
  capsa_capmode_policy *own_policy[CAPSA__MAX_KINDS];  // made by the host
  unsigned nkinds;
  bool started;
  bool closing;
  // Reaps adopted orphans when this process is pid 1 or a subreaper
  // (host/orphans.h); NULL otherwise.
  struct capsa__orphans *orphans;
  struct capsa__host_broker broker;  // host/broker/
  bool image_exec;  // the zygote is a fresh exec (host/zygote/zygote.h)
  // capsa_host_options_t.renderer_exe as opened by capsa_host_start (-1:
  // none), and its path as given, for messages (cut).
  int exe_fd;
  char exe_path[160];
  char image[160];        // capsa_host_image()
  char start_error[640];  // why the last capsa_host_start failed; "" if not
  // The zygote (host/claim.c).
  capsa__zygote zygote;
  unsigned zygote_restarts;
  // Renderers forked from the current zygote (opts.zygote_renew_after).
  unsigned zygote_forks;
  int zygote_filters;    // its Seccomp_filters: count; -1 unknown
  capsa_ns_ids self_ns;  // the host's own, read once at start
  int self_ns_err;
  // The zygote's, read when it starts: with zygote.own_userns each
  // renderer's user namespace must differ from it (the outside check).
  capsa_ns_ids zygote_ns;
  int zygote_ns_err;
  struct capsa__host_limits limits;  // host/limits/
  struct capsa__reaper reaper;       // host/reaper.c
  struct capsa_host_renderer *renderers;
  unsigned live;
  uv_timer_t closer;  // the last handle closed; also the reaper's retries
  capsa_host_close_cb close_cb;
};

// A request of r finished (the embedder's, a broker lookup): r is freed
// once its handle is closed and none is left.
static inline void capsa__renderer_unpend(struct capsa_host_renderer *r) {
  if (--r->pending == 0 && r->closing) free(r);
}

// --- host/events.c: events to the embedder ---------------------------------

// Every event of r passes here: its observer, then the embedder's callback.
void capsa__emit(struct capsa_host_renderer *r, capsa_host_event_t *ev);
void capsa__emit_report(struct capsa_host_renderer *r,
                        capsa_host_event_type_t type, int status, int sig,
                        const char *text,
                        const capsa_crash_report_t *crash_report);
void capsa__emit_simple(struct capsa_host_renderer *r,
                        capsa_host_event_type_t type, int status, int sig,
                        const char *text);

// --- host/sandbox_check.c: the outside check -------------------------------

// The outside check in two halves: the /proc status fields into *out (0 or
// -errno), then the verdict over everything in *out.
int capsa__check_status(pid_t pid, capsa_renderer_check_t *out);
void capsa__check_verdict(capsa_renderer_check_t *out);
// Test builds only, declared for them in host/testing.h (see there).
void capsa__check_hide_seccomp_filters_for_test(bool hide);
void capsa__check_zygote_ns_of_renderer_for_test(bool on);
// Where the outside check reads the zygote's namespaces: `zygote` (as read
// when it started), or under the test hook above the renderer's own.
const capsa_ns_ids *capsa__check_zygote_ns(const capsa_ns_ids *zygote,
                                           const capsa_ns_ids *renderer);
// The first half for r, while it starts (r->outside).
void capsa__check_prepare(struct capsa_host_renderer *r);
// What r's HELLO says: CAPSA_EV_READY (checked and confined),
// CAPSA_EV_BAD_MESSAGE (not its kind's interfaces; why in `why`, 512
// bytes) or CAPSA_EV_SANDBOX_REFUSED (the outside check refused it; why in
// check->why). *check: the whole check, for the event.
capsa_host_event_type_t capsa__check_hello(struct capsa_host_renderer *r,
                                           const capsa_msg_t *hello,
                                           capsa_renderer_check_t *check,
                                           char *why, size_t len);

// --- host/heartbeat.c ------------------------------------------------------

// A new incarnation: no PING outstanding.
void capsa__heartbeat_reset(struct capsa_host_renderer *r);
// On a tick: whether a PING is due now.
bool capsa__heartbeat_due(struct capsa_host_renderer *r);
// Sends it (cb on its PONG or timeout): 0 or -errno.
int capsa__heartbeat_ping(struct capsa_host_renderer *r,
                          capsa_channel_reply_cb cb);
// Its PONG came (status 0) or not (-ETIMEDOUT): NULL, or the HUNG verdict.
const char *capsa__heartbeat_pong_verdict(struct capsa_host_renderer *r,
                                          int status);

// --- host/renderer_stderr.c ------------------------------------------------

// Starts reading `fd` (the read end of r's stderr pipe, or -1; owned by r
// from here on, closed by capsa__stderr_close). `verdict` receives the LOG
// budget's verdict. Returns the number of uv handles it opened (1, or 0
// when the pipe cannot be watched: it is then read only at the renderer's
// exit).
int capsa__stderr_start(struct capsa_host_renderer *r, int fd,
                        capsa__broker_verdict_fn verdict);
// At its exit, before the exit is reported: what is left in the pipe
// (bounded), and a last line without a newline.
void capsa__stderr_drain(struct capsa_host_renderer *r);
// Closes the poll (cb as for any uv handle) and the descriptor.
void capsa__stderr_close(struct capsa_host_renderer *r, uv_close_cb cb);

// --- host/reaper.c: what outlives a renderer's handle -----------------------

// Waits for (and reaps) the process of `pidfd`: 0 or -errno.
int capsa__reaper_wait(int pidfd, siginfo_t *si);
// Whether r leads a process group the host reaps (no pid namespace).
bool capsa__reaper_group_kind(const struct capsa_host_renderer *r);
// Reaps r's process group, or lists it to be retried.
void capsa__reaper_group(struct capsa_host_renderer *r);
// Room on every list r would need to be detached (capsa__reaper_detach).
bool capsa__reaper_room(const struct capsa_host_renderer *r);
// Takes `pidfd` of a killed process (SIGKILL sent) to reap later. False
// when the list is full (nothing taken).
bool capsa__reaper_add_dying(struct capsa__host_impl *h, int pidfd);
// Takes a cgroup still busy to remove later. False when the list is full.
bool capsa__reaper_add_cgroup(struct capsa__host_impl *h, capsa_cgroup_t *cg);
// At the host's close: everything now, waiting (bounded) for the killed.
void capsa__reaper_final(struct capsa__host_impl *h);

// --- host/claim.c: renderer processes from the zygote ----------------------

// Starts h's zygote (its outside-check baseline too). 0 or -errno, with
// h->start_error said for a kind's warm-up.
int capsa__claim_start_zygote(struct capsa__host_impl *h);
// A renderer of r's kind from the zygote (restarted or renewed as needed).
int capsa__claim(struct capsa_host_renderer *r, struct capsa__claimed *out);
// Takes r's claimed next process off it.
struct capsa__claimed capsa__claim_take(struct capsa_host_renderer *r);

// --- host/incarnation.c: the renderer state machine ------------------------

// Starts a handle's first incarnation. 0 or -errno (nothing of it left).
int capsa__incarnation_launch(struct capsa_host_renderer *r);
// Ends r for `reason` (reported now, with `text`): the only path that
// kills a renderer. Bad messages and refused sandboxes are never restarted.
void capsa__incarnation_end(struct capsa_host_renderer *r,
                            capsa_host_event_type_t reason, const char *text);
// Ends r for exceeding `budget` (CAPSA_EV_LIMIT, text names the budget):
// the verdict function of the helpers' own events.
void capsa__renderer_kill_for_limit(struct capsa_host_renderer *r,
                                    const char *budget);
// Ends r for the embedder's policy (a pool retiring a worker after its
// job): CAPSA_EV_KILLED with `why` (static), never restarted. 0, or -ESRCH
// when it is already ending (its CLOSED or RESTARTED follows).
int capsa__renderer_retire(struct capsa_host_renderer *r, const char *why);
// The host is closing: ends every renderer (CLOSED follows for each, then
// capsa__host_finish_close once none is left).
void capsa__incarnation_close_all(struct capsa__host_impl *h);

// --- host/host_close.c ------------------------------------------------------

// capsa_host_close's last step, once h->live is 0: everything of h is
// released, h freed, then the embedder's close callback.
void capsa__host_finish_close(struct capsa__host_impl *h);

// The running binary as capsa_main opened it (host/kind_registry.h), or -1
// when the hook did not run.
int capsa__exe_fd(void);

// The registry (host/kind_registry.c), for the zygote's report to the host:
// whether `name` was registered twice, and every registered name, ", "
// between them, into buf (cut at len with "...").
bool capsa__kind_ambiguous(const char *name);
// The warm-up registered for `name` (CAPSA_RENDERER_WARM_UP), or NULL; a
// name registered twice is NULL with *ambiguous set. host/kind_registry.c.
capsa_warm_up_fn capsa__kind_warm_up(const char *name, bool *ambiguous);
void capsa__kind_names(char *buf, size_t len);

// host/renderer_exe.c: capsa_host_options_t.renderer_exe. Opens and checks
// the file for capsa_host_start: h->exe_fd (owned by h) or -errno with
// h->start_error naming the option, the path and what is wrong.
int capsa__renderer_exe_open(struct capsa__host_impl *h);
// After the zygote of a renderer executable started, or failed to: 0 when
// it serves every defined kind; else -errno with h->start_error saying
// which kind it lacks or why it is no zygote (`err`: the zygote's start
// result).
int capsa__renderer_exe_verdict(struct capsa__host_impl *h, int err);

#endif  // CAPSA_HOST_HOST_INTERNAL_H_
