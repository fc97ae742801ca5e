// Shared between the host library's files (capsa__ prefix): the host and
// renderer structures behind host/capsa_host.h.
#ifndef CAPSA_HOST_HOST_INTERNAL_H_
#define CAPSA_HOST_HOST_INTERNAL_H_

#include "host/capsa_host.h"
#include "host/kind_registry.h"
#include "host/zygote/zygote.h"
#include "ipc/shm.h"
#include "sandbox/cgroup.h"

#define CAPSA__MAX_KINDS CAPSA__ZYGOTE_MAX_KINDS
#define CAPSA__FONTS 3  // regular, bold, mono
#define CAPSA__CG_BUSY_MAX 32
// Longest stderr line passed on in one LOG event (longer ones are split).
#define CAPSA__STDERR_LINE 512

enum capsa__rstate { R_STARTING, R_READY, R_DYING };

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
  uv_timer_t timer;  // heartbeat, or the grace period after EPIPE
  int open_handles;  // uv handles + channel of this incarnation still open
  bool timer_inited;
  bool ping_outstanding;
  bool ping_excused;    // its last PING timed out while its input was unread
  uint64_t ping_rests;  // the channel's rest count when the PING was sent
  bool no_restart;      // bad message, refused sandbox, killed by the host
  capsa_host_event_type_t kill_reason;  // 0 or what we killed it for
  // Reaped, but its last messages may still be in the socket: the exit is
  // reported once the channel saw the peer close (or DRAIN_MS passed).
  bool exited;
  bool peer_closed;
  siginfo_t exit_info;
  // The outside check's first half, taken at launch (host/sandbox_check.c);
  // check_err < 0 when /proc could not be read then.
  capsa_renderer_check_t check;
  int check_err;
  // With the zygote's own_userns: this one is in the zygote's user
  // namespace, not one of its own (refused at HELLO).
  bool userns_of_zygote;
  capsa_cgroup_t *cg;  // this incarnation's cgroup (limits), or NULL
  unsigned restarts;   // over the handle's life
  // Restart policy (host.c after_incarnation): restarts in the current
  // restart_window_ms, since window_start_ms; waiting out a backoff on
  // `timer` (no process then).
  unsigned window_restarts;
  uint64_t window_start_ms;
  bool backing_off;
  // capsa_renderer_navigate: the next incarnation starts as soon as this
  // one is gone, whatever the restart policy says (not counted in it).
  bool navigating;
  unsigned navigations;  // over the handle's life
  // The next incarnation's process, claimed from the zygote by a
  // navigation while this one exits (host.c claim_ahead).
  struct capsa__claimed {
    bool valid;
    struct capsa_ns_child child;
    int chan, err_fd;
  } next_claim;
  bool shutdown_asked;         // capsa_renderer_shutdown: exit 0 = SHUTDOWN
  bool not_serving;            // the last send was refused for not being READY
  bool reporting_end;          // finish_exit is reporting how it ended
  unsigned deadline_requests;  // host requests with a timeout outstanding
  unsigned pending;  // broker requests in flight (keep the memory alive)
  struct capsa__dns_req *dns;  // this renderer's name lookups in flight
  unsigned dns_inflight;
  bool closing;  // CLOSED about to be sent: free when pending == 0
  // LOG budget: bytes it may still log now, refilled at the kind's rate up
  // to one second's worth (host.c).
  uint64_t log_tokens;
  uint64_t log_stamp_ms;
  // Its stderr pipe (host/renderer_stderr.c): the read end, a poll on it
  // (one of open_handles) and the line being collected.
  int err_fd;
  uv_poll_t err_poll;
  bool err_polled;  // err_poll initialised (counted in open_handles)
  bool err_reading;
  size_t err_len;
  char err_line[CAPSA__STDERR_LINE];
  // A crash record being read from it, and the last one (host/crash_report.h);
  // NULL until its stderr starts one.
  struct capsa__crash_rx *crash;
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
  unsigned dns_inflight;  // name lookups not yet answered, all renderers
  uv_async_t dns_async;   // the broker's threads' finished lookups
  bool dns_async_inited;
  struct capsa__dns_req *dns_done;  // under the broker's lock
  bool image_exec;  // the zygote is a fresh exec (host/zygote/zygote.h)
  // capsa_host_options_t.renderer_exe as opened by capsa_host_start (-1:
  // none), and its path as given, for messages (cut).
  int exe_fd;
  char exe_path[160];
  char image[160];        // capsa_host_image()
  char start_error[640];  // why the last capsa_host_start failed; "" if not
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
  // Renderer limits (host.c): a cgroup v2 per renderer under cg_parent
  // when cg_active, else rlimits because of limits_why.
  bool cg_active;
  unsigned cg_controllers;
  char cg_parent[512];
  char limits_why[320];
  // Cgroups of reaped renderers still busy (a killed descendant still
  // exiting): rmdir retried from `closer` until empty, for about a second.
  capsa_cgroup_t *cg_busy[CAPSA__CG_BUSY_MAX];
  unsigned cg_busy_tries[CAPSA__CG_BUSY_MAX];
  unsigned ncg_busy;
  // Process groups of reaped renderers without a pid namespace whose
  // members (killed) were still exiting: reaped from `closer` likewise.
  pid_t group_busy[CAPSA__CG_BUSY_MAX];
  unsigned group_busy_tries[CAPSA__CG_BUSY_MAX];
  unsigned ngroup_busy;
  // Killed renderers detached from their handle by a navigation (host.c
  // detach_dying), reaped through their pidfds on the same retry timer.
  int dying_pidfd[CAPSA__CG_BUSY_MAX];
  unsigned ndying;
  capsa_shm_region_t fonts[CAPSA__FONTS];
  size_t font_len[CAPSA__FONTS];
  struct capsa_host_renderer *renderers;
  unsigned live;
  uv_timer_t closer;  // the last handle closed; also the *_busy retries
  capsa_host_close_cb close_cb;
};

