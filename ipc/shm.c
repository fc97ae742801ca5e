// Sealed memfd regions. See ipc/shm.h for the model; the memfd itself (create,
// seal, check) is sandbox/memfd.h's mechanism.
#include "ipc/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/errors.h"
#include "sandbox/memfd.h"

static int neg_errno(void) {
  return errno > 0 ? -errno : -EIO;
}

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

uint32_t capsa_shm_base_seals(void) {
  return CAPSA_MEMFD_SHARED |
         (capsa_memfd_exec_sealed() ? CAPSA_SEAL_EXEC : 0u);
}

static void region_reset(capsa_shm_region_t *r) {
  r->fd = -1;
  r->base = NULL;
  r->size = 0;
  r->writable = false;
  r->seals = 0;
}

int capsa_shm_create(size_t size, const char *name, capsa_shm_mode_t mode,
                     capsa_shm_region_t *out) {
  if (!out) return -EINVAL;
  region_reset(out);
  if (size == 0 || size > CAPSA_SHM_MAX_SIZE) return -EINVAL;
  if (mode != CAPSA_SHM_CREATOR_WRITES && mode != CAPSA_SHM_PEER_WRITES &&
      mode != CAPSA_SHM_BOTH_WRITE && mode != CAPSA_SHM_CREATOR_FREEZES)
    return -EINVAL;
  size_t ps = page_size();
  size = (size + ps - 1) & ~(ps - 1);

  int fd = capsa_memfd_create(name ? name : "capsa-shm", size);
  if (fd < 0) return fd;

  bool writable = mode != CAPSA_SHM_PEER_WRITES;
  void *base = mmap(NULL, size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                    MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = neg_errno();
    close(fd);
    return err;
  }
  // Read-only for the peer: FUTURE_WRITE (not WRITE), so our writable mapping
  // made just above keeps working while every later write path through any
  // descriptor of this memfd is refused.
  // CAPSA_SHM_CREATOR_FREEZES: the seal set stays open for F_SEAL_WRITE
  // (capsa_shm_freeze); only the size (and exec) seals are on it now.
  int err = mode == CAPSA_SHM_CREATOR_WRITES    ? capsa_memfd_seal_readonly(fd)
            : mode == CAPSA_SHM_CREATOR_FREEZES ? 0
                                                : capsa_memfd_seal_shared(fd);
  uint32_t want = capsa_shm_base_seals();
  if (mode == CAPSA_SHM_CREATOR_WRITES) want |= CAPSA_SEAL_FUTURE_WRITE;
  if (mode == CAPSA_SHM_CREATOR_FREEZES) want &= ~CAPSA_SEAL_SEAL;
  int got = err < 0 ? err : capsa_memfd_seals(fd);
  if (got >= 0 && ((uint32_t)got & want) != want) got = -ENOTCAPABLE;
  if (got < 0) {
    munmap(base, size);
    close(fd);
    return got;
  }
  out->fd = fd;
  out->base = base;
  out->size = size;
  out->writable = writable;
  out->seals = (uint32_t)got;
  return 0;
}

int capsa_shm_freeze(capsa_shm_region_t *r) {
  if (!r || r->fd < 0 || !r->base || !r->writable ||
      (r->seals & CAPSA_SEAL_SEAL))
    return -EINVAL;
  // Our own writable mapping would make the kernel refuse F_SEAL_WRITE.
  if (munmap(r->base, r->size) < 0) return neg_errno();
  r->base = NULL;
  int err = 0;
  if (fcntl(r->fd, F_ADD_SEALS, CAPSA_SEAL_WRITE | CAPSA_SEAL_SEAL) != 0)
    err = neg_errno();
  bool writable = err < 0;  // refused: as it was, writable again
  int got = writable ? 0 : capsa_memfd_seals(r->fd);
  if (got > 0) r->seals = (uint32_t)got;
  // Sealed: a private read-only mapping. Kernels before 6.7 refuse any
  // shared mapping of a write-sealed memfd through an O_RDWR descriptor, and
  // nothing can change the pages now, so private reads see what is there;
  // a later mprotect(PROT_WRITE) only ever writes a private copy.
  void *base =
      mmap(NULL, r->size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
           writable ? MAP_SHARED : MAP_PRIVATE, r->fd, 0);
  if (base == MAP_FAILED) {
    r->writable = false;
    return err < 0 ? err : neg_errno();
  }
  r->base = base;
  r->writable = writable;
  return err < 0 ? err : got < 0 ? got : 0;
}

