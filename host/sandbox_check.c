// The host's outside view of a renderer's confinement: what the kernel says
// in /proc, which a compromised renderer cannot forge.
//
// Two halves, so that the host can take each at its earliest sound moment:
// namespaces are fixed when the zygote's clone returns (a renderer cannot
// change them: unshare and setns are refused in capability mode), so they
// are read while the renderer is still starting; the seccomp state is read
// when its HELLO arrives, after the renderer's own final step.
//
// For a renderer of the host: capsa__check_prepare takes the first half at
// launch, capsa__check_hello returns the verdict on its HELLO (its
// interfaces, then its confinement); the state machine
// (host/incarnation.c) acts on it.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "host/oom_score.h"
#include "host/text.h"
#include "ipc/interface.h"

// Reads an integer field ("Seccomp:\t2") of /proc/PID/status; -1 if absent.
static int status_field(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text; p && *p; p = strchr(p, '\n')) {
    if (*p == '\n') p++;
    if (strncmp(p, name, n) == 0 && p[n] == ':') return atoi(p + n + 1);
  }
  return -1;
}

// host/testing.h: a kernel before 5.9, which has no Seccomp_filters line.
static bool g_hide_filters;

void capsa__check_hide_seccomp_filters_for_test(bool hide) {
  g_hide_filters = hide;
}

// host/testing.h: a zygote whose renderers stayed in its user namespace.
static bool g_zygote_ns_of_renderer;

void capsa__check_zygote_ns_of_renderer_for_test(bool on) {
  g_zygote_ns_of_renderer = on;
}

const capsa_ns_ids *capsa__check_zygote_ns(const capsa_ns_ids *zygote,
                                           const capsa_ns_ids *renderer) {
  return g_zygote_ns_of_renderer ? renderer : zygote;
}

