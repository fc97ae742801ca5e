// Crash reports (host/capsa_host.h, capsa_crash_report_t): a renderer's
// fatal-signal handler, installed at its fork from the zygote before
// capability mode, writes a record to its stderr pipe; the host attaches it,
// symbolised with the image's symbol table, to CRASHED / ABORTED. And what a
// hostile renderer can do with that pipe: forged, cut, garbled or flooding
// records never crash the host, never change the exit it reports. Real
// hosts, real renderers, root and uid 65534.
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/crash_record.h"
#include "host/elf_symbols.h"
#include "host/kind_registry.h"
#include "renderer/runtime.h"
#include "tests/harness/command.h"
#include "tests/harness/host_fixture.h"

// The crashing code: C names, not inlined, not tail calls, so that the
// report's first frames are these two, in this order.
#if defined(__clang__)
#define NOCLONE
#else
#define NOCLONE __attribute__((noclone))
#endif
// Not UBSan-checked: in the asan build its check would end the renderer
// with an exit before the division faults.
extern "C" __attribute__((noinline, no_sanitize("undefined"))) NOCLONE int
capsa_test_layout_line(int width) {
  volatile int zero = 0;
  return width / zero;  // SIGFPE, FPE_INTDIV
}
extern "C" __attribute__((noinline)) NOCLONE int capsa_test_paint(int width) {
  int v = capsa_test_layout_line(width);
  asm volatile("" ::: "memory");
  return v + 1;
}

// abort() from a named function: libc, without frame pointers, in between.
extern "C" __attribute__((noinline)) NOCLONE void capsa_test_give_up(void) {
  abort();
}

#if defined(__SANITIZE_ADDRESS__)
#define CAPSA_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAPSA_TEST_ASAN 1
#endif
#endif