int capsa_shm_verify(int fd, size_t size, capsa_shm_access_t access) {
  if (fd < 0) return -EBADF;
  if (access != CAPSA_SHM_PEER_READS && access != CAPSA_SHM_PEER_READWRITE &&
      access != CAPSA_SHM_READS_FROZEN)
    return -EINVAL;
  uint32_t need = capsa_shm_base_seals();
  size_t actual = 0;
  int err = capsa_memfd_check(fd, need, &actual);
  if (err < 0) return err;
  if (size == 0 || size > CAPSA_SHM_MAX_SIZE || actual != size)
    return -EMSGSIZE;
  int seals = capsa_memfd_seals(fd);
  if (seals < 0) return seals;
  bool write_sealed = seals & (CAPSA_SEAL_WRITE | CAPSA_SEAL_FUTURE_WRITE);
  if (access == CAPSA_SHM_PEER_READS && !write_sealed) return -ENOTCAPABLE;
  // FUTURE_WRITE leaves the maker's earlier writable mapping working.
  if (access == CAPSA_SHM_READS_FROZEN && !(seals & CAPSA_SEAL_WRITE))
    return -ENOTCAPABLE;
  if (access == CAPSA_SHM_PEER_READWRITE) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) return neg_errno();
    if ((fl & O_ACCMODE) != O_RDWR) return -EACCES;
    // A write seal would make our writable mapping fail later; say so now.
    if (write_sealed) return -EACCES;
  }
  return seals;
}

int capsa_shm_map_fd(int fd, size_t size, capsa_shm_access_t access,
                     capsa_shm_region_t *out) {
  if (!out) return -EINVAL;
  region_reset(out);
  int seals = capsa_shm_verify(fd, size, access);
  if (seals < 0) return seals;
  bool writable = access == CAPSA_SHM_PEER_READWRITE;  // else read-only
  void *base = mmap(NULL, size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                    MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return neg_errno();
  out->fd = fd;
  out->base = base;
  out->size = size;
  out->writable = writable;
  out->seals = (uint32_t)seals;
  return 0;
}

// The only bounds check: overflow-safe because it never computes
// offset + len before knowing offset <= size.
static int check_range(const capsa_shm_region_t *r, size_t offset, size_t len) {
  if (!r || !r->base) return -EBADF;
  if (offset > r->size || len > r->size - offset) return -ERANGE;
  return 0;
}

int capsa_shm_view(const capsa_shm_region_t *r, size_t offset, size_t len,
                   const void **out) {
  int err = check_range(r, offset, len);
  if (err < 0) return err;
  if (!out) return -EINVAL;
  *out = (const uint8_t *)r->base + offset;
  return 0;
}

int capsa_shm_view_mut(capsa_shm_region_t *r, size_t offset, size_t len,
                       void **out) {
  int err = check_range(r, offset, len);
  if (err < 0) return err;
  if (!r->writable) return -EACCES;
  if (!out) return -EINVAL;
  *out = (uint8_t *)r->base + offset;
  return 0;
}

int capsa_shm_read(const capsa_shm_region_t *r, size_t offset, void *dst,
                   size_t len) {
  int err = check_range(r, offset, len);
  if (err < 0) return err;
  if (len && !dst) return -EINVAL;
  if (len) memcpy(dst, (const uint8_t *)r->base + offset, len);
  return 0;
}

int capsa_shm_write(capsa_shm_region_t *r, size_t offset, const void *src,
                    size_t len) {
  int err = check_range(r, offset, len);
  if (err < 0) return err;
  if (!r->writable) return -EACCES;
  if (len && !src) return -EINVAL;
  if (len) memcpy((uint8_t *)r->base + offset, src, len);
  return 0;
}

int capsa_shm_clear(capsa_shm_region_t *r) {
  if (!r) return -EINVAL;
  if (r->fd >= 0) {
    if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                  (off_t)r->size) == 0)
      return 0;
    if (errno != EPERM || !r->writable) return neg_errno();
  }
  if (!r->writable || !r->base) return r->fd >= 0 ? -EPERM : -EBADF;
  memset(r->base, 0, r->size);
  return 0;
}

int capsa_shm_release_fd(capsa_shm_region_t *r) {
  if (!r || r->fd < 0) return -EBADF;
  int fd = r->fd;
  r->fd = -1;
  return fd;
}

int capsa_shm_unmap(capsa_shm_region_t *r) {
  if (!r || !r->base) return -EINVAL;
  if (munmap(r->base, r->size) < 0) return neg_errno();
  r->base = NULL;
  r->writable = false;
  return 0;
}

int capsa_shm_close(capsa_shm_region_t *r) {
  if (!r) return -EINVAL;
  int err = 0;
  if (r->base && munmap(r->base, r->size) < 0) err = neg_errno();
  if (r->fd >= 0 && close(r->fd) < 0 && err == 0) err = neg_errno();
  region_reset(r);
  return err;
}
