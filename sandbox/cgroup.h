// cgroup v2 resource limits for one process tree: where cgroup v2 is, which
// controllers the caller can use, and one cgroup per sandboxed process.
//
//   const capsa_cgroup_probe_t *p = capsa_cgroup_probe();   // cached
//   char why[256];
//   if (capsa_cgroup_parent_prepare(p->dir, CAPSA_CGROUP_MEMORY, why,
//                                   sizeof why) < 0) { use rlimits; say why }
//   capsa_cgroup_t *cg;
//   capsa_cgroup_new(p->dir, "renderer-1", &cg);            // mkdir
//   capsa_cgroup_set_memory_max(cg, 128u << 20);             // records
//   capsa_cgroup_apply(cg);                                   // writes
//   capsa_cgroup_add_pid(cg, pid);                            // cgroup.procs
//   ... the process exits and is reaped ...
//   capsa_cgroup_events_t e;
//   capsa_cgroup_events(cg, &e);       // e.oom_kill > 0: the memory limit
//   capsa_cgroup_remove(cg);           // rmdir
//   capsa_cgroup_free(cg);
//
// Where the per-process cgroups live (the "no internal processes" rule): a
// cgroup other than the root can give controllers to its children (write
// them into its cgroup.subtree_control) only while it holds no process
// itself. capsa never moves the caller: where a process lives is its
// embedder's business (systemd, a container runtime). So the parent of the
// per-process cgroups is either
//   - a delegated, empty cgroup the embedder names (systemd: Delegate=yes,
//     the service's processes moved to a leaf such as .../host), or
//   - the caller's own cgroup when that is the hierarchy's root (exempt from
//     the rule) or already has the controllers in cgroup.subtree_control
//     (then the caller itself is not in it: a threaded or root cgroup).
// capsa_cgroup_parent_prepare() enables the controllers in the parent's
// subtree_control and reports the kernel's refusal precisely (EBUSY: the
// parent holds processes; EACCES/EPERM: not delegated to us; EOPNOTSUPP: the
// controller is not in the parent's cgroup.controllers, e.g. bound to a
// cgroup v1 hierarchy). Nothing here falls back silently: callers choose
// rlimits and say why.
//
// All functions return >= 0 or -errno and never crash on a missing file
// (older kernels lack cgroup.kill, memory.swap.max, ...).
#ifndef CAPSA_SANDBOX_CGROUP_H_
#define CAPSA_SANDBOX_CGROUP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// Controllers capsa uses (bit set).
#define CAPSA_CGROUP_MEMORY 1u  // memory.max, memory.swap.max, memory.events
#define CAPSA_CGROUP_PIDS 2u    // pids.max, pids.events
#define CAPSA_CGROUP_CPU 4u     // cpu.max (bandwidth, not total CPU time)
#define CAPSA_CGROUP_ALL 7u

typedef struct capsa_cgroup_probe_result {
  bool mounted;        // a cgroup2 filesystem is in /proc/self/mountinfo
  bool in_hierarchy;   // our own v2 cgroup is visible under that mount
  bool is_root;        // ... and it is the hierarchy's root cgroup
  bool writable;       // we may mkdir in dir and write its subtree_control
  unsigned available;  // CAPSA_CGROUP_* in dir/cgroup.controllers
  unsigned enabled;    // CAPSA_CGROUP_* in dir/cgroup.subtree_control
  unsigned v1_bound;   // CAPSA_CGROUP_* mounted as cgroup v1 hierarchies
  char mount[256];     // where cgroup2 is mounted ("" when not)
  char self[256];      // our cgroup, as /proc/self/cgroup's "0::" line
  char dir[512];       // mount + self: our own v2 cgroup's directory
} capsa_cgroup_probe_t;

// Probes once (thread-safe); later calls return the cache (static storage,
// never freed). Reads /proc/self/mountinfo (fstype cgroup2, wherever it is
// mounted), /proc/self/cgroup and dir's cgroup.controllers and
// cgroup.subtree_control. Creates nothing.
const capsa_cgroup_probe_t *capsa_cgroup_probe(void);

// The same from given files (paths borrowed), uncached: for tests and
// tools. 0, or -errno when a file cannot be read (then out says what was
// learnt before: mounted=false etc.).
int capsa_cgroup_probe_from(const char *mountinfo, const char *proc_cgroup,
                            capsa_cgroup_probe_t *out);

