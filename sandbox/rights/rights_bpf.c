// Compiles one limited descriptor number's rights into a seccomp filter.
//
// Written as raw BPF rather than libseccomp rules because the fcntl and ioctl
// limits are allowlists ("refuse unless the command is one of these"), which
// libseccomp's per-rule comparisons cannot express; the filter is small and
// installed by the shared loader (sandbox/seccomp.h, capsa_bpf_install).
//
// Shape: check the architecture (anything but native x86_64, including x32,
// is refused: the numbers below would not mean the same syscalls), load the
// syscall number once, then one block per syscall that has refusals:
//
//   jeq nr            -> block, else skip it
//   block: rule*      each rule: fd argument == fd (low 32 bits) && conds
//                     -> ERRNO(ENOTCAPABLE), else fall to the next rule
//          ret ALLOW
//   ret ALLOW
//
// Every block ends in a return, so the accumulator still holds the syscall
// number when a block is skipped.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "sandbox/rights/rights_internal.h"

#define RET_ALLOW SECCOMP_RET_ALLOW
#define RET_NOTCAP (SECCOMP_RET_ERRNO | (CAPSA_ENOTCAPABLE & SECCOMP_RET_DATA))
#define RET_NOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))
#define X32_SYSCALL_BIT 0x40000000u
// The kernel's limit per filter is BPF_MAXINSNS (4096).
#define MAX_INSNS 4096

struct prog {
  struct sock_filter *insns;
  size_t len;
  size_t cap;
  bool overflow;
};

static size_t emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf,
                   uint32_t k) {
  if (p->len == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 256;
    if (cap > MAX_INSNS) cap = MAX_INSNS;
    if (p->len == cap) {
      p->overflow = true;
      return p->len;
    }
    struct sock_filter *n = realloc(p->insns, cap * sizeof(*n));
    if (!n) {
      p->overflow = true;
      return p->len;
    }
    p->insns = n;
    p->cap = cap;
  }
  p->insns[p->len] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
  return p->len++;
}

static uint32_t arg_offset(unsigned arg, bool high) {
  // Little-endian: the low 32 bits of a 64-bit argument come first.
  return (uint32_t)(offsetof(struct seccomp_data, args) + 8 * arg +
                    (high ? 4 : 0));
}

// Points jump `at` (jt or jf) to the instruction index `target`.
static void patch(struct prog *p, size_t at, bool jt, size_t target) {
  if (p->overflow) return;
  size_t off = target - at - 1;
  if (off > 255) {
    p->overflow = true;  // rules are far shorter; never happens in practice
    return;
  }
  if (jt) {
    p->insns[at].jt = (uint8_t)off;
  } else {
    p->insns[at].jf = (uint8_t)off;
  }
}

// One rule: refuse when argument `fd_arg` is `fd` and every condition holds.
static void emit_rule(struct prog *p, int fd,
                      const struct capsa__rights_row *r) {
  size_t fails[1 + 2 * 2];
  bool fail_jt[1 + 2 * 2];
  size_t nf = 0;
  emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_offset(r->fd_arg, false));
  fail_jt[nf] = false;
  fails[nf++] = emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (uint32_t)fd);
  for (unsigned i = 0; i < r->ncond; i++) {
    const struct capsa__rights_cond *c = &r->cond[i];
    emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_offset(c->arg, c->high));
    if (c->mask != ~0u) emit(p, BPF_ALU | BPF_AND | BPF_K, 0, 0, c->mask);
    // EQ: a mismatch (jf) fails the rule; NE: a match (jt) does.
    bool on_jt = c->op == CAPSA__COND_NE;
    fail_jt[nf] = on_jt;
    fails[nf++] = emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, c->value);
  }
  emit(p, BPF_RET | BPF_K, 0, 0, RET_NOTCAP);
  for (size_t i = 0; i < nf; i++) patch(p, fails[i], fail_jt[i], p->len);
}

// Refuse on `fd` unless argument `arg` (low 32 bits) is one of `vals`.
// Jumps to an allowing return placed after every chunk of values keep all
// offsets under BPF's 8-bit limit for lists of any length.
static void emit_allowlist(struct prog *p, int fd, unsigned arg,
                           const uint32_t *vals, size_t n) {
  emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_offset(0, false));
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, (uint32_t)fd);
  emit(p, BPF_RET | BPF_K, 0, 0, RET_ALLOW);  // another number
  emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_offset(arg, false));
  const size_t kChunk = 64;
  for (size_t i = 0; i < n; i += kChunk) {
    size_t m = n - i < kChunk ? n - i : kChunk;
    size_t first = p->len;
    for (size_t j = 0; j < m; j++)
      emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, vals[i + j]);
    emit(p, BPF_JMP | BPF_JA, 0, 0, 1);  // no match in this chunk
    size_t allow = emit(p, BPF_RET | BPF_K, 0, 0, RET_ALLOW);
    for (size_t j = 0; j < m; j++) patch(p, first + j, true, allow);
  }
  emit(p, BPF_RET | BPF_K, 0, 0, RET_NOTCAP);
}

