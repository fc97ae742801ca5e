// Sealed memfds: see sandbox/memfd.h.
#include "sandbox/memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/errors.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001u
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002u
#endif
// Linux 6.3: the memfd is created non-executable with F_SEAL_EXEC set.
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008u
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif

// 0 = not probed, 1 = MFD_NOEXEC_SEAL works, 2 = only F_SEAL_EXEC, 3 = none.
static atomic_int exec_seal_mode;

static int raw_memfd_create(const char *name, unsigned flags) {
  // The libc wrapper exists in glibc >= 2.27; the raw call also works in
  // capability mode (memfd_create is allowed there) and with older libcs.
  long r = syscall(SYS_memfd_create, name, flags);
  return r < 0 ? -errno : (int)r;
}

static int create_sealable(const char *name) {
  int mode = atomic_load(&exec_seal_mode);
  if (mode == 0 || mode == 1) {
    int fd = raw_memfd_create(
        name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
    if (fd >= 0) {
      atomic_store(&exec_seal_mode, 1);
      return fd;
    }
    if (fd != -EINVAL) return fd;
    // Older kernel: unknown flag. Fall back below and remember.
  }
  int fd = raw_memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fd;
  if (fcntl(fd, F_ADD_SEALS, CAPSA_SEAL_EXEC) == 0) {
    atomic_store(&exec_seal_mode, 2);
  } else {
    // Kernel without exec seals (< 6.3): capability mode still refuses
    // PROT_EXEC mappings and execveat, which is what the seal protects.
    atomic_store(&exec_seal_mode, 3);
  }
  return fd;
}

int capsa_memfd_create(const char *name, size_t size) {
  if (size == 0 || size > (size_t)INT64_MAX) return -EINVAL;
  int fd = create_sealable(name ? name : "capsa");
  if (fd < 0) return fd;
  int err = 0;
  if (ftruncate(fd, (off_t)size) != 0) {
    err = -errno;
  } else if (fcntl(fd, F_ADD_SEALS, CAPSA_SEAL_GROW | CAPSA_SEAL_SHRINK) != 0) {
    err = -errno;
  }
  if (err < 0) {
    close(fd);
    return err == -EFBIG ? -ENOMEM : err;
  }
  return fd;
}

int capsa_memfd_seals(int fd) {
  int s = fcntl(fd, F_GET_SEALS);
  if (s < 0) return -errno;
  // Sealing closed with nothing sealed: what every tmpfs/shm file opened by
  // name and every memfd made without MFD_ALLOW_SEALING reports. It can never
  // become a region, so it is "not sealable", not "a region lacking seals".
  if ((unsigned)s == CAPSA_SEAL_SEAL) return -EINVAL;
  return s;
}

int capsa_memfd_seal_readonly(int fd) {
  if (fcntl(fd, F_ADD_SEALS, CAPSA_SEAL_FUTURE_WRITE | CAPSA_SEAL_SEAL) != 0)
    return -errno;
  return 0;
}

int capsa_memfd_seal_shared(int fd) {
  if (fcntl(fd, F_ADD_SEALS, CAPSA_SEAL_SEAL) != 0) return -errno;
  return 0;
}

int capsa_memfd_check(int fd, unsigned required, size_t *size) {
  struct stat st;
  if (fstat(fd, &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  int seals = capsa_memfd_seals(fd);
  if (seals < 0) return -EINVAL;  // not a shmem/memfd file, or never sealable
  if (((unsigned)seals & required) != required) return -ENOTCAPABLE;
  if (size) *size = (size_t)st.st_size;
  return 0;
}

bool capsa_memfd_exec_sealed(void) {
  if (atomic_load(&exec_seal_mode) == 0) {
    int fd = create_sealable("capsa-probe");
    if (fd >= 0) close(fd);
  }
  int mode = atomic_load(&exec_seal_mode);
  return mode == 1 || mode == 2;
}