namespace {

constexpr uintptr_t kBadAddress = 0x13370;  // below any mapping

void WriteAll(const void *p, size_t n) {
  const char *c = static_cast<const char *>(p);
  while (n > 0) {
    ssize_t w = write(2, c, n);
    if (w <= 0) return;
    c += w;
    n -= (size_t)w;
  }
}

// A record as the renderer's handler would write it, for forging.
capsa__crash_record Forged(int signo) {
  capsa__crash_record rec;
  memset(&rec, 0, sizeof rec);
  memcpy(rec.magic, CAPSA__CRASH_MAGIC, CAPSA__CRASH_MAGIC_LEN);
  rec.size = sizeof rec;
  rec.signo = signo;
  rec.code = SEGV_MAPERR;
  rec.addr = 0xdead;
  return rec;
}

// Dies of `sig` (a fault: a renderer is pid 1 of its namespace, where a
// signal it sends itself is ignored) without the crash handler: no record
// of its own.
void DieOf(int sig) {
  signal(sig, SIG_DFL);
  if (sig == SIGFPE) {
    volatile int v = capsa_test_layout_line(1);
    (void)v;
  }
  *reinterpret_cast<volatile int *>(kBadAddress) = 1;
}

void Act(const std::string &cmd) {
  if (cmd == "fpe") {
    volatile int v = capsa_test_paint(100);
    (void)v;
  } else if (cmd == "fpe-plain") {  // the same crash, no report
    signal(SIGFPE, SIG_DFL);
    volatile int v = capsa_test_paint(100);
    (void)v;
  } else if (cmd == "segv") {
    *reinterpret_cast<volatile int *>(kBadAddress) = 1;
  } else if (cmd == "abort") {
    capsa_test_give_up();
  } else if (cmd == "forge-exit") {
    // A well-formed record claiming SIGSEGV, then a normal exit.
    capsa__crash_record rec = Forged(SIGSEGV);
    WriteAll("\n", 1);
    WriteAll(&rec, sizeof rec);
    WriteAll("after\n", 6);
    _exit(0);
  } else if (cmd == "forge-cut") {
    // Half a record, then exit: the rest never comes.
    capsa__crash_record rec = Forged(SIGSEGV);
    WriteAll("\n", 1);
    WriteAll(&rec, sizeof rec / 2);
    _exit(0);
  } else if (cmd == "forge-other") {
    // Claims SIGSEGV, dies of SIGFPE.
    capsa__crash_record rec = Forged(SIGSEGV);
    WriteAll(&rec, sizeof rec);
    DieOf(SIGFPE);
  } else if (cmd == "forge-garbled") {
    // Counts and sizes far out of range, names without an end, then a
    // megabyte of magic prefixes and junk; dies of the signal it claims.
    capsa__crash_record rec = Forged(SIGSEGV);
    rec.nframes = 0xffffffffu;
    rec.nmodules = 0xffffffffu;
    memset(rec.modules, 'A', sizeof rec.modules);
    WriteAll(&rec, sizeof rec);
    rec = Forged(SIGSEGV);
    rec.size = 0xffffffffu;
    WriteAll(&rec, sizeof rec);
    static char junk[1 << 20];
    for (size_t i = 0; i < sizeof junk; i++)
      junk[i] = (i % 7 == 0) ? '\n' : CAPSA__CRASH_MAGIC[i % 11];
    WriteAll(junk, sizeof junk);
    DieOf(SIGSEGV);
  } else if (cmd == "forge-lies") {
    // Well-formed but lying: modules covering everything, names that are
    // paths and terminal escapes, frames anywhere; dies of SIGSEGV.
    capsa__crash_record rec = Forged(SIGSEGV);
    rec.nmodules = CAPSA__CRASH_MODULES;
    for (unsigned i = 0; i < CAPSA__CRASH_MODULES; i++) {
      rec.modules[i].lo = 0;
      rec.modules[i].hi = UINT64_MAX;
      rec.modules[i].bias = (uint64_t)i << 60;
      snprintf(rec.modules[i].name, sizeof rec.modules[i].name,
               i % 2 ? "../../../../etc/shadow" : "\x1b[2Jlibc.so.6");
    }
    rec.nframes = CAPSA__CRASH_FRAMES;
    for (unsigned i = 0; i < CAPSA__CRASH_FRAMES; i++)
      rec.frames[i] = UINT64_MAX - i;
    WriteAll(&rec, sizeof rec);
    DieOf(SIGSEGV);
  } else if (cmd == "magic-text") {
    // Text that starts like a record and is not one.
    WriteAll(
        "\x1e"
        "capsa-cr"
        "ash!\n",
        14);
    WriteAll("\x1e", 1);
    _exit(0);
  }
}

int OnMessage(capsa_rctx_t *r, capsa_msg_t *m) {
  (void)r;
  if (!capsa_test::AsRun(m)) return -EPROTO;
  Act(capsa_test::RunData(m));
  return 0;
}

const capsa_renderer_handlers_t kCrash = {
    "crashrep", nullptr, OnMessage, nullptr, capsa_test::kCommand, 1};
CAPSA_RENDERER_KIND(k_crashrep, "crashrep", capsa_renderer_main, &kCrash)
CAPSA_RENDERER_KIND(k_crashflat, "crashrep-flat", capsa_renderer_main, &kCrash)

// A kind with an entry of its own (not capsa_renderer_main): the handler is
// the zygote's, installed at fork, not the runtime's.
int OwnEntry(int chan, const capsa_sandbox_report_t *sb, void *arg) {
  (void)chan;
  (void)sb;
  (void)arg;
  int v = capsa_test_paint(7);
  asm volatile("" ::: "memory");
  return v + 1;
}
CAPSA_RENDERER_KIND(k_crashown, "crashrep-own", OwnEntry, nullptr)

// --- host side --------------------------------------------------------------

struct Report {
  int signal, code;
  std::string code_name, summary;
  uintptr_t address;
  bool scanned;
  std::vector<std::string> symbols, modules;
};

struct Seen {
  capsa_host_event_type_t type;
  int status, signal;
  bool has_report;
  Report report;
  uint64_t at_ns;
};

uint64_t NowNs() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

class CrashReport : public capsa_test::HostFixture {
 public:
  void OnHostEvent(const capsa_host_event_t *ev) override {
    auto *t = this;
    if (ev->type == CAPSA_EV_LOG) {
      t->logs_.push_back(ev->text ? ev->text : "");
      return;
    }
    if (ev->type == CAPSA_EV_READY) t->ready_++;
    Seen s{ev->type, ev->status, ev->signal, ev->crash_report != nullptr,
           {},       NowNs()};
    if (const capsa_crash_report_t *c = ev->crash_report) {
      // CAPSA_TEST_VERBOSE=1: show the summaries (what an embedder logs).
      if (getenv("CAPSA_TEST_VERBOSE")) printf("  report: %s\n", c->summary);
      s.report.signal = c->signal;
      s.report.code = c->code;
      s.report.code_name = c->code_name;
      s.report.summary = c->summary;
      s.report.address = c->address;
      s.report.scanned = c->scanned;
      for (unsigned i = 0; i < c->nframes; i++) {
        s.report.symbols.push_back(c->frames[i].symbol ? c->frames[i].symbol
                                                       : "");
        s.report.modules.push_back(c->frames[i].module ? c->frames[i].module
                                                       : "(none)");
      }
    }
    t->seen_.push_back(s);
  }
  int Kind(const char *name, bool pid_ns = true) {
    capsa_kind_options_t k;
    bool own = strcmp(name, "crashrep-own") == 0;
    capsa_kind_options_init(&k, name, own ? OwnEntry : capsa_renderer_main,
                            own ? nullptr : (void *)&kCrash);
    if (!own) capsa_test::SpeakCommand(&k);
    k.pid_namespace = pid_ns;
    k.max_restarts = 0;
    return capsa_host_define_kind(&host_, &k);
  }
  capsa_renderer_t *Start(int kind, bool wait_ready = true) {
    if (!started_) {
      EXPECT_EQ(0, capsa_host_start(&host_));
    }
    started_ = true;
    capsa_renderer_t *r = nullptr;
    unsigned want = ready_ + 1;
    EXPECT_EQ(0, capsa_host_spawn(&host_, kind, nullptr, &r));
    if (wait_ready) {
      EXPECT_TRUE(Run([&] { return ready_ >= want; }, 10000));
    }
    return r;
  }
  // How renderer `r`'s incarnation ended, after sending it `cmd`.
  const Seen *EndOf(const std::string &cmd, bool pid_ns = true) {
    if (kinds_[0] < 0) {
      kinds_[0] = Kind("crashrep", true);
      kinds_[1] = Kind("crashrep-flat", false);
    }
    capsa_renderer_t *r = Start(kinds_[pid_ns ? 0 : 1]);
    if (!r) return nullptr;
    size_t from = seen_.size();
    EXPECT_EQ(0, capsa_test::SendRun(r, cmd));
    const Seen *end = nullptr;
    Run(
        [&] {
          for (size_t i = from; i < seen_.size(); i++)
            if (IsEnd(seen_[i].type)) end = &seen_[i];
          return end != nullptr;
        },
        10000);
    return end;
  }
  static bool IsEnd(capsa_host_event_type_t t) {
    return t == CAPSA_EV_CRASHED || t == CAPSA_EV_ABORTED ||
           t == CAPSA_EV_EXITED || t == CAPSA_EV_LIMIT ||
           t == CAPSA_EV_KILLED || t == CAPSA_EV_HUNG ||
           t == CAPSA_EV_BAD_MESSAGE;
  }
  std::string Logs() {
    std::string s;
    for (auto &l : logs_) s += l + "\n";
    return s;
  }

