// Sealed shared-memory regions with bounds-checked views.
//
//   // Host: a region the host fills and the renderer may only read.
//   int make_frame(capsa_shm_region_t *r, const void *px, size_t n) {
//     int err = capsa_shm_create(n, "frame", CAPSA_SHM_CREATOR_WRITES, r);
//     void *dst;
//     if (err == 0 && (err = capsa_shm_view_mut(r, 0, n, &dst)) == 0)
//       memcpy(dst, px, n);
//     return err;  // r->fd is still owned by r: send a dup or release it
//   }  // (capsa_shm_release_fd)
//
//   // Renderer, on receiving fd (and the size the message declared):
//   int use_frame(int fd, size_t size, size_t off, size_t len) {
//     capsa_shm_region_t in;
//     int err = capsa_shm_map_fd(fd, size, CAPSA_SHM_PEER_READS, &in);
//     if (err < 0) return err;  // the caller still owns fd (a bad message)
//     const void *src;          // `in` owns fd and the read-only mapping
//     if ((err = capsa_shm_view(&in, off, len, &src)) == 0)
//       fwrite(src, 1, len, stdout);
//     capsa_shm_close(&in);
//     return err;
//   }
//
// Every region is a memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING, never
// executable: MFD_NOEXEC_SEAL, or F_SEAL_EXEC on kernels without it) whose
// size is sealed (F_SEAL_GROW | F_SEAL_SHRINK) and whose seal set is closed
// (F_SEAL_SEAL). Who may write is enforced by the kernel object, not by
// convention, and holds across dup, fork, SCM_RIGHTS and /proc/self/fd
// reopening, because seals belong to the inode:
//
//   mode                       creator maps   peer gets        seal added
//   CAPSA_SHM_CREATOR_WRITES   read-write     read-only        FUTURE_WRITE
//   CAPSA_SHM_CREATOR_FREEZES  read-write,    read-only        WRITE, at
//                              then read-only                  capsa_shm_freeze
//   CAPSA_SHM_PEER_WRITES      read-only      read-write       -
//   CAPSA_SHM_BOTH_WRITE       read-write     read-write       -
//
// Read-only is FUTURE_WRITE for a region the host makes: the host's own
// mapping, made before the seal, stays writable, and the renderer trusts the
// host. The host does not trust a renderer: a region a renderer sends it
// read-only must carry F_SEAL_WRITE, which the kernel refuses to add while
// any writable mapping of the memfd exists, anywhere (ipc/handle.h checks it
// on receipt; the host maps it with CAPSA_SHM_READS_FROZEN). A renderer makes
// one with CAPSA_SHM_CREATOR_FREEZES: it fills the region, then
// capsa_shm_freeze() drops its writable mapping and seals.
//
// With CAPSA_SHM_PEER_WRITES and CAPSA_SHM_BOTH_WRITE the peer can change the
// content at any moment: treat every byte as hostile, copy it out with
// capsa_shm_read() before validating it. The size seals are what make reading
// safe at all: a peer that could shrink the memfd would make our loads SIGBUS.
//
// What seals cannot refuse: mmap(PROT_EXEC) of the memfd (the kernel allows
// it for any readable file on the internal shm mount; capability mode's
// seccomp layer refuses PROT_EXEC instead) and a private copy-on-write
// mapping (MAP_PRIVATE | PROT_WRITE), which never reaches the other side.
#ifndef CAPSA_IPC_SHM_H_
#define CAPSA_IPC_SHM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef enum capsa_shm_mode {
  // The creator writes, the peer reads: the writer's mapping is made before
  // F_SEAL_FUTURE_WRITE, after which no new writable mapping or write() is
  // possible through any descriptor of the memfd.
  CAPSA_SHM_CREATOR_WRITES = 1,
  // The peer writes (e.g. a renderer draws a frame), the creator maps
  // read-only and must copy out and validate what it reads.
  CAPSA_SHM_PEER_WRITES = 2,
  // Both sides write (rings: each side owns some words). Content is hostile
  // for both.
  CAPSA_SHM_BOTH_WRITE = 3,
  // The creator writes, then freezes (capsa_shm_freeze): F_SEAL_WRITE, after
  // which nobody, the creator included, can change a byte. What a renderer
  // sends the host as read-only. Until frozen the seal set is open and the
  // region is not sendable (a receiver refuses it).
  CAPSA_SHM_CREATOR_FREEZES = 4,
} capsa_shm_mode_t;

// How the receiving side of a descriptor intends to map it; checked against
// the seals the descriptor actually carries.
typedef enum capsa_shm_access {
  // Needs F_SEAL_WRITE or F_SEAL_FUTURE_WRITE: the receiver cannot write, nor
  // can anyone else except through the creator's mapping made before the
  // seal (the host, which the renderer trusts).
  CAPSA_SHM_PEER_READS = 1,
  // Needs no write seal and an O_RDWR descriptor; mapped read-write.
  CAPSA_SHM_PEER_READWRITE = 2,
  // Needs F_SEAL_WRITE: no writable mapping exists anywhere, not even the
  // creator's. How the host maps a region a renderer made (a renderer's
  // FUTURE_WRITE region is refused: its maker may still write it).
  CAPSA_SHM_READS_FROZEN = 3,
} capsa_shm_access_t;

// Largest region capsa creates or accepts (1 GiB): a declared size beyond it
// is a bad message, not an allocation.
#define CAPSA_SHM_MAX_SIZE ((size_t)1 << 30)

