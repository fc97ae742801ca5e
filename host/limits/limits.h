// Renderer limits (host/limits/): a cgroup v2 per renderer where usable,
// else rlimits the zygote sets at fork; and the budgets the host keeps on
// what a renderer costs it (queued answers, LOG bytes, CPU time of its
// tree). Every function here judges and returns a verdict: NULL when the
// renderer may go on, else why it must end (CAPSA_EV_LIMIT's text). None
// ends a renderer: the state machine (host/incarnation.c) does, on the
// verdict.
#ifndef CAPSA_HOST_LIMITS_LIMITS_H_
#define CAPSA_HOST_LIMITS_LIMITS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "host/capsa_host.h"
#include "sandbox/cgroup.h"

struct capsa_host_renderer;
struct capsa__host_impl;
struct capsa__zygote_kind;

#define CAPSA__CG_BUSY_MAX 32
// Room for a verdict's text (a budget's name and its figure).
#define CAPSA__VERDICT_MAX 128

// Finite defaults of capsa_kind_options_init (host/capsa_host.h); the
// rlimits' are in their rows of host/limits/rlimit.c.
// capsa_host_options_t.limit_renderer_processes: all renderers together.
#define CAPSA__DEFAULT_RENDERER_PROCESSES 4096u
#define CAPSA__DEFAULT_LOG_BYTES_PER_SECOND (64u << 10)
#define CAPSA__DEFAULT_HOST_SHARE_PERCENT 10u
// What a LOG message costs beyond its text (so empty ones are not free).
#define CAPSA__LOG_MESSAGE_COST 32u

// Budgets for what the host queues toward a renderer that does not read
// (host/limits/budget.c). Past its own, a renderer is ended with
// CAPSA_EV_LIMIT ("queue budget: more than N descriptors queued" / "...
// bytes queued"); past the host's total, a broker answer with a descriptor
// is -EBUSY instead (no descriptor) for a renderer that has some unread;
// one that has read everything is always served. The total is well under
// the host user's in-flight allowance (RLIMIT_NOFILE, commonly 1024) and
// well over a few renderers' budgets: at 128, four that never read could
// each stop at 32, answered -EBUSY from then on, and none would reach its
// own budget.
#define CAPSA__QUEUE_FDS_PER_RENDERER 32u  // default limit_queued_fds
#define CAPSA__QUEUE_BYTES_PER_RENDERER (256u << 10)  // limit_queued_bytes
#define CAPSA__QUEUE_FDS_PER_HOST 256u

// The host's limits (host/limits/cgroup.c), fixed at capsa_host_start: a
// cgroup v2 per renderer under cg_parent when cg_active, else rlimits
// because of `why`.
struct capsa__host_limits {
  bool cg_active;
  unsigned cg_controllers;
  char cg_parent[512];
  char why[320];
};

// One renderer's: its incarnation's cgroup (NULL: none) and its LOG budget
// (bytes it may still log now, refilled at the kind's rate up to one
// second's worth; host/limits/budget.c).
struct capsa__renderer_limits {
  capsa_cgroup_t *cg;
  uint64_t log_tokens;
  uint64_t log_stamp_ms;
};

// --- host/limits/cgroup.c -------------------------------------------------

// Once, at start: cgroup v2 or rlimits for limit_memory / limit_processes,
// and why. Under cgroups the kinds' RLIMIT_AS / RLIMIT_NPROC are dropped
// from h->zkinds. -errno when cgroups are REQUIRED and unusable.
int capsa__limits_setup(struct capsa__host_impl *h);
// Whether a renderer of kind `k` goes into a cgroup of its own at fork.
bool capsa__limits_use_cgroup(const struct capsa__host_impl *h,
                              const capsa_kind_options_t *k);
// Right after the zygote's fork, before the host reads the renderer's
// HELLO: its own cgroup with its kind's limits (r->limits.cg). 0 or -errno.
int capsa__limits_enter(struct capsa_host_renderer *r, pid_t pid);
// Removes the incarnation's cgroup (its renderer was reaped); a busy one
// goes to the reaper's list (host/reaper.c) when `last_try`.
void capsa__limits_release(struct capsa_host_renderer *r, bool last_try);
// How r's reaped incarnation ended, as a limit: NULL when no limit ended it,
// else the limit's name with the event's status and signal in *status,
// *sig. Reads the kernel's cgroup counters (then empties the cgroup of what
// outlived the renderer and removes it) and the exit codes and signals of
// rlimits (RLIMIT_CPU, RLIMIT_AS reported by the renderer).
const char *capsa__limits_exit_verdict(struct capsa_host_renderer *r,
                                       int *status, int *sig);
// capsa_host_limits_summary's text.
int capsa__limits_summary(const struct capsa__host_impl *h, char *buf,
                          size_t len);

// --- host/limits/rlimit.c -------------------------------------------------

// A kind's limits as the zygote sets them at fork (rlimits; 0 leaves the
// inherited one): the one list of limit options mapped to the zygote's.
void capsa__limits_zygote_kind(const capsa_kind_options_t *k,
                               struct capsa__zygote_kind *z);
// Replaces each limit option left 0 by its default (0 is the default, never
// "no limit": that is CAPSA_LIMIT_NONE).
void capsa__limits_defaults(capsa_kind_options_t *k);
// capsa_host_options_t.limit_renderer_processes as the zygote's rlimit.
rlim_t capsa__limits_nproc_total(const struct capsa__host_impl *h);

// --- host/limits/budget.c -------------------------------------------------

// 0, or -EBUSY when queueing `nfds` more for r would pass the host's total.
int capsa__budget_queue_admit(struct capsa_host_renderer *r, unsigned nfds);
// After a send to r: NULL, or (in why, CAPSA__VERDICT_MAX bytes) which of
// its queue budgets it is past.
const char *capsa__budget_queue_verdict(struct capsa_host_renderer *r,
                                        char *why);
// LOG budget (limit_log_bytes_per_second): charges a message of `len` bytes
// at `now_ms` (the loop's time). NULL, or (in why) the budget it is past.
const char *capsa__budget_log_charge(struct capsa_host_renderer *r, size_t len,
                                     uint64_t now_ms, char *why);
// A full bucket, for a new incarnation.
void capsa__budget_log_reset(struct capsa_host_renderer *r, uint64_t now_ms);

// --- host/limits/cpu_budget.c ---------------------------------------------

// CPU time of the process tree rooted at `root`: its and its live
// descendants' user+system time, with what they reaped. 0 or -errno (ESRCH:
// root is gone).
int capsa__cpu_tree_usec(pid_t root, uint64_t *usec);
// CPU time of r's whole tree: one read of its cgroup's cpu.stat when it has
// a cgroup, else the /proc walk of capsa__cpu_tree_usec. 0 or -errno.
int capsa__renderer_cpu_usec(const struct capsa_host_renderer *r,
                             uint64_t *usec);
// On each heartbeat tick: NULL, or "cpu time (process tree)" when r's tree
// is past limit_cpu_seconds.
const char *capsa__cpu_budget_verdict(struct capsa_host_renderer *r);

#endif  // CAPSA_HOST_LIMITS_LIMITS_H_
