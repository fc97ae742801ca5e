// What the launcher's child runs (capsa_ns_spawn, namespaces applied, every
// descriptor closed but those the host kept): it becomes the zygote, as a
// copy of the host or as a fresh exec of the binary. See
// host/zygote/zygote.h.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/fd_passing.h"
#include "host/zygote/zygote.h"
#include "host/zygote/zygote_internal.h"
#include "sandbox/launcher/namespaces.h"

// Before anything else (and so before an exec, which keeps it): the
// zygote's own RLIMIT_NPROC, lowered to the host's total for renderers.
// Each renderer's user namespace records it as the ceiling of the zygote
// namespace's count, where every renderer's processes meet. Never raised
// (that needs CAP_SYS_RESOURCE outside).
static int apply_nproc_total(const struct capsa__zygote_boot *b) {
  if (b->nproc_total == RLIM_INFINITY) return 0;
  struct rlimit r;
  if (getrlimit(RLIMIT_NPROC, &r) < 0) return -errno;
  if (b->nproc_total < r.rlim_max) r.rlim_max = b->nproc_total;
  if (b->nproc_total < r.rlim_cur) r.rlim_cur = b->nproc_total;
  if (r.rlim_cur > r.rlim_max) r.rlim_cur = r.rlim_max;
  return setrlimit(RLIMIT_NPROC, &r) < 0 ? -errno : 0;
}

// The forked zygote (a copy of the host): its kinds are in the copied
// memory already.
int capsa__zygote_forked_main(void *arg) {
  const struct capsa__zygote_boot *b = arg;
  if (apply_nproc_total(b) < 0) return 1;
  static struct capsa__zygote_setup s;
  memcpy(s.kinds, b->kinds, b->nkinds * sizeof s.kinds[0]);
  s.nkinds = b->nkinds;
  s.baseline_ok = b->baseline_ok;
  struct capsa_ns_report self;
  if (capsa_ns_self(&self) == 0) {
    s.namespaces = self.applied;
    s.empty_root = self.empty_root;
  }
  return capsa__zygote_serve(&s, NULL, NULL, 0);
}

// Becomes the zygote image (image.c): the launcher closed all descriptors
// but 2, the control socket at 3 and the binary at 4; closed again here so
// that nothing else can reach the image.
int capsa__zygote_exec_image(void *arg) {
  const struct capsa__zygote_boot *b = arg;
  if (apply_nproc_total(b) < 0) return 127;
  syscall(SYS_close_range, CAPSA__ZYGOTE_EXE_FD + 1, ~0u, 0);
  // The binary's own descriptor goes with the exec.
  if (fcntl(CAPSA__ZYGOTE_EXE_FD, F_SETFD, FD_CLOEXEC) < 0) return 127;
  // The embedder's renderer executable is not the binary the host runs as:
  // whatever bits it carries by the time of this exec, it gains nothing.
  if (b->foreign && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return 127;
  char *const argv[] = {(char *)"capsa-zygote", NULL};
  char *const envp[] = {NULL};
  syscall(SYS_execveat, CAPSA__ZYGOTE_EXE_FD, "", argv, envp, AT_EMPTY_PATH);
  // Tell the host why (ENOEXEC, EACCES, ENOENT for a missing interpreter):
  // otherwise it only sees the socket close.
  static struct capsa__zygote_ready failed;
  failed.exec_error = errno;
  failed.status = -errno;
  capsa__send_fd(CAPSA__ZYGOTE_CTRL_FD, &failed, sizeof failed, -1);
  return 127;
}
