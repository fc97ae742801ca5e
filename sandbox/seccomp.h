// Seccomp BPF: compile a libseccomp filter once, install it cheaply later.
//
//   scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
//   seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTCAPABLE), SCMP_SYS(write), 1,
//                    SCMP_A0(SCMP_CMP_EQ, 7));
//   struct capsa_bpf bpf;
//   int err = capsa_bpf_compile(ctx, &bpf);  // ctx still owned by the caller
//   seccomp_release(ctx);
//   ... fork ...
//   capsa_nnp_set();                          // seccomp needs no_new_privs
//   err = capsa_bpf_install(&bpf, 0);         // no allocation
//   capsa_bpf_free(&bpf);
//
// General on purpose: capability mode installs its table with it, and the
// rights layer installs one filter per cap_rights_limit() call.
#ifndef CAPSA_SANDBOX_SECCOMP_H_
#define CAPSA_SANDBOX_SECCOMP_H_

#include <linux/filter.h>
#include <seccomp.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A compiled filter. Owns `insns` (malloc'd); release with capsa_bpf_free().
struct capsa_bpf {
  struct sock_filter *insns;
  unsigned short len;
};

// Exports `ctx` (borrowed) to BPF in *out (owned by the caller afterwards).
// Sets the binary-tree optimisation (SCMP_FLTATR_CTL_OPTIMIZE=2) first.
// Returns 0 or -errno; *out is untouched on failure.
int capsa_bpf_compile(scmp_filter_ctx ctx, struct capsa_bpf *out);

// Copies src into *dst (owned by the caller afterwards). 0 or -ENOMEM.
int capsa_bpf_copy(const struct capsa_bpf *src, struct capsa_bpf *dst);

// Frees out->insns and zeroes *bpf. NULL is fine.
void capsa_bpf_free(struct capsa_bpf *bpf);

// Installs `bpf` (borrowed) on the calling thread, or every thread with
// SECCOMP_FILTER_FLAG_TSYNC in flags. Requires no_new_privs (or
// CAP_SYS_ADMIN). No allocation, async-signal-safe. 0 or -errno.
int capsa_bpf_install(const struct capsa_bpf *bpf, unsigned flags);

// prctl(PR_SET_NO_NEW_PRIVS, 1): irreversible. 0 or -errno.
int capsa_nnp_set(void);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_SANDBOX_SECCOMP_H_
