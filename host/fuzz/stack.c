// Failure signatures of capsa fuzz and the crash handler (fuzz_stack.h).

#include "host/fuzz/stack.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "host/elf_symbols.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FZ_ASAN)
#define FZ_ASAN 1
#endif

// --- the worker's crash handler

static capsa__fz_crash_t *g_crash;

static void on_fatal(int sig, siginfo_t *si, void *ucv) {
  (void)si;
  capsa__fz_crash_t *c = g_crash;
  if (c != NULL && c->sig == 0) {
    uintptr_t pc = 0;
#if defined(__x86_64__)
    pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.pc;
#else
    (void)ucv;
#endif
    void *bt[CAPSA__FZ_MAX_FRAMES + 8];
    int n = backtrace(bt, CAPSA__FZ_MAX_FRAMES + 8);
    // Skip this handler and the signal trampoline: from the faulting pc on.
    int start = n > 2 ? 2 : n;
    for (int i = 0; i < n; i++)
      if ((uintptr_t)bt[i] == pc) {
        start = i + 1;
        break;
      }
    int k = 0;
    if (pc != 0) c->frames[k++] = pc;
    for (int i = start; i < n && k < CAPSA__FZ_MAX_FRAMES; i++)
      c->frames[k++] = (uintptr_t)bt[i];
    c->nframes = k;
    c->sig = sig;
  }
  // SA_RESETHAND: the default action is back; the signal stays pending
  // until this returns, then ends the process as it would have.
  raise(sig);
}

void capsa__fz_crash_handler_install(capsa__fz_crash_t *c) {
  g_crash = c;
  void *warm[2];
  backtrace(warm, 2);  // loads the unwinder now, not in the handler
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
#ifdef FZ_ASAN
  static const int sigs[] = {SIGABRT, SIGILL, SIGTRAP};
#else
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
#endif
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction(sigs[i], &sa, NULL);
}

// --- signatures

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
  return h;
}

static void append(char *key, size_t cap, const char *s, size_t n) {
  size_t at = strlen(key);
  if (at + 1 >= cap) return;
  if (n > cap - 1 - at) n = cap - 1 - at;
  memcpy(key + at, s, n);
  key[at + n] = 0;
}

static const char *find_n(const char *hay, size_t n, const char *needle) {
  size_t l = strlen(needle);
  for (size_t i = 0; l <= n && i + l <= n; i++)
    if (memcmp(hay + i, needle, l) == 0) return hay + i;
  return NULL;
}

// Frames of no interest for telling bugs apart.
static bool boring(const char *fn, size_t n) {
  static const char *const k[] = {
      "malloc",         "calloc",         "realloc", "free",
      "operator new",   "__interceptor_", "__asan",  "__sanitizer",
      "__ubsan",        "raise",          "abort",   "pthread_kill",
      "__pthread_kill", "__GI_",          "__libc_"};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    size_t l = strlen(k[i]);
    if (n >= l && memcmp(fn, k[i], l) == 0) return true;
  }
  return find_n(fn, n, "libclang_rt") != NULL ||
         find_n(fn, n, "compiler-rt") != NULL;
}

// One frame line's text after "#N 0xADDR ": "in FUNC FILE:LINE:COL" or
// "(MODULE+0xOFF)", written as "FUNC FILE:LINE" / "MODULE+0xOFF".
static void frame_text(const char *s, size_t n, char *out, size_t cap) {
  out[0] = 0;
  if (n > 3 && memcmp(s, "in ", 3) == 0) {
    s += 3;
    n -= 3;
    // FUNC may hold spaces (C++); the location is the last word.
    const char *sp = NULL;
    for (size_t i = 0; i < n; i++)
      if (s[i] == ' ') sp = s + i;
    if (sp == NULL) {
      append(out, cap, s, n);
      return;
    }
    append(out, cap, s, (size_t)(sp - s));
    const char *loc = sp + 1;
    size_t ll = n - (size_t)(loc - s);
    if (ll > 0 && loc[0] == '(') {  // "in FUNC (MODULE+0xOFF)"
      const char *slash = NULL;
      for (size_t i = 0; i < ll; i++)
        if (loc[i] == '/') slash = loc + i;
      if (slash) ll -= (size_t)(slash + 1 - loc), loc = slash + 1;
      if (ll > 0 && loc[ll - 1] == ')') ll--;
      append(out, cap, " ", 1);
      append(out, cap, loc, ll);
      return;
    }
    // Basename, then drop ":COL".
    const char *slash = NULL;
    for (size_t i = 0; i < ll; i++)
      if (loc[i] == '/') slash = loc + i;
    if (slash) ll -= (size_t)(slash + 1 - loc), loc = slash + 1;
    int colons = 0;
    size_t keep = ll;
    for (size_t i = 0; i < ll; i++)
      if (loc[i] == ':' && ++colons == 2) keep = i;
    append(out, cap, " ", 1);
    append(out, cap, loc, keep);
    return;
  }
  if (n > 0 && s[0] == '(') {
    const char *end = memchr(s, ')', n);
    size_t l = end ? (size_t)(end - s - 1) : n - 1;
    const char *m = s + 1;
    const char *slash = NULL;
    for (size_t i = 0; i < l; i++)
      if (m[i] == '/') slash = m + i;
    if (slash) l -= (size_t)(slash + 1 - m), m = slash + 1;
    append(out, cap, m, l);
  }
}