  bool started_ = false;
  unsigned ready_ = 0;
  int kinds_[2] = {-1, -1};
  std::deque<Seen> seen_;  // EndOf hands out pointers: push_back keeps them
  std::vector<std::string> logs_;
};

// The outsider's bug: a division by zero in a named function. The event
// says SIGFPE (from waitid), the report FPE_INTDIV, the faulting
// instruction's address, and the two functions, innermost first.
TEST_F(CrashReport, DivisionByZeroNamesTheFunctionAndItsCaller) {
  const Seen *end = EndOf("fpe");
  ASSERT_NE(nullptr, end) << Logs();
  EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
  EXPECT_EQ(SIGFPE, end->signal);
  ASSERT_TRUE(end->has_report) << Logs();
  const Report &rep = end->report;
  EXPECT_EQ(SIGFPE, rep.signal);
  EXPECT_EQ(FPE_INTDIV, rep.code);
  EXPECT_EQ("FPE_INTDIV", rep.code_name);
  EXPECT_NE(0u, rep.address);
  ASSERT_GE(rep.symbols.size(), 3u) << rep.summary;
  EXPECT_EQ("capsa_test_layout_line", rep.symbols[0]) << rep.summary;
  EXPECT_EQ("capsa_test_paint", rep.symbols[1]) << rep.summary;
  EXPECT_EQ("", rep.modules[0]) << "the image itself";
  EXPECT_FALSE(rep.scanned) << "a frame chain all the way";
  EXPECT_EQ(0u, rep.summary.rfind("SIGFPE (FPE_INTDIV) at 0x", 0))
      << rep.summary;
  EXPECT_NE(std::string::npos,
            rep.summary.find(" in capsa_test_layout_line+0x"))
      << rep.summary;
  EXPECT_NE(std::string::npos, rep.summary.find(" <- capsa_test_paint+0x"))
      << rep.summary;
  // The record is no stderr line.
  for (auto &l : logs_) EXPECT_EQ(std::string::npos, l.find("capsa-crash"));
}

// Also without a pid namespace (the handler then re-raises the signal
// rather than relying on pid 1's retried fault).
TEST_F(CrashReport, DivisionByZeroWithoutPidNamespace) {
  const Seen *end = EndOf("fpe", false);
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
  EXPECT_EQ(SIGFPE, end->signal);
  ASSERT_TRUE(end->has_report) << Logs();
  ASSERT_GE(end->report.symbols.size(), 2u);
  EXPECT_EQ("capsa_test_layout_line", end->report.symbols[0]);
  EXPECT_EQ("capsa_test_paint", end->report.symbols[1]);
}

// A kind with its own entry function gets reports too: the handler is
// installed at the fork, whatever the entry.
TEST_F(CrashReport, KindWithItsOwnEntryIsCovered) {
  int k = Kind("crashrep-own");
  Start(k, false);
  ASSERT_TRUE(Run(
      [&] {
        for (auto &s : seen_)
          if (IsEnd(s.type)) return true;
        return false;
      },
      10000));
  const Seen *end = nullptr;
  for (auto &s : seen_)
    if (IsEnd(s.type)) end = &s;
  EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
  EXPECT_EQ(SIGFPE, end->signal);
  ASSERT_TRUE(end->has_report);
  ASSERT_GE(end->report.symbols.size(), 3u) << end->report.summary;
  EXPECT_EQ("capsa_test_layout_line", end->report.symbols[0]);
  EXPECT_EQ("capsa_test_paint", end->report.symbols[1]);
  EXPECT_NE(std::string::npos, end->report.summary.find("OwnEntry"))
      << end->report.summary;
}

TEST_F(CrashReport, SegvReportsTheFaultingAddress) {
  const Seen *end = EndOf("segv");
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
  EXPECT_EQ(SIGSEGV, end->signal);
  ASSERT_TRUE(end->has_report) << Logs();
  EXPECT_EQ(kBadAddress, end->report.address);
  EXPECT_EQ(SEGV_MAPERR, end->report.code);
  EXPECT_EQ("SEGV_MAPERR", end->report.code_name);
  EXPECT_NE(std::string::npos, end->report.summary.find("at 0x13370 in "))
      << end->report.summary;
}

// abort() as pid 1 of its namespace (the handler exits as the zygote's did)
// and as an ordinary process (SIGABRT itself): ABORTED with a report.
TEST_F(CrashReport, AbortIsAbortedWithAReport) {
  for (bool pid_ns : {true, false}) {
    const Seen *end = EndOf("abort", pid_ns);
    ASSERT_NE(nullptr, end);
    EXPECT_EQ(CAPSA_EV_ABORTED, end->type) << pid_ns;
    EXPECT_EQ(SIGABRT, end->signal);
    ASSERT_TRUE(end->has_report) << pid_ns << Logs();
    EXPECT_EQ(SIGABRT, end->report.signal);
    EXPECT_EQ("SI_TKILL", end->report.code_name);
    EXPECT_EQ(0u, end->report.address);
    EXPECT_EQ(0u, end->report.summary.rfind("SIGABRT (SI_TKILL) in ", 0))
        << end->report.summary;
    // [0] in libc; its caller found past libc's frames by the scan.
    ASSERT_GE(end->report.symbols.size(), 3u) << end->report.summary;
    EXPECT_EQ("libc.so.6", end->report.modules[0]) << end->report.summary;
    EXPECT_TRUE(end->report.scanned);
#ifndef CAPSA_TEST_ASAN
    EXPECT_EQ("capsa_test_give_up", end->report.symbols[1])
        << end->report.summary;
#else
    // ASan calls its runtime right before a noreturn call (abort): that
    // call's stale frame record is what the scan finds first (the report
    // says `scanned`); the live chain above it is still reported.
    bool handler = false;
    for (auto &sym : end->report.symbols)
      handler |= sym.find("OnMessage") != std::string::npos;
    EXPECT_TRUE(handler) << end->report.summary;
#endif
  }
}

// Forged records: one well-formed, then a clean exit: EXITED 0, no report,
// and the text after it still arrives.
TEST_F(CrashReport, ForgedRecordThenExitIsAnExitWithoutReport) {
  const Seen *end = EndOf("forge-exit");
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_EXITED, end->type);
  EXPECT_EQ(0, end->status);
  EXPECT_FALSE(end->has_report);
  bool after = false;
  for (auto &l : logs_) after |= l == "after";
  EXPECT_TRUE(after) << Logs();
}

