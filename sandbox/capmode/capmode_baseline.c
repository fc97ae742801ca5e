// The capability-mode baseline: what no capability-mode policy can ever
// allow, as a filter of its own (see capmode.h).
//
// Built from the policy table itself, so the two cannot drift apart: every
// syscall the table answers with a refusal and never allows under any
// condition (capsa_capmode_policy_allow refuses to re-allow those: -EPERM)
// gets the table's own answer here (ECAPMODE, or the row's errno, e.g.
// ENOSYS for clone3 so that libc falls back to clone). Everything else is
// allowed: this filter only ever sits under a full policy or in a launcher.
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sandbox/capmode/capmode_internal.h"
#include "sandbox/seccomp.h"

// The table has an ALLOW row (maybe conditional) for this number.
static bool allowed_somewhere(int nr) {
  for (size_t i = 0; i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    if (row->action == CAPSA__ALLOW &&
        seccomp_syscall_resolve_name(row->syscall) == nr)
      return true;
  }
  return false;
}

static bool kept(const char *name, const char *const *keep, unsigned nkeep) {
  for (unsigned i = 0; i < nkeep; i++)
    if (strcmp(keep[i], name) == 0) return true;
  return false;
}

// A refusal row for the same syscall appeared earlier in the table.
static bool seen_before(size_t i, int nr) {
  for (size_t j = 0; j < i; j++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[j];
    if (row->action != CAPSA__ALLOW &&
        seccomp_syscall_resolve_name(row->syscall) == nr)
      return true;
  }
  return false;
}

int capsa_capmode_baseline_compile(const char *const *keep, unsigned nkeep,
                                   struct capsa_bpf *out, unsigned *refused) {
  if (!out || (nkeep && !keep)) return -EINVAL;
  for (unsigned i = 0; i < nkeep; i++)
    if (!keep[i] || seccomp_syscall_resolve_name(keep[i]) < 0) return -ENOENT;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return -ENOMEM;
  // i386 and x32 calls: refused whole, as by every capability-mode filter
  // (their numbers mean other syscalls than the rows below).
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
                            SCMP_ACT_ERRNO(CAPSA_ECAPMODE));
  unsigned n = 0;
  for (size_t i = 0; rc == 0 && i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    // Grantable refusals and EBADF answers are the full policy's business.
    if (row->action != CAPSA__REFUSE && row->action != CAPSA__ERRNO) continue;
    int nr = seccomp_syscall_resolve_name(row->syscall);
    if (nr < 0 || allowed_somewhere(nr) || seen_before(i, nr) ||
        kept(row->syscall, keep, nkeep))
      continue;
    int err = row->action == CAPSA__ERRNO ? row->err : CAPSA_ECAPMODE;
    rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(err), nr, 0);
    n++;
  }
  struct capsa_bpf bpf = {NULL, 0};
  if (rc == 0) rc = capsa_bpf_compile(ctx, &bpf);
  seccomp_release(ctx);
  if (rc < 0) return rc;
  *out = bpf;
  if (refused) *refused = n;
  return 0;
}
