// The host's public API (host/capsa_host.h): options, kinds, start, spawn,
// sending to renderers, what the host reports, close. How a renderer lives
// and ends is the state machine's (host/incarnation.c); the rest is in the
// helpers it uses (host/host_internal.h lists them).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/fork_guard.h"
#include "host/host_internal.h"
#include "host/kind_registry.h"
#include "host/orphans.h"
#include "ipc/interface.h"
#include "sandbox/features.h"
#include "sandbox/proc_view.h"

void capsa_host_options_init(capsa_host_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->namespaces_wanted = CAPSA_NAMESPACE_ALL;
  o->empty_root = true;
}

void capsa_kind_options_init(capsa_kind_options_t *k, const char *name,
                             capsa_renderer_entry_fn main, void *arg) {
  if (!k) return;
  memset(k, 0, sizeof *k);
  k->name = name;
  k->main = main;
  k->arg = arg;
  k->pid_namespace = true;
  capsa__limits_defaults(k);  // every limit (host/limits/rlimit.c)
  k->heartbeat_ms = 1000;
  k->heartbeat_timeout_ms = 5000;
  k->resource_dir_fd = -1;
}

int capsa_host_init(uv_loop_t *loop, capsa_host_t *host,
                    const capsa_host_options_t *opts, capsa_host_event_cb cb) {
  if (!loop || !host) return -EINVAL;
  struct capsa__host_impl *h = calloc(1, sizeof *h);
  if (!h) return -ENOMEM;
  h->pub = host;
  h->loop = loop;
  h->cb = cb;
  if (opts)
    h->opts = *opts;
  else
    capsa_host_options_init(&h->opts);
  if (h->opts.namespaces_required & ~h->opts.namespaces_wanted) {
    free(h);
    return -EINVAL;
  }
  h->zygote.sock = -1;
  h->zygote.pidfd = -1;
  h->exe_fd = -1;
  for (int i = 0; i < CAPSA__FONTS; i++) h->broker.fonts[i].fd = -1;
  uv_timer_init(loop, &h->closer);
  h->closer.data = h;
  host->impl = h;
  return 0;
}

int capsa_host_define_kind(capsa_host_t *host, const capsa_kind_options_t *k) {
  if (!host || !host->impl || !k || !k->name) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  // With a renderer executable the kind is its registration of the name
  // (host/kind_registry.h): an entry of the host's would be a pointer into
  // another image, so one given is a mistake, not a choice.
  bool exe = h->opts.renderer_exe != NULL;
  if (exe ? (k->main || k->arg) : !k->main) {
    snprintf(h->start_error, sizeof h->start_error,
             exe ? "kind '%.64s': with renderer_exe a kind is the "
                   "executable's registration of its name: main and arg "
                   "must be NULL"
                 : "kind '%.64s': main is NULL (only a host with "
                   "renderer_exe defines a kind by its name alone)",
             k->name);
    return -EINVAL;
  }
  if (h->started) return -EBUSY;
  if (h->nkinds == CAPSA__MAX_KINDS) return -ENOSPC;
  if (k->heartbeat_ms && k->heartbeat_timeout_ms == 0) return -EINVAL;
  if (k->host_share_percent > 100) {
    snprintf(h->start_error, sizeof h->start_error,
             "kind '%.64s': host_share_percent %u is above 100", k->name,
             k->host_share_percent);
    return -EINVAL;
  }
  // A name registered with CAPSA_RENDERER_KIND (host/kind_registry.h) is
  // what an exec'd zygote will run under that name: options naming another
  // entry or argument would be a kind that silently runs different code.
  const capsa_kind_registration_t *reg =
      exe ? NULL : capsa_kind_lookup(k->name);
  if (reg && (reg->main != k->main || reg->arg != k->arg)) {
    snprintf(h->start_error, sizeof h->start_error,
             "kind '%.64s': main or arg differ from its CAPSA_RENDERER_KIND "
             "registration",
             k->name);
    return -ENOENT;
  }
  if (k->ninterfaces > CAPSA_IFACE_MAX_PER_CHANNEL ||
      (k->ninterfaces && !k->interfaces))
    return -EINVAL;
  for (unsigned i = 0; i < k->ninterfaces; i++) {
    char why[CAPSA_IPC_REASON_MAX];
    if (capsa_iface_check_descriptor(k->interfaces[i], why, sizeof why) < 0) {
      snprintf(h->start_error, sizeof h->start_error,
               "kind '%.64s': interface %u: %s", k->name, i, why);
      return -EINVAL;
    }
  }
  if (k->nwarm_up_fds > CAPSA_WARM_UP_MAX_FDS) {
    snprintf(h->start_error, sizeof h->start_error,
             "kind '%.64s': nwarm_up_fds %u is above CAPSA_WARM_UP_MAX_FDS "
             "(%d)",
             k->name, k->nwarm_up_fds, CAPSA_WARM_UP_MAX_FDS);
    return -EINVAL;
  }
  for (unsigned i = 0; i < k->nwarm_up_fds; i++) {
    if (k->warm_up_fds[i] < 0 || fcntl(k->warm_up_fds[i], F_GETFD) < 0) {
      snprintf(h->start_error, sizeof h->start_error,
               "kind '%.64s': warm_up_fds[%u] (%d) is not an open descriptor",
               k->name, i, k->warm_up_fds[i]);
      return -EBADF;
    }
  }
  capsa_kind_options_t *c = &h->kinds[h->nkinds];
  *c = *k;
  // 0 is the default, never "no limit" (that is CAPSA_LIMIT_NONE).
  capsa__limits_defaults(c);
  return (int)h->nkinds++;
}

