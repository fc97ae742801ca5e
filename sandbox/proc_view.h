// Whether /proc shows this process's own pid namespace, and whether this
// process inherits orphans (pid 1 of its pid namespace, or a child
// subreaper): the two things a container changes under a sandbox host.
//
// The host writes /proc/<child pid>/uid_map for each process it puts in a
// user namespace. In a pid namespace whose /proc was not remounted (started
// with `unshare --pid --fork` but no --mount-proc, or a runtime that bind
// mounts the outer /proc), that path names another process of the outer
// namespace, and the write fails (EPERM) or lands on the wrong process.
#ifndef CAPSA_SANDBOX_PROC_VIEW_H_
#define CAPSA_SANDBOX_PROC_VIEW_H_

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// 0 when /proc/self names this process (getpid() equals the pid /proc
// resolves "self" to). -ESRCH when /proc belongs to another pid namespace:
// `why` (owned by the caller, `len` bytes) then says what /proc shows and
// the fix ("mount -t proc proc /proc" inside the namespace, `unshare
// --mount-proc`, or the runtime's own /proc). -ENOENT when /proc is not
// mounted, likewise explained. `why` may be NULL.
int capsa_proc_view_check(char *why, size_t len);

// Whether orphaned processes of this pid namespace are reparented to this
// process: it is pid 1 of its pid namespace, or has set
// PR_SET_CHILD_SUBREAPER.
bool capsa_proc_inherits_orphans(void);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_PROC_VIEW_H_
