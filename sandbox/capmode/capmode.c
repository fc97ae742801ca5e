// Capability mode: the policy object (record, compile in the parent, enter
// cheaply in the child) and capsa_cap_enter()/capsa_cap_getmode().
//
// Order at entry: everything that can fail softly is done by _compile()
// (features, BPF, Landlock ruleset). _enter() then crosses the point of no
// return: no_new_privs -> Landlock restrict_self -> SIGSYS handler (tracing)
// -> seccomp. If no_new_privs fails nothing has changed and the error is
// returned; any failure after it is _exit(127).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/capmode/capmode_internal.h"
#include "sandbox/features.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp.h"

// enter() patches a copy of the BPF on its stack (no allocation).
#define MAX_BPF_INSNS 1024
#define MAX_PID_PATCHES CAPSA__MAX_PID_PATCHES

volatile int capsa__in_capmode;

// The launcher stage this process (or the launcher it was forked from)
// entered, and whether this process has taken the final step since.
// Inherited by fork, like the filters themselves.
static const capsa_capmode_policy *g_stage;
static bool g_stage_final;

capsa_capmode_policy *capsa_capmode_policy_new(void) {
  capsa_capmode_policy *p = calloc(1, sizeof(*p));
  if (p) p->ruleset_fd = -1;
  return p;
}

void capsa_capmode_policy_free(capsa_capmode_policy *p) {
  if (!p) return;
  for (unsigned i = 0; i < p->nextra; i++) free(p->extra[i].reason);
  free(p->extra);
  for (unsigned i = 0; i < p->nlaunch; i++) free(p->launch[i].reason);
  free(p->launch);
  capsa_bpf_free(&p->launch_bpf);
  capsa_bpf_free(&p->final_bpf);
  free(p->dirs);
  if (p->ruleset_fd >= 0) close(p->ruleset_fd);
  capsa_bpf_free(&p->bpf);
  capsa_bpf_free(&p->plain_cache);
  capsa__trace_names_free(p->names, p->nnames);
  free(p);
}

static bool valid_cmps(const struct capsa_arg_cmp *cmps, unsigned n) {
  if (n > 3 || (n && !cmps)) return false;
  for (unsigned i = 0; i < n; i++)
    if (cmps[i].arg > 5 || cmps[i].op < CAPSA_CMP_NE ||
        cmps[i].op > CAPSA_CMP_MASKED_EQ)
      return false;
  return true;
}

// A syscall the table refuses for safety may not be re-allowed.
static bool refused_by_table(int nr) {
  for (size_t i = 0; i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    // Grantable refusals exist to be granted; EBADF rows only answer bad
    // descriptors.
    if (row->action != CAPSA__REFUSE && row->action != CAPSA__ERRNO) continue;
    if (seccomp_syscall_resolve_name(row->syscall) == nr) return true;
  }
  return false;
}

int capsa__capmode_push_row(struct extra_row **rows, unsigned *n, unsigned *cap,
                            int nr, const struct capsa_arg_cmp *cmps,
                            unsigned ncmps, const char *reason) {
  if (*n == *cap) {
    unsigned c = *cap ? 2 * *cap : 8;
    struct extra_row *e = realloc(*rows, c * sizeof(*e));
    if (!e) return -ENOMEM;
    *rows = e;
    *cap = c;
  }
  struct extra_row *row = &(*rows)[*n];
  memset(row, 0, sizeof(*row));
  row->nr = nr;
  row->ncmp = ncmps;
  if (ncmps) memcpy(row->cmp, cmps, ncmps * sizeof(*cmps));
  if (!(row->reason = strdup(reason))) return -ENOMEM;
  (*n)++;
  return 0;
}

int capsa_capmode_policy_allow(capsa_capmode_policy *p, int syscall_nr,
                               const struct capsa_arg_cmp *cmps, unsigned ncmps,
                               const char *reason) {
  if (!p || syscall_nr < 0 || !reason || !*reason || !valid_cmps(cmps, ncmps))
    return -EINVAL;
  if (p->compiled) return -EBUSY;
  if (refused_by_table(syscall_nr)) return -EPERM;
  return capsa__capmode_push_row(&p->extra, &p->nextra, &p->cap_extra,
                                 syscall_nr, cmps, ncmps, reason);
}

int capsa_capmode_policy_allow_launcher(capsa_capmode_policy *p,
                                        const char *syscall_name,
                                        const struct capsa_arg_cmp *cmps,
                                        unsigned ncmps, const char *reason) {
  if (!p || !syscall_name || !reason || !*reason || !valid_cmps(cmps, ncmps))
    return -EINVAL;
  if (p->compiled) return -EBUSY;
  int nr = seccomp_syscall_resolve_name(syscall_name);
  if (nr < 0) return -ENOENT;
  return capsa__capmode_push_row(&p->launch, &p->nlaunch, &p->cap_launch, nr,
                                 cmps, ncmps, reason);
}

