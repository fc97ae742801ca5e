// Renderer processes from the zygote (host/zygote/zygote.h): starting it (and a
// new one in place of a dead, wedged or renewed one) and claiming a
// renderer of a kind from it, not yet attached to a handle.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host/host_internal.h"

int capsa__claim_start_zygote(struct capsa__host_impl *h) {
  rlim_t nproc = capsa__limits_nproc_total(h);
  int err =
      h->image_exec
          ? capsa__zygote_exec_start(
                &h->zygote, h->zkinds, h->nkinds, h->opts.namespaces_wanted,
                h->opts.namespaces_required, h->opts.empty_root, STDERR_FILENO,
                h->exe_fd >= 0 ? h->exe_fd : capsa__exe_fd(), h->exe_fd >= 0,
                nproc)
          : capsa__zygote_start(&h->zygote, h->zkinds, h->nkinds,
                                h->opts.namespaces_wanted,
                                h->opts.namespaces_required, h->opts.empty_root,
                                STDERR_FILENO, nproc);
  // Renderers of a staged zygote inherit its filters; the outside check
  // then wants one more, the renderer's final step.
  capsa_renderer_check_t z;
  memset(&z, 0, sizeof z);
  h->zygote_filters = -1;
  if (err < 0) return err;
  h->zygote_ns_err = capsa_ns_ids_of(h->zygote.pid, &h->zygote_ns);
  int serr = capsa__check_status(h->zygote.pid, &z);
  if (serr < 0 && (h->zygote.staged || h->zygote.baseline)) {
    // Fail closed: without the zygote's count, a renderer that never took
    // a step of its own would pass the outside check on inherited filters.
    capsa__zygote_stop(&h->zygote);
    return serr;
  }
  if (serr == 0) h->zygote_filters = z.seccomp_filters;
  h->zygote_forks = 0;
  for (unsigned k = 0; k < h->nkinds; k++) {
    int werr = h->zygote.warm_up[k];
    if (werr >= 0) continue;
    snprintf(h->start_error, sizeof h->start_error,
             werr == -ENOTUNIQ
                 ? "kind '%.64s': two warm-ups registered for the name "
                   "(CAPSA_RENDERER_WARM_UP): keep one"
                 : "kind '%.64s': its warm-up (CAPSA_RENDERER_WARM_UP) "
                   "failed in the zygote: %s",
             h->kinds[k].name, strerror(-werr));
    capsa__zygote_stop(&h->zygote);
    return werr;
  }
  return 0;
}

// A new zygote in place of a dead one (its renderers are unaffected: they
// are our children, not its). Done from the loop thread; see
// capsa_host_start for why forking late is a risk when other threads exist:
// a child that inherits a held libc lock wedges, and the 5 s start timeout
// then fails the spawn instead of hanging the host.
static int restart_zygote(struct capsa__host_impl *h) {
  capsa__zygote_stop(&h->zygote);
  h->zygote_restarts++;
  return capsa__claim_start_zygote(h);
}

// Its pid and pidfd, its channel's host end and its stderr pipe's read end.
int capsa__claim(struct capsa_host_renderer *r, struct capsa__claimed *out) {
  struct capsa__host_impl *h = r->h;
  if (h->zygote.kind_error[r->kind] < 0) return h->zygote.kind_error[r->kind];
  // opts.zygote_renew_after: a fresh exec, so a new canary and layout.
  unsigned renew = h->opts.zygote_renew_after;
  if (renew && h->zygote_forks >= renew) {
    capsa__zygote_stop(&h->zygote);
    int zerr = capsa__claim_start_zygote(h);
    if (zerr < 0) return zerr;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -errno;
  struct capsa_ns_child c;
  int spare_chan = -1, err_fd = -1;
  int err = capsa__zygote_fork(&h->zygote, (unsigned)r->kind, sv[1], &c,
                               &spare_chan, &err_fd);
  if (err == -EPIPE || err == -ECONNRESET || err == -ETIMEDOUT ||
      err == -EPROTO) {
    // The zygote is gone or wedged: replace it once and retry.
    if (restart_zygote(h) == 0)
      err = capsa__zygote_fork(&h->zygote, (unsigned)r->kind, sv[1], &c,
                               &spare_chan, &err_fd);
  }
  close(sv[1]);
  if (err < 0) {
    close(sv[0]);
    return err;
  }
  h->zygote_forks++;
  if (spare_chan >= 0) {  // a spare renderer: its own channel, not ours
    close(sv[0]);
    sv[0] = spare_chan;
  }
  *out = (struct capsa__claimed){
      .valid = true, .child = c, .chan = sv[0], .err_fd = err_fd};
  return 0;
}

struct capsa__claimed capsa__claim_take(struct capsa_host_renderer *r) {
  struct capsa__claimed c = r->next_claim;
  r->next_claim.valid = false;
  return c;
}
