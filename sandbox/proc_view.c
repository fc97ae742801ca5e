// See proc_view.h.
#include "sandbox/proc_view.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int capsa_proc_view_check(char *why, size_t len) {
  char buf[32];
  char dummy[1];
  if (why == NULL) {
    why = dummy;
    len = sizeof dummy;
  }
  if (len) why[0] = 0;
  pid_t self = getpid();
  // procfs resolves "self" to the caller's pid as the pid namespace the
  // mount was made for sees it; a process that namespace cannot see at all
  // gets ENOENT.
  ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
  if (n < 0) {
    int e = errno;
    if (access("/proc/1", F_OK) == 0 || e != ENOENT) {
      snprintf(why, len,
               "/proc is of another pid namespace: /proc/self does not "
               "resolve (%s) although this process is pid %d; remount /proc "
               "inside the namespace (mount -t proc proc /proc, or unshare "
               "--pid --fork --mount-proc)",
               e == ENOENT ? "not visible there" : "error", (int)self);
      return -ESRCH;
    }
    snprintf(why, len,
             "/proc is not mounted; mount it (mount -t proc proc /proc): the "
             "host writes /proc/<pid>/uid_map and reads /proc/<pid>/status");
    return -ENOENT;
  }
  buf[n] = 0;
  char *end = NULL;
  long seen = strtol(buf, &end, 10);
  if (end == buf || *end != 0 || seen <= 0 || seen > INT_MAX) {
    snprintf(why, len, "/proc/self resolves to '%s', not a pid", buf);
    return -ESRCH;
  }
  if ((pid_t)seen != self) {
    snprintf(why, len,
             "/proc is of another pid namespace: it shows this process as "
             "pid %ld, which is pid %d here, so /proc/<pid> names other "
             "processes; remount /proc inside the namespace (mount -t proc "
             "proc /proc, or unshare --pid --fork --mount-proc)",
             seen, (int)self);
    return -ESRCH;
  }
  return 0;
}

bool capsa_proc_inherits_orphans(void) {
  if (getpid() == 1) return true;
  int on = 0;
  return prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0) == 0 && on != 0;
}
