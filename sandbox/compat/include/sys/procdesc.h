// FreeBSD's <sys/procdesc.h> on Linux, over capsa's pidfd process
// descriptors (sandbox/procdesc.h).
//
//   #include <sys/procdesc.h>
//
//   int run(void) {
//     int fd;
//     pid_t pid = pdfork(&fd, 0);
//     if (pid < 0) return -1;
//     if (pid == 0) _exit(0);  // the child's work, then exit
//     pdkill(fd, SIGTERM);
//     int status;
//     pdwait4(fd, &status, 0, NULL);
//     return close(fd);
//   }
//
// FreeBSD's -1/errno convention. Difference: closing the last descriptor
// does not kill the child on Linux (docs/freebsd-differences.md).
#ifndef CAPSA_COMPAT_SYS_PROCDESC_H_
#define CAPSA_COMPAT_SYS_PROCDESC_H_

#include <sys/resource.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

#define PD_DAEMON 0x00000001
#define PD_CLOEXEC 0x00000002
#define PD_ALLOWED_AT_FORK (PD_DAEMON | PD_CLOEXEC)

pid_t pdfork(int *fdp, int flags);
int pdgetpid(int fd, pid_t *pidp);
int pdkill(int fd, int signum);
// wait4(2) on a process descriptor: returns the pid, 0 with WNOHANG when
// nothing changed, or -1 with errno.
pid_t pdwait4(int fd, int *status, int options, struct rusage *rusage);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_COMPAT_SYS_PROCDESC_H_
