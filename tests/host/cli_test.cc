// The capsa CLI end to end (demo, top, doctor, what the commands share):
// the real binary, real renderers. The demo kinds' own commands are tested
// in their folders (demos/gzip/gzip_cli_test.cc, demos/page/page_cli_test.cc).
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sandbox/features.h"
#include "tests/harness/paths.h"
#include "tests/host/cli_fixture.h"

namespace {

using capsa_cli_test::Capsa;
using capsa_cli_test::CliTest;
using capsa_cli_test::Sh;
using capsa_cli_test::Slurp;

// A FIFO named as FILE would block open(2) and read forever with no writer:
// refused at once, naming it (timeout(1) turns a hang into status 124).
TEST_F(CliTest, FifoAsFileIsRefusedNotWaitedOn) {
  std::string fifo = dir_ + "/fifo", err = dir_ + "/err";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  const char *cmds[] = {" gzip '", " gunzip -c '", " render '"};
  for (const char *c : cmds) {
    std::string tail =
        std::string(c) == " render '" ? "' -o '" + dir_ + "/x.png'" : "'";
    EXPECT_EQ(
        1, Sh("timeout 20 " + Capsa() + c + fifo + tail + " 2>'" + err + "'"))
        << c;
    EXPECT_NE(std::string::npos, Slurp(err).find(fifo + ": not a regular file"))
        << Slurp(err);
  }
  EXPECT_NE(0, access((dir_ + "/x.png").c_str(), F_OK));
  EXPECT_NE(0, access((fifo + ".gz").c_str(), F_OK));
  // A directory likewise; stdin from a pipe stays fine (the first test).
  EXPECT_EQ(1, Sh(Capsa() + " gzip '" + dir_ + "' 2>'" + err + "'"));
  EXPECT_NE(std::string::npos, Slurp(err).find("not a regular file"));
}

// doctor --json carries the facts the text shows, with the same values:
// the renderer-limit mechanism and why, the i386 entry's detail, Landlock's
// ABI and the seccomp policy's size.
TEST_F(CliTest, DoctorJsonSaysWhatTheTextSays) {
  std::string text = dir_ + "/doctor.txt", json = dir_ + "/doctor.json";
  int rc_text = Sh(Capsa() + " doctor > '" + text + "' 2>&1");
  int rc_json = Sh(Capsa() + " doctor --json > '" + json + "' 2>/dev/null");
  EXPECT_EQ(rc_text, rc_json);
  std::string t = Slurp(text), j = Slurp(json);
  auto text_of = [&](const std::string &label) {
    size_t at = t.find("  " + label);
    if (at == std::string::npos) return std::string();
    size_t from = t.find_first_not_of(' ', at + 2 + label.size());
    return t.substr(from, t.find('\n', from) - from);
  };
  auto json_str = [&](const std::string &key) {
    size_t at = j.find("\"" + key + "\":\"");
    if (at == std::string::npos) return std::string("(absent)");
    at += key.size() + 4;
    return j.substr(at, j.find('"', at) - at);
  };
  std::string limits = text_of("renderer limits");
  ASSERT_FALSE(limits.empty()) << t;
  std::string mech = json_str("renderer_limits");
  EXPECT_EQ(0u, limits.find(mech)) << limits << " vs " << mech;
  if (mech == "rlimits") {  // the text's parenthesis carries json's "why"
    EXPECT_NE(std::string::npos, limits.find(json_str("why"))) << j;
  }
  // The text adds " (filtered)" where the entry exists (json: i386_entry).
  bool i386 = j.find("\"i386_entry\":true") != std::string::npos;
  EXPECT_EQ(text_of("i386 entry (int 0x80)"),
            json_str("i386_detail") + (i386 ? " (filtered)" : ""));
  std::string abi = text_of("Landlock ABI");
  EXPECT_NE(std::string::npos, j.find("\"landlock_abi\":" + abi)) << abi;
  size_t rows = t.find(" policy rows");
  ASSERT_NE(std::string::npos, rows) << t;
  std::string n =
      t.substr(t.rfind('(', rows) + 1, rows - t.rfind('(', rows) - 1);
  EXPECT_NE(std::string::npos, j.find("\"seccomp_rows\":" + n)) << n;
}

TEST_F(CliTest, DemoRunsAllThreeRenderersAndPasses) {
  std::string out = dir_ + "/demo.txt";
  int rc = Sh(Capsa() + " demo --out '" + dir_ + "' > '" + out + "' 2>&1");
  std::string text = Slurp(out);
  EXPECT_EQ(0, rc) << text;
  EXPECT_NE(std::string::npos, text.find("page ")) << text;
  EXPECT_NE(std::string::npos, text.find("gzip ")) << text;
  // On a kernel without an attacked entry (i386, x32) the count of attacks
  // whose target is absent is given: "none escaped (1 absent in this kernel)".
  EXPECT_TRUE(std::regex_search(
      text, std::regex("none escaped( \\([0-9]+ absent in this kernel\\))?; "
                       "killed for bad message")))
      << text;
  EXPECT_EQ(0, access((dir_ + "/page.png").c_str(), R_OK));
}

// `capsa top`: the task manager's table for the demo host (2 page with a
// spare, 1 gzip), sampled twice: each sample lists the zygote the header
// names, three READY renderers of the two kinds, and the spare, each a
// distinct pid with memory figures and their source.
TEST_F(CliTest, TopListsTheDemoHostsRenderersTwice) {
  std::string out = dir_ + "/top.txt";
  int rc = Sh(Capsa() + " top -n 2 --interval 300 > '" + out + "' 2>&1");
  std::string text = Slurp(out);
  ASSERT_EQ(0, rc) << text;
  std::regex header(
      R"(capsa top: ([45]) processes, zygote ([0-9]+) \(sample ([12]) of 2\))");
  std::regex columns(
      R"(^ +PID  KIND +STATE +UPTIME RESTARTS +USS +PSS +CPU  MEM-SOURCE$)");
  std::regex row(
      R"(^ *([0-9]+)  (\S+) +(\S+) +([0-9.]+)s +([0-9]+) +([0-9.]+[KMG]|-) +)"
      R"(([0-9.]+[KMG]|-) +([0-9.]+)s  (smaps_rollup|cgroup|statm)$)");
  std::istringstream in(text);
  std::string line, zygote, processes;
  int samples = 0, columns_seen = 0;
  std::map<std::string, int> seen;  // "kind state" per sample
  std::set<std::string> pids;
  auto check_sample = [&] {
    if (samples == 0) return;
    SCOPED_TRACE("sample " + std::to_string(samples));
    EXPECT_EQ(1, seen["zygote idle"]) << text;
    EXPECT_EQ(2, seen["page ready"]) << text;
    EXPECT_EQ(1, seen["gzip ready"]) << text;
    // The page kind's spare, when the zygote has forked it by then (top
    // waits for it, boundedly; on a loaded machine it may come later: the
    // TaskManager suite checks what a listed spare is).
    EXPECT_GE(1, seen["page spare"]) << text;
    EXPECT_EQ(4u + (unsigned)seen["page spare"], pids.size())
        << "distinct pids: " << text;
    EXPECT_EQ(std::to_string(4 + seen["page spare"]), processes) << text;
  };
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, header)) {
      check_sample();
      samples++;
      EXPECT_EQ(std::to_string(samples), m[3].str()) << text;
      processes = m[1];
      zygote = m[2];
      seen.clear();
      pids.clear();
    } else if (std::regex_search(line, columns)) {
      columns_seen++;
    } else if (std::regex_search(line, m, row)) {
      seen[m[2].str() + " " + m[3].str()]++;
      pids.insert(m[1]);
      if (m[2] == "zygote") {
        EXPECT_EQ(zygote, m[1].str()) << "the header's zygote: " << text;
      }
      EXPECT_EQ("0", m[5].str()) << "no restarts: " << line;
    } else if (!line.empty()) {
      ADD_FAILURE() << "unexpected line: '" << line << "' in\n" << text;
    }
  }
  check_sample();
  EXPECT_EQ(2, samples) << text;
  EXPECT_EQ(2, columns_seen) << text;
}