// A mapped region. Fields are read-only for users; change them only through
// the functions below.
typedef struct capsa_shm_region {
  int fd;          // owned by the region; -1 once released or closed
  void *base;      // mapping owned by the region; NULL once closed
  size_t size;     // bytes mapped (the sealed memfd size)
  bool writable;   // this process's mapping is PROT_WRITE
  uint32_t seals;  // F_GET_SEALS as verified when created or mapped
} capsa_shm_region_t;

// Creates a sealed memfd of `size` bytes (1..CAPSA_SHM_MAX_SIZE, rounded up to
// the page size) and maps it in this process as `mode` says. `name` is a
// debug label (memfd:<name> in /proc/pid/maps), may be NULL, is not kept.
// On success *out owns the descriptor and the mapping; on failure *out is
// left closed (fd -1, base NULL) and nothing leaks.
// Errors: -EINVAL (size or mode), -ENOMEM, -EMFILE, -ENOTCAPABLE (the kernel
// did not keep a seal), or the errno of memfd_create / fcntl / mmap.
int capsa_shm_create(size_t size, const char *name, capsa_shm_mode_t mode,
                     capsa_shm_region_t *out);

// A CAPSA_SHM_CREATOR_FREEZES region, filled: drops this process's writable
// mapping, seals F_SEAL_WRITE | F_SEAL_SEAL and maps it again read-only
// (r->writable false, r->seals updated). Afterwards no one can write it, so
// it may be sent read-only to the host. Returns 0, -EINVAL (not a mapped,
// unfrozen CAPSA_SHM_CREATOR_FREEZES region), -EBUSY (a writable mapping
// of it still exists: one made through r->fd or a dup, or inherited by a
// child forked since; the region is left as it was, writable), or mmap's
// -errno.
int capsa_shm_freeze(capsa_shm_region_t *r);

// Checks, from the receiving side, that `fd` is a memfd region of exactly
// `size` bytes whose seals enforce `access`: a regular shmem file (F_GET_SEALS
// works), size sealed both ways, seal set closed, exec sealed when the kernel
// knows F_SEAL_EXEC, for CAPSA_SHM_PEER_READS a write seal, for
// CAPSA_SHM_READS_FROZEN F_SEAL_WRITE itself. Never blocks
// (no read or open on `fd`). `fd` stays owned by the caller.
// Returns the descriptor's seals (>= 0) or -errno: -EBADF, -ENODEV (not a
// sealable memfd), -EMSGSIZE (size differs or is out of range), -ENOTCAPABLE (a
// required seal is missing), -EACCES (CAPSA_SHM_PEER_READWRITE on a descriptor
// not open for writing).
int capsa_shm_verify(int fd, size_t size, capsa_shm_access_t access);

// capsa_shm_verify(), then maps `fd` (read-only for CAPSA_SHM_PEER_READS,
// read-write for CAPSA_SHM_PEER_READWRITE). On success *out owns `fd` and
// the mapping; on failure the caller still owns `fd` and *out is closed.
int capsa_shm_map_fd(int fd, size_t size, capsa_shm_access_t access,
                     capsa_shm_region_t *out);

// Bounds-checked pointers into the mapping: [offset, offset + len) must lie
// within the region (overflow-safe). len 0 is allowed at any offset <= size.
// The pointer stays valid until capsa_shm_close(); the memory is owned by
// the region. Errors: -ERANGE (out of bounds), -EBADF (closed region),
// -EACCES (capsa_shm_view_mut on a read-only mapping).
int capsa_shm_view(const capsa_shm_region_t *r, size_t offset, size_t len,
                   const void **out);
int capsa_shm_view_mut(capsa_shm_region_t *r, size_t offset, size_t len,
                       void **out);

// Copies [offset, offset + len) out into `dst` (caller-owned, len bytes):
// the snapshot to validate when the peer may write. Same errors as above.
int capsa_shm_read(const capsa_shm_region_t *r, size_t offset, void *dst,
                   size_t len);
// Copies `len` bytes of `src` into the region at `offset`.
int capsa_shm_write(capsa_shm_region_t *r, size_t offset, const void *src,
                    size_t len);

// Zeroes the whole region, also one this process may not write through its
// mapping (CAPSA_SHM_PEER_WRITES: the peer's output): its pages are dropped
// (fallocate PUNCH_HOLE) and read back as zeros, or, where a write seal
// refuses that, overwritten through this process's writable mapping. For
// reusing a region for another job once every process that held it is
// gone: what the last one wrote must not reach the next. Returns 0, -EBADF
// (no descriptor and no writable mapping), -EPERM (write-sealed and not
// writable here: make a new region instead), or fallocate's -errno.
int capsa_shm_clear(capsa_shm_region_t *r);

// Hands the descriptor to the caller (e.g. to send it, then close it) and
// keeps the mapping: the region then only needs capsa_shm_close() for the
// mapping. Returns the fd (>= 0, now caller-owned) or -EBADF.
int capsa_shm_release_fd(capsa_shm_region_t *r);

// Drops this process's mapping of `r` and keeps its descriptor (r->base
// becomes NULL; views then fail with -EBADF). A creator that has filled a
// region others may only read calls this once it is done writing, so that
// no writable alias is left in this process or in any process forked from
// it later: seals refuse new write paths, not a mapping that exists.
// Returns 0 or -errno (-EINVAL when r is NULL or not mapped).
int capsa_shm_unmap(capsa_shm_region_t *r);

// Unmaps and closes whatever the region still owns. Idempotent; returns 0 or
// the first munmap/close error (the region is closed regardless).
int capsa_shm_close(capsa_shm_region_t *r);

// The seals every capsa region carries on this kernel (F_SEAL_EXEC included
// when the kernel has it: capsa_memfd_exec_sealed()): GROW, SHRINK, SEAL.
uint32_t capsa_shm_base_seals(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_SHM_H_