// Starts a block for syscall `nr`; returns the index of the jump to patch
// with the block's end.
static size_t begin_block(struct prog *p, int nr) {
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, (uint32_t)nr);
  return emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
}

static void end_block(struct prog *p, size_t skip) {
  emit(p, BPF_RET | BPF_K, 0, 0, RET_ALLOW);
  if (!p->overflow) p->insns[skip].k = (uint32_t)(p->len - skip - 1);
}

static bool row_refuses_one(const struct capsa__rights_entry *e,
                            const struct capsa__rights_row *r) {
  if (r->need == CAPSA__NEED_NEVER) return true;
  return !capsa__rights_has(&e->rights, r->need);
}

// The new filter refuses only what the filters already on the number (for
// `prev`, NULL when none) do not: stacked filters refuse the union.
static bool row_refuses(const struct capsa__rights_entry *e,
                        const struct capsa__rights_entry *prev,
                        const struct capsa__rights_row *r) {
  return row_refuses_one(e, r) && !(prev && row_refuses_one(prev, r));
}

// What the ioctl part of an entry's filter does: 0 nothing, 1 allowlist
// `vals` (*n of them, caller frees), 2 refuse PIDFD_GET_INFO only.
static int ioctl_plan(const struct capsa__rights_entry *e, uint32_t **vals,
                      size_t *nvals) {
  bool ioctl_right = capsa__rights_has(&e->rights, CAPSA_CAP_IOCTL);
  bool getpid_right = capsa__rights_has(&e->rights, CAPSA_CAP_PDGETPID);
  *vals = NULL;
  *nvals = 0;
  if (ioctl_right && !e->ioctls_limited) return getpid_right ? 0 : 2;
  size_t n = ioctl_right ? e->nioctls : 0;
  uint32_t *v = calloc(n + 1, sizeof(*v));
  if (!v) return -ENOMEM;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = (uint32_t)e->ioctls[i];
    if (!getpid_right && capsa__rights_is_pidfd_info(c)) continue;
    v[m++] = c;
  }
  if (getpid_right) v[m++] = CAPSA__PIDFD_GET_INFO;
  *vals = v;
  *nvals = m;
  return 1;
}