TEST_F(CliTest, TopRefusesABadCountNamingTheOption) {
  std::string err = dir_ + "/err";
  EXPECT_EQ(2, Sh(Capsa() + " top -n 0 > /dev/null 2>'" + err + "'"));
  EXPECT_NE(std::string::npos,
            Slurp(err).find("-n wants a count from 1 to 100000, not '0'"))
      << Slurp(err);
  EXPECT_EQ(2, Sh(Capsa() + " top --interval x > /dev/null 2>'" + err + "'"));
  EXPECT_NE(std::string::npos, Slurp(err).find("--interval wants milliseconds"))
      << Slurp(err);
  EXPECT_EQ(0, Sh(Capsa() + " --help | grep -q '^  top '"));
}

// CAPSA_TRACE=1 reaches the renderers: each violation line is decoded and
// labelled in the renderer, and the CLI adds the kind and the host's pid.
TEST_F(CliTest, TracedRenderersSayWhoTheyAreAndWhatTheyTried) {
  if (!capsa_features_get()->seccomp_trap)
    GTEST_SKIP() << "no SECCOMP_RET_TRAP: violations cannot be traced here";
  std::string out = dir_ + "/demo.txt";
  EXPECT_EQ(0, Sh("CAPSA_TRACE=1 " + Capsa() + " demo --out '" + dir_ +
                  "' > /dev/null 2>'" + out + "'"));
  std::string text = Slurp(out);
  // The hostile renderer's first attack, as its line arrives on the CLI.
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(capsa: renderer hostile pid [0-9]+ stderr: capsa: )"
                       R"(capmode violation: openat\(AT_FDCWD, "/etc/passwd", )"
                       R"(O_RDONLY\|O_CLOEXEC\) at 0x[0-9a-f]+ layer=seccomp )"
                       R"(-> ECAPMODE \[pid [0-9]+ renderer hostile\])")))
      << text;
}

}  // namespace
