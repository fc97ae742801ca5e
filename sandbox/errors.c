// capsa_strerror / capsa_errno_name: the two capsa errno values by name, the
// rest as the C library knows them.
#include "sandbox/errors.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define ROW(e) \
  { e, #e }
static const struct {
  int value;
  const char *name;
} kNames[] = {
    ROW(ECAPMODE),      ROW(ENOTCAPABLE),     ROW(EPERM),
    ROW(ENOENT),        ROW(ESRCH),           ROW(EINTR),
    ROW(EIO),           ROW(ENXIO),           ROW(E2BIG),
    ROW(ENOEXEC),       ROW(EBADF),           ROW(ECHILD),
    ROW(EAGAIN),        ROW(ENOMEM),          ROW(EACCES),
    ROW(EFAULT),        ROW(EBUSY),           ROW(EEXIST),
    ROW(EXDEV),         ROW(ENODEV),          ROW(ENOTDIR),
    ROW(EISDIR),        ROW(EINVAL),          ROW(ENFILE),
    ROW(EMFILE),        ROW(ENOTTY),          ROW(EFBIG),
    ROW(ENOSPC),        ROW(ESPIPE),          ROW(EROFS),
    ROW(EMLINK),        ROW(EPIPE),           ROW(EDOM),
    ROW(ERANGE),        ROW(EDEADLK),         ROW(ENAMETOOLONG),
    ROW(ENOSYS),        ROW(ENOTEMPTY),       ROW(ELOOP),
    ROW(ENOTSOCK),      ROW(EMSGSIZE),        ROW(EPROTOTYPE),
    ROW(ENOPROTOOPT),   ROW(EPROTONOSUPPORT), ROW(ESOCKTNOSUPPORT),
    ROW(EOPNOTSUPP),    ROW(EAFNOSUPPORT),    ROW(EADDRINUSE),
    ROW(EADDRNOTAVAIL), ROW(ENETUNREACH),     ROW(ECONNRESET),
    ROW(ENOBUFS),       ROW(EISCONN),         ROW(ENOTCONN),
    ROW(ETIMEDOUT),     ROW(ECONNREFUSED),    ROW(EALREADY),
    ROW(EINPROGRESS),   ROW(EOVERFLOW),       ROW(ECANCELED),
    ROW(EOWNERDEAD),
};
#undef ROW

static int magnitude(int err) {
  return err < 0 ? -err : err;
}

const char *capsa_strerror(int err) {
  int e = magnitude(err);
  if (e == ECAPMODE) return "Not permitted in capability mode";
  if (e == ENOTCAPABLE) return "Capabilities insufficient";
  // strerror() of glibc returns a static string for known values; for unknown
  // ones it formats into a thread-local buffer, still never to be freed.
  return strerror(e);
}

const char *capsa_errno_name(int err) {
  int e = magnitude(err);
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); i++)
    if (kNames[i].value == e) return kNames[i].name;
  return NULL;
}
