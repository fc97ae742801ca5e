// Reaping what lands on a host that inherits orphans: pid 1 of its pid
// namespace (a container's entrypoint) or a child subreaper. There a dead
// zygote's children and the descendants of renderers without a pid
// namespace become the host's children once their parent is gone, and stay
// zombies unless someone waits for them.
//
// Which zombies are taken: children of this process that are neither session
// leaders nor in this process's session. A process the embedder forks
// inherits the embedder's session, and one started with setsid() leads its
// own: neither is ever taken, so no exit status the embedder waits for is
// stolen. Every capsa process leads a session (the zygote and each renderer
// call setsid), so what the rule takes is exactly what was adopted from
// another session: capsa's own leftovers, and any other session's orphans,
// which no process but this one can wait for anyway (what an init does).
// An orphan of the embedder's own session is left to the embedder.
#ifndef CAPSA_HOST_ORPHANS_H_
#define CAPSA_HOST_ORPHANS_H_

#include <uv.h>

struct capsa__orphans;

// When this process inherits orphans: sweeps once now and on every SIGCHLD
// after (a uv_signal_t on `loop`). NULL when it does not (nothing to do) or
// on ENOMEM (then orphans stay zombies, as without this file).
struct capsa__orphans *capsa__orphans_start(uv_loop_t *loop);

// A last sweep, then the watcher is closed (freed from its close callback).
// NULL is accepted.
void capsa__orphans_stop(struct capsa__orphans *o);

// One sweep: reaps the zombies described above. Returns how many.
int capsa__orphans_sweep(void);

#endif  // CAPSA_HOST_ORPHANS_H_