int capsa__check_status(pid_t pid, capsa_renderer_check_t *out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? -ESRCH : -errno;
  // Whole: a long Groups: line (many supplementary groups) must not push
  // the fields we need out of the buffer.
  char text[16384];
  size_t n = 0;
  int e = 0;
  while (n < sizeof text - 1) {
    ssize_t r = read(fd, text + n, sizeof text - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) e = errno;
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(fd);
  if (e) return -e;
  if (n == 0) return -ESRCH;
  text[n] = 0;
  out->seccomp_mode = status_field(text, "Seccomp");
  out->no_new_privs = status_field(text, "NoNewPrivs");
  out->seccomp_filters =
      g_hide_filters ? -1 : status_field(text, "Seccomp_filters");
  return 0;
}

void capsa__check_verdict(capsa_renderer_check_t *out) {
  out->ok = false;
  if (out->seccomp_mode != 2)
    snprintf(out->why, sizeof out->why, "seccomp mode %d, not 2 (filter)",
             out->seccomp_mode);
  else if (out->no_new_privs != 1)
    snprintf(out->why, sizeof out->why, "no_new_privs not set");
  else if (out->filters_expected > 0 &&
           out->seccomp_filters < out->filters_expected)
    // Only known when the kernel says (Seccomp_filters, Linux >= 5.9).
    snprintf(out->why, sizeof out->why,
             "%d seccomp filters, expected at least %d (final step missing)",
             out->seccomp_filters, out->filters_expected);
  else if ((out->ns_differ & out->ns_expected) != out->ns_expected)
    snprintf(out->why, sizeof out->why,
             "namespaces 0x%x differ from ours, expected 0x%x", out->ns_differ,
             out->ns_expected);
  else
    out->ok = true;
}

int capsa_renderer_check_pid(pid_t pid, unsigned expect_ns,
                             capsa_renderer_check_t *out) {
  if (pid <= 0 || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  out->ns_expected = expect_ns;
  int err = capsa__check_status(pid, out);
  if (err < 0) return err;
  int differ = capsa_ns_of_pid_differ(pid);
  if (differ < 0) return differ;
  out->ns_differ = (unsigned)differ;
  capsa__check_verdict(out);
  return 0;
}

static unsigned expected_namespaces(const struct capsa__host_impl *h,
                                    int kind) {
  unsigned ns = h->zygote.ns.applied;
  if (h->zkinds[kind].pid_namespace) ns |= CAPSA_NAMESPACE_PID;
  return ns;
}

// Its namespaces were fixed by the zygote's clone (unshare and setns are
// refused in capability mode), so they need not wait for its HELLO.
void capsa__check_prepare(struct capsa_host_renderer *r) {
  struct capsa__host_impl *h = r->h;
  capsa_renderer_check_t *c = &r->outside.check;
  memset(c, 0, sizeof *c);
  c->ns_expected = expected_namespaces(h, r->kind);
  // Whatever the zygote holds (its stage, or its baseline when it cannot
  // stage), a renderer inherits: it must show one filter of its own more.
  // Known only when the kernel reports the count (then the zygote may take a
  // baseline at all, see host/zygote/server.c).
  if (h->zygote_filters >= 0) c->filters_expected = h->zygote_filters + 1;
  capsa_ns_ids ids;
  int err = h->self_ns_err;
  if (err == 0) err = capsa_ns_ids_of(r->pid, &ids);
  if (err == 0) c->ns_differ = capsa_ns_ids_differ(&ids, &h->self_ns);
  // Its processes are counted apart from its siblings' only in a user
  // namespace of its own (host/zygote/server.c fork_renderer).
  r->outside.userns_of_zygote = false;
  if (err == 0 && h->zygote.own_userns == CAPSA__OWN_USERNS) {
    err = h->zygote_ns_err;
    const capsa_ns_ids *z = capsa__check_zygote_ns(&h->zygote_ns, &ids);
    if (err == 0)
      r->outside.userns_of_zygote =
          !(capsa_ns_ids_differ(&ids, z) & CAPSA_NAMESPACE_USER);
  }
  r->outside.err = err;
  // The OOM killer's first choice is a renderer, never its host.
  c->oom_score_adj = capsa__oom_score_raise(r->pid);
  if (c->oom_score_adj == 0) c->oom_score_adj = CAPSA__RENDERER_OOM_SCORE_ADJ;
}

capsa_host_event_type_t capsa__check_hello(struct capsa_host_renderer *r,
                                           const capsa_msg_t *m,
                                           capsa_renderer_check_t *check,
                                           char *why, size_t len) {
  // It must speak its kind's interfaces, at their version: the same image
  // cannot differ, so a different list is a lie or a broken build.
  const capsa_kind_options_t *kind = &r->h->kinds[r->kind];
  uint64_t want = capsa_iface_list_hash(kind->interfaces, kind->ninterfaces);
  if (m->u.hello.interfaces_hash != want) {
    char names[256];
    if (capsa_iface_list_names(kind->interfaces, kind->ninterfaces, names,
                               sizeof names) < 0)
      snprintf(names, sizeof names, "(%u interfaces)", kind->ninterfaces);
    char got[128];
    capsa__text_escape(
        m->u.hello.interfaces ? m->u.hello.interfaces : "",
        m->u.hello.interfaces ? strlen(m->u.hello.interfaces) : 0, got,
        sizeof got);
    snprintf(why, len,
             "hello: interfaces '%s' (version %016llx), the kind speaks "
             "'%s' (version %016llx)",
             got, (unsigned long long)m->u.hello.interfaces_hash, names,
             (unsigned long long)want);
    return CAPSA_EV_BAD_MESSAGE;
  }
  *check = r->outside.check;
  int err = r->outside.err;
  if (err == 0) err = capsa__check_status(r->pid, check);
  if (err < 0) {
    snprintf(check->why, sizeof check->why, "cannot read /proc: %s",
             strerror(-err));
    check->ok = false;
  } else {
    capsa__check_verdict(check);
    if (check->ok && !m->u.hello.sandbox.capmode) {
      snprintf(check->why, sizeof check->why,
               "renderer reports no capability mode");
      check->ok = false;
    } else if (check->ok && r->outside.userns_of_zygote) {
      snprintf(check->why, sizeof check->why,
               "user namespace is the zygote's, not its own");
      check->ok = false;
    }
  }
  return check->ok ? CAPSA_EV_READY : CAPSA_EV_SANDBOX_REFUSED;
}
