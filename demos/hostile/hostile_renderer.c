// The hostile renderer: a compromised renderer trying to get out. Runs the
// attack list from inside its sandbox, reports each outcome, then attacks
// the host's message parser. See demos/hostile/hostile_renderer.h.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "demos/hostile/hostile.capsa.h"
#include "demos/hostile/hostile.h"
#include "demos/hostile/hostile_renderer.h"

static const capsa_interface_t *const kHostile[] = {
    &capsa_demo_hostile_interface};

static int on_message(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.id != CAPSA_DEMO_HOSTILE_ATTACK)
    return -EPROTO;
  const capsa_demo_hostile_attack_t *a = m->u.iface.value;
  struct capsa_attack_env env;
  capsa_attack_env_init(&env);
  {  // the target region is required by hostile.fbs
    env.ro_shm_fd = capsa_msg_take_handle(m, (uint32_t)a->target);
    env.ro_shm_size = m->handles[a->target].size;
    char text[64] = "";
    if (env.ro_shm_fd >= 0 &&
        pread(env.ro_shm_fd, text, sizeof text - 1, 0) > 0) {
      const char *p = strstr(text, "host-pid=");
      if (p) env.host_pid = (pid_t)atoi(p + 9);
    }
  }
  static struct capsa_attack_result res[CAPSA_ATTACKS_MAX];
  int n = capsa_attacks_run_all(&env, res, CAPSA_ATTACKS_MAX);
  if (n < 0) return n;
  int refused = 0, escaped = 0, other = 0, contained = 0, absent = 0;
  for (int i = 0; i < n; i++) {
    const struct capsa_attack_result *x = &res[i];
    // In its own pid namespace this renderer is pid 1: an attempt (made from
    // a forked child) that reaches "pid 1" reaches this renderer, not the
    // system's init. Said so, not counted as refused.
    if (x->verdict == CAPSA_VERDICT_ESCAPED && getpid() == 1 &&
        strcmp(x->attack->name, "kill-init") == 0) {
      contained++;
      capsa_rctx_log(r, CAPSA_LOG_WARN,
                     "%-26s %-10s pid 1 is this renderer (own pid namespace): "
                     "the attempt reached its own parent, not init",
                     x->attack->name, "contained");
      continue;
    }
    // A host that is pid 1 of its own pid namespace (a container's
    // entrypoint) has the pid this renderer has in its own: the host cannot
    // be named from here at all, and the attempts at it did not run.
    if (x->verdict == CAPSA_VERDICT_SKIPPED &&
        capsa_attack_aims_at_self(&env, env.host_pid)) {
      contained++;
      capsa_rctx_log(r, CAPSA_LOG_INFO,
                     "%-26s %-10s the host's pid %d is this renderer's own in "
                     "its pid namespace: the host is not nameable from here",
                     x->attack->name, "contained", (int)env.host_pid);
      continue;
    }
    if (x->verdict == CAPSA_VERDICT_REFUSED ||
        x->verdict == CAPSA_VERDICT_KILLED)
      refused++;
    else if (x->verdict == CAPSA_VERDICT_ESCAPED)
      escaped++;
    else if (x->verdict == CAPSA_VERDICT_ABSENT)
      absent++;
    else if (x->verdict != CAPSA_VERDICT_SKIPPED)
      other++;
    if (x->verdict == CAPSA_VERDICT_ABSENT) {
      // The target is missing from this kernel (probed outside the
      // sandbox): neither refused nor escaped, and said why.
      capsa_rctx_log(r, CAPSA_LOG_INFO, "%-26s %-10s %s", x->attack->name,
                     "absent", env.i386_detail ? env.i386_detail : "");
      continue;
    }
    capsa_rctx_log(
        r,
        x->verdict == CAPSA_VERDICT_ESCAPED ? CAPSA_LOG_ERROR : CAPSA_LOG_INFO,
        "%-26s %-10s errno=%d signal=%d layer=%s", x->attack->name,
        capsa_attack_verdict_name(x->verdict), x->observed_errno,
        x->observed_signal, x->attack->layer ? x->attack->layer : "");
  }
  capsa_rctx_log(r, CAPSA_LOG_INFO,
                 CAPSA_HOSTILE_SUMMARY
                 " %d attacks, %d refused or killed, "
                 "%d contained by the pid namespace, "
                 "%d absent in this kernel, "
                 "%d escaped, %d unexpected",
                 n, refused, contained, absent, escaped, other);
  if (env.ro_shm_fd >= 0) close(env.ro_shm_fd);
  // Last, the host itself: bytes that are no message. The host must kill us.
  static const char junk[] = "\xff\xff\xff\x7f not a flatbuffer";
  if (write(3, junk, sizeof junk) < 0) return -errno;
  pause();
  return 0;
}

const capsa_renderer_handlers_t capsa_hostile_renderer = {
    .kind = "hostile",
    .on_message = on_message,
    .interfaces = kHostile,
    .ninterfaces = 1};
