// Renderer limits through cgroup v2: a cgroup per renderer where usable
// (memory.max, pids.max), else the rlimits the zygote sets at fork
// (host/limits/rlimit.c). Judges how an incarnation ended against them;
// never ends a renderer (host/limits/limits.h).
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "host/sanitizer_limits.h"

static unsigned kind_controllers(const capsa_kind_options_t *k) {
  return (k->limit_memory != CAPSA_LIMIT_NONE ? CAPSA_CGROUP_MEMORY : 0) |
         (k->limit_processes != CAPSA_LIMIT_NONE ? CAPSA_CGROUP_PIDS : 0);
}

bool capsa__limits_use_cgroup(const struct capsa__host_impl *h,
                              const capsa_kind_options_t *k) {
  return h->limits.cg_active &&
         (kind_controllers(k) || h->opts.cgroups == CAPSA_CGROUPS_REQUIRED);
}

// Once, at start (the spawn path only reads the outcome). Under cgroups the
// kinds' RLIMIT_AS / RLIMIT_NPROC are dropped: memory.max and pids.max
// replace them, and only then is the kernel's evidence (memory.events,
// pids.events) the one that refuses.
int capsa__limits_setup(struct capsa__host_impl *h) {
  struct capsa__host_limits *l = &h->limits;
  unsigned want = 0;
  for (unsigned i = 0; i < h->nkinds; i++)
    want |= kind_controllers(&h->kinds[i]);
  char why[sizeof l->why] = "";
  int err = 0;
  if (h->opts.cgroups == CAPSA_CGROUPS_OFF) {
    snprintf(why, sizeof why, "off by the host's options");
  } else if (!want && h->opts.cgroups != CAPSA_CGROUPS_REQUIRED) {
    snprintf(why, sizeof why, "not needed, no kind limits memory or processes");
  } else {
    const char *parent = h->opts.cgroup_parent;
    if (!parent) {
      const capsa_cgroup_probe_t *p = capsa_cgroup_probe();
      err = capsa_cgroup_probe_check(p, want, why, sizeof why);
      parent = p->dir;
    }
    if (err == 0)
      err = capsa_cgroup_parent_prepare(parent, want, why, sizeof why);
    if (err == 0 && strlen(parent) >= sizeof l->cg_parent) err = -ENAMETOOLONG;
    if (err == 0) {
      l->cg_active = true;
      l->cg_controllers = want;
      snprintf(l->cg_parent, sizeof l->cg_parent, "%s", parent);
    }
  }
  snprintf(l->why, sizeof l->why, "%s", why);
  if (!l->cg_active && h->opts.cgroups == CAPSA_CGROUPS_REQUIRED)
    return err < 0 ? err : -EOPNOTSUPP;
  for (unsigned i = 0; l->cg_active && i < h->nkinds; i++) {
    // A spare runs (and may allocate and fork) before it is claimed and
    // moved into its cgroup: its rlimits stay, as the backstop until then.
    if (h->kinds[i].keep_spare) continue;
    if (h->kinds[i].limit_memory != CAPSA_LIMIT_NONE) h->zkinds[i].limit_as = 0;
    if (h->kinds[i].limit_processes != CAPSA_LIMIT_NONE)
      h->zkinds[i].limit_nproc = 0;
  }
  return 0;
}

// Nothing when cgroups are not in use (no work on the spawn path).
int capsa__limits_enter(struct capsa_host_renderer *r, pid_t pid) {
  struct capsa__host_impl *h = r->h;
  const capsa_kind_options_t *k = &h->kinds[r->kind];
  if (!capsa__limits_use_cgroup(h, k)) return 0;
  // Unique in this process across hosts and restarts; a name left behind
  // by an earlier process with our pid is skipped.
  static atomic_uint seq;
  capsa_cgroup_t *cg;
  int err = -EEXIST;
  for (int i = 0; i < 16 && err == -EEXIST; i++) {
    char name[64];
    snprintf(name, sizeof name, "capsa-%d-%u", (int)getpid(),
             atomic_fetch_add(&seq, 1) + 1);
    err = capsa_cgroup_new(h->limits.cg_parent, name, &cg);
  }
  if (err < 0) return err;
  err = 0;
  if (k->limit_memory != CAPSA_LIMIT_NONE)
    err = capsa_cgroup_set_memory_max(cg, k->limit_memory);
  if (err == 0 && k->limit_processes != CAPSA_LIMIT_NONE)
    err = capsa_cgroup_set_pids_max(cg, k->limit_processes);
  if (err == 0) err = capsa_cgroup_apply(cg);
  if (err == 0) err = capsa_cgroup_add_pid(cg, pid);
  if (err < 0) {
    capsa_cgroup_remove(cg);
    capsa_cgroup_free(cg);
    return err;
  }
  r->limits.cg = cg;
  return 0;
}

