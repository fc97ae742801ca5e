// FreeBSD's Capsicum API (<sys/capsicum.h>, <sys/procdesc.h>) over capsa's
// own: FreeBSD returns -1 and sets errno where capsa returns -errno.
// This file defines the wrappers: it calls libc's own close/dup/fcntl.
#define CAPSA_NO_FD_WRAPPERS
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/capsicum.h>
#include <sys/procdesc.h>
#include <unistd.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/procdesc.h"
#include "sandbox/rights/rights.h"

_Static_assert(sizeof(cap_rights_t) == sizeof(capsa_rights_t),
               "cap_rights_t must match capsa_rights_t");
_Static_assert(PD_DAEMON == CAPSA_PD_DAEMON && PD_CLOEXEC == CAPSA_PD_CLOEXEC,
               "pdfork flags");

// cap_rights_t and capsa_rights_t are the same two words.
static capsa_rights_t *C(cap_rights_t *r) {
  return (capsa_rights_t *)(void *)r;
}
static const capsa_rights_t *CC(const cap_rights_t *r) {
  return (const capsa_rights_t *)(const void *)r;
}

static int ret(int r) {
  if (r < 0) {
    errno = -r;
    return -1;
  }
  return r;
}

cap_rights_t *__cap_rights_init(int version, cap_rights_t *rights, ...) {
  (void)version;
  capsa_rights_init_none(C(rights));
  va_list ap;
  va_start(ap, rights);
  capsa_rights_vset(C(rights), ap);
  va_end(ap);
  return rights;
}

cap_rights_t *__cap_rights_set(cap_rights_t *rights, ...) {
  va_list ap;
  va_start(ap, rights);
  capsa_rights_vset(C(rights), ap);
  va_end(ap);
  return rights;
}

cap_rights_t *__cap_rights_clear(cap_rights_t *rights, ...) {
  va_list ap;
  va_start(ap, rights);
  capsa_rights_vclear(C(rights), ap);
  va_end(ap);
  return rights;
}

bool __cap_rights_is_set(const cap_rights_t *rights, ...) {
  va_list ap;
  va_start(ap, rights);
  bool all = capsa_rights_vis_set(CC(rights), ap);
  va_end(ap);
  return all;
}

bool cap_rights_is_empty(const cap_rights_t *rights) {
  return capsa_rights_is_empty(CC(rights));
}
bool cap_rights_is_valid(const cap_rights_t *rights) {
  return capsa_rights_is_valid(CC(rights));
}
cap_rights_t *cap_rights_merge(cap_rights_t *dst, const cap_rights_t *src) {
  capsa_rights_merge(C(dst), CC(src));
  return dst;
}
cap_rights_t *cap_rights_remove(cap_rights_t *dst, const cap_rights_t *src) {
  capsa_rights_remove(C(dst), CC(src));
  return dst;
}
bool cap_rights_contains(const cap_rights_t *big, const cap_rights_t *little) {
  return capsa_rights_contains(CC(big), CC(little));
}

int cap_enter(void) {
  return ret(capsa_cap_enter());
}

int cap_getmode(unsigned int *modep) {
  return ret(capsa_cap_getmode(modep));
}

bool cap_sandboxed(void) {
  unsigned mode = 0;
  return capsa_cap_getmode(&mode) == 0 && mode == 1;
}

int cap_rights_limit(int fd, const cap_rights_t *rights) {
  return ret(capsa_rights_limit(fd, CC(rights)));
}

int __cap_rights_get(int version, int fd, cap_rights_t *rights) {
  if (version != CAP_RIGHTS_VERSION_00) return ret(-EINVAL);
  return ret(capsa_rights_get(fd, C(rights)));
}

int cap_ioctls_limit(int fd, const cap_ioctl_t *cmds, size_t ncmds) {
  return ret(capsa_ioctls_limit(fd, cmds, ncmds));
}

ssize_t cap_ioctls_get(int fd, cap_ioctl_t *cmds, size_t maxcmds) {
  long r = capsa_ioctls_get(fd, cmds, maxcmds);
  if (r == CAPSA_IOCTLS_ALL) return CAP_IOCTLS_ALL;
  if (r < 0) {
    errno = (int)-r;
    return -1;
  }
  return (ssize_t)r;
}

int cap_fcntls_limit(int fd, uint32_t fcntlrights) {
  return ret(capsa_fcntls_limit(fd, fcntlrights));
}

int cap_fcntls_get(int fd, uint32_t *fcntlrightsp) {
  return ret(capsa_fcntls_get(fd, fcntlrightsp));
}

pid_t pdfork(int *fdp, int flags) {
  return ret(capsa_pdfork(fdp, flags));
}

int pdgetpid(int fd, pid_t *pidp) {
  return ret(capsa_pdgetpid(fd, pidp));
}

int pdkill(int fd, int signum) {
  return ret(capsa_pdkill(fd, signum));
}

pid_t pdwait4(int fd, int *status, int options, struct rusage *rusage) {
  return ret(capsa_pdwait(fd, status, options, rusage));
}

int capsa_fbsd_close(int fd) {
  return ret(capsa_rights_close(fd));
}
int capsa_fbsd_dup(int fd) {
  return ret(capsa_rights_dup(fd));
}
int capsa_fbsd_dup2(int oldfd, int newfd) {
  if (oldfd == newfd) {  // dup2's own case: the descriptor, if valid
    capsa_rights_t r;
    return ret(capsa_rights_get(oldfd, &r) < 0 ? -EBADF : oldfd);
  }
  return ret(capsa_rights_dup3(oldfd, newfd, 0));
}
int capsa_fbsd_dup3(int oldfd, int newfd, int flags) {
  return ret(capsa_rights_dup3(oldfd, newfd, flags));
}
int capsa_fbsd_fcntl(int fd, int cmd, ...) {
  // As glibc: the optional argument is read as a pointer-sized word.
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
    return ret(capsa_rights_dupfd(fd, (int)(intptr_t)arg,
                                  cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0));
  return fcntl(fd, cmd, arg);
}