TEST_F(CrashReport, CutRecordIsDropped) {
  const Seen *end = EndOf("forge-cut");
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_EXITED, end->type);
  EXPECT_FALSE(end->has_report);
}

// A record claiming another signal than the one it died of is no report:
// the signal is waitid's.
TEST_F(CrashReport, RecordOfAnotherSignalIsNotAttached) {
  const Seen *end = EndOf("forge-other");
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
  EXPECT_EQ(SIGFPE, end->signal);
  EXPECT_FALSE(end->has_report);
}

// Out-of-range counts and sizes, then a megabyte of junk made of magic
// prefixes: the host stays up, reports SIGSEGV, attaches nothing from the
// garbled records, and the junk (as text) is held to the LOG budget.
TEST_F(CrashReport, GarbledRecordsAndJunkNeverMisreport) {
  const Seen *end = EndOf("forge-garbled");
  ASSERT_NE(nullptr, end);
  // Killed at the LOG budget, or dead of its own SIGSEGV: either way no
  // word of its own changes how it ended.
  if (end->type == CAPSA_EV_LIMIT) {
    EXPECT_FALSE(end->has_report);
  } else {
    EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
    EXPECT_EQ(SIGSEGV, end->signal);
    EXPECT_FALSE(end->has_report);
  }
  for (auto &l : logs_) EXPECT_LT(l.size(), 1024u);
}