capsa_capmode_policy *capsa_capmode_policy_dup(const capsa_capmode_policy *p) {
  if (!p) return NULL;
  capsa_capmode_policy *d = capsa_capmode_policy_new();
  if (!d) return NULL;
  int rc = 0;
  for (unsigned i = 0; rc == 0 && i < p->nextra; i++)
    rc = capsa__capmode_push_row(&d->extra, &d->nextra, &d->cap_extra,
                                 p->extra[i].nr, p->extra[i].cmp,
                                 p->extra[i].ncmp, p->extra[i].reason);
  for (unsigned i = 0; rc == 0 && i < p->nlaunch; i++)
    rc = capsa__capmode_push_row(&d->launch, &d->nlaunch, &d->cap_launch,
                                 p->launch[i].nr, p->launch[i].cmp,
                                 p->launch[i].ncmp, p->launch[i].reason);
  if (rc == 0 && p->ndirs) {
    if (!(d->dirs = malloc(p->ndirs * sizeof(*d->dirs)))) rc = -ENOMEM;
    if (rc == 0) memcpy(d->dirs, p->dirs, p->ndirs * sizeof(*d->dirs));
    d->ndirs = d->cap_dirs = p->ndirs;
  }
  if (rc < 0) {
    capsa_capmode_policy_free(d);
    return NULL;
  }
  d->held_dirs = p->held_dirs;
  d->trace_set = p->trace_set;
  d->trace = p->trace;
  d->disabled = p->disabled;
  // Best effort: without the copy, compile() builds the filter itself.
  if (p->compiled && p->bpf.len && p->report.seccomp == CAPSA_LAYER_ENFORCED &&
      capsa_bpf_copy(&p->bpf, &d->plain_cache) == 0) {
    d->plain_cache_rows = p->report.seccomp_rows;
    d->plain_cache_nextra = p->nextra;
    d->plain_cache_disabled = p->disabled;
    d->plain_cache_trace = p->report.trace;
  }
  return d;
}

int capsa_capmode_policy_allow_name(capsa_capmode_policy *p,
                                    const char *syscall_name,
                                    const struct capsa_arg_cmp *cmps,
                                    unsigned ncmps, const char *reason) {
  if (!p || !syscall_name) return -EINVAL;
  int nr = seccomp_syscall_resolve_name(syscall_name);
  if (nr < 0) return -ENOENT;
  return capsa_capmode_policy_allow(p, nr, cmps, ncmps, reason);
}

int capsa_capmode_policy_allow_dir(capsa_capmode_policy *p, int dirfd) {
  if (!p || dirfd < 0) return -EINVAL;
  if (p->compiled) return -EBUSY;
  struct stat st;
  if (fstat(dirfd, &st) < 0) return -errno;
  if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
  if (p->ndirs == p->cap_dirs) {
    unsigned cap = p->cap_dirs ? 2 * p->cap_dirs : 8;
    int *d = realloc(p->dirs, cap * sizeof(*d));
    if (!d) return -ENOMEM;
    p->dirs = d;
    p->cap_dirs = cap;
  }
  p->dirs[p->ndirs++] = dirfd;
  return 0;
}

int capsa_capmode_policy_allow_held_dirs(capsa_capmode_policy *p) {
  if (!p) return -EINVAL;
  if (p->compiled) return -EBUSY;
  p->held_dirs = true;
  return 0;
}

int capsa_capmode_policy_set_trace(capsa_capmode_policy *p, bool on) {
  if (!p) return -EINVAL;
  if (p->compiled) return -EBUSY;
  p->trace_set = true;
  p->trace = on;
  return 0;
}

int capsa_capmode_policy_disable_layer(capsa_capmode_policy *p,
                                       unsigned layers) {
  if (!p || (layers & ~CAPSA_LAYER_ALL)) return -EINVAL;
  if (p->compiled) return -EBUSY;
  p->disabled |= layers;
  return 0;
}

// --- compile ---

static bool is_dir_fd(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

// Grants every directory descriptor the process holds (what FreeBSD's
// capability mode keeps usable). /proc may be absent in a launcher's empty
// root; then the descriptor table is walked up to a bound.
static int grant_held_dirs(int ruleset_fd, int abi, unsigned *count) {
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    int self = dirfd(d);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      int fd = atoi(e->d_name);
      if (fd == self || fd == ruleset_fd || !is_dir_fd(fd)) continue;
      rc = capsa__landlock_allow_dir(ruleset_fd, abi, fd);
      if (rc == 0) (*count)++;
    }
    closedir(d);
    return rc;
  }
  struct rlimit rl;
  int max = 4096;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max)
    max = (int)rl.rlim_cur;
  for (int fd = 0; fd < max; fd++) {
    if (fd == ruleset_fd || !is_dir_fd(fd)) continue;
    int rc = capsa__landlock_allow_dir(ruleset_fd, abi, fd);
    if (rc < 0) return rc;
    (*count)++;
  }
  return 0;
}

