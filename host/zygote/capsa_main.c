// The early hook (host/kind_registry.h): opens the running binary for a
// later exec'd zygote, or, in the zygote image, runs the image's bootstrap
// (host/zygote/image.c) and never returns.
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host_internal.h"
#include "host/kind_registry.h"
#include "host/zygote/zygote_internal.h"

static bool g_main_called;
// The running binary, opened once by capsa_main: what a (re)started zygote
// is to exec, whatever becomes of the path on disk.
static int g_exe_fd = -1;

// The zygote image is recognised by both its argv[0] and a control socket
// at fd 3 (CAPSA__ZYGOTE_CTRL_FD) connected to a peer: an argv[0] alone could
// be set by any user running the binary.
static bool is_zygote_image(int argc, char **argv) {
  if (argc < 1 || !argv || !argv[0] || strcmp(argv[0], "capsa-zygote") != 0)
    return false;
  struct stat st;
  if (fstat(CAPSA__ZYGOTE_CTRL_FD, &st) < 0 || !S_ISSOCK(st.st_mode))
    return false;
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(CAPSA__ZYGOTE_CTRL_FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
      type != SOCK_SEQPACKET)
    return false;
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  return getpeername(CAPSA__ZYGOTE_CTRL_FD, (struct sockaddr *)&peer, &plen) ==
             0 &&
         peer.ss_family == AF_UNIX;
}

int capsa_main(int argc, char **argv) {
  if (is_zygote_image(argc, argv)) {
    // The exec'd zygote (image.c): never returns to the embedder's main.
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