// The error of a start that failed because required namespaces are
// missing: each with the kernel's errno and, when a sysctl says, why.
static void required_missing(struct capsa__host_impl *h, unsigned missing) {
  struct capsa_ns_report rep;
  capsa_ns_available_report(&rep);
  size_t n = (size_t)snprintf(h->start_error, sizeof h->start_error,
                              "required namespaces refused:");
  for (int i = 0; i < CAPSA_NAMESPACE_COUNT && n < sizeof h->start_error; i++) {
    unsigned bit = 1u << i;
    if (!(missing & bit)) continue;
    const char *e = rep.ns_error[i] ? strerrorname_np(-rep.ns_error[i]) : "?";
    const char *why =
        bit == CAPSA_NAMESPACE_USER ? rep.user_why
        : !(rep.applied & CAPSA_NAMESPACE_USER) && rep.ns_error[i] == -EPERM
            ? "no-userns"
            : "";
    n += (size_t)snprintf(h->start_error + n, sizeof h->start_error - n,
                          " %s=no(%s%s%s)", capsa_namespace_name(bit), e,
                          why[0] ? ":" : "", why);
  }
}

static int start_failed(struct capsa__host_impl *h, const char *what, int err) {
  if (!h->start_error[0])
    snprintf(h->start_error, sizeof h->start_error, "%s: %s", what,
             strerror(-err));
  return err;
}

// Whether the zygote can be a fresh exec of this binary (h->image_exec) and
// what capsa_host_image() then says.
static void image_choose(struct capsa__host_impl *h) {
  h->image_exec = capsa_main_called() && capsa__exe_fd() >= 0;
  if (!h->image_exec)
    snprintf(h->image, sizeof h->image, "fork: capsa_main() was not called");
  for (unsigned i = 0; h->image_exec && i < h->nkinds; i++) {
    if (capsa_kind_lookup(h->kinds[i].name)) continue;
    h->image_exec = false;
    snprintf(h->image, sizeof h->image,
             "fork: kind '%.64s' is not registered with CAPSA_RENDERER_KIND",
             h->kinds[i].name);
  }
  if (h->image_exec) snprintf(h->image, sizeof h->image, "exec");
}

