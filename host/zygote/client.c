// The host's side of the zygote: starts it (forked or exec'd), asks it for
// renderers, stops it. See host/zygote/zygote.h.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/fd_passing.h"
#include "host/host_internal.h"
#include "host/zygote/zygote.h"
#include "host/zygote/zygote_internal.h"

// The zygote's ready message. A zygote that exits with our configuration
// unread (an exec that failed, and said why first) resets the socket, and
// the kernel reports that error before the message queued ahead of it:
// read once more to get the message.
static ssize_t recv_ready(int sock, struct capsa__zygote_ready *rd,
                          int timeout_ms) {
  ssize_t n = capsa__recv_fd(sock, rd, sizeof *rd, NULL, timeout_ms);
  if (n == -ECONNRESET) {
    ssize_t again = capsa__recv_fd(sock, rd, sizeof *rd, NULL, 0);
    if (again > 0) n = again;  // else nothing was queued: the reset stands
  }
  return n;
}

// Whether /proc/PID/status says how many filters a process has (Linux 5.9).
static bool seccomp_filters_visible(void) {
  capsa_renderer_check_t own;
  memset(&own, 0, sizeof own);
  return capsa__check_status(getpid(), &own) == 0 && own.seccomp_filters >= 0;
}

static int zygote_start(capsa__zygote *z,
                        const struct capsa__zygote_kind *kinds, unsigned nkinds,
                        unsigned ns_wanted, unsigned ns_required,
                        bool empty_root, int stderr_fd, int exe_fd,
                        bool foreign, rlim_t nproc_total) {
  if (!z || (!kinds && nkinds) || nkinds > CAPSA__ZYGOTE_MAX_KINDS)
    return -EINVAL;
  memset(z, 0, sizeof *z);
  z->sock = -1;
  z->pidfd = -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -errno;
  // The zygote's own namespaces; pid namespaces are made per renderer.
  capsa_ns_policy *p = capsa_ns_policy_new();
  if (!p) {
    close(sv[0]);
    close(sv[1]);
    return -ENOMEM;
  }
  int err = capsa_ns_policy_set_namespaces(p, ns_wanted & ~CAPSA_NAMESPACE_PID,
                                           ns_required & ~CAPSA_NAMESPACE_PID);
  // The empty root needs the mount namespace; it is required when that is.
  // An exec'd zygote builds its empty root itself, after the exec: the
  // exec needs the dynamic loader and libraries of the host's root.
  bool root_required = empty_root && (ns_required & CAPSA_NAMESPACE_MOUNT);
  if (err == 0 && (ns_wanted & CAPSA_NAMESPACE_MOUNT) && exe_fd < 0)
    err = capsa_ns_policy_set_empty_root(p, empty_root, root_required);
  if (err == 0 && exe_fd >= 0)
    err = capsa_ns_policy_keep_fd(p, exe_fd, CAPSA__ZYGOTE_EXE_FD);
  if (err == 0) err = capsa_ns_policy_keep_fd(p, sv[1], CAPSA__ZYGOTE_CTRL_FD);
  if (err == 0 && stderr_fd >= 0)
    err = capsa_ns_policy_keep_fd(p, stderr_fd, 2);
  if (err == 0) err = capsa_ns_policy_set_keep_caps(p, true);
  struct capsa__zygote_boot b = {kinds, nkinds, seccomp_filters_visible(),
                                 nproc_total, foreign};
  struct capsa_ns_report rep;
  memset(&rep, 0, sizeof rep);
  struct capsa_ns_child c;
  if (err == 0)
    err = capsa_ns_spawn(
        p, exe_fd >= 0 ? capsa__zygote_exec_image : capsa__zygote_forked_main,
        &b, &c, &rep);
  capsa_ns_policy_free(p);
  close(sv[1]);
  if (err < 0) {
    close(sv[0]);
    z->ns = rep;
    return err;
  }
  z->sock = sv[0];
  z->pidfd = c.pidfd;
  z->pid = c.pid;
  z->ns = rep;
  z->exec = exe_fd >= 0;
  if (z->exec) {
    bool want_root = empty_root && (ns_wanted & CAPSA_NAMESPACE_MOUNT);
    if (want_root && !(rep.applied & CAPSA_NAMESPACE_MOUNT)) {
      // As the launcher reports it: no mount namespace to build it in.
      z->ns.empty_root_error = -EPERM;
      want_root = false;
      if (root_required) {
        capsa__zygote_stop(z);
        return -EPERM;
      }
    }
    err = capsa__zygote_send_config(z->sock, kinds, nkinds, want_root,
                                    root_required, rep.applied, b.baseline_ok);
    if (err < 0) {
      // A child whose exec failed said why and exited (so the send met a
      // closed socket): the why is the error, not the EPIPE.
      struct capsa__zygote_ready late;
      if (recv_ready(z->sock, &late, 0) == (ssize_t)sizeof late &&
          late.exec_error > 0) {
        z->exec_error = late.exec_error;
        err = -late.exec_error;
      }
      capsa__zygote_stop(z);
      return err;
    }
  }
  struct capsa__zygote_ready rd;
  ssize_t n = recv_ready(z->sock, &rd, CAPSA__ZYGOTE_TIMEOUT_MS);
  if (n != (ssize_t)sizeof rd || rd.status < 0) {
    if (n == (ssize_t)sizeof rd && rd.exec_error > 0)
      z->exec_error = rd.exec_error;
    capsa__zygote_stop(z);
    return n < 0 ? (int)n : n == (ssize_t)sizeof rd ? rd.status : -EPROTO;
  }
  if (z->exec && !z->ns.empty_root_error) {
    z->ns.empty_root = rd.empty_root == 1;
    z->ns.empty_root_error = rd.empty_root_error;
  }
  if (z->exec) {
    memcpy(z->registered, rd.registered, sizeof z->registered);
    z->registered[sizeof z->registered - 1] = 0;
  }
  z->staged = rd.staged == 1;
  z->own_userns =
      rd.own_userns > CAPSA__OWN_USERNS_PER_UID ? -EPROTO : rd.own_userns;
  z->baseline = rd.baseline > 0 ? (unsigned)rd.baseline : 0;
  for (unsigned k = 0; k < nkinds; k++) {
    z->kind_error[k] = rd.kind_error[k];
    z->capmode[k] = rd.capmode[k];
    z->warm_up[k] = rd.warm_up[k];
  }
  return 0;
}

