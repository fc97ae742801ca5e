// The exec'd zygote image's bootstrap: the configuration the host sends it
// (the kinds' names, flags and limits, encoded policies, their directories
// and warm-up descriptors) and the image's reading of it. See
// host/zygote/zygote.h.
//
// The host's launcher child (namespaces applied, uid mapped, every
// descriptor closed but 2, the control socket at 3 and the binary at 4)
// execs the binary as argv {"capsa-zygote"} with an empty environment
// (launch.c); capsa_main() in the new image calls
// capsa__zygote_image_main(). The host then sends one configuration
// datagram (struct zcfg, then each kind's encoded policy) and one datagram
// per policy directory (struct zdir with the descriptor). Kinds are found by
// name in the image's own registry (host/kind_registry.h).
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "host/fd_passing.h"
#include "host/host_internal.h"
#include "host/kind_registry.h"
#include "host/zygote/zygote.h"
#include "host/zygote/zygote_internal.h"
#include "sandbox/features.h"
#include "sandbox/launcher/namespaces.h"

// "CZF2": the layout with cfg_size and ready_size. An image of the first
// layout ("CZFG") refuses it rather than reading the fields shifted.
#define CFG_MAGIC 0x32465a43u
#define CFG_MAX (64 * 1024)
#define CFG_MAX_DIRS 16

#define ZCFG_KIND_FIELD(type, name, wire) wire name;
#define ZCFG_TO_WIRE(type, name, wire) ck->name = (wire)kinds[k].name;
#define ZCFG_FROM_WIRE(type, name, wire) z->name = (type)ck->name;

struct zcfg_kind {
  char name[64];
  uint32_t has_capmode;
  CAPSA__ZYGOTE_KIND_SCALARS(ZCFG_KIND_FIELD)  // zygote.h
  uint32_t policy_off, policy_len;             // in the datagram
  uint32_t ndirs;  // its directories' datagrams, in order
  uint32_t nwarm;  // its warm-up descriptors' datagrams, after all dirs
};

struct zcfg {
  uint32_t magic;
  // Both images' idea of the two messages: a renderer executable built
  // against another capsa may lay them out otherwise.
  uint32_t cfg_size, ready_size;
  int32_t host_pid;  // our parent: anything else is not our host
  uint32_t nkinds;
  uint32_t ns_applied;  // what the launcher applied
  uint32_t empty_root, empty_root_required;
  uint32_t baseline_ok;
  uint32_t ndirs;  // directory datagrams that follow
  uint32_t nwarm;  // then warm-up descriptor datagrams (zdir: kind, index)
  // 1: `verdicts` are the host's probes that fork (capsa__features_export),
  // taken instead of forking them again; 0: the zygote probes them itself.
  uint32_t has_verdicts;
  struct capsa__features_verdicts verdicts;
  struct zcfg_kind kinds[CAPSA__ZYGOTE_MAX_KINDS];
};

struct zdir {
  uint32_t kind, index;
};

static union {
  struct zcfg cfg;
  unsigned char bytes[CFG_MAX];
} g_cfg;

// What the image serves (server.c), and its ready message as far as the
// bootstrap fills it in.
static struct capsa__zygote_setup g_setup;
static struct capsa__zygote_ready g_ready;

// Fails the start: the host reads `err` as the zygote's answer.
static _Noreturn void image_fail(int err) {
  g_ready.status = err;
  capsa__send_fd(CAPSA__ZYGOTE_CTRL_FD, &g_ready, sizeof g_ready, -1);
  _exit(125);
}

