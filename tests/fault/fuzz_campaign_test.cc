// A short live `capsa fuzz` campaign of this out dir's capsa (the asan pass
// runs the asan build's), its reproducer replay, and the determinism the
// replay relies on.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "renderer/fuzz/fuzz_renderer.h"
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
  unlink(path);
  out = RunCommand(Capsa() + " fuzz --seconds 0", &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << out;
}

// A host that crashes mid-campaign (injected): exit 1, the failure named,
// a reproducer with the last renderer seeds, which then replays.
TEST(FuzzCampaign, HostCrashIsAFailureWithAReproducer) {
  char dir[] = "/tmp/capsa-fuzz-crash-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int st = -1;
  std::string out =
      RunCommand(std::string("cd ") + dir + " && CAPSA_FUZZ_INJECT=crash " +
                     Capsa() + " fuzz --seconds 5 --seed 9",
                 &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  // A signal, or under ASan its report and exit code.
  EXPECT_TRUE(
      out.find("FAILURE (host crash: signal 11)") != std::string::npos ||
      out.find("FAILURE (host exited 1 mid-campaign)") != std::string::npos)
      << out;
  size_t at = out.find("reproducer saved: ");
  ASSERT_NE(std::string::npos, at) << out;
  std::string file = out.substr(at + 18);
  file = file.substr(0, file.find('\n'));
  std::string path = std::string(dir) + "/" + file;
  out = RunCommand(Capsa() + " fuzz --replay " + path, &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  EXPECT_NE(std::string::npos, out.find("replaying renderer seed")) << out;
  EXPECT_NE(std::string::npos, out.find(" and ")) << "both seeds: " << out;
  EXPECT_NE(std::string::npos, out.find("host survived")) << out;
  unlink(path.c_str());
  rmdir(dir);
}

// A host that stops making progress (injected hang): the watchdog ends it
// after --hang-seconds and saves a reproducer.
TEST(FuzzCampaign, HostHangIsAFailureWithAReproducer) {
  char dir[] = "/tmp/capsa-fuzz-hang-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  int st = -1;
  std::string out =
      RunCommand(std::string("cd ") + dir + " && CAPSA_FUZZ_INJECT=hang " +
                     Capsa() + " fuzz --seconds 30 --seed 9 --hang-seconds 2",
                 &st);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << out;
  EXPECT_NE(std::string::npos, out.find("FAILURE (host hang: no progress)"))
      << out;
  size_t at = out.find("reproducer saved: ");
  ASSERT_NE(std::string::npos, at) << out;
  std::string file = out.substr(at + 18);
  file = file.substr(0, file.find('\n'));
  EXPECT_EQ(0, unlink((std::string(dir) + "/" + file).c_str())) << file;
  rmdir(dir);
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
