// Internal: renderers are the OOM killer's first choice, never the host.
#ifndef CAPSA_HOST_OOM_SCORE_H_
#define CAPSA_HOST_OOM_SCORE_H_

#include <sys/types.h>

// What every renderer gets: the maximum, so that where no memory cgroup
// holds renderers (rlimits count no shmem, a tree of processes may hold
// several times limit_memory) the kernel kills a renderer before its host.
#define CAPSA__RENDERER_OOM_SCORE_ADJ 1000

// Writes CAPSA__RENDERER_OOM_SCORE_ADJ to /proc/PID/oom_score_adj of a
// renderer that is the caller's unreaped child (so `pid` cannot name
// another process). Raising needs no privilege; a root host also raises
// the process's floor (oom_score_adj_min), so it cannot lower it again.
// Returns 0 or -errno (the renderer runs on, with the host's value).
int capsa__oom_score_raise(pid_t pid);

#endif  // CAPSA_HOST_OOM_SCORE_H_