// The outside check in two halves (host/sandbox_check.c): the /proc status
// fields into *out (0 or -errno), then the verdict over everything in *out.
int capsa__check_status(pid_t pid, capsa_renderer_check_t *out);
void capsa__check_verdict(capsa_renderer_check_t *out);
// Test builds only, declared for them in host/testing.h (see there).
void capsa__check_hide_seccomp_filters_for_test(bool hide);
void capsa__check_zygote_ns_of_renderer_for_test(bool on);
// Where the outside check reads the zygote's namespaces: `zygote` (as read
// when it started), or under the test hook above the renderer's own.
const capsa_ns_ids *capsa__check_zygote_ns(const capsa_ns_ids *zygote,
                                           const capsa_ns_ids *renderer);

void capsa__emit(struct capsa_host_renderer *r, capsa_host_event_t *ev);

// host/renderer_stderr.c. Starts reading `fd` (the read end of r's stderr
// pipe, or -1; owned by r from here on, closed by capsa__stderr_close).
// Returns the number of uv handles it opened (1, or 0 when the pipe cannot
// be watched: it is then read only at the renderer's exit).
int capsa__stderr_start(struct capsa_host_renderer *r, int fd);
// At its exit, before the exit is reported: what is left in the pipe
// (bounded), and a last line without a newline.
void capsa__stderr_drain(struct capsa_host_renderer *r);
// Closes the poll (cb as for any uv handle) and the descriptor.
void capsa__stderr_close(struct capsa_host_renderer *r, uv_close_cb cb);

// Broker (host/broker.c): answers a RESOURCE_REQUEST from r. Returns 0 or
// -errno (the request is then answered with an error).
int capsa__broker_request(struct capsa_host_renderer *r,
                          const capsa_msg_t *req);
int capsa__broker_load_fonts(struct capsa__host_impl *h);
void capsa__broker_free_fonts(struct capsa__host_impl *h);
// Budgets for the broker's name lookups (thread-pool jobs the host holds
// for renderers): a renderer with more in flight than its budget is killed
// with CAPSA_EV_LIMIT; past the host's, a request is answered -EBUSY at
// once, so one renderer's flood is never another one's timeout.
#define CAPSA__DNS_PER_RENDERER 4  // default limit_broker_requests
#define CAPSA__DNS_PER_HOST 16

// The other finite defaults of capsa_kind_options_init (host/capsa_host.h).
#define CAPSA__DEFAULT_MEMORY (1ull << 30)
#define CAPSA__DEFAULT_CPU_SECONDS 300u
#define CAPSA__DEFAULT_OPEN_FILES 64u
#define CAPSA__DEFAULT_PROCESSES 128u
// capsa_host_options_t.limit_renderer_processes: all renderers together.
#define CAPSA__DEFAULT_RENDERER_PROCESSES 4096u
#define CAPSA__DEFAULT_LOG_BYTES_PER_SECOND (64u << 10)
#define CAPSA__DEFAULT_HOST_SHARE_PERCENT 10u
// A new incarnation's start-up allowance under host_share_percent: its
// first 32 messages within 250 ms are not charged (HELLO, READY, a
// renderer's first requests: measured, charging them cost ~1 ms of every
// navigation and ~1.5 ms of a crash reload). A flooder gains 32 messages'
// worth of loop time once per incarnation, and incarnations are the
// embedder's (spawn, navigate) or the restart policy's to make.
#define CAPSA__STARTUP_FREE_MESSAGES 32u
#define CAPSA__STARTUP_FREE_MS 250u
// What a LOG message costs beyond its text (so empty ones are not free).
#define CAPSA__LOG_MESSAGE_COST 32u

