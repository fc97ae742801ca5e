// Process descriptors on Linux pidfds: FreeBSD's pdfork(2), pdgetpid(2),
// pdkill(2) and pdwait4(2).
//
//   int run_child(void) {
//     int pd;
//     pid_t pid = capsa_pdfork(&pd, 0);  // pd: owned by the parent
//     if (pid < 0) return pid;           // -errno, no child
//     if (pid == 0) _exit(0);            // the child's work, then exit
//     capsa_pdkill(pd, SIGTERM);
//     int status;
//     capsa_pdwait(pd, &status, 0, NULL);  // reaps; WIFSIGNALED(status)
//     return close(pd);
//   }
//
// The descriptor comes from clone(CLONE_PIDFD), so there is no window in
// which the pid could name another process, and it works in capability mode
// (clone without namespace flags is allowed there; pidfd_open is not). It is
// readable (POLLIN) once the child has exited, so a libuv loop can watch it
// with uv_poll. Rights on it: CAPSA_CAP_PDGETPID, CAPSA_CAP_PDKILL,
// CAPSA_CAP_PDWAIT (capsa_rights_limit); without them each call fails with
// -ENOTCAPABLE.
//
// Differences from FreeBSD (docs/freebsd-differences.md): closing the last
// descriptor does not kill the child (Linux has no such hook), and the child
// still sends SIGCHLD and can be reaped by wait(2)/waitpid(-1); keep one
// owner for reaping.
#ifndef CAPSA_SANDBOX_PROCDESC_H_
#define CAPSA_SANDBOX_PROCDESC_H_

#include <sys/resource.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// FreeBSD's pdfork flags. CAPSA_PD_CLOEXEC is implied (pidfds are always
// close-on-exec); CAPSA_PD_DAEMON is accepted and is Linux's only behaviour.
#define CAPSA_PD_DAEMON 0x00000001
#define CAPSA_PD_CLOEXEC 0x00000002

// Forks. In the parent returns the child's pid (> 0) and stores its process
// descriptor in *pidfd (owned by the caller); in the child returns 0 and
// leaves *pidfd alone. -EINVAL (bad flags, NULL pidfd), -EAGAIN, -ENOMEM,
// -ENOSYS (kernel < 5.2) with no child created.
//
// Like _Fork(): pthread_atfork handlers do not run. In a multi-threaded
// parent the child should only use async-signal-safe functions until it
// execs or exits (POSIX's rule for fork, which glibc's fork relaxes).
pid_t capsa_pdfork(int *pidfd, int flags);

// Stores the pid behind `pidfd` (borrowed) in *pid. Works in capability mode
// on kernels with PIDFD_GET_INFO (6.13); older kernels read
// /proc/self/fdinfo, which capability mode refuses (-ECAPMODE then).
// 0, -EBADF (not a pidfd), -ESRCH (already reaped), -ENOTCAPABLE.
int capsa_pdgetpid(int pidfd, pid_t *pid);

// Sends `signum` to the process (pidfd_send_signal). 0, -EBADF, -EINVAL,
// -ESRCH (reaped), -ENOTCAPABLE.
int capsa_pdkill(int pidfd, int signum);

// Waits for the process as wait4(2) would (options: WNOHANG, WUNTRACED,
// WCONTINUED, WNOWAIT) and fills *status (wait(2) encoding, may be NULL) and
// *rusage (may be NULL), both owned by the caller. Returns the pid, 0 with
// WNOHANG when nothing changed, -ECHILD (not our child or already reaped),
// -EBADF, -ENOTCAPABLE.
pid_t capsa_pdwait(int pidfd, int *status, int options, struct rusage *ru);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_PROCDESC_H_
