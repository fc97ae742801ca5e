// Violation tracing, like FreeBSD's ktrace capability violations with
// kern.trap_enotcap: the filter's default action is SECCOMP_RET_TRAP instead
// of ERRNO(ECAPMODE); this SIGSYS handler prints one line per violation and
// makes the call return -ECAPMODE, so the program keeps running and the next
// violation is reported too. Landlock refusals (EACCES/EPERM) happen inside
// the kernel's path walk and cannot be trapped; they are not reported here.
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "sandbox/trace.h"

#define X32_SYSCALL_BIT 0x40000000u

static const char *const *g_names;
static unsigned g_nnames;

// Async-signal-safe formatting into a fixed buffer.
struct line {
  char buf[384];
  size_t len;
};
static void put(struct line *l, const char *s) {
  while (*s && l->len < sizeof(l->buf) - 1) l->buf[l->len++] = *s++;
}
static void put_hex(struct line *l, uint64_t v) {
  char tmp[19];
  int i = (int)sizeof(tmp);
  tmp[--i] = '\0';
  do {
    tmp[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v && i > 2);
  tmp[--i] = 'x';
  tmp[--i] = '0';
  put(l, tmp + i);
}
static void put_dec(struct line *l, unsigned v) {
  char tmp[12];
  int i = (int)sizeof(tmp);
  tmp[--i] = '\0';
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v && i > 0);
  put(l, tmp + i);
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  int saved_errno = errno;
  ucontext_t *uc = ucv;
  greg_t *r = uc->uc_mcontext.gregs;
  unsigned nr = (unsigned)si->si_syscall;
  struct line l = {.len = 0};
  put(&l, "capsa: capmode violation: ");
  uint64_t args[6];
  if (si->si_arch == AUDIT_ARCH_X86_64 && !(nr & X32_SYSCALL_BIT)) {
    if (nr < g_nnames && g_names && g_names[nr])
      put(&l, g_names[nr]);
    else {
      put(&l, "syscall_");
      put_dec(&l, nr);
    }
    uint64_t a[6] = {(uint64_t)r[REG_RDI], (uint64_t)r[REG_RSI],
                     (uint64_t)r[REG_RDX], (uint64_t)r[REG_R10],
                     (uint64_t)r[REG_R8],  (uint64_t)r[REG_R9]};
    memcpy(args, a, sizeof(args));
  } else {
    // i386 (int 0x80) or x32: refused as a whole by the architecture check.
    put(&l, si->si_arch == AUDIT_ARCH_I386 ? "i386:" : "x32:");
    put(&l, "syscall_");
    put_dec(&l, nr & ~X32_SYSCALL_BIT);
    uint64_t a[6] = {(uint64_t)r[REG_RBX], (uint64_t)r[REG_RCX],
                     (uint64_t)r[REG_RDX], (uint64_t)r[REG_RSI],
                     (uint64_t)r[REG_RDI], (uint64_t)r[REG_RBP]};
    if (si->si_arch != AUDIT_ARCH_I386) {
      uint64_t b[6] = {(uint64_t)r[REG_RDI], (uint64_t)r[REG_RSI],
                       (uint64_t)r[REG_RDX], (uint64_t)r[REG_R10],
                       (uint64_t)r[REG_R8],  (uint64_t)r[REG_R9]};
      memcpy(a, b, sizeof(a));
    }
    memcpy(args, a, sizeof(args));
  }
  put(&l, "(");
  for (int i = 0; i < 6; i++) {
    if (i) put(&l, ", ");
    put_hex(&l, args[i]);
  }
  put(&l, ") layer=seccomp -> ECAPMODE\n");
  // Best effort: a full pipe on stderr must not turn into a hang or a loop.
  ssize_t unused = write(STDERR_FILENO, l.buf, l.len);
  (void)unused;
  r[REG_RAX] = -(greg_t)CAPSA_ECAPMODE;
  errno = saved_errno;
}

int capsa__trace_install(const char *const *names, unsigned nnames) {
  g_names = names;
  g_nnames = nnames;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigsys;
  // SA_NODEFER: a violation inside a handler the program runs is reported
  // too instead of killing it (a blocked SIGSYS from seccomp kills).
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, NULL) < 0) return -errno;
  return 0;
}

#define TRACE_NAMES 512

char **capsa__trace_names_new(unsigned *nnames) {
  char **names = calloc(TRACE_NAMES, sizeof(char *));
  if (!names) return NULL;
  for (unsigned i = 0; i < TRACE_NAMES; i++)
    names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, (int)i);
  *nnames = TRACE_NAMES;
  return names;
}

void capsa__trace_names_free(char **names, unsigned nnames) {
  if (!names) return;
  for (unsigned i = 0; i < nnames; i++) free(names[i]);
  free(names);
}