// A descendant just killed may keep the cgroup busy a moment: once more
// when the handles are closed (last_try), then from the reaper's timer.
void capsa__limits_release(struct capsa_host_renderer *r, bool last_try) {
  capsa_cgroup_t *cg = r->limits.cg;
  if (!cg) return;
  if (capsa_cgroup_remove(cg) == -EBUSY) {
    if (!last_try) return;
    if (capsa__reaper_add_cgroup(r->h, cg)) {
      r->limits.cg = NULL;
      return;
    }
  }
  capsa_cgroup_free(cg);
  r->limits.cg = NULL;
}

// The kernel's cgroup counters first, else a memory-limited kind's own
// NOMEM exit (its word, see host/capsa_host.h), else the rlimits' marks:
// the zygote's CPU-limit exit code, or RLIMIT_CPU's SIGXCPU (the soft
// limit's; the hard limit is one second later, see host/zygote/server.c).
const char *capsa__limits_exit_verdict(struct capsa_host_renderer *r,
                                       int *status, int *sig) {
  const siginfo_t *si = &r->exit_info;
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  bool exited = si->si_code == CLD_EXITED;
  const char *what = NULL;
  bool cg_memory = false;
  if (r->limits.cg) {
    cg_memory = k->limit_memory != CAPSA_LIMIT_NONE;
    capsa_cgroup_events_t e;
    if (capsa_cgroup_events(r->limits.cg, &e) == 0) {
      if (e.oom_kill > 0)
        what = "memory (cgroup memory.max)";
      else if (e.pids_max > 0 && !(exited && si->si_status == 0))
        what = "processes (cgroup pids.max)";
      // A descendant outliving the (reaped) renderer dies with it.
      if (e.populated != 0) capsa_cgroup_kill(r->limits.cg);
    }
    capsa__limits_release(r, false);
  }
  if (!what && exited && si->si_status == CAPSA_HOST_EXIT_NOMEM &&
      k->limit_memory != CAPSA_LIMIT_NONE)
    what = cg_memory ? "memory (reported by the renderer)"
                     : "memory (RLIMIT_AS; reported by the renderer)";
  if (what) {
    *status = exited ? si->si_status : 0;
    *sig = exited ? 0 : si->si_status;
    return what;
  }
  if (exited && si->si_status == CAPSA__EXIT_CPU_LIMIT &&
      k->limit_cpu_seconds != CAPSA_LIMIT_NONE) {
    *status = si->si_status;
    *sig = SIGXCPU;
    return "cpu time (RLIMIT_CPU)";
  }
  if (!exited && si->si_status == SIGXCPU) {
    *status = 0;
    *sig = si->si_status;
    return "cpu time (RLIMIT_CPU)";
  }
  return NULL;
}

int capsa__limits_summary(const struct capsa__host_impl *h, char *buf,
                          size_t len) {
  const struct capsa__host_limits *l = &h->limits;
  char san[256];  // RLIMIT_AS under a sanitizer (host/sanitizer_limits.h)
  capsa__sanitizer_limits_note(h, san, sizeof san);
  if (!l->cg_active) {
    // RLIMIT_NPROC is counted per user namespace and uid: per renderer only
    // when each has a user namespace of its own (host/zygote/server.c).
    char procs[96];
    if (h->zygote.own_userns == CAPSA__OWN_USERNS)
      snprintf(procs, sizeof procs, "per renderer (own user namespace)");
    else if (h->zygote.own_userns == CAPSA__OWN_USERNS_NONE)
      snprintf(procs, sizeof procs,
               "one count for all renderers (no user namespace)");
    else if (h->zygote.own_userns == CAPSA__OWN_USERNS_PER_UID)
      snprintf(procs, sizeof procs,
               "one count for all renderers (the kernel counts per uid)");
    else
      snprintf(procs, sizeof procs,
               "one count for all renderers (no user namespace each: %s)",
               strerrorname_np(-h->zygote.own_userns) ?: "?");
    return snprintf(buf, len, "limits: rlimits (cgroup v2: %s); processes %s%s",
                    l->why, procs, san);
  }
  char names[64];
  capsa_cgroup_controllers_format(l->cg_controllers, names, sizeof names);
  return snprintf(buf, len, "limits: cgroup v2 (%s: %s)%s", l->cg_parent,
                  names[0] ? names : "no controllers", san);
}