// A well-formed lie is the renderer's own report: attached, its names
// escaped, its addresses only looked up.
TEST_F(CrashReport, LyingRecordIsOnlyItsOwnReport) {
  const Seen *end = EndOf("forge-lies");
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_CRASHED, end->type);
  EXPECT_EQ(SIGSEGV, end->signal);
  ASSERT_TRUE(end->has_report);
  EXPECT_EQ(static_cast<size_t>(CAPSA__CRASH_FRAMES),
            end->report.symbols.size());
  EXPECT_LT(end->report.summary.size(), 1024u);
  EXPECT_EQ(std::string::npos, end->report.summary.find('\x1b'));
  for (auto &m : end->report.modules)
    EXPECT_EQ(std::string::npos, m.find('\x1b')) << m;
}

// Text that only starts like a record is passed on as text.
TEST_F(CrashReport, MagicPrefixInTextStaysText) {
  const Seen *end = EndOf("magic-text");
  ASSERT_NE(nullptr, end);
  EXPECT_EQ(CAPSA_EV_EXITED, end->type);
  bool line = false, tail = false;
  for (auto &l : logs_) {
    line |= l == "\\x1ecapsa-crash!";
    tail |= l == "\\x1e";
  }
  EXPECT_TRUE(line) << Logs();
  EXPECT_TRUE(tail) << Logs();
}

// The same crash with the handler and with it reset to the default: a
// report only with it, the signal the same. Also prints how long from the
// command to the event each way (figures, not asserted).
TEST_F(CrashReport, ReportOnlyFromTheHandlerSameSignal) {
  if (kinds_[0] < 0) kinds_[0] = Kind("crashrep", true);
  for (int i = 0; i < 10; i++) {
    const char *cmd = i % 2 ? "fpe-plain" : "fpe";
    capsa_renderer_t *r = Start(kinds_[0]);
    ASSERT_NE(nullptr, r);
    size_t from = seen_.size();
    uint64_t t0 = NowNs();
    ASSERT_EQ(0, capsa_test::SendRun(r, cmd));
    const Seen *end = nullptr;
    ASSERT_TRUE(Run(
        [&] {
          for (size_t j = from; j < seen_.size(); j++)
            if (IsEnd(seen_[j].type)) end = &seen_[j];
          return end != nullptr;
        },
        10000));
    EXPECT_EQ(CAPSA_EV_CRASHED, end->type) << cmd;
    EXPECT_EQ(SIGFPE, end->signal) << cmd;
    EXPECT_EQ(i % 2 == 0, end->has_report) << cmd;
    printf("  %-9s report=%d crash->event %.3f ms\n", cmd, end->has_report,
           (double)(end->at_ns - t0) / 1e6);
  }
}

