// The kind registry and the early hook. See host/kind_registry.h.
#include "host/kind_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "host/zygote.h"

// Filled by constructors before main, read afterwards only: no lock. Fixed
// size, since constructors run before anything may allocate safely.
static const capsa_kind_registration_t *g_reg[CAPSA_KIND_REGISTRY_MAX];
static bool g_ambiguous[CAPSA_KIND_REGISTRY_MAX];
static unsigned g_nreg;
static bool g_overflow;

static bool g_main_called;
// The running binary, opened once by capsa_main: what a (re)started zygote
// is to exec, whatever becomes of the path on disk.
static int g_exe_fd = -1;

void capsa_kind_register(const capsa_kind_registration_t *r) {
  if (!r || !r->name || !r->main) return;
  for (unsigned i = 0; i < g_nreg; i++) {
    if (strcmp(g_reg[i]->name, r->name) == 0) {
      // Two kinds of one name: which one the zygote image would run is not
      // for us to guess.
      if (g_reg[i] != r) g_ambiguous[i] = true;
      return;
    }
  }
  if (g_nreg == CAPSA_KIND_REGISTRY_MAX) {
    g_overflow = true;
    return;
  }
  g_reg[g_nreg++] = r;
}

const capsa_kind_registration_t *capsa_kind_lookup(const char *name) {
  if (!name) return NULL;
  for (unsigned i = 0; i < g_nreg; i++)
    if (strcmp(g_reg[i]->name, name) == 0)
      return g_ambiguous[i] ? NULL : g_reg[i];
  return NULL;
}

bool capsa_kind_registry_overflowed(void) {
  return g_overflow;
}

static const capsa_warm_up_registration_t *g_warm[CAPSA_KIND_REGISTRY_MAX];
static bool g_warm_ambiguous[CAPSA_KIND_REGISTRY_MAX];
static unsigned g_nwarm;

void capsa_kind_register_warm_up(const capsa_warm_up_registration_t *r) {
  if (!r || !r->name || !r->fn) return;
  for (unsigned i = 0; i < g_nwarm; i++) {
    if (strcmp(g_warm[i]->name, r->name) == 0) {
      if (g_warm[i] != r) g_warm_ambiguous[i] = true;  // which one? not ours
      return;
    }
  }
  if (g_nwarm == CAPSA_KIND_REGISTRY_MAX) {
    g_overflow = true;
    return;
  }
  g_warm[g_nwarm++] = r;
}

capsa_warm_up_fn capsa__kind_warm_up(const char *name, bool *ambiguous) {
  *ambiguous = false;
  for (unsigned i = 0; name && i < g_nwarm; i++) {
    if (strcmp(g_warm[i]->name, name) == 0) {
      *ambiguous = g_warm_ambiguous[i];
      return g_warm_ambiguous[i] ? NULL : g_warm[i]->fn;
    }
  }
  return NULL;
}

bool capsa__kind_ambiguous(const char *name) {
  for (unsigned i = 0; name && i < g_nreg; i++)
    if (strcmp(g_reg[i]->name, name) == 0) return g_ambiguous[i];
  return false;
}

void capsa__kind_names(char *buf, size_t len) {
  if (!buf || len == 0) return;
  buf[0] = 0;
  size_t n = 0;
  for (unsigned i = 0; i < g_nreg && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
                          g_reg[i]->name);
  if (g_overflow && n < len) snprintf(buf + n, len - n, ", ... (full)");
  // Cut short: say so rather than show a name that is not one.
  if (n >= len && len > 4) memcpy(buf + len - 4, "...", 4);
}

// The zygote image is recognised by both its argv[0] and a control socket
// at fd 3 connected to a peer: an argv[0] alone could be set by any user
// running the binary.
static bool is_zygote_image(int argc, char **argv) {
  if (argc < 1 || !argv || !argv[0] || strcmp(argv[0], "capsa-zygote") != 0)
    return false;
  struct stat st;
  if (fstat(3, &st) < 0 || !S_ISSOCK(st.st_mode)) return false;
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
      type != SOCK_SEQPACKET)
    return false;
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  return getpeername(3, (struct sockaddr *)&peer, &plen) == 0 &&
         peer.ss_family == AF_UNIX;
}

int capsa_main(int argc, char **argv) {
  if (is_zygote_image(argc, argv)) {
    // The exec'd zygote (host/zygote.h): never returns to the embedder's
    // main.
    capsa__zygote_image_main();
  }
  if (g_exe_fd < 0) {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    g_exe_fd = fd;
  }
  g_main_called = true;
  return 0;
}

bool capsa_main_called(void) {
  return g_main_called;
}

int capsa__exe_fd(void) {
  return g_exe_fd;
}
