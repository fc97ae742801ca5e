// Compile a libseccomp filter to BPF once; install it later with one
// seccomp(2) call (building a filter in the child costs ~200 us more).
#include "sandbox/seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int capsa_bpf_compile(scmp_filter_ctx ctx, struct capsa_bpf *out) {
  if (!ctx || !out) return -EINVAL;
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (rc < 0) return rc;
  // libseccomp 2.5 exports to a descriptor only; a memfd keeps it in memory.
  int fd = (int)syscall(SYS_memfd_create, "capsa-bpf", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  rc = seccomp_export_bpf(ctx, fd);
  struct stat st;
  if (rc == 0 && fstat(fd, &st) < 0) rc = -errno;
  if (rc == 0 && (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
                  st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS))
    rc = -E2BIG;
  struct sock_filter *insns = NULL;
  if (rc == 0 && !(insns = malloc((size_t)st.st_size))) rc = -ENOMEM;
  if (rc == 0 && pread(fd, insns, (size_t)st.st_size, 0) != st.st_size)
    rc = -EIO;
  close(fd);
  if (rc < 0) {
    free(insns);
    return rc;
  }
  out->insns = insns;
  out->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
  return 0;
}

int capsa_bpf_copy(const struct capsa_bpf *src, struct capsa_bpf *dst) {
  if (!src || !dst || !src->insns) return -EINVAL;
  struct sock_filter *insns = malloc(src->len * sizeof(*insns));
  if (!insns) return -ENOMEM;
  memcpy(insns, src->insns, src->len * sizeof(*insns));
  dst->insns = insns;
  dst->len = src->len;
  return 0;
}

void capsa_bpf_free(struct capsa_bpf *bpf) {
  if (!bpf) return;
  free(bpf->insns);
  bpf->insns = NULL;
  bpf->len = 0;
}

int capsa_bpf_install(const struct capsa_bpf *bpf, unsigned flags) {
  if (!bpf || !bpf->insns || !bpf->len) return -EINVAL;
  struct sock_fprog prog = {bpf->len, bpf->insns};
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (r < 0) return -errno;
  // With TSYNC a positive value is the id of a thread that could not be
  // synchronised: nothing was installed.
  if (r > 0) return -EAGAIN;
  return 0;
}

int capsa_nnp_set(void) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -errno;
  return 0;
}
