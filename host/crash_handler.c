// A renderer's fatal-signal handler (host/crash_handler.h).
//
// Why a frame-pointer walk (plus a stack scan past code without frame
// pointers, see scan()) and not glibc's backtrace(): backtrace() unwinds
// by the .eh_frame tables through libgcc, which can fault on a smashed
// stack (a second fault inside the handler would end the renderer with
// that signal, not the one it crashed of) and which, on first use, loads
// libgcc_s: a file capability mode no longer lets it open. The walk below
// reads only words inside [interrupted sp, top of the stack), which are
// mapped, so it cannot fault whatever the stack holds; it needs frame
// pointers, which the build keeps (build/config/BUILD.gn,
// -fno-omit-frame-pointer). Code built without them (libc, an embedder's
// -O2 code) shows as its first frame only, or skips callers.
//
// Everything the handler touches is prepared before capability mode: the
// record's fixed part and the loader's module list (once, in the zygote, so
// every renderer inherits it), the alternate stack (a crash by stack
// overflow still gets its report).
#include "host/crash_handler.h"

#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "host/crash_record.h"
#include "host/zygote/zygote.h"

// glibc: the top of the main thread's stack, as the kernel set it up.
extern void *__libc_stack_end;

// The signals whose default action ends the process with a core: the crashes.
static const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static struct capsa__crash_record g_rec;
// What is written: "\n" (ends a partial line the renderer left, so that the
// host sees the magic at a line's start) then the record, in one write.
static char g_out[1 + sizeof g_rec];

static bool g_prepared;
static uintptr_t g_stack_top;  // 0: unknown
// The alternate stack: in .bss, so a renderer that never crashes never
// touches (pays for) its pages. Larger than MINSIGSTKSZ for AVX-512 frames.
static char g_altstack[32 << 10] __attribute__((aligned(64)));
static bool g_pid1;

static int add_module(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  struct capsa__crash_record *rec = &g_rec;
  if (rec->nmodules == CAPSA__CRASH_MODULES) return 1;
  // Its code: the largest executable segment (one, in what ld links).
  uint64_t lo = 0, hi = 0;
  for (unsigned i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    if (ph->p_memsz <= hi - lo) continue;
    lo = info->dlpi_addr + ph->p_vaddr;
    hi = lo + ph->p_memsz;
  }
  if (hi == 0) return 0;
  struct capsa__crash_module *m = &rec->modules[rec->nmodules++];
  m->lo = lo;
  m->hi = hi;
  m->bias = info->dlpi_addr;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  const char *slash = strrchr(name, '/');
  snprintf(m->name, sizeof m->name, "%s", slash ? slash + 1 : name);
  return 0;
}

// The top of the stack this process runs on (the renderer runs on the one
// the zygote forked it from): the main thread's when the current sp is in
// it, else the mapping that holds sp, from /proc/self/maps.
static uintptr_t stack_top(void) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  uintptr_t end = (uintptr_t)__libc_stack_end;
  if (end > sp && end - sp < (1ul << 30)) return end;
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return 0;
  char line[512];
  uintptr_t top = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= sp && sp < hi) {
      top = hi;
      break;
    }
  }
  fclose(f);
  return top;
}

static void prepare(void) {
  if (g_prepared) return;
  g_prepared = true;
  memcpy(g_rec.magic, CAPSA__CRASH_MAGIC, CAPSA__CRASH_MAGIC_LEN);
  g_rec.size = sizeof g_rec;
  dl_iterate_phdr(add_module, NULL);
  g_stack_top = stack_top();
}

static const struct capsa__crash_module *code_module(uintptr_t a) {
  for (unsigned i = 0; i < g_rec.nmodules; i++)
    if (g_rec.modules[i].lo <= a && a < g_rec.modules[i].hi)
      return &g_rec.modules[i];
  return NULL;
}

// Whether `a` is a return address: in a module's code, right after a call
// instruction (x86-64: E8 rel32, or FF /2 of 2 to 7 bytes). The bytes read
// are inside the same executable segment, so mapped.
static bool after_call(uintptr_t a) {
  const struct capsa__crash_module *m = code_module(a);
  if (!m || a - m->lo < 7) return false;
#if defined(__x86_64__)
  const unsigned char *b = (const unsigned char *)a;
  if (b[-5] == 0xe8) return true;
  static const int kLens[] = {2, 3, 4, 6, 7};
  for (unsigned i = 0; i < sizeof kLens / sizeof kLens[0]; i++) {
    int l = kLens[i];
    if (b[-l] == 0xff && ((b[-l + 1] >> 3) & 7) == 2) return true;
  }
  return false;
#else
  return true;
#endif
}

// The words the walk reads: 8-aligned, inside [sp, top).
static bool on_stack(uintptr_t p, uintptr_t sp, uintptr_t top) {
  return p >= sp && p < top - 2 * sizeof(uintptr_t) && (p & 7) == 0;
}

