// Landlock rulesets for capability mode: handle every access right the
// running kernel knows and grant them only beneath held directories.
#include "sandbox/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

// UAPI values (include/uapi/linux/landlock.h), by the ABI that added them.
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
// ABI 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_ABI1 ((1ULL << 13) - 1)
// ABI 2: rename/link across directories.
#define LL_FS_REFER (1ULL << 13)
// ABI 3: truncate(2), ftruncate on files opened after restriction.
#define LL_FS_TRUNCATE (1ULL << 14)
// ABI 5: ioctl on character/block devices opened after restriction.
#define LL_FS_IOCTL_DEV (1ULL << 15)
// ABI 4: TCP.
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
// ABI 6: scopes.
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI >= 4
  uint64_t scoped;              // ABI >= 6
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

int capsa__landlock_abi(void) {
  long abi =
      syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

void capsa__landlock_handled_for(int abi, struct capsa__landlock_handled *h) {
  h->fs = h->dir_rw = h->net = h->scoped = 0;
  if (abi < 1) return;
  h->fs = LL_FS_ABI1;
  if (abi >= 2) h->fs |= LL_FS_REFER;
  if (abi >= 3) h->fs |= LL_FS_TRUNCATE;
  if (abi >= 5) h->fs |= LL_FS_IOCTL_DEV;
  if (abi >= 4) h->net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  if (abi >= 6) h->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
  // Beneath a held directory: everything but executing (capability mode
  // never executes), creating device nodes, and device ioctls (tty injection
  // and driver surface; held descriptors are not affected).
  h->dir_rw = h->fs & ~(LL_FS_EXECUTE | LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK |
                        LL_FS_IOCTL_DEV);
}

int capsa__landlock_ruleset_new(int abi) {
  if (abi < 1) return -ENOSYS;
  struct capsa__landlock_handled h;
  capsa__landlock_handled_for(abi, &h);
  struct ll_ruleset_attr attr = {h.fs, h.net, h.scoped};
  // The kernel takes the attribute size of the ABI it is given; older
  // kernels refuse fields they do not know (E2BIG), so pass only those.
  size_t size = abi >= 6 ? sizeof(attr)
                : abi >= 4
                    ? offsetof(struct ll_ruleset_attr, scoped)
                    : offsetof(struct ll_ruleset_attr, handled_access_net);
  long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) return -errno;
  // Close-on-exec is the kernel's default for ruleset fds.
  return (int)fd;
}

int capsa__landlock_allow_dir(int ruleset_fd, int abi, int dirfd) {
  struct capsa__landlock_handled h;
  capsa__landlock_handled_for(abi, &h);
  struct ll_path_beneath_attr pb = {h.dir_rw, dirfd};
  if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &pb, 0) <
      0)
    return -errno;
  return 0;
}

int capsa__landlock_restrict_self(int ruleset_fd) {
  if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0) return -errno;
  return 0;
}
