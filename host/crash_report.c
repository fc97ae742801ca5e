// Crash records in, crash reports out (host/crash_report.h). Everything in a
// record is the renderer's word: sizes and counts are checked, names are
// cut and escaped, addresses are only ever looked up, never dereferenced.
#include "host/crash_report.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/crash_record.h"
#include "host/elf_symbols.h"
#include "host/text.h"

struct capsa__crash_rx {
  size_t got;  // bytes of `cur` collected, magic included
  union {
    struct capsa__crash_record rec;
    char bytes[sizeof(struct capsa__crash_record)];
  } cur;
  char back[CAPSA__CRASH_MAGIC_LEN];  // a magic that was text after all
  bool have;
  struct capsa__crash_record last;
  // The report built from `last`.
  capsa_crash_report_t report;
  capsa_crash_frame_t frames[CAPSA__CRASH_FRAMES];
  char symbols[CAPSA__CRASH_FRAMES][128];
  char modules[CAPSA__CRASH_MODULES][CAPSA__TEXT_MIN + 32];
  char code_name[32];
  char summary[CAPSA__TEXT_MAX];
};

bool capsa__crash_rx_busy(const struct capsa__crash_rx *rx) {
  return rx && rx->got > 0;
}

enum capsa__crash_rx_result capsa__crash_rx_byte(struct capsa__crash_rx **rxp,
                                                 char c, const char **text,
                                                 size_t *len) {
  if (!*rxp) *rxp = calloc(1, sizeof **rxp);
  struct capsa__crash_rx *rx = *rxp;
  if (!rx) {
    static char one;
    one = c;
    *text = &one;
    *len = 1;
    return CAPSA__CRASH_RX_TEXT;
  }
  if (rx->got < CAPSA__CRASH_MAGIC_LEN && c != CAPSA__CRASH_MAGIC[rx->got]) {
    // Not a record: hand back what was held, and this byte.
    memcpy(rx->back, rx->cur.bytes, rx->got);
    rx->back[rx->got] = c;
    *text = rx->back;
    *len = rx->got + 1;
    rx->got = 0;
    return CAPSA__CRASH_RX_TEXT;
  }
  rx->cur.bytes[rx->got++] = c;
  if (rx->got < sizeof rx->cur) return CAPSA__CRASH_RX_TAKEN;
  rx->last = rx->cur.rec;
  rx->have = true;
  rx->got = 0;
  return CAPSA__CRASH_RX_COMPLETE;
}

void capsa__crash_rx_eof(struct capsa__crash_rx *rx, const char **text,
                         size_t *len) {
  *len = 0;
  if (!rx || rx->got == 0) return;
  if (rx->got < CAPSA__CRASH_MAGIC_LEN) {
    memcpy(rx->back, rx->cur.bytes, rx->got);
    *text = rx->back;
    *len = rx->got;
  }
  rx->got = 0;
}

void capsa__crash_rx_free(struct capsa__crash_rx **rx) {
  free(*rx);
  *rx = NULL;
}

