// Capability mode in the zygote (sandbox/capmode/capmode.h): the launcher
// stage, entered once when one policy serves every kind, or else the baseline.
// See host/zygote/zygote.h.
#include <errno.h>
#include <linux/sched.h>
#include <stddef.h>
#include <sys/prctl.h>

#include "host/zygote/zygote.h"
#include "host/zygote/zygote_internal.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/seccomp.h"

// Staged capability mode (sandbox/capmode/capmode.h): the zygote enters the
// kinds' policy itself, once, with the few calls it needs between forks, so
// that each renderer only takes the small final step instead of loading the
// whole filter. Only when one stage serves every kind exactly (same layers and
// filter; every kind sandboxed): otherwise each renderer enters its policy
// in full, as before, and the zygote stays outside capability mode.
static const capsa_capmode_policy *g_stage;

// What the zygote does between requests that capability mode refuses. The
// final step in each renderer refuses them again (ECAPMODE).
static int add_launcher_rows(capsa_capmode_policy *s) {
  // The namespace flags fork_renderer may pass, each set exactly.
  static const struct {
    unsigned long flags;
    const char *reason;
  } kClones[] = {
      {CLONE_NEWPID,
       "zygote: each renderer in a fresh pid namespace (CLONE_NEWPID | "
       "CLONE_PARENT | CLONE_PIDFD; clone3 is ENOSYS, its flags unseen)"},
      {CLONE_NEWPID | CLONE_NEWUSER,
       "zygote: each renderer in a fresh pid namespace and a user namespace "
       "of its own, unmapped (its own RLIMIT_NPROC count)"},
      {CLONE_NEWUSER,
       "zygote: a renderer of a kind without pid namespace, in a user "
       "namespace of its own, unmapped (its own RLIMIT_NPROC count)"},
  };
  struct capsa_arg_cmp ambient[2] = {
      {0, CAPSA_CMP_MASKED_EQ, 0xffffffffu, PR_CAP_AMBIENT},
      {1, CAPSA_CMP_MASKED_EQ, 0xffffffffu, PR_CAP_AMBIENT_CLEAR_ALL}};
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < sizeof kClones / sizeof kClones[0]; i++) {
    struct capsa_arg_cmp ns = {0, CAPSA_CMP_MASKED_EQ, CAPSA_CLONE_NAMESPACES,
                               kClones[i].flags};
    rc = capsa_capmode_policy_allow_launcher(s, "clone", &ns, 1,
                                             kClones[i].reason);
  }
  if (rc == 0)
    rc = capsa_capmode_policy_allow_launcher(
        s, "capset", NULL, 0,
        "renderer, before its final step: drops the capabilities the zygote "
        "holds in its user namespace (only lowers: no CAP_SETPCAP outside)");
  if (rc == 0)
    rc = capsa_capmode_policy_allow_launcher(
        s, "prctl", ambient, 2,
        "renderer, before its final step: clears the ambient capabilities");
  return rc;
}

bool capsa__zygote_stage_enter(const struct capsa__zygote_kind *kinds,
                               const int32_t *kind_error, unsigned nkinds,
                               bool ok) {
  if (nkinds == 0 || !ok) return false;
  for (unsigned k = 0; k < nkinds; k++)
    if (!kinds[k].capmode || kind_error[k] < 0 || kinds[k].no_stage)
      return false;
  capsa_capmode_policy *s = capsa_capmode_policy_dup(kinds[0].capmode);
  int rc = s ? add_launcher_rows(s) : -ENOMEM;
  if (rc == 0) rc = capsa_capmode_policy_compile(s);
  for (unsigned k = 0; rc == 0 && k < nkinds; k++)
    if (capsa_capmode_policy_stage_serves(s, kinds[k].capmode) != 1)
      rc = -EINVAL;
  if (rc == 0) rc = capsa_capmode_policy_enter_launcher(s);
  if (rc < 0) {
    capsa_capmode_policy_free(s);
    return false;
  }
  g_stage = s;  // lives as long as the zygote and its renderers
  return true;
}

// Not staged (the kinds' policies differ, or one has none): each renderer
// enters its own policy in full, and the zygote takes the capability-mode
// baseline (sandbox/capmode/capmode.h): what no policy may ever allow stays
// refused for the zygote and everything it forks. Kept: what a renderer calls
// on its way into its own policy (capabilities dropped, its own Landlock
// domain).
static const char *const kBaselineKeep[] = {
    "capset",                   // capsa_ns_fork's child drops capabilities
    "landlock_create_ruleset",  // ABI probe on entry
    "landlock_add_rule",        // (Landlock calls can only restrict)
    "landlock_restrict_self",   // each renderer's own domain
};

unsigned capsa__zygote_baseline_enter(bool ok) {
  if (!ok) return 0;
  struct capsa_bpf bpf;
  unsigned refused = 0;
  if (capsa_capmode_baseline_compile(
          kBaselineKeep, sizeof kBaselineKeep / sizeof kBaselineKeep[0], &bpf,
          &refused) < 0)
    return 0;  // reported: baseline 0
  unsigned installed = capsa_bpf_install(&bpf, 0) == 0 ? refused : 0;
  capsa_bpf_free(&bpf);
  return installed;
}