// --- the symbol table reader alone ----------------------------------------

uintptr_t OwnBias() {
  uintptr_t bias = 0;
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *arg) {
        *static_cast<uintptr_t *>(arg) = info->dlpi_addr;
        return 1;  // the first: the executable
      },
      &bias);
  return bias;
}

std::string ReadAll(int fd) {
  std::string s;
  char buf[1 << 16];
  ssize_t n;
  while ((n = pread(fd, buf, sizeof buf, (off_t)s.size())) > 0)
    s.append(buf, (size_t)n);
  return s;
}

int MemFile(const std::string &bytes) {
  int fd = memfd_create("elf", MFD_CLOEXEC);
  if (fd >= 0 && write(fd, bytes.data(), bytes.size()) != (ssize_t)bytes.size())
    ADD_FAILURE() << "memfd write";
  return fd;
}

TEST(ElfSymbols, NamesFunctionsOfTheRunningImage) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  uintptr_t bias = OwnBias();
  uint64_t addrs[3] = {(uint64_t)((uintptr_t)&capsa_test_paint - bias) + 3,
                       (uint64_t)((uintptr_t)&capsa_test_layout_line - bias),
                       0};  // nothing there
  capsa__elf_sym out[3];
  ASSERT_EQ(0, capsa__elf_symbolize(fd, addrs, 3, out));
  EXPECT_STREQ("capsa_test_paint", out[0].name);
  EXPECT_EQ(addrs[0] - 3, out[0].start);
  EXPECT_STREQ("capsa_test_layout_line", out[1].name);
  EXPECT_STREQ("", out[2].name);
  close(fd);
}

// Cut short, or with header fields and tables garbled at random: never a
// fault, never a read outside the file (ASan would say), a name or none.
TEST(ElfSymbols, DamagedFilesGiveNoNameNotAFault) {
  int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(self, 0);
  std::string image = ReadAll(self);
  close(self);
  ASSERT_GT(image.size(), 4096u);
  uint64_t addr = (uint64_t)((uintptr_t)&capsa_test_paint - OwnBias());
  capsa__elf_sym out[1];
  // Cut: the header only, the first 64 KiB, all but the section headers.
  Elf64_Ehdr eh;
  memcpy(&eh, image.data(), sizeof eh);
  for (size_t cut : {(size_t)0, (size_t)10, sizeof eh, (size_t)65536,
                     (size_t)eh.e_shoff + 100}) {
    int fd = MemFile(image.substr(0, cut));
    int err = capsa__elf_symbolize(fd, &addr, 1, out);
    EXPECT_TRUE(err < 0 || out[0].name[0] == '\0') << cut << " " << err;
    close(fd);
  }
  // Random bytes over the ELF header and the section headers.
  unsigned seed = 36;
  size_t shdrs = (size_t)eh.e_shoff;
  size_t shlen = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
  ASSERT_LE(shdrs + shlen, image.size());
  int work = MemFile(image);
  for (int round = 0; round < 300; round++) {
    size_t at[8];
    for (size_t &a : at) {
      a = round % 2 ? rand_r(&seed) % sizeof eh : shdrs + rand_r(&seed) % shlen;
      char c = (char)rand_r(&seed);
      ASSERT_EQ(1, pwrite(work, &c, 1, (off_t)a));
    }
    capsa__elf_symbolize(work, &addr, 1, out);
    EXPECT_LT(strlen(out[0].name), sizeof out[0].name);
    for (size_t a : at) ASSERT_EQ(1, pwrite(work, &image[a], 1, (off_t)a));
  }
  close(work);
  // Not an ELF file at all; too many addresses.
  int fd = MemFile("#!/bin/sh\necho hi\n");
  EXPECT_EQ(-ENOEXEC, capsa__elf_symbolize(fd, &addr, 1, out));
  uint64_t many[CAPSA__ELF_MAX_ADDRS + 1] = {};
  capsa__elf_sym outs[CAPSA__ELF_MAX_ADDRS + 1];
  EXPECT_EQ(-E2BIG,
            capsa__elf_symbolize(fd, many, CAPSA__ELF_MAX_ADDRS + 1, outs));
  close(fd);
}

}  // namespace
