// What the zygote's files share: the control socket's messages and the
// calls from one job to the next. Internal to host/zygote/ (the host and the
// benchmark use host/zygote/zygote.h).
//
// The files, by job, each calling only the ones after it:
//   capsa_main.c the early hook (host/kind_registry.h), which runs the
//                image's bootstrap in the zygote image
//   client.c     the host's side: start, fork, stop
//   launch.c     the launcher's child: becomes the forked zygote, or execs
//                the fresh image
//   image.c      the exec'd image's bootstrap: its configuration datagram,
//                sent by the host and read by the image
//   server.c     in the zygote: compile, report ready, serve, spares, and
//                each renderer's first steps after the fork
//   stage.c      capability mode in the zygote: the launcher stage (with
//                the launcher rows) or the baseline
// The kind registry (host/kind_registry.c) only answers lookups: it calls
// none of these.
#ifndef CAPSA_HOST_ZYGOTE_ZYGOTE_INTERNAL_H_
#define CAPSA_HOST_ZYGOTE_ZYGOTE_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "host/zygote/zygote.h"

// How long the host waits for the zygote's answers (and the image for its
// configuration).
#define CAPSA__ZYGOTE_TIMEOUT_MS 5000
// The control socket's number in the zygote; the binary's in the launcher's
// child of an exec'd zygote.
#define CAPSA__ZYGOTE_CTRL_FD 3
#define CAPSA__ZYGOTE_EXE_FD 4

// A request of the host, with the renderer's channel end attached.
struct capsa__zygote_request {
  uint32_t kind;
};

// A request for this "kind" hands every spare's pidfd to the host, so that
// it can kill and reap them (they are its children) before stopping us.
#define CAPSA__ZYGOTE_DRAIN_KIND UINT32_MAX

// The zygote's answer. A renderer's reply carries its pidfd, the read end of
// its stderr pipe and, for a spare, its channel's host end, in that order.
struct capsa__zygote_reply {
  int32_t status;  // 0 (a pidfd is attached) or -errno; drain: 1 per spare
  int32_t pid;
  int32_t spare;  // 1: a channel end is attached too, use it instead
};

// The zygote's ready message (also a failed start's answer).
struct capsa__zygote_ready {
  int32_t status;  // 0, or why an exec'd zygote could not start
  // An exec'd zygote builds its empty root itself (see image.c).
  int32_t empty_root;
  int32_t empty_root_error;
  int32_t staged;      // 1: renderers take only the final capability-mode step
  int32_t baseline;    // not staged: syscalls the zygote's baseline refuses
  int32_t own_userns;  // capsa__zygote.own_userns (host/zygote/zygote.h)
  int32_t kind_error[CAPSA__ZYGOTE_MAX_KINDS];
  struct capsa_capmode_report capmode[CAPSA__ZYGOTE_MAX_KINDS];
  int32_t warm_up[CAPSA__ZYGOTE_MAX_KINDS];  // capsa__zygote.warm_up
  // The launcher's child could not exec the image: its errno (status too).
  int32_t exec_error;
  // An exec'd image's registered kind names (capsa__zygote.registered).
  char registered[CAPSA__ZYGOTE_REGISTERED];
};

// What the host gives the launcher's child (launch.c), in its memory.
struct capsa__zygote_boot {
  const struct capsa__zygote_kind *kinds;
  unsigned nkinds;
  // The host can tell a renderer's own filter from the zygote's (the kernel
  // reports Seccomp_filters): only then may a stage or a baseline go under
  // renderers. Otherwise Seccomp 2 and NoNewPrivs 1 would be inherited, and
  // from outside a renderer that never took its own step (final step, or
  // its policy in full) would look filtered.
  bool baseline_ok;
  rlim_t nproc_total;  // the zygote's RLIMIT_NPROC; RLIM_INFINITY: inherited
  bool foreign;        // capsa__zygote_exec_start's: nnp before the exec
};

// What the zygote serves, in its own memory: copied from the host's by the
// forked zygote (launch.c), decoded from the configuration by an exec'd
// image (image.c).
struct capsa__zygote_setup {
  struct capsa__zygote_kind kinds[CAPSA__ZYGOTE_MAX_KINDS];
  unsigned nkinds;
  unsigned namespaces;  // what the launcher applied (pid: per renderer)
  bool empty_root;      // the zygote's root is the empty one
  // Run the kinds' registered warm-ups (an exec'd image; a forked zygote
  // does not: host/kind_registry.h).
  bool warm_ups;
  bool baseline_ok;  // capsa__zygote_boot.baseline_ok
};

// --- launch.c: run by capsa_ns_spawn in the launcher's child ---------------

// The forked zygote (a copy of the host): `boot` is a capsa__zygote_boot.
int capsa__zygote_forked_main(void *boot);
// Becomes the exec'd image: `boot` is a capsa__zygote_boot. Descriptors: 2,
// the control socket at 3 and the binary at 4. Returns only on failure,
// after telling the host why.
int capsa__zygote_exec_image(void *boot);

// --- image.c ----------------------------------------------------------------

// In the host: sends the exec'd zygote its configuration (the kinds, their
// encoded policies, directories and warm-up descriptors). 0 or -errno.
int capsa__zygote_send_config(int sock, const struct capsa__zygote_kind *kinds,
                              unsigned nkinds, bool empty_root,
                              bool root_required, unsigned ns_applied,
                              bool baseline_ok);

// In the exec'd image, called by capsa_main (capsa_main.c; argv[0]
// "capsa-zygote", the control socket at fd 3): receives the configuration
// and serves the host. Never returns.
_Noreturn void capsa__zygote_image_main(void);

// --- server.c: in the zygote -------------------------------------------------

// Everything the zygote does once its kinds are known, in either image:
// compile, stage, report ready, serve until the host goes. `setup` is
// copied; `preset` (may be NULL) is the ready message as the bootstrap left
// it (kind errors, registered names, the empty root's error). `dirfds`
// (owned; closed once the policies recorded the directories) are the exec'd
// image's received directory descriptors. Returns the zygote's exit code.
int capsa__zygote_serve(const struct capsa__zygote_setup *setup,
                        const struct capsa__zygote_ready *preset, int *dirfds,
                        unsigned ndirfds);

// --- stage.c: in the zygote --------------------------------------------------

// Enters the kinds' capability-mode launcher stage when one stage serves
// every kind exactly (each compiled without error: kind_error[k] == 0, with
// a policy, none with no_stage), and `ok`. Returns whether it did.
bool capsa__zygote_stage_enter(const struct capsa__zygote_kind *kinds,
                               const int32_t *kind_error, unsigned nkinds,
                               bool ok);
// Not staged: installs the capability-mode baseline for the zygote and all
// it forks, when `ok`. Returns how many syscalls it refuses (0: none
// installed).
unsigned capsa__zygote_baseline_enter(bool ok);

#endif  // CAPSA_HOST_ZYGOTE_ZYGOTE_INTERNAL_H_