static bool from_sanitizer(const char *log, size_t n, char *key, size_t cap) {
  const char *at = find_n(log, n, "ERROR: AddressSanitizer: ");
  const char *leak = find_n(log, n, "ERROR: LeakSanitizer");
  const char *ub = find_n(log, n, "runtime error:");
  const char *start = NULL;
  key[0] = 0;
  if (at) {
    start = at;
    append(key, cap, "asan ", 5);
    const char *w = at + strlen("ERROR: AddressSanitizer: ");
    size_t l = 0;
    while (w + l < log + n && w[l] != ' ' && w[l] != '\n') l++;
    append(key, cap, w, l);
  } else if (leak) {
    start = leak;
    append(key, cap, "leak", 4);
  } else if (ub) {
    // "FILE:LINE:COL: runtime error: ...": back to the line's start.
    const char *ls = ub;
    while (ls > log && ls[-1] != '\n') ls--;
    const char *slash = NULL;
    for (const char *p = ls; p < ub; p++)
      if (*p == '/') slash = p;
    if (slash) ls = slash + 1;
    size_t l = (size_t)(ub - ls), keep = l;
    int colons = 0;
    for (size_t i = 0; i < l; i++)
      if (ls[i] == ':' && ++colons == 2) keep = i;
    append(key, cap, "ubsan ", 6);
    append(key, cap, ls, keep);
    start = ub;
  } else {
    return false;
  }
  // The first stack after the report's start.
  const char *p = start, *end = log + n;
  int taken = 0;
  bool in_stack = false;
  while (p < end && taken < CAPSA__FZ_TOP_FRAMES) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (eol == NULL) eol = end;
    const char *q = p;
    while (q < eol && *q == ' ') q++;
    if (q < eol && *q == '#') {
      in_stack = true;
      // "#N 0xADDR rest"
      while (q < eol && *q != ' ') q++;
      while (q < eol && *q == ' ') q++;
      while (q < eol && *q != ' ') q++;
      while (q < eol && *q == ' ') q++;
      char f[256];
      frame_text(q, (size_t)(eol - q), f, sizeof f);
      if (f[0] && !boring(f, strlen(f))) {
        append(key, cap, taken ? " | " : " ", taken ? 3 : 1);
        append(key, cap, f, strlen(f));
        taken++;
      }
    } else if (in_stack) {
      break;
    }
    p = eol + 1;
  }
  return true;
}

// A function dladdr cannot name (static: not exported) from the file's own
// symbol table, when it has one. The file is the host's own.
static const char *static_name(const char *file, uint64_t off,
                               struct capsa__elf_sym *sym) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  int err = capsa__elf_symbolize(fd, &off, 1, sym);
  close(fd);
  return err == 0 && sym->name[0] ? sym->name : NULL;
}

static void from_crash(const capsa__fz_crash_t *c, bool hang, char *key,
                       size_t cap) {
  if (hang)  // the watcher's SIGABRT: where the host was stuck
    snprintf(key, cap, "hang");
  else
    snprintf(key, cap, "signal %d", c->sig);
  int taken = 0;
  for (int i = 0; i < c->nframes && i < CAPSA__FZ_MAX_FRAMES &&
                  taken < CAPSA__FZ_TOP_FRAMES;
       i++) {
    // A return address points after its call: -1 stays in the calling line.
    uintptr_t a = c->frames[i] - (i > 0);
    Dl_info d;
    char f[256];
    if (dladdr((void *)a, &d) && d.dli_fname) {
      const char *b = strrchr(d.dli_fname, '/');
      b = b ? b + 1 : d.dli_fname;
      if (d.dli_sname && boring(d.dli_sname, strlen(d.dli_sname))) continue;
      // libc's own frames (abort, raise, memcpy...) say where it was
      // called from no better than its caller does.
      if (strncmp(b, "libc.so", 7) == 0 && i + 1 < c->nframes) continue;
      uint64_t off = (uint64_t)(a - (uintptr_t)d.dli_fbase);
      const char *name = d.dli_sname;
      struct capsa__elf_sym sym;
      if (name == NULL) name = static_name(d.dli_fname, off, &sym);
      snprintf(f, sizeof f, "%s+0x%lx%s%s%s", b, (unsigned long)off,
               name ? " (" : "", name ? name : "", name ? ")" : "");
    } else {
      snprintf(f, sizeof f, "0x%lx", (unsigned long)a);
    }
    append(key, cap, taken ? " | " : " ", taken ? 3 : 1);
    append(key, cap, f, strlen(f));
    taken++;
  }
}

uint64_t capsa__fz_signature(const char *log, size_t log_len,
                             const capsa__fz_crash_t *crash,
                             const char *fallback, char *key, size_t cap) {
  if (cap == 0) return 0;
  key[0] = 0;
  if (log && from_sanitizer(log, log_len, key, cap)) {
  } else if (crash && crash->sig != 0) {
    from_crash(crash, fallback && strcmp(fallback, "hang") == 0, key, cap);
  } else {
    snprintf(key, cap, "%s", fallback ? fallback : "failure");
  }
  // One line: the key goes into the manifest.
  for (char *p = key; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  return fnv1a(key);
}