int capsa_host_start(capsa_host_t *host) {
  if (!host || !host->impl) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  if (h->started) return -EBUSY;
  h->start_error[0] = 0;
  // In a pid namespace whose /proc is the outer one, /proc/<pid> of a child
  // names another process: the uid_map write would fail with a bare EPERM
  // (or reach that other process). Say so, with the fix, before anything.
  int perr = capsa_proc_view_check(h->start_error, sizeof h->start_error);
  if (perr < 0) return perr;
  // Probe before anything is sandboxed: the zygote inherits the caches. The
  // namespaces first: the features then take their user-namespace verdict
  // from this probe instead of a child of their own.
  unsigned avail = capsa_ns_available();
  capsa_features_get();
  unsigned missing = h->opts.namespaces_required & ~avail;
  if (missing) {
    required_missing(h, missing);
    return -EPERM;
  }
  // A fresh image when it can run every kind: the embedder's renderer
  // executable (its zygote reports its kinds once started), or this binary
  // when it is open (capsa_main) and each kind is found by name in it.
  if (h->opts.renderer_exe) {
    int eerr = capsa__renderer_exe_open(h);
    if (eerr < 0) return eerr;
    h->image_exec = true;
    snprintf(h->image, sizeof h->image, "exec: %.128s", h->opts.renderer_exe);
  } else {
    image_choose(h);
  }
  for (unsigned i = 0; i < h->nkinds; i++) {
    const capsa_kind_options_t *k = &h->kinds[i];
    struct capsa__zygote_kind *z = &h->zkinds[i];
    memset(z, 0, sizeof *z);
    z->name = k->name;
    z->main = k->main;
    z->arg = k->arg;
    if (!k->no_capmode) {
      z->capmode = k->capmode;
      if (!z->capmode) {
        h->own_policy[i] = capsa_capmode_policy_new();
        if (!h->own_policy[i]) return -ENOMEM;
        z->capmode = h->own_policy[i];
      }
    }
    z->keep_spare = k->keep_spare;
    z->pid_namespace = k->pid_namespace &&
                       (h->opts.namespaces_wanted & CAPSA_NAMESPACE_PID) &&
                       (avail & CAPSA_NAMESPACE_PID);
    capsa__limits_zygote_kind(k, z);
    z->nwarm = k->nwarm_up_fds;
    memcpy(z->warm_fds, k->warm_up_fds, sizeof z->warm_fds);
  }
  if (!h->image_exec && !h->opts.allow_forked_zygote) {
    snprintf(h->start_error, sizeof h->start_error,
             "renderers would descend from a %s (call capsa_main() first in "
             "main() and register every kind; or set allow_forked_zygote)",
             h->image);
    h->image[0] = 0;
    return -ENOEXEC;
  }
  if (h->opts.zygote_renew_after && !h->image_exec) {
    snprintf(h->start_error, sizeof h->start_error,
             "zygote_renew_after needs an exec'd zygote (capsa_main() or "
             "renderer_exe): renderers of a %s always have the host's "
             "canary and layout",
             h->image);
    return -EINVAL;
  }
  // Which numbers libuv's fork handler replaces, so that renderers can keep
  // their own descriptors off them (host/fork_guard.h). Best effort: without
  // it only a renderer's fork() children are affected, never the renderer.
  // Only a forked zygote inherits the numbers (and the handler): an exec'd
  // image starts without either, so its host has nothing to learn.
  if (!h->image_exec) capsa__fork_guard_probe();
  int lerr = capsa__limits_setup(h);
  if (lerr < 0) {
    snprintf(h->start_error, sizeof h->start_error, "cgroups required: %s",
             h->limits.why);
    return lerr;
  }
  int err = h->broker.dns_async_inited
                ? 0
                : capsa__broker_start(h, capsa__renderer_kill_for_limit);
  if (err < 0) return start_failed(h, "broker threads", err);
  err = capsa__broker_load_fonts(h);
  if (err < 0) return start_failed(h, "fonts", err);
  h->self_ns_err = capsa_ns_ids_of(0, &h->self_ns);
  err = capsa__claim_start_zygote(h);
  if (h->exe_fd >= 0) err = capsa__renderer_exe_verdict(h, err);
  if (err < 0) {
    capsa__broker_free_fonts(h);
    return start_failed(h, "zygote", err);
  }
  h->started = true;
  h->orphans = capsa__orphans_start(h->loop);
  return 0;
}

int capsa_host_spawn(capsa_host_t *host, int kind, void *data,
                     capsa_renderer_t **out) {
  if (!host || !host->impl || !out) return -EINVAL;
  struct capsa__host_impl *h = host->impl;
  if (!h->started || h->closing) return -EAGAIN;
  if (kind < 0 || (unsigned)kind >= h->nkinds) return -EINVAL;
  struct capsa_host_renderer *r = calloc(1, sizeof *r);
  if (!r) return -ENOMEM;
  r->h = h;
  r->kind = kind;
  r->data = data;
  r->pidfd = -1;
  r->chan_fd = -1;
  r->err.fd = -1;
  int err = capsa__incarnation_launch(r);
  if (err < 0) {
    free(r);
    return err;
  }
  uv_timer_init(h->loop, &r->timer);
  r->timer.data = r;
  r->timer_inited = true;
  r->next = h->renderers;
  h->renderers = r;
  h->live++;
  *out = r;
  return 0;
}