_Noreturn void capsa__zygote_image_main(void) {
  // Cleared by some execs; our host's death is ours.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ssize_t n = capsa__recv_fd(CAPSA__ZYGOTE_CTRL_FD, g_cfg.bytes, sizeof g_cfg,
                             NULL, CAPSA__ZYGOTE_TIMEOUT_MS);
  const struct zcfg *c = &g_cfg.cfg;
  if (n < (ssize_t)sizeof *c || c->magic != CFG_MAGIC)
    image_fail(-EPROTONOSUPPORT);
  if (c->cfg_size != sizeof *c || c->ready_size != sizeof g_ready)
    image_fail(-EPROTONOSUPPORT);
  if (c->nkinds > CAPSA__ZYGOTE_MAX_KINDS || c->ndirs > CFG_MAX_DIRS)
    image_fail(-EBADMSG);
  // The host's verdicts: the same kernel gives the same answers, without
  // the children that find them forked again here. A set the host's export
  // could not have made is refused, not believed.
  if (c->has_verdicts > 1 ||
      (c->has_verdicts && capsa__features_adopt(&c->verdicts) == -EINVAL))
    image_fail(-EBADMSG);
  // What this image can run, for the host's message when it lacks a kind.
  capsa__kind_names(g_ready.registered, sizeof g_ready.registered);
  if (getppid() != (pid_t)c->host_pid) _exit(125);
  int dirs[CFG_MAX_DIRS];
  unsigned ndirs = 0;
  for (unsigned i = 0; i < c->ndirs; i++) {
    struct zdir d;
    int fd = -1;
    ssize_t m = capsa__recv_fd(CAPSA__ZYGOTE_CTRL_FD, &d, sizeof d, &fd,
                               CAPSA__ZYGOTE_TIMEOUT_MS);
    if (m != (ssize_t)sizeof d || fd < 0) image_fail(-EBADMSG);
    dirs[ndirs++] = fd;
  }
  if (c->nwarm > CAPSA__ZYGOTE_MAX_KINDS * CAPSA_WARM_UP_MAX_FDS)
    image_fail(-EBADMSG);
  for (unsigned i = 0; i < c->nwarm; i++) {
    struct zdir d;
    int fd = -1;
    ssize_t m = capsa__recv_fd(CAPSA__ZYGOTE_CTRL_FD, &d, sizeof d, &fd,
                               CAPSA__ZYGOTE_TIMEOUT_MS);
    if (m != (ssize_t)sizeof d || fd < 0 || d.kind >= c->nkinds ||
        d.index != g_setup.kinds[d.kind].nwarm ||
        d.index >= c->kinds[d.kind].nwarm)
      image_fail(-EBADMSG);
    g_setup.kinds[d.kind].warm_fds[g_setup.kinds[d.kind].nwarm++] = fd;
  }
  g_setup.warm_ups = true;
  g_setup.namespaces = c->ns_applied;
  if (c->empty_root) {
    int err = capsa_ns_enter_empty_root();
    g_setup.empty_root = err == 0;
    g_ready.empty_root_error = err;
    if (err < 0 && c->empty_root_required) image_fail(err);
  }
  g_setup.nkinds = c->nkinds;
  unsigned next_dir = 0;
  for (unsigned k = 0; k < g_setup.nkinds; k++) {
    const struct zcfg_kind *ck = &c->kinds[k];
    struct capsa__zygote_kind *z = &g_setup.kinds[k];
    if (memchr(ck->name, 0, sizeof ck->name) == NULL ||
        ck->ndirs > ndirs - next_dir || ck->policy_off > (size_t)n ||
        ck->policy_len > (size_t)n - ck->policy_off)
      image_fail(-EBADMSG);
    z->name = ck->name;  // in g_cfg: lives as long as we do
    CAPSA__ZYGOTE_KIND_SCALARS(ZCFG_FROM_WIRE)
    // z->warm_fds / nwarm: received above
    // Function and argument pointers of the host mean nothing here: the
    // kind is this image's registration of the same name.
    const capsa_kind_registration_t *reg = capsa_kind_lookup(ck->name);
    if (!reg) {
      g_ready.kind_error[k] =
          capsa__kind_ambiguous(ck->name) ? -ENOTUNIQ : -ENOENT;
    } else {
      z->main = reg->main;
      z->arg = reg->arg;
    }
    if (ck->has_capmode && g_ready.kind_error[k] == 0) {
      int err = capsa_capmode_policy_decode(g_cfg.bytes + ck->policy_off,
                                            ck->policy_len, dirs + next_dir,
                                            ck->ndirs, &z->capmode);
      if (err < 0) g_ready.kind_error[k] = err;
    }
    next_dir += ck->ndirs;
  }
  g_setup.baseline_ok = c->baseline_ok != 0;
  _exit(capsa__zygote_serve(&g_setup, &g_ready, dirs, ndirs));
}

// Sends the exec'd zygote its configuration. 0 or -errno.
int capsa__zygote_send_config(int sock, const struct capsa__zygote_kind *kinds,
                              unsigned nkinds, bool empty_root,
                              bool root_required, unsigned ns_applied,
                              bool baseline_ok) {
  unsigned char *buf = calloc(1, CFG_MAX);
  if (!buf) return -ENOMEM;
  struct zcfg *c = (struct zcfg *)buf;
  c->magic = CFG_MAGIC;
  c->cfg_size = sizeof *c;
  c->ready_size = sizeof(struct capsa__zygote_ready);
  c->host_pid = getpid();
  c->nkinds = nkinds;
  c->ns_applied = ns_applied;
  c->empty_root = empty_root;
  c->empty_root_required = root_required;
  c->baseline_ok = baseline_ok;
  // Best effort: without them the zygote probes for itself.
  c->has_verdicts = capsa__features_export(&c->verdicts) == 0;
  size_t off = sizeof *c;
  int dirs[CFG_MAX_DIRS];
  unsigned dir_kind[CFG_MAX_DIRS];
  unsigned ndirs = 0, nwarm = 0;
  int err = 0;
  for (unsigned k = 0; err == 0 && k < nkinds; k++) {
    struct zcfg_kind *ck = &c->kinds[k];
    if (strlen(kinds[k].name) >= sizeof ck->name) {
      err = -ENAMETOOLONG;
      break;
    }
    strcpy(ck->name, kinds[k].name);
    CAPSA__ZYGOTE_KIND_SCALARS(ZCFG_TO_WIRE)
    ck->nwarm = kinds[k].nwarm <= CAPSA_WARM_UP_MAX_FDS ? kinds[k].nwarm : 0;
    nwarm += ck->nwarm;
    if (!kinds[k].capmode) continue;
    ck->has_capmode = 1;
    unsigned nd = 0;
    ssize_t len =
        capsa_capmode_policy_encode(kinds[k].capmode, buf + off, CFG_MAX - off,
                                    dirs + ndirs, CFG_MAX_DIRS - ndirs, &nd);
    if (len < 0) {
      err = (int)len;
      break;
    }
    ck->policy_off = (uint32_t)off;
    ck->policy_len = (uint32_t)len;
    ck->ndirs = nd;
    for (unsigned i = 0; i < nd; i++) dir_kind[ndirs + i] = k;
    ndirs += nd;
    off += (size_t)len;
  }
  c->ndirs = ndirs;
  c->nwarm = nwarm;
  if (err == 0) err = capsa__send_fd(sock, buf, off, -1);
  for (unsigned i = 0; err == 0 && i < ndirs; i++) {
    struct zdir d = {dir_kind[i], i};
    err = capsa__send_fd(sock, &d, sizeof d, dirs[i]);
  }
  for (unsigned k = 0; err == 0 && k < nkinds; k++) {
    for (unsigned i = 0; err == 0 && i < c->kinds[k].nwarm; i++) {
      struct zdir d = {k, i};
      err = capsa__send_fd(sock, &d, sizeof d, kinds[k].warm_fds[i]);
    }
  }
  free(buf);
  return err;
}
