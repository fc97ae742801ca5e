/*
 * A program written against FreeBSD's Capsicum headers, unchanged. The
 * compat test compiles it with nothing but
 *   cc freebsd_prog.c $(pkg-config --cflags --libs capsa)
 * and runs it: every check below must hold, then it prints "ok" and exits 0.
 */
#include <sys/capsicum.h>
#include <sys/ioctl.h>
#include <sys/procdesc.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) errx(1, "line %d: %s (errno %d)", __LINE__, #cond, errno); \
  } while (0)

int main(void) {
  char path[] = "/tmp/capsa-freebsd-prog-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  unlink(path);
  CHECK(write(fd, "hello", 5) == 5);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);

  cap_rights_t rights, got;
  cap_rights_init(&rights, CAP_READ, CAP_SEEK, CAP_FSTAT, CAP_IOCTL, CAP_FCNTL);
  CHECK(cap_rights_is_valid(&rights));
  if (cap_rights_limit(fd, &rights) < 0) err(1, "cap_rights_limit");
  CHECK(cap_rights_get(fd, &got) == 0);
  CHECK(cap_rights_is_set(&got, CAP_READ, CAP_SEEK));
  CHECK(!cap_rights_is_set(&got, CAP_WRITE));
  CHECK(cap_rights_contains(&rights, &got) &&
        cap_rights_contains(&got, &rights));

  /* Rights only shrink. */
  cap_rights_t wider = rights;
  cap_rights_set(&wider, CAP_WRITE);
  CHECK(cap_rights_limit(fd, &wider) == -1 && errno == ENOTCAPABLE);

  /* ioctl and fcntl limits. */
  cap_ioctl_t cmds[] = {FIONREAD};
  CHECK(cap_ioctls_get(fd, NULL, 0) == CAP_IOCTLS_ALL);
  CHECK(cap_ioctls_limit(fd, cmds, 1) == 0);
  cap_ioctl_t back[4];
  CHECK(cap_ioctls_get(fd, back, 4) == 1 && back[0] == FIONREAD);
  CHECK(cap_fcntls_limit(fd, CAP_FCNTL_GETFL) == 0);
  uint32_t fr = 0;
  CHECK(cap_fcntls_get(fd, &fr) == 0 && fr == CAP_FCNTL_GETFL);
  CHECK(fcntl(fd, F_SETFL, O_NONBLOCK) == -1 && errno == ENOTCAPABLE);

  /* dup keeps exactly the rights; close then open gets all rights. */
  int d = dup(fd);
  CHECK(d >= 0);
  CHECK(cap_rights_get(d, &got) == 0 && cap_rights_contains(&got, &rights) &&
        cap_rights_contains(&rights, &got));
  CHECK(cap_fcntls_get(d, &fr) == 0 && fr == CAP_FCNTL_GETFL);
  CHECK(write(d, "x", 1) == -1 && errno == ENOTCAPABLE);
  CHECK(dup2(fd, 70) == 70 && cap_rights_get(70, &got) == 0 &&
        !cap_rights_is_set(&got, CAP_WRITE));
  CHECK(fcntl(fd, F_DUPFD_CLOEXEC, 80) >= 80);
  CHECK(close(d) == 0);
  CHECK(close(d) == -1 && errno == EBADF);
  CHECK(cap_rights_get(d, &got) == -1 && errno == EBADF);
  int d2 = open("/dev/null", O_WRONLY);
  CHECK(d2 >= 0 && d2 != d);
  CHECK(write(d2, "x", 1) == 1);
  CHECK(close(d2) == 0);

  /* Without CAP_FCNTL / CAP_IOCTL the lists are empty and cannot grow. */
  char path2[] = "/tmp/capsa-freebsd-prog-XXXXXX";
  int fd2 = mkstemp(path2);
  CHECK(fd2 >= 0);
  unlink(path2);
  cap_rights_init(&rights, CAP_READ, CAP_FSTAT);
  if (cap_rights_limit(fd2, &rights) < 0) err(1, "cap_rights_limit");
  fr = 1;
  CHECK(cap_fcntls_get(fd2, &fr) == 0 && fr == 0);
  CHECK(cap_fcntls_limit(fd2, CAP_FCNTL_GETFL) == -1 && errno == ENOTCAPABLE);
  CHECK(cap_ioctls_get(fd2, back, 4) == 0);
  CHECK(cap_ioctls_limit(fd2, cmds, 1) == -1 && errno == ENOTCAPABLE);

  /* Process descriptors. */
  int pd;
  pid_t pid = pdfork(&pd, 0);
  CHECK(pid >= 0);
  if (pid == 0) _exit(3);
  pid_t p2;
  CHECK(pdgetpid(pd, &p2) == 0 && p2 == pid);
  int status;
  CHECK(pdwait4(pd, &status, 0, NULL) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  close(pd);
  CHECK(pdwait4(-1, &status, 0, NULL) == -1 && errno == EBADF);
  int pp[2];
  CHECK(pipe(pp) == 0);
  CHECK(pdwait4(pp[0], &status, 0, NULL) == -1 && errno == EBADF);
  /* Limited without CAP_PDWAIT: the right is checked first. */
  CHECK(pdwait4(fd2, &status, 0, NULL) == -1 && errno == ENOTCAPABLE);

  /* Capability mode. */
  u_int mode = 1;
  CHECK(cap_getmode(&mode) == 0 && mode == 0);
  CHECK(!cap_sandboxed());
  char buf0[16];
  if (cap_enter() < 0) err(1, "cap_enter");
  CHECK(cap_getmode(&mode) == 0 && mode == 1);
  CHECK(cap_sandboxed());
  CHECK(open("/etc/passwd", O_RDONLY) == -1 && errno == ECAPMODE);
  CHECK(openat(AT_FDCWD, "x", O_RDONLY) == -1 && errno == ECAPMODE);
  CHECK(openat(-5, "x", O_RDONLY) == -1 && errno == EBADF);
  CHECK(readlinkat(-1, "x", buf0, sizeof buf0) == -1 && errno == EBADF);
  CHECK(pdwait4(-1, &status, 0, NULL) == -1 && errno == EBADF);
  CHECK(write(fd, "x", 1) == -1 && errno == ENOTCAPABLE);
  char buf[8] = {0};
  CHECK(read(fd, buf, 5) == 5 && memcmp(buf, "hello", 5) == 0);

  /* pdfork and pdkill inside capability mode. */
  pid = pdfork(&pd, 0);
  CHECK(pid >= 0);
  if (pid == 0) {
    for (;;) pause();
  }
  CHECK(pdkill(pd, SIGKILL) == 0);
  CHECK(pdwait4(pd, &status, 0, NULL) == pid && WIFSIGNALED(status));

  printf("freebsd_prog: ok\n");
  return 0;
}