static bool serving(const capsa_renderer_t *r) {
  return r && r->state == R_READY && !r->kill_reason;
}

// serving(r), remembering for capsa_renderer_send_error why not.
static bool can_send(capsa_renderer_t *r) {
  r->not_serving = !serving(r);
  return !r->not_serving;
}

const char *capsa_renderer_send_error(const capsa_renderer_t *r) {
  if (!r) return "";
  if (r->not_serving)
    return "the renderer is not READY (starting, restarting or ended): "
           "send after CAPSA_EV_READY";
  return capsa_channel_send_error(&r->ch);
}

int capsa_renderer_send(capsa_renderer_t *r, capsa_msg_t *msg) {
  if (!r || !msg) return -EINVAL;
  if (!can_send(r)) return -ENOTCONN;
  return capsa_channel_send(&r->ch, msg);
}

// One host request in flight: the embedder's callback, and whether its
// deadline stands in for the heartbeat.
struct host_request {
  struct capsa_host_renderer *r;
  capsa_renderer_reply_cb cb;
  void *arg;
  bool deadline;
};

static void on_request_done(capsa_channel_t *ch, int status, capsa_msg_t *reply,
                            void *arg) {
  (void)ch;
  struct host_request q = *(struct host_request *)arg;
  free(arg);
  struct capsa_host_renderer *r = q.r;
  if (q.deadline) r->deadline_requests--;
  q.cb((capsa_renderer_t *)r, status, reply, q.arg);
  if (status == -ETIMEDOUT && q.deadline &&
      !r->h->kinds[r->kind].keep_on_request_timeout && r->state == R_READY)
    capsa__incarnation_end(r, CAPSA_EV_KILLED, "request deadline");
  capsa__renderer_unpend(r);
}

int capsa_renderer_request(capsa_renderer_t *r, capsa_msg_t *msg,
                           uint64_t timeout_ms, capsa_renderer_reply_cb cb,
                           void *arg) {
  if (!r || !msg || !cb) return -EINVAL;
  if (!can_send(r)) return -ENOTCONN;
  struct host_request *q = malloc(sizeof *q);
  if (!q) return -ENOMEM;
  *q = (struct host_request){r, cb, arg, timeout_ms != 0};
  int err = capsa_channel_request(
      &r->ch, msg, timeout_ms ? timeout_ms : UINT64_MAX, on_request_done, q);
  if (err < 0) {
    free(q);
    return err;
  }
  r->pending++;
  if (q->deadline) r->deadline_requests++;
  return 0;
}

int capsa_renderer_reply(capsa_renderer_t *r, const capsa_msg_t *request,
                         capsa_msg_t *reply) {
  if (!r || !request || !reply) return -EINVAL;
  // Before READY: the incarnation that made the request may be gone while
  // the next one starts; that answer is stale, not merely early.
  if (request->origin == 0 || request->origin != r->origin) return -ESTALE;
  // Its incarnation is ending (killed, restarting, exited): the answer
  // could only reach the next one.
  if (!can_send(r)) return -ESTALE;
  return capsa_channel_reply(&r->ch, request, reply);
}

void *capsa_renderer_get_data(const capsa_renderer_t *r) {
  return r ? r->data : NULL;
}
void capsa_renderer_set_data(capsa_renderer_t *r, void *data) {
  if (r) r->data = data;
}
pid_t capsa_renderer_pid(const capsa_renderer_t *r) {
  return r ? r->pid : -1;
}
int capsa_renderer_kind(const capsa_renderer_t *r) {
  return r ? r->kind : -1;
}
unsigned capsa_renderer_restarts(const capsa_renderer_t *r) {
  return r ? r->restarts : 0;
}
uint64_t capsa__renderer_rests_for_test(const capsa_renderer_t *r);
uint64_t capsa__renderer_rests_for_test(const capsa_renderer_t *r) {
  return r ? r->ch.share.rests : 0;
}
unsigned capsa_renderer_navigations(const capsa_renderer_t *r) {
  return r ? r->navigations : 0;
}