static int compile_landlock(capsa_capmode_policy *p, int abi) {
  int fd = capsa__landlock_ruleset_new(abi);
  if (fd < 0) return fd;
  unsigned count = 0;
  int rc = 0;
  for (unsigned i = 0; rc == 0 && i < p->ndirs; i++) {
    rc = capsa__landlock_allow_dir(fd, abi, p->dirs[i]);
    if (rc == 0) count++;
  }
  if (rc == 0 && p->held_dirs) rc = grant_held_dirs(fd, abi, &count);
  if (rc < 0) {
    close(fd);
    return rc;
  }
  p->ruleset_fd = fd;
  p->report.landlock_dirs = count;
  return 0;
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, int nr,
                    const struct capsa_arg_cmp *cmp, unsigned n) {
  struct scmp_arg_cmp c[3];
  for (unsigned i = 0; i < n; i++) {
    c[i].arg = cmp[i].arg;
    c[i].op = (enum scmp_compare)cmp[i].op;
    c[i].datum_a =
        cmp[i].op == CAPSA_CMP_MASKED_EQ ? cmp[i].mask : cmp[i].value;
    c[i].datum_b = cmp[i].op == CAPSA_CMP_MASKED_EQ ? cmp[i].value : 0;
  }
  return seccomp_rule_add_exact_array(ctx, action, nr, n, c);
}

static bool has_self_pid(const struct capsa_arg_cmp *cmp, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (cmp[i].value == CAPSA__SELF_PID) return true;
  return false;
}

// The table and the extra rows. For a launcher (`launcher` true) rows that
// compare with "own pid" allow any pid instead: every child it forks has
// another pid, and the final filter puts the comparison back with the
// child's own. Launcher-only rows and landlock_restrict_self (the child's
// own Landlock domain) are added too.
static bool rows_disjoint(const struct capsa_arg_cmp *a, unsigned na,
                          const struct capsa_arg_cmp *b, unsigned nb);

// A CAPSA__GRANT row the process type granted: an extra row for the same
// syscall that may match the same calls replaces it.
static bool granted(const capsa_capmode_policy *p, int nr,
                    const struct capsa__capmode_row *row) {
  for (unsigned i = 0; i < p->nextra; i++)
    if (p->extra[i].nr == nr &&
        !rows_disjoint(p->extra[i].cmp, p->extra[i].ncmp, row->cmp, row->ncmp))
      return true;
  return false;
}

static int add_table(scmp_filter_ctx ctx, const capsa_capmode_policy *p,
                     uint32_t def, bool launcher, unsigned *rows) {
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    (*rows)++;
    int nr = seccomp_syscall_resolve_name(row->syscall);
    // A name this libseccomp does not know: the default refuses it.
    if (nr < 0) continue;
    // EBADF rows are the prologue's (prepend_badfd).
    if (row->action == CAPSA__BADFD) continue;
    if (row->action == CAPSA__GRANT && granted(p, nr, row)) continue;
    uint32_t action =
        row->action == CAPSA__ALLOW ? SCMP_ACT_ALLOW
        : row->action == CAPSA__ERRNO || row->action == CAPSA__GRANT
            ? SCMP_ACT_ERRNO(row->err)
            : def;
    // Rows that say what the default does are documentation (libseccomp
    // refuses rules whose action is the default).
    if (action == def) continue;
    bool any_pid = launcher && has_self_pid(row->cmp, row->ncmp);
    rc = add_rule(ctx, action, nr, row->cmp, any_pid ? 0 : row->ncmp);
  }
  for (unsigned i = 0; rc == 0 && i < p->nextra; i++, (*rows)++)
    rc = add_rule(ctx, SCMP_ACT_ALLOW, p->extra[i].nr, p->extra[i].cmp,
                  p->extra[i].ncmp);
  if (!launcher) return rc;
  for (unsigned i = 0; rc == 0 && i < p->nlaunch; i++)
    rc = add_rule(ctx, SCMP_ACT_ALLOW, p->launch[i].nr, p->launch[i].cmp,
                  p->launch[i].ncmp);
  if (rc == 0 && p->ruleset_fd >= 0)
    rc = add_rule(ctx, SCMP_ACT_ALLOW,
                  seccomp_syscall_resolve_name("landlock_restrict_self"), NULL,
                  0);
  return rc;
}

// The final step of a launcher's child: allow everything the launcher's
// filter allows except what only the launcher needed. Stacked on it, the
// result is exactly the plain policy (the launcher rows are disjoint from the
// table's, checked by compile).
static int add_final(scmp_filter_ctx ctx, const capsa_capmode_policy *p,
                     uint32_t refuse) {
  int rc = 0;
  for (unsigned i = 0; rc == 0 && i < p->nlaunch; i++)
    rc = add_rule(ctx, refuse, p->launch[i].nr, p->launch[i].cmp,
                  p->launch[i].ncmp);
  if (rc == 0 && p->ruleset_fd >= 0)
    rc = add_rule(ctx, refuse,
                  seccomp_syscall_resolve_name("landlock_restrict_self"), NULL,
                  0);
  for (size_t i = 0; rc == 0 && i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    if (row->action != CAPSA__ALLOW || !has_self_pid(row->cmp, row->ncmp))
      continue;
    int nr = seccomp_syscall_resolve_name(row->syscall);
    if (nr < 0) continue;
    // Any pid but the child's own (written by enter()). 64-bit: a pid with
    // high bits set is refused here, where the plain table compares the
    // low 32 bits -- stricter, never wider.
    struct capsa_arg_cmp ne = {row->cmp[0].arg, CAPSA_CMP_NE, 0,
                               CAPSA__SELF_PID};
    rc = add_rule(ctx, refuse, nr, &ne, 1);
  }
  return rc;
}

