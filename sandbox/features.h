// Kernel features capability mode and launchers build on, probed once.
//
//   const struct capsa_features *f = capsa_features_get();
//   if (f->landlock_abi >= 6) ...           // signal / abstract-unix scoping
//   char buf[512];
//   capsa_features_format(f, true, buf, sizeof buf);   // JSON for `doctor`
//
// The first call probes (it forks short-lived children: one tries an
// unprivileged user namespace unless capsa_ns_available() has answered that
// already, one the i386 and x32 entries, which may fault or be killed);
// later calls return the cache. Probe before
// entering capability mode: probes run inside it would see the sandbox, not
// the kernel. capsa_cap_enter() and capsa_capmode_policy_compile() do so.
#ifndef CAPSA_SANDBOX_FEATURES_H_
#define CAPSA_SANDBOX_FEATURES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct capsa_features {
  bool no_new_privs;          // PR_SET_NO_NEW_PRIVS
  bool seccomp_filter;        // SECCOMP_MODE_FILTER
  bool seccomp_tsync;         // SECCOMP_FILTER_FLAG_TSYNC
  bool seccomp_kill_process;  // SECCOMP_RET_KILL_PROCESS available
  bool seccomp_trap;          // SECCOMP_RET_TRAP available
  int landlock_abi;           // 0: no Landlock (or disabled at boot)
  bool userns_unprivileged;   // an unprivileged process may unshare(USER)
  bool pidfd;                 // pidfd_open
  bool clone3;                // clone3 syscall exists
  bool memfd_seals;           // MFD_ALLOW_SEALING
  bool memfd_noexec_seal;     // MFD_NOEXEC_SEAL (6.3+)
  bool cgroup2;               // cgroup v2 mounted (anywhere: mountinfo)
  bool x32_abi;  // x32 syscalls reach the kernel (CONFIG_X86_X32_ABI)
  // The i386 entry (int 0x80): present when a getpid through it answers the
  // caller's pid. Kernels without CONFIG_IA32_EMULATION, booted with
  // ia32_emulation=0, or hypervisors that give no 32-bit entry (PVM) raise
  // a fault instead (SIGSEGV). Probed in a forked child, as is x32.
  bool i386_entry;
  const char *i386_detail;  // static: "present" or why it is absent
};

// Probed once (thread-safe); the returned struct is static, never freed.
const struct capsa_features *capsa_features_get(void);

// The cache if this process (or the process it was forked from) has probed
// already, else NULL. Inside capability mode a new probe would see the
// sandbox, not the kernel: code there asks this and treats NULL as unknown.
const struct capsa_features *capsa_features_cached(void);

// Probes the x32 and i386 entries now, in a forked child (the caller
// survives whatever the kernel or a filter does to the child: a fault, a
// seccomp kill), into f's x32_abi, i386_entry and i386_detail (f owned by
// the caller). 0, or -errno when the child could not be started (the
// fields then say "absent (the probe could not run)").
int capsa_features_probe_entries(struct capsa_features *f);

// Internal (the zygote's start). The verdicts of the probes that fork (an
// unprivileged user namespace; the x32 and i386 entries), as this process
// found them, for a fresh exec of the same binary on the same kernel that
// would otherwise fork the same probes again: capsa_host_start sends its
// own to the exec'd zygote.
struct capsa__features_verdicts {
  uint8_t userns_unprivileged;  // 0 or 1
  uint8_t x32_abi;              // 0 or 1
  uint8_t i386_entry;           // 0 or 1
  uint8_t i386_detail;  // which of the probe's fixed texts ("present": 1)
};

// Fills *out from capsa_features_get() (probing first if needed). 0, or
// -EINVAL (out NULL, or a detail text the table lacks).
int capsa__features_export(struct capsa__features_verdicts *out);

// Takes the forked probes' verdicts from *in (copied): the first
// capsa_features_get() then probes only what needs no child, when it would
// have, and forks nothing. -EINVAL and nothing taken when *in is not a set
// of verdicts export could have made (a field out of range, an i386 detail
// that contradicts i386_entry): the caller refuses such input. -EALREADY
// when this process has probed (or adopted) already: its answers stand. Not
// thread-safe against a concurrent first capsa_features_get().
int capsa__features_adopt(const struct capsa__features_verdicts *in);

// Formats f into buf (owned by the caller): one line "name=value ..." or a
// JSON object. Returns the length needed (as snprintf) or -EINVAL.
int capsa_features_format(const struct capsa_features *f, bool json, char *buf,
                          size_t len);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_FEATURES_H_
