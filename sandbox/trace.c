// Violation tracing, like FreeBSD's ktrace capability violations with
// kern.trap_enotcap: the filter's default action is SECCOMP_RET_TRAP instead
// of ERRNO(ECAPMODE); this SIGSYS handler prints one line per violation and
// makes the call return -ECAPMODE, so the program keeps running and the next
// violation is reported too. Landlock refusals (EACCES/EPERM) happen inside
// the kernel's path walk and cannot be trapped; they are not reported here.
#include <errno.h>
#include <linux/audit.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "sandbox/trace.h"

#define X32_SYSCALL_BIT 0x40000000u

static const char *const *g_names;
static unsigned g_nnames;
// Who this process is, for the line's tail ("renderer gzip"); set by
// capsa_capmode_set_trace_label, read by the handler.
static char g_label[CAPSA_TRACE_LABEL_MAX + 1];

int capsa_capmode_set_trace_label(const char *label) {
  size_t n = label ? strlen(label) : 0;
  if (n > CAPSA_TRACE_LABEL_MAX) return -ENAMETOOLONG;
  // Printable ASCII only: the label is written raw into every line.
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)label[i] < 0x20 || (unsigned char)label[i] >= 0x7f)
      return -EINVAL;
  // First byte last: a handler running meanwhile sees "" or the new label.
  g_label[0] = '\0';
  if (n) memcpy(g_label + 1, label + 1, n);  // with the NUL
  g_label[0] = n ? label[0] : '\0';
  return 0;
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  int saved_errno = errno;
  ucontext_t *uc = ucv;
  greg_t *r = uc->uc_mcontext.gregs;
  unsigned nr = (unsigned)si->si_syscall;
  struct capsa__trace_line l = {.len = 0};
  capsa__trace_put(&l, "capsa: capmode violation: ");
  if (si->si_arch == AUDIT_ARCH_X86_64 && !(nr & X32_SYSCALL_BIT)) {
    if (nr < g_nnames && g_names && g_names[nr])
      capsa__trace_put(&l, g_names[nr]);
    else {
      capsa__trace_put(&l, "syscall_");
      capsa__trace_put_dec(&l, nr);
    }
    uint64_t a[6] = {(uint64_t)r[REG_RDI], (uint64_t)r[REG_RSI],
                     (uint64_t)r[REG_RDX], (uint64_t)r[REG_R10],
                     (uint64_t)r[REG_R8],  (uint64_t)r[REG_R9]};
    capsa__trace_put_args(&l, nr, a);
  } else {
    // i386 (int 0x80) or x32: refused as a whole by the architecture check;
    // shown raw (their numbers and layouts are not x86_64's).
    bool i386 = si->si_arch == AUDIT_ARCH_I386;
    capsa__trace_put(&l, i386 ? "i386:" : "x32:");
    capsa__trace_put(&l, "syscall_");
    capsa__trace_put_dec(&l, nr & ~X32_SYSCALL_BIT);
    uint64_t a[6] = {(uint64_t)r[REG_RBX], (uint64_t)r[REG_RCX],
                     (uint64_t)r[REG_RDX], (uint64_t)r[REG_RSI],
                     (uint64_t)r[REG_RDI], (uint64_t)r[REG_RBP]};
    if (!i386) {
      uint64_t b[6] = {(uint64_t)r[REG_RDI], (uint64_t)r[REG_RSI],
                       (uint64_t)r[REG_RDX], (uint64_t)r[REG_R10],
                       (uint64_t)r[REG_R8],  (uint64_t)r[REG_R9]};
      memcpy(a, b, sizeof(a));
    }
    capsa__trace_put_hex_args(&l, a);
  }
  // Where the call was made (the address after the syscall instruction, as
  // the kernel reports it): with the process's maps, the caller.
  capsa__trace_put(&l, " at ");
  capsa__trace_put_hex(&l, (uint64_t)(uintptr_t)si->si_call_addr);
  capsa__trace_put(&l, " layer=seccomp -> ECAPMODE [pid ");
  // The pid as this process sees it: 1 for a renderer in a pid namespace of
  // its own (the host, forwarding its stderr, gives the host's pid).
  capsa__trace_put_dec(&l, (int64_t)syscall(SYS_getpid));
  if (g_label[0]) {
    capsa__trace_put_char(&l, ' ');
    capsa__trace_put(&l, g_label);
  }
  capsa__trace_put(&l, "]\n");
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

// One table per process, never freed: a handler installed by a policy keeps
// reading it after the caller has freed that policy (capsa_capmode_policy_free
// after _enter is allowed), and children forked later inherit it.
static char **g_table;
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
  char **names = calloc(TRACE_NAMES, sizeof(char *));
  if (!names) return;
  for (unsigned i = 0; i < TRACE_NAMES; i++)
    names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, (int)i);
  g_table = names;
}

char **capsa__trace_names_new(unsigned *nnames) {
  pthread_once(&g_table_once, build_table);
  if (!g_table) return NULL;
  *nnames = TRACE_NAMES;
  return g_table;
}

void capsa__trace_names_free(char **names, unsigned nnames) {
  (void)names;  // the process's table: kept (see above)
  (void)nnames;
}