// Two rows are disjoint when one comparison on the same argument and mask
// asks for different values: no call can match both.
static bool rows_disjoint(const struct capsa_arg_cmp *a, unsigned na,
                          const struct capsa_arg_cmp *b, unsigned nb) {
  for (unsigned i = 0; i < na; i++)
    for (unsigned j = 0; j < nb; j++) {
      if (a[i].arg != b[j].arg || a[i].op != b[j].op) continue;
      if (a[i].op == CAPSA_CMP_EQ && a[i].value != b[j].value) return true;
      if (a[i].op == CAPSA_CMP_MASKED_EQ && a[i].mask == b[j].mask &&
          (a[i].value & a[i].mask) != (b[j].value & b[j].mask))
        return true;
    }
  return false;
}

// A launcher row must not overlap what the plain policy allows for the same
// syscall (else the final step, which refuses the launcher row, would take
// that away too); rows on "own pid" must be a single comparison.
static int check_launch_rows(const capsa_capmode_policy *p) {
  for (size_t i = 0; i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    if (row->action == CAPSA__REFUSE) continue;
    if (has_self_pid(row->cmp, row->ncmp) && row->ncmp != 1) return -EINVAL;
    int nr = seccomp_syscall_resolve_name(row->syscall);
    for (unsigned j = 0; j < p->nlaunch; j++)
      if (p->launch[j].nr == nr &&
          !rows_disjoint(p->launch[j].cmp, p->launch[j].ncmp, row->cmp,
                         row->ncmp))
        return -EINVAL;
  }
  for (unsigned i = 0; i < p->nextra; i++)
    for (unsigned j = 0; j < p->nlaunch; j++)
      if (p->launch[j].nr == p->extra[i].nr &&
          !rows_disjoint(p->launch[j].cmp, p->launch[j].ncmp, p->extra[i].cmp,
                         p->extra[i].ncmp))
        return -EINVAL;
  return 0;
}

// Where a filter compares with "own pid", enter() writes getpid().
static int find_pid_patches(const struct capsa_bpf *bpf, unsigned *patch,
                            unsigned *n) {
  for (unsigned i = 0; i < bpf->len; i++) {
    const struct sock_filter *f = &bpf->insns[i];
    if (f->code == (BPF_JMP | BPF_JEQ | BPF_K) && f->k == CAPSA__SELF_PID) {
      if (*n == MAX_PID_PATCHES) return -E2BIG;
      patch[(*n)++] = i;
    }
  }
  return 0;
}

// The CAPSA__BADFD rows as a prologue in front of libseccomp's program
// `bpf` (replaced on success). For each row:
//
//   jeq nr, 0, 5        another syscall: next row (A still holds nr)
//   ld  args[a] (low 32 bits)
//   jset 0x80000000, 0, 2   not negative: on
//   jeq AT_FDCWD, 1, 0      AT_FDCWD: on (the table answers ECAPMODE)
//   ret ERRNO(EBADF)
//   ld  nr
//
// after an architecture check that leaves anything but native x86_64 to the
// program, which refuses it, and a range check that sends every syscall
// outside [lowest, highest row number] (x32 numbers too) straight on, so
// most calls pay four instructions. Jumps only go forward, so libseccomp's
// own offsets stay valid.
static int prepend_badfd(struct capsa_bpf *bpf) {
  enum { kRowLen = 6, kHead = 8 };
  size_t n = 0;
  uint32_t lo = UINT32_MAX, hi = 0;
  for (size_t i = 0; i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    if (row->action != CAPSA__BADFD) continue;
    n++;
    int nr = seccomp_syscall_resolve_name(row->syscall);
    if (nr < 0) continue;
    if ((uint32_t)nr < lo) lo = (uint32_t)nr;
    if ((uint32_t)nr > hi) hi = (uint32_t)nr;
  }
  if (n == 0 || lo > hi) return 0;
  size_t len = kHead + n * kRowLen + bpf->len;
  if (len > MAX_BPF_INSNS) return -E2BIG;
  struct sock_filter *f = malloc(len * sizeof(*f));
  if (!f) return -ENOMEM;
  size_t k = 0;
  // Index of the program's first instruction, and a jump there from k.
  const uint32_t end = (uint32_t)(kHead + n * kRowLen);
#define TO_END() \
  ((struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, end - (uint32_t)k - 1))
  f[k++] = (struct sock_filter)BPF_STMT(
      BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, arch));
  f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                        AUDIT_ARCH_X86_64, 1, 0);
  f[k] = TO_END();
  k++;
  f[k++] = (struct sock_filter)BPF_STMT(
      BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr));
  f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 1, 0);
  f[k] = TO_END();
  k++;
  f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, hi, 0, 1);
  f[k] = TO_END();
  k++;