// Budgets for what the host queues toward a renderer that does not read
// (host/budget.c). Past its own, a renderer is killed with CAPSA_EV_LIMIT
// ("queue budget: more than N descriptors queued" / "... bytes queued");
// past the host's total, a broker answer with a descriptor is -EBUSY instead
// (no descriptor) for a renderer that has some unread; one that has read
// everything is always served. The total is well under the host user's
// in-flight allowance (RLIMIT_NOFILE, commonly 1024) and well over a few
// renderers' budgets: at 128, four that never read could each stop at 32,
// answered -EBUSY from then on, and none would reach its own budget.
#define CAPSA__QUEUE_FDS_PER_RENDERER 32u  // default limit_queued_fds
#define CAPSA__QUEUE_BYTES_PER_RENDERER (256u << 10)  // limit_queued_bytes
#define CAPSA__QUEUE_FDS_PER_HOST 256u
// 0, or -EBUSY when queueing `nfds` more for r would pass the host's total.
int capsa__budget_queue_admit(struct capsa_host_renderer *r, unsigned nfds);
// After a send to r: kills r (true) when its queue is past its budget.
bool capsa__budget_queue_check(struct capsa_host_renderer *r);

// LOG budget (limit_log_bytes_per_second): charges a message of `len`
// bytes at `now_ms` (the loop's time); past the budget kills r (false).
bool capsa__budget_log_charge(struct capsa_host_renderer *r, size_t len,
                              uint64_t now_ms);
// A full bucket, for a new incarnation.
void capsa__budget_log_reset(struct capsa_host_renderer *r, uint64_t now_ms);

// CPU time of the process tree rooted at `root` (host/cpu_budget.c): its
// and its live descendants' user+system time, with what they reaped. 0 or
// -errno (ESRCH: root is gone).
int capsa__cpu_tree_usec(pid_t root, uint64_t *usec);
// CPU time of r's whole tree: one read of its cgroup's cpu.stat when it has
// a cgroup, else the /proc walk of capsa__cpu_tree_usec. 0 or -errno.
int capsa__renderer_cpu_usec(const struct capsa_host_renderer *r,
                             uint64_t *usec);
// On each heartbeat tick: kills r (true) when its tree's CPU time (its
// cgroup's cpu.stat, else capsa__cpu_tree_usec) is past limit_cpu_seconds,
// with CAPSA_EV_LIMIT "cpu time (process tree)".
bool capsa__cpu_budget_check(struct capsa_host_renderer *r);

// Kills r for exceeding `budget` (CAPSA_EV_LIMIT, text names the budget).
void capsa__renderer_kill_for_limit(struct capsa_host_renderer *r,
                                    const char *budget);
// Kills r for the embedder's policy (a pool retiring a worker after its
// job): CAPSA_EV_KILLED with `why` (static), never restarted. 0, or -ESRCH
// when it is already ending (its CLOSED or RESTARTED follows).
int capsa__renderer_retire(struct capsa_host_renderer *r, const char *why);

// At capsa_host_start: the broker's lookup threads (once per process, and
// only when one of h's kinds has allow_dns) and
// libuv's thread pool (so that its creation can never fail later, on a
// renderer's request), and h's uv_async_t. 0 or -errno.
int capsa__broker_start(struct capsa__host_impl *h);

// Drops all of r's broker work at once (its incarnation ended, or the host
// closes): queued lookups are removed, running ones are left to their
// thread, which frees them unanswered. Nothing of it stays on the loop.
void capsa__broker_cancel(struct capsa_host_renderer *r);
// Cancels every renderer's work and closes h's async handle (`cb` then).
void capsa__broker_close(struct capsa__host_impl *h, uv_close_cb cb);
// Test builds only (host/testing.h): each lookup first sleeps `ms`.
void capsa__broker_dns_delay_for_test(unsigned ms);

// Called by the broker when its last pending request of r finished.
void capsa__renderer_unpend(struct capsa_host_renderer *r);

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