const char *capsa_host_image(const capsa_host_t *host) {
  if (!host || !host->impl || !host->impl->started) return "";
  return host->impl->image;
}

int capsa_host_sandbox_summary(const capsa_host_t *host, char *buf,
                               size_t len) {
  if (!host || !host->impl || (!buf && len)) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started) return -EAGAIN;
  struct capsa_ns_report rep = h->zygote.ns;
  // Renderers also get a pid namespace each when the kinds ask for it.
  bool pid = false;
  for (unsigned i = 0; i < h->nkinds; i++)
    if (h->zkinds[i].pid_namespace) pid = true;
  if (pid) rep.applied |= CAPSA_NAMESPACE_PID;
  rep.requested = h->opts.namespaces_wanted;
  // The zygote's launcher never asks for a pid namespace (each renderer
  // gets its own): a refused one has its errno from the probe.
  if (!(rep.applied & CAPSA_NAMESPACE_PID) &&
      (rep.requested & CAPSA_NAMESPACE_PID)) {
    struct capsa_ns_report avail;
    capsa_ns_available_report(&avail);
    rep.ns_error[1] = avail.ns_error[1];
  }
  char ns[256], line[300];
  capsa_ns_report_format(&rep, ns, sizeof ns);
  // Landlock as the kernel gives it (a kind's policy may still turn it off:
  // capsa_host_kind_report says per kind).
  int abi = capsa_features_get()->landlock_abi;
  if (abi > 0)
    snprintf(line, sizeof line, "%s landlock=abi%d", ns, abi);
  else
    snprintf(line, sizeof line, "%s landlock=no(kernel)", ns);
  // What the zygote itself (and so every renderer before its own policy)
  // is held to: the kinds' stage, the baseline, or only the above.
  if (h->zygote.staged)
    return snprintf(buf, len, "%s zygote=capmode-stage", line);
  if (h->zygote.baseline)
    return snprintf(buf, len, "%s zygote=baseline(%u refused)", line,
                    h->zygote.baseline);
  return snprintf(buf, len, "%s zygote=no-filter", line);
}

int capsa_host_limits_summary(const capsa_host_t *host, char *buf, size_t len) {
  if (!host || !host->impl || (!buf && len)) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started) return -EAGAIN;
  return capsa__limits_summary(h, buf, len);  // host/limits/cgroup.c
}

const char *capsa_host_start_error(const capsa_host_t *host) {
  return host && host->impl ? host->impl->start_error : "";
}

pid_t capsa_host_zygote_pid(const capsa_host_t *host) {
  if (!host || !host->impl || !host->impl->started) return -1;
  return host->impl->zygote.pid;
}

unsigned capsa_host_zygote_restarts(const capsa_host_t *host) {
  return host && host->impl ? host->impl->zygote_restarts : 0;
}

int capsa_host_kind_report(const capsa_host_t *host, int kind,
                           struct capsa_capmode_report *out) {
  if (!host || !host->impl || !out) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started || kind < 0 || (unsigned)kind >= h->nkinds) return -EINVAL;
  if (!h->zkinds[kind].capmode) return -ENOENT;
  if (h->zygote.kind_error[kind] < 0) return h->zygote.kind_error[kind];
  *out = h->zygote.capmode[kind];
  return 0;
}

int capsa_host_kind_warm_up(const capsa_host_t *host, int kind) {
  if (!host || !host->impl) return -EINVAL;
  const struct capsa__host_impl *h = host->impl;
  if (!h->started || kind < 0 || (unsigned)kind >= h->nkinds) return -EINVAL;
  return h->zygote.warm_up[kind];  // the zygote's own numbers are ours
}

void capsa_host_close(capsa_host_t *host, capsa_host_close_cb cb) {
  if (!host || !host->impl) return;
  struct capsa__host_impl *h = host->impl;
  if (h->closing) return;
  h->closing = true;
  h->close_cb = cb;
  capsa__incarnation_close_all(h);
  if (h->live == 0) capsa__host_finish_close(h);
}