#undef TO_END
  for (size_t i = 0; i < capsa__capmode_table_len; i++) {
    const struct capsa__capmode_row *row = &capsa__capmode_table[i];
    if (row->action != CAPSA__BADFD) continue;
    int nr = seccomp_syscall_resolve_name(row->syscall);
    uint32_t arg = (uint32_t)(offsetof(struct seccomp_data, args) +
                              8 * row->cmp[0].arg);  // low half first
    // A name this libseccomp does not know: a row that never matches.
    uint32_t num = nr < 0 ? 0xffffffffu : (uint32_t)nr;
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, num, 0, 5);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg);
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
                                          0x80000000u, 0, 2);
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                          (uint32_t)AT_FDCWD, 1, 0);
    f[k++] = (struct sock_filter)BPF_STMT(
        BPF_RET | BPF_K,
        SECCOMP_RET_ERRNO | ((uint32_t)row->err & SECCOMP_RET_DATA));
    f[k++] = (struct sock_filter)BPF_STMT(
        BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr));
  }
  memcpy(f + k, bpf->insns, bpf->len * sizeof(*f));
  free(bpf->insns);
  bpf->insns = f;
  bpf->len = (unsigned short)len;
  return 0;
}

static int compile_ctx(scmp_filter_ctx ctx, uint32_t badarch, bool badfd,
                       struct capsa_bpf *out) {
  // i386 (int 0x80) and x32 calls: the native x86_64 filter's architecture
  // check sends them to the bad-arch action, before any syscall number is
  // compared (x86_64 numbers mean other calls there).
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, badarch);
  if (rc == 0) rc = capsa_bpf_compile(ctx, out);
  if (rc == 0 && badfd && (rc = prepend_badfd(out)) < 0) capsa_bpf_free(out);
  if (rc == 0 && out->len > MAX_BPF_INSNS) {
    capsa_bpf_free(out);
    rc = -E2BIG;
  }
  return rc;
}

static int compile_seccomp(capsa_capmode_policy *p, bool trace) {
  uint32_t def = trace ? SCMP_ACT_TRAP : SCMP_ACT_ERRNO(CAPSA_ECAPMODE);
  scmp_filter_ctx ctx = NULL;
  unsigned rows = 0;
  int rc = 0;
  if (p->plain_cache.len && p->plain_cache_nextra == p->nextra &&
      p->plain_cache_disabled == p->disabled && p->plain_cache_trace == trace) {
    // The same inputs as the policy this one was dup'ed from: its filter.
    p->bpf = p->plain_cache;
    p->plain_cache = (struct capsa_bpf){NULL, 0};
    rows = p->plain_cache_rows;
  } else {
    capsa_bpf_free(&p->plain_cache);
    if (!(ctx = seccomp_init(def))) return -ENOMEM;
    rc = add_table(ctx, p, def, false, &rows);
    if (rc == 0) rc = compile_ctx(ctx, def, true, &p->bpf);
    seccomp_release(ctx);
  }
  if (rc == 0) rc = find_pid_patches(&p->bpf, p->pid_patch, &p->npid_patch);
  if (rc == 0 && p->nlaunch) {
    unsigned unused = 0;
    rc = check_launch_rows(p);
    if (rc == 0 && !(ctx = seccomp_init(def))) rc = -ENOMEM;
    if (rc == 0) {
      rc = add_table(ctx, p, def, true, &unused);
      if (rc == 0) rc = compile_ctx(ctx, def, true, &p->launch_bpf);
      seccomp_release(ctx);
    }
    if (rc == 0 && !(ctx = seccomp_init(SCMP_ACT_ALLOW))) rc = -ENOMEM;
    if (rc == 0) {
      rc = add_final(ctx, p, def);
      if (rc == 0) rc = compile_ctx(ctx, def, false, &p->final_bpf);
      seccomp_release(ctx);
    }
    if (rc == 0)
      rc = find_pid_patches(&p->final_bpf, p->final_pid_patch,
                            &p->nfinal_pid_patch);
  }
  if (rc < 0) {
    capsa_bpf_free(&p->bpf);
    capsa_bpf_free(&p->launch_bpf);
    capsa_bpf_free(&p->final_bpf);
    return rc;
  }
  p->report.seccomp_rows = rows;
  p->report.seccomp_bpf_len = p->bpf.len;
  return 0;
}

static enum capsa_layer_state layer_state(const capsa_capmode_policy *p,
                                          unsigned layer, bool available) {
  if (p->disabled & layer) return CAPSA_LAYER_DISABLED;
  return available ? CAPSA_LAYER_ENFORCED : CAPSA_LAYER_UNAVAILABLE;
}