static const char *code_name(int sig, int code, char *buf, size_t len) {
  static const struct {
    int sig, code;
    const char *name;
  } kNames[] = {
      {SIGSEGV, SEGV_MAPERR, "SEGV_MAPERR"},
      {SIGSEGV, SEGV_ACCERR, "SEGV_ACCERR"},
      {SIGSEGV, SEGV_BNDERR, "SEGV_BNDERR"},
      {SIGSEGV, SEGV_PKUERR, "SEGV_PKUERR"},
      {SIGBUS, BUS_ADRALN, "BUS_ADRALN"},
      {SIGBUS, BUS_ADRERR, "BUS_ADRERR"},
      {SIGBUS, BUS_OBJERR, "BUS_OBJERR"},
      {SIGBUS, BUS_MCEERR_AR, "BUS_MCEERR_AR"},
      {SIGBUS, BUS_MCEERR_AO, "BUS_MCEERR_AO"},
      {SIGFPE, FPE_INTDIV, "FPE_INTDIV"},
      {SIGFPE, FPE_INTOVF, "FPE_INTOVF"},
      {SIGFPE, FPE_FLTDIV, "FPE_FLTDIV"},
      {SIGFPE, FPE_FLTOVF, "FPE_FLTOVF"},
      {SIGFPE, FPE_FLTUND, "FPE_FLTUND"},
      {SIGFPE, FPE_FLTRES, "FPE_FLTRES"},
      {SIGFPE, FPE_FLTINV, "FPE_FLTINV"},
      {SIGFPE, FPE_FLTSUB, "FPE_FLTSUB"},
      {SIGILL, ILL_ILLOPC, "ILL_ILLOPC"},
      {SIGILL, ILL_ILLOPN, "ILL_ILLOPN"},
      {SIGILL, ILL_ILLADR, "ILL_ILLADR"},
      {SIGILL, ILL_ILLTRP, "ILL_ILLTRP"},
      {SIGILL, ILL_PRVOPC, "ILL_PRVOPC"},
      {SIGILL, ILL_PRVREG, "ILL_PRVREG"},
      {SIGILL, ILL_COPROC, "ILL_COPROC"},
      {SIGILL, ILL_BADSTK, "ILL_BADSTK"},
      {0, SI_USER, "SI_USER"},
      {0, SI_KERNEL, "SI_KERNEL"},
      {0, SI_QUEUE, "SI_QUEUE"},
      {0, SI_TKILL, "SI_TKILL"},
  };
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; i++)
    if ((kNames[i].sig == sig || kNames[i].sig == 0) && kNames[i].code == code)
      return kNames[i].name;
  snprintf(buf, len, "code %d", code);
  return buf;
}

// The host's own loaded object of that file name (a library the renderer
// shares with it), opened read-only; -1 if the host has none. The name is
// the renderer's word, so it only ever selects among the host's own files.
struct lib_find {
  const char *name;
  int fd;
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct lib_find *f = arg;
  const char *path = info->dlpi_name;
  if (!path || path[0] != '/') return 0;
  const char *base = strrchr(path, '/') + 1;
  if (strcmp(base, f->name) != 0) return 0;
  f->fd = open(path, O_RDONLY | O_CLOEXEC);
  return 1;
}

static int open_module(const struct capsa__crash_module *m, int image_fd,
                       bool *owned) {
  *owned = true;
  if (m->name[0] == '\0') {  // the main executable: the image
    if (image_fd >= 0) {
      *owned = false;
      return image_fd;
    }
    return open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  }
  struct lib_find f = {m->name, -1};
  dl_iterate_phdr(find_lib, &f);
  return f.fd;
}

static const struct capsa__crash_module *module_of(
    const struct capsa__crash_record *rec, uint64_t pc, unsigned *idx) {
  for (unsigned i = 0; i < rec->nmodules; i++)
    if (rec->modules[i].lo <= pc && pc < rec->modules[i].hi) {
      *idx = i;
      return &rec->modules[i];
    }
  return NULL;
}

static void symbolise(struct capsa__crash_rx *rx, int image_fd) {
  const struct capsa__crash_record *rec = &rx->last;
  capsa_crash_report_t *rep = &rx->report;
  for (unsigned m = 0; m < rec->nmodules; m++) {
    // This module's frames, as link-time addresses; a return address is
    // looked up one byte back, inside the call it returns from.
    uint64_t addrs[CAPSA__CRASH_FRAMES];
    unsigned which[CAPSA__CRASH_FRAMES], n = 0;
    for (unsigned i = 0; i < rep->nframes; i++) {
      unsigned idx;
      if (!module_of(rec, rec->frames[i], &idx) || idx != m) continue;
      uint64_t a = rec->frames[i] - rec->modules[m].bias;
      addrs[n] = i > 0 && a > 0 ? a - 1 : a;
      which[n++] = i;
    }
    if (n == 0) continue;
    bool owned;
    int fd = open_module(&rec->modules[m], image_fd, &owned);
    if (fd < 0) continue;
    struct capsa__elf_sym syms[CAPSA__CRASH_FRAMES];
    int err = capsa__elf_symbolize(fd, addrs, n, syms);
    if (owned) close(fd);
    if (err < 0) continue;
    for (unsigned j = 0; j < n; j++) {
      if (syms[j].name[0] == '\0') continue;
      unsigned i = which[j];
      capsa__text_escape(syms[j].name, strlen(syms[j].name), rx->symbols[i],
                         sizeof rx->symbols[i]);
      rx->frames[i].symbol = rx->symbols[i];
      rx->frames[i].symbol_offset =
          rec->frames[i] - rec->modules[m].bias - syms[j].start;
    }
  }
}