int capsa__zygote_start(capsa__zygote *z,
                        const struct capsa__zygote_kind *kinds, unsigned nkinds,
                        unsigned ns_wanted, unsigned ns_required,
                        bool empty_root, int stderr_fd, rlim_t nproc_total) {
  return zygote_start(z, kinds, nkinds, ns_wanted, ns_required, empty_root,
                      stderr_fd, -1, false, nproc_total);
}

int capsa__zygote_exec_start(capsa__zygote *z,
                             const struct capsa__zygote_kind *kinds,
                             unsigned nkinds, unsigned ns_wanted,
                             unsigned ns_required, bool empty_root,
                             int stderr_fd, int exe_fd, bool foreign,
                             rlim_t nproc_total) {
  if (exe_fd < 0) return -EBADF;
  return zygote_start(z, kinds, nkinds, ns_wanted, ns_required, empty_root,
                      stderr_fd, exe_fd, foreign, nproc_total);
}

int capsa__zygote_fork(capsa__zygote *z, unsigned kind, int channel_fd,
                       struct capsa_ns_child *child, int *channel_out,
                       int *stderr_out) {
  if (!z || !child || channel_fd < 0 || !channel_out || !stderr_out ||
      kind == CAPSA__ZYGOTE_DRAIN_KIND)
    return -EINVAL;
  *channel_out = -1;
  *stderr_out = -1;
  if (z->sock < 0) return -EPIPE;
  struct capsa__zygote_request req = {kind};
  int err = capsa__send_fd(z->sock, &req, sizeof req, channel_fd);
  if (err < 0) return err;
  struct capsa__zygote_reply rep;
  int fds[3], nfds = 0;
  ssize_t n = capsa__recv_fds(z->sock, &rep, sizeof rep, fds, 3, &nfds,
                              CAPSA__ZYGOTE_TIMEOUT_MS);
  if (n < 0) return (int)n;
  int want = rep.status == 0 ? (rep.spare ? 3 : 2) : 0;
  if (n != (ssize_t)sizeof rep || rep.status > 0 || nfds != want) {
    for (int i = 0; i < nfds; i++) close(fds[i]);
    return n == 0 ? -EPIPE : rep.status < 0 ? rep.status : -EPROTO;
  }
  if (rep.status < 0) return rep.status;
  child->pidfd = fds[0];
  child->pid = rep.pid;
  *stderr_out = fds[1];
  if (rep.spare) *channel_out = fds[2];
  return 0;
}

// Takes the spares back (they are our children) and kills and reaps them.
static void drain_spares(capsa__zygote *z) {
  struct capsa__zygote_request req = {CAPSA__ZYGOTE_DRAIN_KIND};
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return;
  int err = capsa__send_fd(z->sock, &req, sizeof req, sv[0]);
  close(sv[0]);
  close(sv[1]);
  for (int i = 0; err == 0 && i <= CAPSA__ZYGOTE_MAX_KINDS; i++) {
    struct capsa__zygote_reply rep;
    int pidfd = -1;
    ssize_t n = capsa__recv_fd(z->sock, &rep, sizeof rep, &pidfd,
                               CAPSA__ZYGOTE_TIMEOUT_MS);
    if (n != (ssize_t)sizeof rep || rep.status != 1 || pidfd < 0) {
      if (pidfd >= 0) close(pidfd);
      break;
    }
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 &&
           errno == EINTR) {
    }
    close(pidfd);
  }
}

void capsa__zygote_stop(capsa__zygote *z) {
  if (!z) return;
  if (z->sock >= 0) {
    drain_spares(z);
    close(z->sock);
    z->sock = -1;
  }
  if (z->pidfd >= 0) {
    // It exits on EOF; kill as well so a wedged zygote cannot stall us.
    syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)z->pidfd, &si, WEXITED) < 0 &&
           errno == EINTR) {
    }
    close(z->pidfd);
    z->pidfd = -1;
  }
}