int capsa_capmode_policy_compile(capsa_capmode_policy *p) {
  if (!p) return -EINVAL;
  if (p->compiled) return -EBUSY;
  // Landlock and seccomp both need no_new_privs (without CAP_SYS_ADMIN):
  // leaving it out while keeping them would fail past the point of no return.
  if ((p->disabled & CAPSA_LAYER_NNP) &&
      (p->disabled & (CAPSA_LAYER_LANDLOCK | CAPSA_LAYER_SECCOMP)) !=
          (CAPSA_LAYER_LANDLOCK | CAPSA_LAYER_SECCOMP))
    return -EINVAL;
  const struct capsa_features *f = capsa_features_get();
  struct capsa_capmode_report *r = &p->report;
  memset(r, 0, sizeof(*r));
  r->nnp = layer_state(p, CAPSA_LAYER_NNP, f->no_new_privs);
  r->landlock = layer_state(p, CAPSA_LAYER_LANDLOCK, f->landlock_abi > 0);
  r->seccomp = layer_state(p, CAPSA_LAYER_SECCOMP, f->seccomp_filter);
  if (r->nnp != CAPSA_LAYER_ENFORCED) {
    // Without no_new_privs neither of the other layers can be installed.
    if (r->landlock == CAPSA_LAYER_ENFORCED)
      r->landlock = CAPSA_LAYER_UNAVAILABLE;
    if (r->seccomp == CAPSA_LAYER_ENFORCED)
      r->seccomp = CAPSA_LAYER_UNAVAILABLE;
  }
  bool trace = p->trace_set ? p->trace : false;
  if (!p->trace_set) {
    const char *env = getenv("CAPSA_TRACE");
    trace = env && strcmp(env, "1") == 0;
  }
  trace = trace && f->seccomp_trap && r->seccomp == CAPSA_LAYER_ENFORCED;
  int rc = 0;
  if (r->landlock == CAPSA_LAYER_ENFORCED) {
    int abi = f->landlock_abi;
    struct capsa__landlock_handled h;
    capsa__landlock_handled_for(abi, &h);
    r->landlock_abi = abi;
    r->landlock_fs = h.fs != 0;
    r->landlock_fs_truncate = abi >= 3;
    r->landlock_fs_ioctl_dev = abi >= 5;
    r->landlock_net_tcp = h.net != 0;
    r->landlock_scope_abstract_unix = r->landlock_scope_signal = h.scoped != 0;
    rc = compile_landlock(p, abi);
  }
  if (rc == 0 && r->seccomp == CAPSA_LAYER_ENFORCED)
    rc = compile_seccomp(p, trace);
  if (rc == 0 && trace && !(p->names = capsa__trace_names_new(&p->nnames)))
    rc = -ENOMEM;
  if (rc == 0 && r->landlock != CAPSA_LAYER_ENFORCED &&
      r->seccomp != CAPSA_LAYER_ENFORCED && !(p->disabled & CAPSA_LAYER_ALL))
    rc = -ENOSYS;
  if (rc < 0) {
    if (p->ruleset_fd >= 0) close(p->ruleset_fd);
    p->ruleset_fd = -1;
    capsa_bpf_free(&p->bpf);
    capsa_bpf_free(&p->launch_bpf);
    capsa_bpf_free(&p->final_bpf);
    capsa__trace_names_free(p->names, p->nnames);
    p->names = NULL;
    return rc;
  }
  r->trace = trace;
  p->tsync = f->seccomp_tsync;
  r->complete = r->nnp == CAPSA_LAYER_ENFORCED &&
                r->seccomp == CAPSA_LAYER_ENFORCED &&
                r->landlock == CAPSA_LAYER_ENFORCED && r->landlock_abi >= 6;
  p->compiled = true;
  return 0;
}

// --- enter ---

static void say(const char *s) {
  ssize_t unused = write(STDERR_FILENO, s, strlen(s));
  (void)unused;
}

static void fatal(const char *what, int err) {
  // Past the point of no return: a half-entered sandbox must not run on.
  // Only write(2) here: this may run in a freshly forked child.
  say("capsa: entering capability mode failed at ");
  say(what);
  say(": ");
  say(capsa_errno_name(err) ? capsa_errno_name(err) : "unknown error");
  say("\n");
  _exit(127);
}

// Copies `src` into `buf` (MAX_BPF_INSNS entries) with "own pid" written
// where compile() found the placeholder.
static void patch_pid(const struct capsa_bpf *src, const unsigned *patch,
                      unsigned npatch, struct sock_filter *buf,
                      struct capsa_bpf *out) {
  out->insns = buf;
  out->len = src->len;
  if (!src->len) return;
  memcpy(buf, src->insns, src->len * sizeof(buf[0]));
  uint32_t self = (uint32_t)getpid();
  for (unsigned i = 0; i < npatch; i++) buf[patch[i]].k = self;
}