// Appends `piece` when it fits whole: a cut never splits a name.
static bool append(char *buf, size_t len, const char *piece) {
  size_t at = strlen(buf), n = strlen(piece);
  if (at + n + 1 > len) return false;
  memcpy(buf + at, piece, n + 1);
  return true;
}

static void summarise(struct capsa__crash_rx *rx) {
  capsa_crash_report_t *rep = &rx->report;
  char *s = rx->summary;
  const char *abbrev = sigabbrev_np(rep->signal);
  snprintf(s, sizeof rx->summary, "SIG%s (%s)", abbrev ? abbrev : "?",
           rep->code_name);
  char piece[256];
  if (rep->address) {
    snprintf(piece, sizeof piece, " at 0x%jx", (uintmax_t)rep->address);
    append(s, sizeof rx->summary, piece);
  }
  for (unsigned i = 0; i < rep->nframes; i++) {
    const capsa_crash_frame_t *f = &rep->frames[i];
    const char *sep = i == 0 ? " in " : " <- ";
    if (f->symbol)
      snprintf(piece, sizeof piece, "%s%s+0x%jx", sep, f->symbol,
               (uintmax_t)f->symbol_offset);
    else if (f->module)
      snprintf(piece, sizeof piece, "%s%s+0x%jx", sep,
               f->module[0] ? f->module : "(image)",
               (uintmax_t)f->module_offset);
    else
      snprintf(piece, sizeof piece, "%s0x%jx", sep, (uintmax_t)f->pc);
    if (!append(s, sizeof rx->summary, piece)) {
      append(s, sizeof rx->summary, " <- ...");
      return;
    }
  }
  if (rep->truncated) append(s, sizeof rx->summary, " <- ...");
}

const capsa_crash_report_t *capsa__crash_report(struct capsa__crash_rx *rx,
                                                int signo, int image_fd) {
  if (!rx || !rx->have) return NULL;
  struct capsa__crash_record *rec = &rx->last;
  // A record of another layout, or of another death than waitid's, is
  // no report of this one.
  if (rec->size != sizeof *rec || rec->signo != signo ||
      rec->nframes > CAPSA__CRASH_FRAMES ||
      rec->nmodules > CAPSA__CRASH_MODULES)
    return NULL;
  capsa_crash_report_t *rep = &rx->report;
  memset(rep, 0, sizeof *rep);
  memset(rx->frames, 0, sizeof rx->frames);
  rep->signal = signo;
  rep->code = rec->code;
  rep->code_name =
      code_name(signo, rec->code, rx->code_name, sizeof rx->code_name);
  rep->address = (uintptr_t)rec->addr;
  rep->frames = rx->frames;
  rep->nframes = rec->nframes;
  rep->truncated = (rec->flags & CAPSA__CRASH_F_TRUNCATED) != 0;
  rep->scanned = (rec->flags & CAPSA__CRASH_F_SCANNED) != 0;
  for (unsigned m = 0; m < rec->nmodules; m++) {
    struct capsa__crash_module *mod = &rec->modules[m];
    mod->name[sizeof mod->name - 1] = '\0';
    capsa__text_escape(mod->name, strlen(mod->name), rx->modules[m],
                       sizeof rx->modules[m]);
  }
  for (unsigned i = 0; i < rep->nframes; i++) {
    capsa_crash_frame_t *f = &rx->frames[i];
    f->pc = (uintptr_t)rec->frames[i];
    unsigned idx;
    const struct capsa__crash_module *mod =
        module_of(rec, rec->frames[i], &idx);
    if (mod) {
      f->module = rx->modules[idx];
      f->module_offset = (uintptr_t)(rec->frames[i] - mod->bias);
    }
  }
  symbolise(rx, image_fd);
  summarise(rx);
  rep->summary = rx->summary;
  return rep;
}
