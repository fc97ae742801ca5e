// The task manager (capsa_host_renderer_info, host/capsa_host.h): a snapshot
// of the host's processes from its own structures (which handle, which
// kind, which state) and /proc (age, CPU, memory; host/proc_info.h). Reads
// only: nothing here changes a renderer or the loop.
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "host/proc_info.h"
#include "sandbox/cgroup.h"

const char *capsa_rinfo_state_name(capsa_rinfo_state_t s) {
  switch (s) {
    case CAPSA_RINFO_STARTING:
      return "starting";
    case CAPSA_RINFO_READY:
      return "ready";
    case CAPSA_RINFO_ENDING:
      return "ending";
    case CAPSA_RINFO_RESTARTING:
      return "restarting";
    case CAPSA_RINFO_IDLE:
      return "idle";
  }
  return "?";
}

const char *capsa_mem_source_name(capsa_mem_source_t s) {
  switch (s) {
    case CAPSA_MEM_NONE:
      return "none";
    case CAPSA_MEM_SMAPS_ROLLUP:
      return "smaps_rollup";
    case CAPSA_MEM_CGROUP:
      return "cgroup";
    case CAPSA_MEM_STATM:
      return "statm";
  }
  return "?";
}

// The handle's state in the task manager's words. The state machine's
// (host/incarnation.c):
// R_STARTING -> R_READY on a checked HELLO; R_DYING from teardown on; an
// incarnation also ends, still STARTING/READY, once it was killed
// (kill_reason) or reaped (exited, its last messages draining); between
// incarnations backing_off with no process.
static capsa_rinfo_state_t state_of(const struct capsa_host_renderer *r) {
  if (r->backing_off) return CAPSA_RINFO_RESTARTING;
  if (r->state == R_DYING || r->exited || r->kill_reason || r->pidfd < 0)
    return CAPSA_RINFO_ENDING;
  return r->state == R_READY ? CAPSA_RINFO_READY : CAPSA_RINFO_STARTING;
}

static atomic_bool g_hide_smaps;

void capsa__task_hide_smaps_for_test(bool hide) {
  atomic_store(&g_hide_smaps, hide);
}

// Age, CPU and memory of `pid` into *o. `cg`: its own cgroup, or NULL.
static void measure(pid_t pid, const capsa_cgroup_t *cg,
                    capsa_renderer_info_t *o) {
  struct capsa__proc_stat st;
  o->err = capsa__proc_stat_read(pid, &st);
  if (o->err == 0) {
    o->uptime_ms = capsa__proc_age_ms(&st);
    o->cpu_usec = capsa__proc_ticks_usec(st.cpu_ticks);
  }
  uint64_t uss, pss;
  if (!atomic_load(&g_hide_smaps) &&
      capsa__proc_smaps_rollup(pid, &uss, &pss) == 0) {
    o->uss_bytes = uss;
    o->uss_source = CAPSA_MEM_SMAPS_ROLLUP;
    o->pss_bytes = pss;
    o->pss_source = CAPSA_MEM_SMAPS_ROLLUP;
    return;
  }
  // No ptrace-read access (a non-root host and a non-dumpable renderer):
  // what needs none. Its cgroup first, which charges the whole tree.
  if (cg && capsa__cgroup_memory_current(capsa_cgroup_path(cg), &uss) == 0) {
    o->uss_bytes = uss;
    o->uss_source = CAPSA_MEM_CGROUP;
  } else if (capsa__proc_statm_private(pid, &uss) == 0) {
    o->uss_bytes = uss;
    o->uss_source = CAPSA_MEM_STATM;
  }
}

static void put(capsa_renderer_info_t *out, size_t n, size_t i,
                const capsa_renderer_info_t *e) {
  if (i < n) out[i] = *e;
}

// A spare's kind: known when exactly one kind keeps a spare.
static int spare_kind(const struct capsa__host_impl *h) {
  int kind = -1;
  for (unsigned i = 0; i < h->nkinds; i++) {
    if (!h->kinds[i].keep_spare) continue;
    if (kind >= 0) return -1;
    kind = (int)i;
  }
  return kind;
}

static bool is_handle_pid(const struct capsa__host_impl *h, pid_t pid) {
  for (const struct capsa_host_renderer *r = h->renderers; r; r = r->next)
    if ((r->pid == pid && !r->backing_off) ||
        (r->next_claim.valid && r->next_claim.child.pid == pid))
      return true;
  return false;
}

// Spares (see CAPSA_RINFO_SPARE): found in /proc, since only the zygote
// knows their pids until one is claimed. Appended from index `i`.
static size_t list_spares(const struct capsa__host_impl *h,
                          capsa_renderer_info_t *out, size_t n, size_t i) {
  bool any = false;
  for (unsigned k = 0; k < h->nkinds; k++) any |= h->kinds[k].keep_spare;
  if (!any) return i;
  DIR *d = opendir("/proc");
  if (!d) return i;
  pid_t self = getpid();
  int kind = spare_kind(h);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    char *end;
    long v = strtol(de->d_name, &end, 10);
    if (*end || v <= 0) continue;
    pid_t pid = (pid_t)v;
    if (pid == h->zygote.pid || is_handle_pid(h, pid)) continue;
    struct capsa__proc_stat st;
    if (capsa__proc_stat_read(pid, &st) < 0 || st.ppid != self ||
        st.state == 'Z' || st.state == 'X')
      continue;
    bool capmode = false;
    if (capsa__proc_in_capmode(pid, &capmode) < 0 || !capmode) continue;
    capsa_renderer_info_t e = {
        .role = CAPSA_RINFO_SPARE,
        .state = CAPSA_RINFO_IDLE,
        .pid = pid,
        .kind = kind,
        .kind_name = kind >= 0 ? h->kinds[kind].name : NULL};
    measure(pid, NULL, &e);
    put(out, n, i++, &e);
  }
  closedir(d);
  return i;
}

int capsa_host_renderer_info(const capsa_host_t *host,
                             capsa_renderer_info_t *out, size_t n) {
  if (!host || !host->impl || (!out && n > 0)) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started) return 0;
  size_t i = 0;
  if (h->zygote.pid > 0) {
    capsa_renderer_info_t e = {.role = CAPSA_RINFO_ZYGOTE,
                               .state = CAPSA_RINFO_IDLE,
                               .pid = h->zygote.pid,
                               .kind = -1,
                               .kind_name = "zygote"};
    measure(h->zygote.pid, NULL, &e);
    put(out, n, i++, &e);
  }
  // The list is newest first: spawn order puts the m-th from the head at
  // first + (count - 1 - m).
  size_t count = 0;
  for (const struct capsa_host_renderer *r = h->renderers; r; r = r->next)
    count++;
  size_t first = i, m = 0;
  for (struct capsa_host_renderer *r = h->renderers; r; r = r->next, m++) {
    capsa_renderer_info_t e = {.role = CAPSA_RINFO_RENDERER,
                               .state = state_of(r),
                               .renderer = r,
                               .pid = r->pid,
                               .kind = r->kind,
                               .kind_name = h->kinds[r->kind].name,
                               .restarts = r->restarts};
    if (e.state == CAPSA_RINFO_RESTARTING)
      e.pid = -1;
    else if (r->exited || r->pidfd < 0)
      e.err = -ESRCH;  // reaped: its pid may already be another process's
    else
      measure(r->pid, r->limits.cg, &e);
    put(out, n, first + (count - 1 - m), &e);
  }
  i += count;
  i = list_spares(h, out, n, i);
  return i > (size_t)INT32_MAX ? INT32_MAX : (int)i;
}