// Crosses the point of no return with `bpf` (may be empty) after no_new_privs
// and Landlock as `p` says.
static int enter_with(const capsa_capmode_policy *p,
                      const struct capsa_bpf *bpf) {
  if (p->report.nnp == CAPSA_LAYER_ENFORCED) {
    int rc = capsa_nnp_set();
    if (rc < 0) return rc;  // nothing has changed yet
  }
  // Point of no return.
  if (p->ruleset_fd >= 0) {
    int rc = capsa__landlock_restrict_self(p->ruleset_fd);
    if (rc < 0) fatal("landlock_restrict_self", rc);
  }
  if (p->report.trace) {
    int rc = capsa__trace_install((const char *const *)p->names, p->nnames);
    if (rc < 0) fatal("sigaction(SIGSYS)", rc);
  }
  if (bpf->len) {
    int rc = capsa_bpf_install(bpf, p->tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0);
    if (rc < 0) fatal("seccomp", rc);
  }
  capsa__in_capmode = 1;
  return 0;
}

int capsa_capmode_policy_stage_serves(const capsa_capmode_policy *stage,
                                      const capsa_capmode_policy *p) {
  if (!stage || !p || !stage->compiled || !p->compiled) return -EINVAL;
  if (!stage->launch_bpf.len) return -EINVAL;
  const struct capsa_capmode_report *a = &stage->report, *b = &p->report;
  // Same layers, same tracing and the same plain filter, instruction for
  // instruction: the stage plus the final step is then exactly `p`.
  return a->nnp == b->nnp && a->landlock == b->landlock &&
         a->seccomp == b->seccomp && a->trace == b->trace &&
         (stage->ruleset_fd >= 0) == (p->ruleset_fd >= 0) &&
         stage->bpf.len == p->bpf.len &&
         memcmp(stage->bpf.insns, p->bpf.insns,
                p->bpf.len * sizeof(p->bpf.insns[0])) == 0;
}

int capsa_capmode_policy_enter_launcher(const capsa_capmode_policy *p) {
  if (!p || !p->compiled || !p->nlaunch) return -EINVAL;
  if (!p->launch_bpf.len) return -EOPNOTSUPP;  // no seccomp layer to stage
  unsigned mode = 0;
  capsa_cap_getmode(&mode);
  if (mode) return -EBUSY;  // a stage cannot be entered from inside one
  int rc = enter_with(p, &p->launch_bpf);
  if (rc == 0) {
    g_stage = p;
    g_stage_final = false;
  }
  return rc;
}

// In a child of a launcher stage: its own Landlock domain (scopes signals
// and abstract sockets to this child, as a plain entry does), then the small
// final filter. A policy the stage does not serve gets its full filter on
// top: the intersection, never wider than either.
static int enter_final(const capsa_capmode_policy *p) {
  const capsa_capmode_policy *s = g_stage;
  struct sock_filter fin[MAX_BPF_INSNS], full[MAX_BPF_INSNS];
  struct capsa_bpf fbpf, pbpf = {NULL, 0};
  patch_pid(&s->final_bpf, s->final_pid_patch, s->nfinal_pid_patch, fin, &fbpf);
  bool served = capsa_capmode_policy_stage_serves(s, p) == 1;
  if (!served) patch_pid(&p->bpf, p->pid_patch, p->npid_patch, full, &pbpf);
  // Point of no return (no_new_privs is already set by the stage).
  if (p->ruleset_fd >= 0) {
    int rc = capsa__landlock_restrict_self(p->ruleset_fd);
    if (rc < 0) fatal("landlock_restrict_self", rc);
  }
  unsigned flags = s->tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0;
  int rc = capsa_bpf_install(&fbpf, flags);
  if (rc < 0) fatal("seccomp (final)", rc);
  if (!served && pbpf.len) {
    if (p->report.trace && !s->report.trace) {
      rc = capsa__trace_install((const char *const *)p->names, p->nnames);
      if (rc < 0) fatal("sigaction(SIGSYS)", rc);
    }
    rc = capsa_bpf_install(&pbpf, flags);
    if (rc < 0) fatal("seccomp", rc);
  }
  g_stage_final = true;
  return 0;
}

int capsa_capmode_policy_enter(const capsa_capmode_policy *p) {
  if (!p || !p->compiled) return -EINVAL;
  if (g_stage && !g_stage_final) return enter_final(p);
  unsigned mode = 0;
  capsa_cap_getmode(&mode);
  if (mode) return 0;  // already in capability mode: nothing can widen it
  struct sock_filter insns[MAX_BPF_INSNS];
  struct capsa_bpf bpf;
  patch_pid(&p->bpf, p->pid_patch, p->npid_patch, insns, &bpf);
  return enter_with(p, &bpf);
}

// --- the FreeBSD-style calls ---

static pthread_mutex_t g_enter_lock = PTHREAD_MUTEX_INITIALIZER;
static capsa_capmode_policy *g_entered;

// Landlock (ABI <= 7) restricts only the calling thread; seccomp reaches
// the others through TSYNC. Say so rather than leave it unnoticed.
static void warn_if_threads(const capsa_capmode_policy *p) {
  if (p->ruleset_fd < 0) return;
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  if (n > 1)
    fprintf(stderr,
            "capsa: cap_enter() with %d threads: Landlock confines only the "
            "calling thread (seccomp confines all); enter before creating "
            "threads\n",
            n);
}

