// <capsa/fuzz_live.h> without a campaign: its flags (host/fuzz/args.h),
// the options it refuses, and the guided mutator's records.
#include <errno.h>
#include <string.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/fuzz/args.h"
#include "host/fuzz/capsa_fuzz_live.h"
#include "ipc/fuzz.h"
#include "ipc/fuzz_internal.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"

namespace {

std::string last_err;  // what the last Parse wrote to stderr

// The parsed argv: the options borrow its strings (--out, --replay), as a
// real main's do, so they live until the next Parse.
std::vector<std::string> g_args;

int Parse(std::vector<std::string> args, capsa__fz_live_options_t *o,
          capsa__fz_args_t *a) {
  std::vector<char *> argv;
  g_args = std::move(args);
  g_args.insert(g_args.begin(), "prog");
  for (std::string &s : g_args) argv.push_back(&s[0]);
  capsa__fz_live_options_init(o);
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  int r = capsa__fz_args_parse((int)argv.size(), argv.data(), "prog", o, a);
  testing::internal::GetCapturedStdout();
  last_err = testing::internal::GetCapturedStderr();
  return r;
}

TEST(FuzzLiveArgs, EachBadValueIsRefusedNamingItsFlag) {
  capsa__fz_live_options_t o;
  capsa__fz_args_t a;
  const struct {
    std::vector<std::string> args;
    const char *says;
  } kBad[] = {
      {{"--seconds", "0"}, "bad --seconds (1..86400) '0'"},
      {{"--seconds", "9x"}, "bad --seconds"},
      {{"--seed", "-1"}, "bad --seed"},
      {{"--rounds", "70000"}, "bad --rounds (1..65536)"},
      {{"--parallel", "0"}, "bad --parallel (1..64)"},
      {{"--stop-after-unique", "65"}, "bad --stop-after-unique (1..64)"},
      {{"--stop-after-failures", "0"}, "bad --stop-after-failures"},
      {{"--hang-seconds", "3601"}, "bad --hang-seconds (1..3600)"},
      {{"--out", "/nonexistent/capsa"}, "--out is not a directory"},
      {{"--replay", "a", "--minimize", "b"}, "exclude each other"},
      {{"--what", "1"}, "unknown option '--what'"},
      {{"--seconds"}, "missing value for '--seconds'"},
  };
  for (const auto &b : kBad) {
    EXPECT_EQ(CAPSA__FZ_ARGS_BAD, Parse(b.args, &o, &a)) << b.says;
    EXPECT_NE(std::string::npos, last_err.find(b.says)) << last_err;
    EXPECT_NE(std::string::npos, last_err.find("usage: prog ")) << last_err;
  }
  EXPECT_EQ(CAPSA__FZ_ARGS_HELP, Parse({"--help"}, &o, &a));
}

TEST(FuzzLiveArgs, GoodValuesLandInTheOptions) {
  capsa__fz_live_options_t o;
  capsa__fz_args_t a;
  ASSERT_EQ(CAPSA__FZ_ARGS_RUN,
            Parse({"--seconds", "7", "--seed", "18446744073709551615",
                   "--rounds", "65536", "--parallel", "3", "--out", "/tmp",
                   "--stop-after-failures", "2", "--minimize", "f"},
                  &o, &a));
  EXPECT_EQ(7ul, o.seconds);
  EXPECT_EQ(UINT64_MAX, o.seed);
  EXPECT_EQ(65536u, o.rounds);
  EXPECT_EQ(3u, o.parallel);
  EXPECT_STREQ("/tmp", o.out_dir);
  EXPECT_EQ(2u, o.stop_after_failures);
  EXPECT_STREQ("f", a.minimize);
  EXPECT_EQ(7ul, a.minimize_seconds);  // --seconds is its budget too
}

// Options it cannot run are refused before anything starts, naming the
// field that fixes them.
TEST(FuzzLiveMain, EmptyOrTooManyInterfacesAreRefused) {
  char prog[] = "prog";
  char *argv[] = {prog, nullptr};
  capsa_fuzz_live_options_t o;
  capsa_fuzz_live_options_init(&o);
  testing::internal::CaptureStderr();
  EXPECT_EQ(2, capsa_fuzz_live_main(1, argv, &o));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string::npos,
            err.find("capsa_fuzz_live_options_t.interfaces is empty"))
      << err;
  const capsa_interface_t *eight[8];
  for (auto &i : eight) i = &capsa_test_thumbnail_interface;
  o.interfaces = eight;
  o.ninterfaces = 8;
  testing::internal::CaptureStderr();
  EXPECT_EQ(2, capsa_fuzz_live_main(1, argv, &o));
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string::npos, err.find("ninterfaces is 8: at most 7")) << err;
  EXPECT_EQ(2, capsa_fuzz_live_main(0, nullptr, nullptr));
}

// The guided mutator writes records the told renderer can send: each a
// message of the interface that a renderer may send, unasked ones as
// events or requests, answers as responses.
TEST(FuzzLiveMutate, WritesRecordsOfMessagesARendererMaySend) {
  static const capsa_interface_t *const kSpeaks[] = {
      &capsa_test_thumbnail_interface};
  capsa_fuzz_live_options_t o;
  capsa_fuzz_live_options_init(&o);
  o.interfaces = kSpeaks;
  o.ninterfaces = 1;
  std::vector<uint8_t> buf(1 << 16);
  size_t size = 0;
  unsigned answers = 0, unasked = 0;
  for (unsigned seed = 1; seed <= 400; seed++) {
    size = capsa_fuzz_live_mutate(&o, buf.data(), size, buf.size(), seed);
    ASSERT_LE(size, buf.size());
    size_t at = 0;
    unsigned n = 0;
    while (at + 4 <= size) {
      size_t len = buf[at + 2] | (size_t)buf[at + 3] << 8;
      ASSERT_LE(at + 4 + len, size) << "seed " << seed;
      uint32_t id, nh;
      capsa_handle_t h[CAPSA_IPC_MAX_HANDLES];
      const uint8_t *payload;
      size_t plen;
      ASSERT_EQ(0, capsa__fuzz_parse(kSpeaks[0], buf.data() + at + 4, len, &id,
                                     h, &nh, &payload, &plen));
      const capsa_imessage_t *m = capsa_iface_message(kSpeaks[0], id);
      ASSERT_NE(nullptr, m);
      EXPECT_TRUE(m->from & CAPSA_IFROM_RENDERER) << m->name;
      if (buf[at + 1] & 1) {
        EXPECT_EQ(CAPSA_IMSG_RESPONSE, m->kind) << m->name;
        answers++;
      } else {
        EXPECT_NE(CAPSA_IMSG_RESPONSE, m->kind) << m->name;
        unasked++;
      }
      at += 4 + len;
      n++;
    }
    EXPECT_EQ(size, at) << "seed " << seed;
    EXPECT_LE(n, 64u);
  }
  EXPECT_GT(answers, 0u);
  EXPECT_GT(unasked, 0u);
}

}  // namespace
