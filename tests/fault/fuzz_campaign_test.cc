// A short live `capsa fuzz` campaign of this out dir's capsa (the asan pass
// runs the asan build's), its reproducer replay, and the determinism the
// replay relies on.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "demos/fuzz/fuzz_renderer.h"
#include "ipc/codec.h"
#include "tests/harness/paths.h"

namespace {

// This out dir's capsa (data_deps in BUILD.gn).
std::string Capsa() {
  return capsa_test::BuildProduct("capsa");
}

std::string RunCommand(const std::string &cmd, int *status) {
  std::string out;
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  *status = pclose(p);
  return out;
}

TEST(FuzzCampaign, TenSecondsSeedOneHostSurvives) {
  int st = -1;
  std::string out = RunCommand(Capsa() + " fuzz --seconds 10 --seed 1", &st);
  printf("%s", out.c_str());
  ASSERT_TRUE(WIFEXITED(st)) << out;
  EXPECT_EQ(0, WEXITSTATUS(st)) << out;
  size_t at = out.find("summary:");
  ASSERT_NE(std::string::npos, at) << out;
  std::string sum = out.substr(at);
  EXPECT_NE(std::string::npos, sum.find("host survived")) << sum;
  // The fuzzing renderers end by the host's hand or their own, never by a
  // fault of their own (which would hide what they were meant to send).
  EXPECT_NE(std::string::npos, sum.find(", crashed 0)")) << sum;
  unsigned long long execs = 0, bad = 0;
  const char *e = strstr(sum.c_str(), "execs ");
  const char *b = strstr(sum.c_str(), "bad messages caught ");
  ASSERT_TRUE(e && b) << sum;
  execs = strtoull(e + 6, nullptr, 10);
  bad = strtoull(b + 20, nullptr, 10);
  EXPECT_GT(execs, 10u) << sum;
  EXPECT_GT(bad, 0u) << "no mutation was caught: " << sum;
  EXPECT_LE(bad, execs) << sum;
}

TEST(FuzzCampaign, ReproducerReplays) {
  char path[] = "/tmp/capsa-fuzz-repro-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const char repro[] = "capsa-fuzz-repro 1\nseed 1\nrenderer_seed 42\nwhy x\n";
  ASSERT_EQ((ssize_t)strlen(repro), write(fd, repro, strlen(repro)));
  close(fd);
  int st = -1;
  std::string out = RunCommand(Capsa() + " fuzz --replay " + path, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  EXPECT_NE(std::string::npos, out.find("replaying renderer seed 42")) << out;
  EXPECT_NE(std::string::npos, out.find("host survived")) << out;
  EXPECT_NE(std::string::npos, out.find("execs 1 ")) << out;
  // Two seeds (the two renderers running when a failure happened).
  fd = open(path, O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  const char two[] = "capsa-fuzz-repro 1\nseed 1\nrenderer_seed 42 43\n";
  ASSERT_EQ((ssize_t)strlen(two), write(fd, two, strlen(two)));
  close(fd);
  out = RunCommand(Capsa() + " fuzz --replay " + path, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  EXPECT_NE(std::string::npos, out.find("renderer seed 42 and 43")) << out;
  EXPECT_NE(std::string::npos, out.find("execs 2 ")) << out;
  // Not a reproducer: a clear error, exit 1.
  fd = open(path, O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(4, write(fd, "junk", 4));
  close(fd);
  out = RunCommand(Capsa() + " fuzz --replay " + path, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  EXPECT_NE(std::string::npos, out.find("not a capsa fuzz reproducer")) << out;
  // A lone channel in CAPSA_IPC_DUMP's layout (a fuzz_host input): a LOG
  // after the HELLO the replayer makes, then a PONG nobody asked for.
  fd = open(path, O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  std::string in(1, '\x01');  // CAPSA__DUMP_AUTO_HELLO
  uint8_t rec[256];
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_LOG);
  m.seq = 2;
  m.u.log.text = "replayed-log-line";
  int n = capsa_msg_encode(&m, rec, sizeof rec);
  ASSERT_GT(n, 0);
  in += std::string("\0", 1) + (char)(n & 0xff) + (char)(n >> 8);
  in.append((const char *)rec, (size_t)n);
  capsa_msg_init(&m, CAPSA_MSG_PONG);
  m.seq = 3;
  m.flags = CAPSA_MSG_F_RESPONSE;
  m.request_id = 77;
  n = capsa_msg_encode(&m, rec, sizeof rec);
  ASSERT_GT(n, 0);
  in += std::string("\0", 1) + (char)(n & 0xff) + (char)(n >> 8);
  in.append((const char *)rec, (size_t)n);
  ASSERT_EQ((ssize_t)in.size(), write(fd, in.data(), in.size()));
  close(fd);
  out = RunCommand(Capsa() + " fuzz --replay " + path, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  EXPECT_NE(std::string::npos,
            out.find("replaying 2 records from 1 renderers in arrival order"))
      << out;
  // Each event of the host is shown: the LOG served, the PONG refused.
  EXPECT_NE(std::string::npos, out.find("log: replayed-log-line")) << out;
  EXPECT_NE(std::string::npos, out.find("bad-message: pong")) << out;
  EXPECT_NE(std::string::npos, out.find("host survived")) << out;
  unlink(path);
  out = RunCommand(Capsa() + " fuzz --seconds 0", &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << out;
}

// The reproducers `dir` holds (crash-*.repro, hang-*.repro: manifests).
std::vector<std::string> Reproducers(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = opendir(dir.c_str());
  if (!d) return out;
  while (struct dirent *e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 6 && n.compare(n.size() - 6, 6, ".repro") == 0)
      out.push_back(dir + "/" + n);
  }
  closedir(d);
  return out;
}

void RemoveTree(const std::string &dir) {
  int st;
  RunCommand("rm -rf " + dir, &st);
}

unsigned long Count(const std::string &out, const char *what) {
  size_t at = out.rfind(what);
  return at == std::string::npos
             ? 0
             : strtoul(out.c_str() + at + strlen(what), nullptr, 10);
}

// A host that crashes mid-campaign (an injected bug in its handler, reached
// by some accepted Noise messages): each crash is a failure, the campaign
// goes on with a new worker, and the crashes, all at one stack, leave one
// reproducer, whose records crash a fresh host again when replayed.
TEST(FuzzCampaign, HostCrashIsAFailureWithAReproducerThatCrashes) {
  char dir[] = "/tmp/capsa-fuzz-crash-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int st = -1;
  std::string out = RunCommand(
      std::string("cd ") + dir + " && CAPSA_FUZZ_INJECT=crash " + Capsa() +
          " fuzz --seconds 120 --stop-after-failures 2 --seed 3",
      &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  // A signal, or under ASan its report and exit code.
  EXPECT_TRUE(
      out.find("FAILURE (host crash: signal 11)") != std::string::npos ||
      out.find("FAILURE (host exited 1 mid-campaign)") != std::string::npos)
      << out;
  // It went on after the first failure, and the same stack was saved once.
  EXPECT_GE(Count(out, "failures "), 2u) << out;
  EXPECT_EQ(1u, Count(out, "unique ")) << out;
  EXPECT_NE(std::string::npos, out.find("same stack as before")) << out;
  std::vector<std::string> files = Reproducers(dir);
  ASSERT_EQ(1u, files.size()) << out;
  EXPECT_NE(std::string::npos, out.find("reproducer saved: crash-")) << out;
  // The manifest names the records of each renderer, in arrival order.
  std::string manifest = RunCommand("cat " + files[0], &st);
  EXPECT_EQ(0u, manifest.find("capsa-fuzz-repro 2\n")) << manifest;
  EXPECT_NE(std::string::npos, manifest.find("\nchannel ")) << manifest;
  EXPECT_NE(std::string::npos, manifest.find("\norder 0")) << manifest;
  // Replayed against a fresh host with the same bug: it crashes again, at
  // the same stack.
  out = RunCommand(
      "CAPSA_FUZZ_INJECT=crash " + Capsa() + " fuzz --replay " + files[0], &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  EXPECT_NE(std::string::npos, out.find("in arrival order")) << out;
  EXPECT_NE(std::string::npos, out.find("; FAILURE (host")) << out;
  EXPECT_NE(std::string::npos, out.find("replay: same stack as the saved"))
      << out;
  // The same records against a host without the bug: served, no failure.
  out = RunCommand(Capsa() + " fuzz --replay " + files[0], &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  EXPECT_NE(std::string::npos, out.find("host survived")) << out;
  RemoveTree(dir);
}

// Two bugs at two stacks (a null write and an abort): two reproducers,
// however often each is met; --out names their directory.
TEST(FuzzCampaign, CrashesAreDeduplicatedByStack) {
  char dir[] = "/tmp/capsa-fuzz-dedup-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int st = -1;
  std::string out = RunCommand(
      std::string("CAPSA_FUZZ_INJECT=crash,abort ") + Capsa() +
          " fuzz --seconds 90 --stop-after-unique 2 --seed 3 " + "--out " + dir,
      &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  unsigned long failures = Count(out, "failures ");
  EXPECT_EQ(2u, Count(out, "unique ")) << out;
  EXPECT_GE(failures, 2u) << out;
  std::vector<std::string> files = Reproducers(dir);
  EXPECT_EQ(2u, files.size()) << out;
  for (const std::string &f : files)
    EXPECT_NE(std::string::npos, out.find("reproducer saved: " + f)) << out;
  RemoveTree(dir);
}

// --minimize drops renderers and records while the replay still fails at
// the same stack, writes FILE.min, and FILE.min still crashes the host.
TEST(FuzzCampaign, MinimizeShrinksAReproducerThatStillCrashes) {
  char dir[] = "/tmp/capsa-fuzz-min-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int st = -1;
  std::string out = RunCommand(
      std::string("CAPSA_FUZZ_INJECT=crash ") + Capsa() +
          " fuzz --seconds 60 --stop-after-unique 1 --seed 3 --out " + dir,
      &st);
  std::vector<std::string> files = Reproducers(dir);
  ASSERT_EQ(1u, files.size()) << out;
  out = RunCommand("CAPSA_FUZZ_INJECT=crash " + Capsa() + " fuzz --minimize " +
                       files[0] + " --seconds 12",
                   &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  size_t at = out.find("minimized: records ");
  ASSERT_NE(std::string::npos, at) << out;
  unsigned long before = 0, after = 0;
  ASSERT_EQ(2, sscanf(out.c_str() + at, "minimized: records %lu -> %lu",
                      &before, &after))
      << out;
  EXPECT_LT(after, before) << out;
  EXPECT_GT(after, 0u) << out;
  EXPECT_NE(std::string::npos, out.find("renderers ")) << out;
  std::string min = files[0] + ".min";
  out = RunCommand(
      "CAPSA_FUZZ_INJECT=crash " + Capsa() + " fuzz --replay " + min, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  EXPECT_NE(std::string::npos,
            out.find("replaying " + std::to_string(after) + " records"))
      << out;
  EXPECT_NE(std::string::npos, out.find("replay: same stack as the saved"))
      << out;
  // Nothing to minimise in a reproducer that does not fail.
  out = RunCommand(Capsa() + " fuzz --minimize " + min, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  EXPECT_NE(std::string::npos, out.find("does not fail when replayed")) << out;
  RemoveTree(dir);
}

// A host that stops making progress (injected hang): the watchdog ends it
// after --hang-seconds, names it by where it hung, saves a reproducer once
// and goes on.
TEST(FuzzCampaign, HostHangIsAFailureWithAReproducer) {
  char dir[] = "/tmp/capsa-fuzz-hang-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int st = -1;
  std::string out =
      RunCommand(std::string("cd ") + dir + " && CAPSA_FUZZ_INJECT=hang " +
                     Capsa() + " fuzz --seconds 3 --seed 9 --hang-seconds 2",
                 &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  EXPECT_NE(std::string::npos, out.find("FAILURE (host hang: no progress)"))
      << out;
  // Its stack is where the host was stuck (the watcher's SIGABRT).
  size_t key = out.find(": hang ");
  ASSERT_NE(std::string::npos, key) << out;
  EXPECT_NE(std::string::npos, out.substr(key, 80).find("+0x")) << out;
  EXPECT_EQ(1u, Count(out, "unique ")) << out;
  std::vector<std::string> files = Reproducers(dir);
  ASSERT_EQ(1u, files.size()) << out;
  EXPECT_NE(std::string::npos, files[0].find("/hang-")) << files[0];
  RemoveTree(dir);
}

TEST(FuzzCampaign, RecordsAreDeterministicBySeed) {
  uint8_t a[CAPSA_IPC_MAX_MESSAGE + 64], b[CAPSA_IPC_MAX_MESSAGE + 64];
  int ka[16], kb[16], na = 0, nb = 0;
  int differ = 0;
  for (unsigned round = 0; round < CAPSA_FUZZ_ROUNDS; round++) {
    int la = capsa_fuzz_build(7, round, a, sizeof a, ka, &na, 12);
    int lb = capsa_fuzz_build(7, round, b, sizeof b, kb, &nb, 12);
    ASSERT_GT(la, 0);
    ASSERT_EQ(la, lb);
    EXPECT_EQ(0, memcmp(a, b, (size_t)la));
    ASSERT_EQ(na, nb);
    EXPECT_EQ(0, memcmp(ka, kb, sizeof(int) * (size_t)na));
    int lc = capsa_fuzz_build(8, round, b, sizeof b, kb, &nb, 12);
    differ += lc != la || memcmp(a, b, (size_t)la) != 0;
  }
  EXPECT_GT(differ, CAPSA_FUZZ_ROUNDS / 2) << "another seed, other records";
  // Any seed builds every round (the renderer must not crash on its own).
  for (uint64_t seed = 0; seed < 2000; seed++)
    for (unsigned round = 0; round < CAPSA_FUZZ_ROUNDS; round++)
      ASSERT_GT(capsa_fuzz_build(capsa_fuzz_renderer_seed(3, seed), round, a,
                                 sizeof a, ka, &na, 12),
                0);
  EXPECT_NE(capsa_fuzz_renderer_seed(1, 0), capsa_fuzz_renderer_seed(1, 1));
  EXPECT_EQ(capsa_fuzz_renderer_seed(1, 5), capsa_fuzz_renderer_seed(1, 5));
}

}  // namespace