int capsa_cap_enter(void) {
  pthread_mutex_lock(&g_enter_lock);
  unsigned mode = 0;
  capsa_cap_getmode(&mode);
  int rc = 0;
  if (!mode) {
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    if (!p) rc = -ENOMEM;
    if (rc == 0) rc = capsa_capmode_policy_allow_held_dirs(p);
    if (rc == 0) rc = capsa_capmode_policy_compile(p);
    if (rc == 0) warn_if_threads(p);
    if (rc == 0) rc = capsa_capmode_policy_enter(p);
    if (rc == 0) {
      // The process now lives in this policy: the tracing handler reads its
      // syscall names for good. What entering needed is released.
      close(p->ruleset_fd);
      p->ruleset_fd = -1;
      capsa_bpf_free(&p->bpf);
      g_entered = p;
    } else {
      capsa_capmode_policy_free(p);
    }
  }
  pthread_mutex_unlock(&g_enter_lock);
  return rc;
}

int capsa_cap_getmode(unsigned *modep) {
  if (!modep) return -EFAULT;
  int saved = errno;
  // The filter answers the marker with ECAPMODE; the kernel with EINVAL. This
  // holds in every thread and in children (the filter is inherited), unlike
  // any memory flag, which is only a fallback for a policy without seccomp.
  int r = prctl(CAPSA__GETMODE_OPTION, CAPSA__GETMODE_ARG, 0, 0, 0);
  bool marked = r < 0 && errno == CAPSA_ECAPMODE;
  errno = saved;
  *modep = (marked || capsa__in_capmode) ? 1 : 0;
  return 0;
}

// --- report ---

int capsa_capmode_policy_report(const capsa_capmode_policy *p,
                                struct capsa_capmode_report *out) {
  if (!p || !out || !p->compiled) return -EINVAL;
  *out = p->report;
  return 0;
}

int capsa_capmode_default_report(struct capsa_capmode_report *out) {
  if (!out) return -EINVAL;
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  if (!p) return -ENOMEM;
  int rc = capsa_capmode_policy_allow_held_dirs(p);
  if (rc == 0) rc = capsa_capmode_policy_compile(p);
  if (rc == 0) rc = capsa_capmode_policy_report(p, out);
  capsa_capmode_policy_free(p);
  return rc;
}

const char *capsa_layer_state_name(enum capsa_layer_state s) {
  switch (s) {
    case CAPSA_LAYER_ENFORCED:
      return "enforced";
    case CAPSA_LAYER_UNAVAILABLE:
      return "unavailable";
    case CAPSA_LAYER_DISABLED:
      return "disabled";
  }
  return "unknown";
}

int capsa_capmode_report_format(const struct capsa_capmode_report *r, bool json,
                                char *buf, size_t len) {
  if (!r || (!buf && len)) return -EINVAL;
#define B(x) ((x) ? "true" : "false")
  int n;
  if (json)
    n = snprintf(
        buf, len,
        "{\"complete\":%s,\"no_new_privs\":\"%s\",\"landlock\":\"%s\","
        "\"landlock_abi\":%d,\"landlock_fs\":%s,\"landlock_fs_truncate\":%s,"
        "\"landlock_fs_ioctl_dev\":%s,\"landlock_net_tcp\":%s,"
        "\"landlock_scope_abstract_unix\":%s,\"landlock_scope_signal\":%s,"
        "\"landlock_dirs\":%u,\"seccomp\":\"%s\",\"seccomp_rows\":%u,"
        "\"seccomp_bpf_len\":%u,\"trace\":%s}",
        B(r->complete), capsa_layer_state_name(r->nnp),
        capsa_layer_state_name(r->landlock), r->landlock_abi, B(r->landlock_fs),
        B(r->landlock_fs_truncate), B(r->landlock_fs_ioctl_dev),
        B(r->landlock_net_tcp), B(r->landlock_scope_abstract_unix),
        B(r->landlock_scope_signal), r->landlock_dirs,
        capsa_layer_state_name(r->seccomp), r->seccomp_rows, r->seccomp_bpf_len,
        B(r->trace));
  else
    n = snprintf(
        buf, len,
        "capability mode %s: no_new_privs=%s landlock=%s(abi %d%s%s%s%s%s, "
        "%u dirs) seccomp=%s(%u rows, %u insns) trace=%s",
        r->complete ? "complete" : "INCOMPLETE", capsa_layer_state_name(r->nnp),
        capsa_layer_state_name(r->landlock), r->landlock_abi,
        r->landlock_fs ? " fs" : "", r->landlock_fs_truncate ? " truncate" : "",
        r->landlock_fs_ioctl_dev ? " ioctl_dev" : "",
        r->landlock_net_tcp ? " tcp" : "",
        r->landlock_scope_signal ? " scopes" : "", r->landlock_dirs,
        capsa_layer_state_name(r->seccomp), r->seccomp_rows, r->seccomp_bpf_len,
        r->trace ? "on" : "off");
#undef B
  return n < 0 ? -EINVAL : n;
}