// Whether `controllers` can be limited for children of p->dir, without
// changing anything: 0 (why = "") or -errno with why (caller's buffer)
// saying precisely what is missing, e.g. "memory, pids not in
// /sys/fs/cgroup/unified/cgroup.controllers (bound to cgroup v1)":
// -ENOENT no cgroup2 mount or our cgroup not under it, -EACCES not
// writable, -EOPNOTSUPP a controller is missing.
int capsa_cgroup_probe_check(const capsa_cgroup_probe_t *p,
                             unsigned controllers, char *why, size_t len);

// Makes `dir` (borrowed path of an existing cgroup v2 directory) ready to
// hold per-process cgroups with `controllers`: each must be listed in its
// cgroup.controllers (-EOPNOTSUPP), and is written into its
// cgroup.subtree_control unless already there (the kernel's errno: EBUSY
// when dir holds processes, EACCES/EPERM when not delegated). -EMEDIUMTYPE
// when dir is not on a cgroup2 filesystem, -EINVAL for bad arguments. why
// (caller's buffer, may be NULL with len 0) gets a one-line reason.
int capsa_cgroup_parent_prepare(const char *dir, unsigned controllers,
                                char *why, size_t len);

// One cgroup (opaque). Limits are recorded by the setters and written by
// apply.
typedef struct capsa_cgroup capsa_cgroup_t;

// mkdir parent/name (parent borrowed; name one path component, not "." or
// "..", < 128 bytes) and open it. -EINVAL bad arguments, -EEXIST, or
// mkdir's errno. *out is owned by the caller (capsa_cgroup_free).
int capsa_cgroup_new(const char *parent, const char *name,
                     capsa_cgroup_t **out);

// Record limits (0 or -EINVAL; nothing is written yet). memory.max in bytes
// (> 0); with it apply also writes memory.swap.max = 0 where that file
// exists, so that the limit is one of memory, not memory + swap. pids.max
// (> 0). cpu.max: quota_us of CPU per period_us (1000 <= quota; 1000 <=
// period <= 1000000): a bandwidth cap, throttling, never a kill.
int capsa_cgroup_set_memory_max(capsa_cgroup_t *cg, uint64_t bytes);
int capsa_cgroup_set_pids_max(capsa_cgroup_t *cg, uint64_t n);
int capsa_cgroup_set_cpu_max(capsa_cgroup_t *cg, uint64_t quota_us,
                             uint64_t period_us);

// Writes the recorded limits. Every controller a recorded limit needs must
// be in the cgroup's cgroup.controllers, else -EOPNOTSUPP and nothing is
// written (an unavailable controller is the caller's error to see, never
// skipped). Then the kernel's errno of a failed write, if any.
int capsa_cgroup_apply(capsa_cgroup_t *cg);

// Moves pid (a whole process) into the cgroup: cgroup.procs. The kernel's
// errno (ESRCH gone, EACCES/EPERM not allowed, EBUSY ...).
int capsa_cgroup_add_pid(capsa_cgroup_t *cg, pid_t pid);

// The cgroup's directory descriptor (borrowed, valid until free), e.g. for
// clone3's CLONE_INTO_CGROUP, which places a child there atomically.
int capsa_cgroup_fd(const capsa_cgroup_t *cg);
const char *capsa_cgroup_path(const capsa_cgroup_t *cg);  // borrowed

typedef struct capsa_cgroup_event_counts {
  int populated;      // cgroup.events: 1 a process is inside, 0 none, -1 ?
  bool has_memory;    // memory.events was readable
  uint64_t oom;       // memory.events "oom": allocations hit memory.max
  uint64_t oom_kill;  // memory.events "oom_kill": processes killed for it
  bool has_pids;      // pids.events was readable
  uint64_t pids_max;  // pids.events "max": forks refused by pids.max
} capsa_cgroup_events_t;

// Reads the counters (missing files leave their fields 0 / has_* false).
// 0, or -errno when cgroup.events cannot be read (not a cgroup any more).
int capsa_cgroup_events(capsa_cgroup_t *cg, capsa_cgroup_events_t *out);

// Kills every process in the cgroup: cgroup.kill (Linux >= 5.14), else
// SIGKILL to each pid of cgroup.procs, round after round until the list is
// empty. 0, or -errno; -EBUSY when processes were still listed after the
// rounds (they keep forking, or are slow to exit).
int capsa_cgroup_kill(capsa_cgroup_t *cg);

// rmdir: only once its processes are gone and reaped (-EBUSY before).
int capsa_cgroup_remove(capsa_cgroup_t *cg);

// Closes and frees (does not remove). NULL is fine.
void capsa_cgroup_free(capsa_cgroup_t *cg);

// "memory,pids" for a CAPSA_CGROUP_* set, into buf (as snprintf).
int capsa_cgroup_controllers_format(unsigned set, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_CGROUP_H_
