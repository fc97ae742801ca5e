// Landlock, the layer of capability mode that confines *at(dirfd, ...) to
// beneath the directories held at entry, refuses TCP bind/connect and scopes
// abstract unix sockets and signals to the sandbox. Internal to sandbox/.
//
// Debian 12's <linux/landlock.h> stops at ABI 1, so the ABI 2-7 constants and
// the extended ruleset attribute are defined here from the kernel's UAPI.
#ifndef CAPSA_SANDBOX_LANDLOCK_H_
#define CAPSA_SANDBOX_LANDLOCK_H_

#include <stdbool.h>
#include <stdint.h>

// Highest Landlock ABI of the running kernel, 0 when absent or disabled.
int capsa__landlock_abi(void);

// What a ruleset built for `abi` handles.
struct capsa__landlock_handled {
  uint64_t fs;      // LANDLOCK_ACCESS_FS_* handled (all those the ABI knows)
  uint64_t dir_rw;  // granted beneath a held directory
  uint64_t net;     // TCP bind + connect (ABI >= 4), never granted
  uint64_t scoped;  // abstract unix + signal (ABI >= 6)
};
void capsa__landlock_handled_for(int abi, struct capsa__landlock_handled *h);

// Creates a ruleset fd (O_CLOEXEC) handling everything `abi` knows, granting
// nothing yet. Returns the fd or -errno.
int capsa__landlock_ruleset_new(int abi);
// Grants beneath directory `dirfd` (borrowed; the rule keeps the directory
// itself, so dirfd may be closed afterwards). 0 or -errno.
int capsa__landlock_allow_dir(int ruleset_fd, int abi, int dirfd);
// no_new_privs must be set. Applies `ruleset_fd` (borrowed) to the calling
// thread. No allocation. 0 or -errno.
int capsa__landlock_restrict_self(int ruleset_fd);

#endif  // CAPSA_SANDBOX_LANDLOCK_H_
