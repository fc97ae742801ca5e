// capsa fuzz's reproducer files and failure signatures, without a host
// (host/fuzz/repro.h, host/fuzz/stack.h).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "host/fuzz/repro.h"
#include "host/fuzz/stack.h"
#include "ipc/ipc_dump.h"

namespace {

std::string Key(const std::string &log, uint64_t *hash = nullptr) {
  char key[512];
  uint64_t h = capsa__fz_signature(log.data(), log.size(), nullptr, "exit 1",
                                   key, sizeof key);
  if (hash) *hash = h;
  return key;
}

const char kAsan[] =
    "renderer noise\n"
    "==42==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6 at "
    "pc 0x55 bp 0x7 sp 0x8\n"
    "WRITE of size 4 at 0x6 thread T0\n"
    "    #0 0x55d1 in __asan_memcpy (/usr/lib/libclang_rt.asan.so+0x1)\n"
    "    #1 0x55d2 in copy_into /src/host/handler.c:41:7\n"
    "    #2 0x55d3 in on_convert /src/host/handler.c:88:3\n"
    "    #3 0x55d4 in emit ../../host/host.c:700:5\n"
    "    #4 0x55d5 in main /src/main.c:3:1\n"
    "\n"
    "0x6 is located 0 bytes after 256-byte region\n"
    "allocated by thread T0 here:\n"
    "    #0 0x55e1 in malloc (/usr/lib/libclang_rt.asan.so+0x2)\n";

TEST(FuzzSignature, SanitizerReportTopFramesNameTheBug) {
  uint64_t h1 = 0, h2 = 0, h3 = 0;
  EXPECT_EQ(
      "asan heap-buffer-overflow copy_into handler.c:41 | on_convert "
      "handler.c:88 | emit host.c:700",
      Key(kAsan, &h1));
  // Another run: other addresses, pids, columns and output before it.
  std::string again = std::string("more noise\n") + kAsan;
  for (size_t at; (at = again.find("==42==")) != std::string::npos;)
    again.replace(at, 6, "==977==");
  for (size_t at; (at = again.find(":41:7")) != std::string::npos;)
    again.replace(at, 5, ":41:9");
  Key(again, &h2);
  EXPECT_EQ(h1, h2);
  // Another line: another bug.
  std::string other = kAsan;
  other.replace(other.find(":88:3"), 5, ":90:3");
  Key(other, &h3);
  EXPECT_NE(h1, h3);
}

TEST(FuzzSignature, UnsymbolizedLeakAndUbsanReports) {
  EXPECT_EQ("asan SEGV capsa+0x1a2b | capsa+0x2000",
            Key("==1==ERROR: AddressSanitizer: SEGV on unknown address 0x0\n"
                "    #0 0x1 (/out/asan/capsa+0x1a2b) (BuildId: ab)\n"
                "    #1 0x2 (/out/asan/capsa+0x2000) (BuildId: ab)\n"));
  EXPECT_EQ("leak grow buf.c:9",
            Key("==1==ERROR: LeakSanitizer: detected memory leaks\n"
                "Direct leak of 8 byte(s) in 1 object(s) allocated from:\n"
                "    #0 0x1 in malloc (/usr/lib/libclang_rt.asan.so+0x2)\n"
                "    #1 0x2 in grow /src/buf.c:9:3\n"));
  EXPECT_EQ("ubsan shift.c:12",
            Key("../../ipc/shift.c:12:5: runtime error: shift exponent 40\n"));
  // Nothing to go by: the class the caller gives.
  EXPECT_EQ("exit 1", Key("just output\n"));
}

__attribute__((noinline)) void Frame() {
  asm volatile("");
}

TEST(FuzzSignature, CrashRecordFramesAreModuleOffsets) {
  capsa__fz_crash_t c = {};
  c.sig = 11;
  c.nframes = 2;
  c.frames[0] = (uintptr_t)&Frame;
  c.frames[1] = (uintptr_t)&Frame + 5;
  char a[512], b[512];
  uint64_t ha = capsa__fz_signature(nullptr, 0, &c, "signal 11", a, sizeof a);
  EXPECT_EQ(0u, std::string(a).find("signal 11 fuzz_campaign_tests+0x")) << a;
  EXPECT_NE(std::string::npos, std::string(a).find(" | ")) << a;
  uint64_t hb = capsa__fz_signature(nullptr, 0, &c, "signal 11", b, sizeof b);
  EXPECT_EQ(ha, hb);
  c.sig = 6;
  capsa__fz_signature(nullptr, 0, &c, "signal 6", b, sizeof b);
  EXPECT_NE(std::string(a), std::string(b));
  // A sanitizer report, when there is one, names it instead.
  EXPECT_EQ(0u, std::string(Key(kAsan)).find("asan "));
}

struct TmpDir {
  std::string path;
  TmpDir() {
    char t[] = "/tmp/capsa-repro-XXXXXX";
    path = mkdtemp(t) ? t : "";
  }
  ~TmpDir() {
    std::string cmd = "rm -rf " + path;
    if (!path.empty()) (void)!system(cmd.c_str());
  }
};

TEST(FuzzRepro, SavedAndLoadedAsTheyArrived) {
  TmpDir dir;
  ASSERT_FALSE(dir.path.empty());
  static const uint8_t a[] = {1, 2, 3}, b[] = {9}, c[] = {7, 7};
  capsa__fz_rec_t rec[4] = {};
  rec[0] = {0, 0, {0}, {0}, 3, a};
  rec[1] = {1,       2, {CAPSA__DUMP_PIPE_READ, CAPSA__DUMP_SHM_READONLY},
            {0, 16}, 1, b};
  rec[2] = {0, 0, {0}, {0}, 2, c};
  rec[3] = {1, 0, {0}, {0}, 0, nullptr};
  capsa__fz_repro_t r = {};
  r.version = 2;
  r.nch = 2;
  r.flags[0] = r.flags[1] = CAPSA__DUMP_AUTO_HELLO;
  r.nrec = 4;
  r.rec = rec;
  snprintf(r.why, sizeof r.why, "host crash: signal 11");
  snprintf(r.stack, sizeof r.stack, "00000000000000ff signal 11 x+0x1");
  std::string path = dir.path + "/crash-ff.repro";
  ASSERT_EQ(0, capsa__fz_repro_save(&r, path.c_str()));
  // Each channel alone is a CAPSA_IPC_DUMP file: flags, then records.
  FILE *f = fopen((path + ".c1.in").c_str(), "rb");
  ASSERT_NE(nullptr, f);
  uint8_t in[64];
  size_t n = fread(in, 1, sizeof in, f);
  fclose(f);
  const uint8_t want[] = {
      1, 2, CAPSA__DUMP_PIPE_READ, 0, CAPSA__DUMP_SHM_READONLY, 16, 1, 0, 9, 0,
      0, 0};
  ASSERT_EQ(sizeof want, n);
  EXPECT_EQ(0, memcmp(want, in, n));

  capsa__fz_repro_t l;
  char err[256] = "";
  ASSERT_EQ(0, capsa__fz_repro_load(path.c_str(), &l, err, sizeof err)) << err;
  EXPECT_EQ(2, l.version);
  EXPECT_EQ(2u, l.nch);
  ASSERT_EQ(4u, l.nrec);
  for (size_t i = 0; i < 4; i++) {
    EXPECT_EQ(rec[i].channel, l.rec[i].channel) << i;
    EXPECT_EQ(rec[i].nh, l.rec[i].nh) << i;
    ASSERT_EQ(rec[i].len, l.rec[i].len) << i;
    if (rec[i].len) {
      EXPECT_EQ(0, memcmp(rec[i].data, l.rec[i].data, rec[i].len));
    }
  }
  EXPECT_EQ(CAPSA__DUMP_SHM_READONLY, l.rec[1].kind[1]);
  EXPECT_EQ(16, l.rec[1].size[1]);
  EXPECT_STREQ("host crash: signal 11", l.why);
  EXPECT_EQ(0u, std::string(l.stack).find("00000000000000ff"));

  // A subset renumbers the channels left.
  bool keep[4] = {false, true, false, true};
  capsa__fz_repro_t s;
  ASSERT_EQ(0, capsa__fz_repro_subset(&l, keep, &s));
  EXPECT_EQ(1u, s.nch);
  ASSERT_EQ(2u, s.nrec);
  EXPECT_EQ(0, s.rec[0].channel);
  EXPECT_EQ(9, s.rec[0].data[0]);
  capsa__fz_repro_free(&s);

  // A lone channel file loads as a one-channel reproducer.
  ASSERT_EQ(
      0, capsa__fz_repro_load((path + ".c0.in").c_str(), &s, err, sizeof err))
      << err;
  EXPECT_EQ(1u, s.nch);
  EXPECT_EQ(2u, s.nrec);
  capsa__fz_repro_free(&s);
  capsa__fz_repro_free(&l);
}

TEST(FuzzRepro, BrokenFilesAreRefusedSayingWhy) {
  TmpDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto write = [&](const std::string &name, const std::string &text) {
    FILE *f = fopen((dir.path + "/" + name).c_str(), "wb");
    if (!f) return;
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  };
  auto load = [&](const std::string &name) {
    capsa__fz_repro_t r;
    char err[256] = "";
    int e = capsa__fz_repro_load((dir.path + "/" + name).c_str(), &r, err,
                                 sizeof err);
    capsa__fz_repro_free(&r);
    return std::to_string(e) + " " + err;
  };
  write("junk", "junk");
  EXPECT_EQ(0u, load("junk").find(std::to_string(-EINVAL) +
                                  " not a capsa fuzz reproducer"));
  write("c.in", std::string("\x01\x00\x01\x00\x05", 5));
  write("m1", "capsa-fuzz-repro 2\nchannel c.in\norder 0 0\n");
  EXPECT_NE(std::string::npos, load("m1").find("order: entry 1")) << load("m1");
  write("m2", "capsa-fuzz-repro 2\nchannel missing.in\n");
  EXPECT_NE(std::string::npos, load("m2").find("missing.in: ")) << load("m2");
  write("m3", "capsa-fuzz-repro 2\nwhy x\n");
  EXPECT_NE(std::string::npos, load("m3").find("no channel line"));
  write("m4", "capsa-fuzz-repro 2\nchannel c.in\nbogus\n");
  EXPECT_NE(std::string::npos, load("m4").find("unknown line"));
  write("m5", "capsa-fuzz-repro 2\nchannel c.in\norder 0\n");
  EXPECT_EQ("0 ", load("m5"));
  EXPECT_EQ(0u, load("nonexistent").find(std::to_string(-ENOENT)));
}

}  // namespace