// Code built without frame pointers (libc: abort, memcpy...) may have
// used rbp for anything. Then the frame chain goes on from the first slot
// above sp that looks like a frame record of another module: a saved frame
// pointer (above it, below the top) then a return address out of the
// crashed module, right after a call. Code without frame pointers that
// saves rbp first leaves exactly that under its return address, so the
// next frame is its caller; otherwise a caller may be skipped, or a stale
// record of an earlier call (left in the frame-less code's slots) may give
// a wrong first frame: a scan, as Breakpad's, and the report says so.
// A candidate must start a chain of CHAIN_LINKS such records, each above
// the last (a stale record's saved frame pointer leads, within a link or
// two, to a slot since reused). Returns the slot to go on from, or 0.
#define SCAN_BYTES (32u << 10)
#define CHAIN_LINKS 4
static bool chain_ok(uintptr_t x, uintptr_t sp, uintptr_t top) {
  for (int i = 0; i < CHAIN_LINKS; i++) {
    if (!on_stack(x, sp, top)) return false;
    const uintptr_t *f = (const uintptr_t *)x;
    if (!after_call(f[1])) return false;
    if (f[0] == 0) return true;  // the chain's end (the first frame)
    if (f[0] <= x) return false;
    x = f[0];
  }
  return true;
}

static uintptr_t scan(uintptr_t pc, uintptr_t sp, uintptr_t top) {
  const struct capsa__crash_module *own = code_module(pc);
  uintptr_t end = top - sp > SCAN_BYTES ? sp + SCAN_BYTES : top;
  for (uintptr_t x = (sp + 7) & ~(uintptr_t)7; on_stack(x, sp, end);
       x += sizeof(uintptr_t)) {
    const uintptr_t *f = (const uintptr_t *)x;
    if (code_module(f[1]) != own && chain_ok(x, sp, top)) return x;
  }
  return 0;
}

// Frames by frame pointers, from the interrupted context: every read is of
// an 8-aligned word in [sp, top), and each frame is above the last, so the
// walk ends and never faults. Not instrumented: it reads other frames.
__attribute__((no_sanitize_address)) static void walk(
    const ucontext_t *uc, struct capsa__crash_record *rec) {
  uintptr_t pc, fp, sp;
#if defined(__x86_64__)
  pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
  sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
  pc = (uintptr_t)uc->uc_mcontext.pc;
  fp = (uintptr_t)uc->uc_mcontext.regs[29];
  sp = (uintptr_t)uc->uc_mcontext.sp;
#else
  (void)uc;
  rec->nframes = 0;
  return;
#endif
  unsigned n = 0;
  rec->frames[n++] = pc;
  uintptr_t top = g_stack_top;
  if (top == 0 || sp >= top || top - sp > (1ul << 30)) {
    rec->flags |= CAPSA__CRASH_F_OTHER_STACK;
    rec->nframes = n;
    return;
  }
  // rbp is no frame pointer here: find the caller by scanning.
  if (!on_stack(fp, sp, top) || !after_call(((const uintptr_t *)fp)[1])) {
    fp = scan(pc, sp, top);
    if (fp) rec->flags |= CAPSA__CRASH_F_SCANNED;
  }
  while (on_stack(fp, sp, top)) {
    const uintptr_t *f = (const uintptr_t *)fp;
    uintptr_t next = f[0], ret = f[1];
    if (ret == 0) break;
    if (n == CAPSA__CRASH_FRAMES) {
      rec->flags |= CAPSA__CRASH_F_TRUNCATED;
      break;
    }
    rec->frames[n++] = ret;
    if (next <= fp) break;
    fp = next;
  }
  rec->nframes = n;
}

// Not instrumented either: under ASan a call of a noreturn function
// (_exit) would first unpoison the thread's stack, which it looks up in
// /proc/self/maps, refused in capability mode.
__attribute__((no_sanitize_address)) static void on_fatal(int sig,
                                                          siginfo_t *si,
                                                          void *ctx) {
  int saved = errno;
  struct capsa__crash_record *rec = &g_rec;
  rec->signo = sig;
  rec->code = si->si_code;
  // si_addr means something only for a fault the kernel raised; for a
  // signal sent by kill/tgkill the same bytes are the sender's pid and uid.
  rec->addr = si->si_code > 0 && sig != SIGABRT ? (uintptr_t)si->si_addr : 0;
  rec->flags = 0;
  walk(ctx, rec);
  g_out[0] = '\n';
  memcpy(g_out + 1, rec, sizeof *rec);
  const char *p = g_out;
  size_t left = sizeof g_out;
  while (left > 0) {
    ssize_t w = write(2, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    p += w;
    left -= (size_t)w;
  }
  // As the zygote's own SIGABRT handler for pid 1 (host/zygote/server.c).
  if (sig == SIGABRT && g_pid1) syscall(SYS_exit_group, CAPSA__EXIT_ABORTED);
  // SA_RESETHAND made the action the default again. A signal sent by
  // kill/raise would be lost: send it again, pending (blocked here) until
  // the handler returns. A fault the kernel raised also happens again when
  // the instruction is retried. Either way the exit is the real signal.
  syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid),
          sig);
  errno = saved;
}

int capsa__crash_handler_install(bool pid1) {
  prepare();
  g_pid1 = pid1;
  stack_t ss;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = g_altstack;
  ss.ss_size = sizeof g_altstack;
  if (sigaltstack(&ss, NULL) < 0) return -errno;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; i++)
    sigaddset(&sa.sa_mask, kSignals[i]);
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; i++)
    if (sigaction(kSignals[i], &sa, NULL) < 0) return -errno;
  return 0;
}

void capsa__crash_handler_prepare(void) {
  prepare();
}