int capsa__rights_bpf_build(int fd, const struct capsa__rights_entry *e,
                            const struct capsa__rights_entry *prev,
                            struct capsa_bpf *out) {
  struct prog p = {0};
  size_t skip;
  size_t blocks = 0;  // parts that refuse something the number may still do
  emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0,
       (uint32_t)offsetof(struct seccomp_data, arch));
  emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, AUDIT_ARCH_X86_64);
  emit(&p, BPF_RET | BPF_K, 0, 0, RET_NOSYS);
  emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0,
       (uint32_t)offsetof(struct seccomp_data, nr));
  emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, X32_SYSCALL_BIT);
  emit(&p, BPF_RET | BPF_K, 0, 0, RET_NOSYS);

  // Syscalls refused outright when argument 0 is the number (most of them
  // once a descriptor is limited to a few rights) share one check:
  //   jeq nr1 -> L; jeq nr2 -> L; ...; ja past; L: fd check, refuse
  // one instruction per syscall instead of a block each.
  int simple[128];
  size_t nsimple = 0;
  for (size_t i = 0; i < capsa__rights_nrows;) {
    size_t end = i;
    bool uncond0 = false, others = false;
    for (; end < capsa__rights_nrows &&
           capsa__rights_rows[end].nr == capsa__rights_rows[i].nr;
         end++) {
      const struct capsa__rights_row *r = &capsa__rights_rows[end];
      if (!row_refuses(e, prev, r)) continue;
      if (r->fd_arg == 0 && r->ncond == 0) {
        uncond0 = true;
      } else if (r->fd_arg != 0) {
        others = true;
      }
    }
    if (uncond0 && !others && nsimple < 128)
      simple[nsimple++] = capsa__rights_rows[i].nr;
    i = end;
  }
  if (nsimple > 0) {
    blocks++;
    size_t first = p.len;
    for (size_t j = 0; j < nsimple; j++)
      emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (uint32_t)simple[j]);
    emit(&p, BPF_JMP | BPF_JA, 0, 0, 4);
    size_t shared =
        emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_offset(0, false));
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)fd);
    emit(&p, BPF_RET | BPF_K, 0, 0, RET_NOTCAP);
    emit(&p, BPF_RET | BPF_K, 0, 0, RET_ALLOW);
    for (size_t j = 0; j < nsimple; j++) patch(&p, first + j, true, shared);
  }

  for (size_t i = 0; i < capsa__rights_nrows;) {
    int nr = capsa__rights_rows[i].nr;
    size_t end = i;
    bool any = false;
    while (end < capsa__rights_nrows && capsa__rights_rows[end].nr == nr) {
      any = any || row_refuses(e, prev, &capsa__rights_rows[end]);
      end++;
    }
    bool done = false;
    for (size_t j = 0; j < nsimple; j++) done = done || simple[j] == nr;
    if (any && !done) {
      blocks++;
      size_t block = begin_block(&p, nr);
      for (size_t j = i; j < end; j++)
        if (row_refuses(e, prev, &capsa__rights_rows[j]))
          emit_rule(&p, fd, &capsa__rights_rows[j]);
      end_block(&p, block);
    }
    i = end;
  }

  // fcntl: an allowlist of commands (always on a first filter: F_DUPFD*
  // must be refused); again only when the allowed set shrank.
  uint32_t fcmds[64], pcmds[64];
  size_t nf = capsa__rights_fcntl_allowed(e, fcmds, 64);
  if (nf > 64) nf = 64;
  size_t np = prev ? capsa__rights_fcntl_allowed(prev, pcmds, 64) : 0;
  if (!prev || np != nf || memcmp(fcmds, pcmds, nf * sizeof(*fcmds)) != 0) {
    blocks++;
    skip = begin_block(&p, SYS_fcntl);
    emit_allowlist(&p, fd, 1, fcmds, nf);
    if (!p.overflow) p.insns[skip].k = (uint32_t)(p.len - skip - 1);
  }

  // ioctl: refused without CAP_IOCTL, else limited to the list if any.
  // PIDFD_GET_INFO is pdgetpid's way to read the pid: it follows
  // CAP_PDGETPID, not CAP_IOCTL, in both directions.
  uint32_t *vals = NULL, *pvals = NULL;
  size_t m = 0, pm = 0;
  int plan = ioctl_plan(e, &vals, &m);
  int pplan = prev ? ioctl_plan(prev, &pvals, &pm) : 0;
  if (plan < 0 || pplan < 0) {
    free(vals);
    free(pvals);
    free(p.insns);
    return -ENOMEM;
  }
  bool same = prev && plan == pplan && m == pm &&
              (m == 0 || memcmp(vals, pvals, m * sizeof(*vals)) == 0);
  free(pvals);
  if (plan == 1 && !same) {
    blocks++;
    skip = begin_block(&p, SYS_ioctl);
    emit_allowlist(&p, fd, 1, vals, m);
    if (!p.overflow) p.insns[skip].k = (uint32_t)(p.len - skip - 1);
  } else if (plan == 2 && !same) {
    // Every ioctl allowed but PIDFD_GET_INFO, whatever its size field.
    static const struct capsa__rights_row kGetInfo = {
        .nr = SYS_ioctl,
        .fd_arg = 0,
        .ncond = 1,
        .cond = {{.arg = 1,
                  .op = CAPSA__COND_EQ,
                  .mask = ~CAPSA__IOC_SIZE_MASK,
                  .value = CAPSA__PIDFD_GET_INFO & ~CAPSA__IOC_SIZE_MASK}}};
    blocks++;
    skip = begin_block(&p, SYS_ioctl);
    emit_rule(&p, fd, &kGetInfo);
    end_block(&p, skip);
  }
  free(vals);
  emit(&p, BPF_RET | BPF_K, 0, 0, RET_ALLOW);

  if (p.overflow) {
    free(p.insns);
    return p.len >= MAX_INSNS ? -E2BIG : -ENOMEM;
  }
  if (blocks == 0) {  // the filters already there refuse all of it
    free(p.insns);
    out->insns = NULL;
    out->len = 0;
    return 0;
  }
  out->insns = p.insns;
  out->len = (unsigned short)p.len;
  return 0;
}
