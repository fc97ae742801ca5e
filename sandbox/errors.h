// capsa's error values: FreeBSD's ECAPMODE and ENOTCAPABLE on Linux.
//
//   #include <capsa/capmode.h>
//
//   int enter(void) {
//     int r = capsa_cap_enter();
//     if (r < 0) fprintf(stderr, "cap_enter: %s\n", capsa_strerror(r));
//     int fd = openat(AT_FDCWD, "x", O_RDONLY);
//     if (fd < 0 && errno == ECAPMODE)
//       fprintf(stderr, "open: %s\n", capsa_errno_name(errno));  // "ECAPMODE"
//     return r;
//   }
//
// Linux has no such errno values, so capsa picks two that no kernel path
// returns: FreeBSD's numbers (93, 94) plus 1000. They stay below 4096 (the
// kernel's MAX_ERRNO, so libc reports them through errno) and far from the
// kernel-internal restart codes 512-530, which must never reach user space.
// strerror() does not know them; capsa_strerror() names them.
#ifndef CAPSA_SANDBOX_ERRORS_H_
#define CAPSA_SANDBOX_ERRORS_H_

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// A descriptor lacks a right the operation needs (FreeBSD: 93).
#define CAPSA_ENOTCAPABLE 1093
// The operation is not permitted in capability mode (FreeBSD: 94).
#define CAPSA_ECAPMODE 1094

#ifndef ENOTCAPABLE
#define ENOTCAPABLE CAPSA_ENOTCAPABLE
#endif
#ifndef ECAPMODE
#define ECAPMODE CAPSA_ECAPMODE
#endif

// Describes an errno value, positive or negative (capsa functions return
// -errno). Knows ECAPMODE and ENOTCAPABLE; otherwise as strerror(). The
// returned string is static and must not be freed.
const char *capsa_strerror(int err);

// The symbolic name ("ECAPMODE", "EACCES", ...) or NULL when unknown.
const char *capsa_errno_name(int err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_ERRORS_H_
