// Sealed shared memory: the kernel-object mechanism behind capsa's read-only
// and fixed-size shared-memory regions (ipc/shm builds on it).
//
//   // The writer: a region it fills, then read-only for everyone.
//   int make_readonly(const void *data, size_t n) {
//     int fd = capsa_memfd_create("frame", n);  // caller owns fd
//     if (fd < 0) return fd;
//     void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
//     if (p == MAP_FAILED) {
//       close(fd);
//       return -ENOMEM;
//     }
//     memcpy(p, data, n);
//     munmap(p, n);
//     int err = capsa_memfd_seal_readonly(fd);  // now read-only for everyone
//     if (err < 0) close(fd);
//     return err < 0 ? err : fd;  // to send
//   }
//   // The receiver checks before trusting it:
//   int check(int fd, size_t *size) {
//     return capsa_memfd_check(fd, CAPSA_MEMFD_READONLY, size);
//   }
//
// A memfd is created with MFD_CLOEXEC | MFD_ALLOW_SEALING and, when the
// kernel has it (>= 6.3), MFD_NOEXEC_SEAL (else F_SEAL_EXEC when known, else
// nothing: reported by capsa_memfd_exec_sealed()). Its size is fixed at
// creation (F_SEAL_GROW | F_SEAL_SHRINK), so a peer can never truncate it
// under a mapping (SIGBUS) or grow it.
//
// Read-only for everyone the descriptor reaches: F_SEAL_FUTURE_WRITE binds
// the inode, not the descriptor, so write(), pwrite(), a new writable shared
// mapping, mprotect(PROT_WRITE) of a read-only shared mapping and a reopen
// through /proc/self/fd are all refused (EPERM / EACCES) for every holder;
// only mappings made before the seal (the writer's own) stay writable. Then
// F_SEAL_SEAL freezes the seal set.
#ifndef CAPSA_SANDBOX_MEMFD_H_
#define CAPSA_SANDBOX_MEMFD_H_

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Seal bits (Linux's F_SEAL_* values; defined here for old libc headers).
#define CAPSA_SEAL_SEAL 0x0001u
#define CAPSA_SEAL_SHRINK 0x0002u
#define CAPSA_SEAL_GROW 0x0004u
#define CAPSA_SEAL_WRITE 0x0008u
#define CAPSA_SEAL_FUTURE_WRITE 0x0010u
#define CAPSA_SEAL_EXEC 0x0020u

// What a receiver of a fixed-size region both sides may write (e.g. a ring)
// requires: size sealed and the seal set frozen.
#define CAPSA_MEMFD_SHARED \
  (CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK | CAPSA_SEAL_SEAL)
// What a receiver of a read-only region requires.
#define CAPSA_MEMFD_READONLY (CAPSA_MEMFD_SHARED | CAPSA_SEAL_FUTURE_WRITE)

// Creates a memfd of exactly `size` bytes (> 0), size sealed, not
// executable. `name` (may be NULL: "capsa") shows in /proc/PID/maps; it is
// copied. Returns the descriptor (owned by the caller, close-on-exec) or
// -EINVAL, -ENOMEM, -EMFILE, -ENOSYS, ... The seal set is still open: call
// capsa_memfd_seal_readonly() or capsa_memfd_seal_shared() before sending.
int capsa_memfd_create(const char *name, size_t size);

// Makes the region read-only for every holder (F_SEAL_FUTURE_WRITE), then
// freezes the seals (F_SEAL_SEAL). Map it writable *before* calling this if
// the caller is the writer. `fd` stays owned by the caller. Returns 0,
// -EBADF, -EINVAL (not a memfd), -EPERM (seals already frozen without the
// write seal).
int capsa_memfd_seal_readonly(int fd);

// Freezes the seal set of a fixed-size region that stays writable (F_SEAL_SEAL
// only). `fd` stays owned by the caller. Returns 0 or a negative errno.
int capsa_memfd_seal_shared(int fd);

// Receiver side: checks that `fd` (still owned by the caller) is a memfd
// whose seals include every bit of `required` (CAPSA_MEMFD_READONLY,
// CAPSA_MEMFD_SHARED, or any CAPSA_SEAL_* set) and stores its size in *size
// (may be NULL). Returns 0; -EBADF; -EINVAL when fd is not a sealable memfd
// (a regular file, a socket, a memfd created without MFD_ALLOW_SEALING);
// -ENOTCAPABLE when a required seal is missing.
int capsa_memfd_check(int fd, unsigned required, size_t *size);

// The seals on `fd` (>= 0, CAPSA_SEAL_* bits) or a negative errno: -EINVAL
// also for a file that can never carry seals (F_SEAL_SEAL alone: a tmpfs file
// opened by name, a memfd made without MFD_ALLOW_SEALING).
int capsa_memfd_seals(int fd);

// Whether memfds made by capsa_memfd_create() carry the exec seal on this
// kernel (MFD_NOEXEC_SEAL / F_SEAL_EXEC, Linux >= 6.3). Probed once.
bool capsa_memfd_exec_sealed(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_MEMFD_H_
