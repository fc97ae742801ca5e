// Shared between the host library's files (capsa__ prefix): the host and
// renderer structures behind host/capsa_host.h.
#ifndef CAPSA_HOST_HOST_INTERNAL_H_
#define CAPSA_HOST_HOST_INTERNAL_H_

#include "host/capsa_host.h"
#include "host/zygote.h"
#include "ipc/shm.h"
#include "sandbox/cgroup.h"

#define CAPSA__MAX_KINDS CAPSA__ZYGOTE_MAX_KINDS
#define CAPSA__FONTS 3  // regular, bold, mono
#define CAPSA__CG_BUSY_MAX 32

enum capsa__rstate { R_STARTING, R_READY, R_DYING };

struct capsa_host_renderer {
  struct capsa__host_impl *h;
  int kind;
  void *data;
  int pidfd;
  pid_t pid;
  enum capsa__rstate state;
  capsa_channel_t ch;
  uv_poll_t exit_poll;
  uv_timer_t timer;  // heartbeat, or the grace period after EPIPE
  int open_handles;  // uv handles + channel of this incarnation still open
  bool timer_inited;
  bool ping_outstanding;
  bool no_restart;  // bad message, refused sandbox, killed by the host
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
  capsa_cgroup_t *cg;  // this incarnation's cgroup (limits), or NULL
  unsigned restarts;
  unsigned pending;  // broker requests in flight (keep the memory alive)
  struct capsa__dns_req *dns;  // this renderer's name lookups in flight
  unsigned dns_inflight;
  bool closing;  // CLOSED about to be sent: free when pending == 0
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
  unsigned dns_inflight;  // name lookups in the thread pool, all renderers
  char start_error[400];  // why the last capsa_host_start failed; "" if not
  capsa__zygote zygote;
  unsigned zygote_restarts;
  int zygote_filters;    // its Seccomp_filters: count; -1 unknown
  capsa_ns_ids self_ns;  // the host's own, read once at start
  int self_ns_err;
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
  capsa_shm_region_t fonts[CAPSA__FONTS];
  size_t font_len[CAPSA__FONTS];
  struct capsa_host_renderer *renderers;
  unsigned live;
  uv_timer_t closer;  // the last handle closed; also the cg_busy retries
  capsa_host_close_cb close_cb;
};

// The outside check in two halves (host/sandbox_check.c): the /proc status
// fields into *out (0 or -errno), then the verdict over everything in *out.
int capsa__check_status(pid_t pid, capsa_renderer_check_t *out);
void capsa__check_verdict(capsa_renderer_check_t *out);
// Test builds only, declared for them in host/testing.h (see there).
void capsa__check_hide_seccomp_filters_for_test(bool hide);

void capsa__emit(struct capsa_host_renderer *r, capsa_host_event_t *ev);

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
#define CAPSA__DNS_PER_RENDERER 4
#define CAPSA__DNS_PER_HOST 16

// Kills r for exceeding `budget` (CAPSA_EV_LIMIT, text names the budget).
void capsa__renderer_kill_for_limit(struct capsa_host_renderer *r,
                                    const char *budget);

// Starts libuv's thread pool once per process (the first host's start), so
// that its creation can never fail later, on a renderer's request.
void capsa__broker_start_threadpool(void);

// Cancels r's broker work that has not started (its incarnation ended);
// what a thread already runs finishes and is dropped.
void capsa__broker_cancel(struct capsa_host_renderer *r);

// Called by the broker when its last pending request of r finished.
void capsa__renderer_unpend(struct capsa_host_renderer *r);

#endif  // CAPSA_HOST_HOST_INTERNAL_H_
