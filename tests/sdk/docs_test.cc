// Docs that cannot rot (docs/sdk.md, "Docs are tests"). From a staged
// install of the SDK (tests/sdk/sdk_install.h) and pkg-config, as an
// embedder builds:
//   - every ```c block of README.md and docs/*.md that is a whole program
//     (marked `<!-- doc-test: program NAME -->`) is built and run, as this
//     user and, when that is root, as uid 65534, and what it prints must be
//     what the doc's output block (`<!-- doc-test: output NAME -->`, the
//     next fenced block) shows;
//   - every other ```c block compiles and links as a fragment;
//   - every public header (build/sdk.py HEADERS) opens with an example that
//     compiles and links the same way.
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sdk/doc_blocks.h"
#include "tests/sdk/sdk_install.h"

namespace {

using capsa_docs::DocBlock;
using capsa_sdk::kRoot;
using capsa_sdk::Q;
using capsa_sdk::ReadFile;
using capsa_sdk::Sh;

// Public headers whose opening example does not compile yet, by repository
// path: each is to be rewritten and then taken off this list. The test
// fails when a header listed here compiles, so the list stays exact.
const std::set<std::string> kHeaderExamplesToConvert = {};

// What a fragment or a header example may use without including it, as if
// pasted into a C file that includes the usual libc headers.
const char kPrelude[] =
    "#include <errno.h>\n"
    "#include <fcntl.h>\n"
    "#include <signal.h>\n"
    "#include <stdbool.h>\n"
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include <sys/mman.h>\n"
    "#include <unistd.h>\n";

// Schemas whose generated bindings examples may include, with the name
// they include them by (capsa-idl's INCLUDE_AS).
const struct {
  const char *schema, *include_as;
} kSchemas[] = {
    {"host/examples/convert.fbs", "host/examples/convert.capsa.h"},
    {"host/examples/tab.fbs", "host/examples/tab.capsa.h"},
    {"host/examples/thumb.fbs", "thumb.capsa.h"},
};

const char kCFlags[] = "-std=gnu17 -Wall -Wextra -Werror";

std::vector<std::string> DocFiles() {
  std::vector<std::string> files = {"README.md"};
  glob_t g;
  if (glob((kRoot + "/docs/*.md").c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; i++)
      files.push_back(std::string(g.gl_pathv[i]).substr(kRoot.size() + 1));
    globfree(&g);
  }
  return files;
}

// The fenced blocks of every doc; parse errors in *errors.
std::vector<DocBlock> AllBlocks(std::vector<std::string> *errors) {
  std::vector<DocBlock> all;
  for (const std::string &f : DocFiles()) {
    std::vector<DocBlock> b =
        capsa_docs::FencedBlocks(ReadFile(kRoot + "/" + f), f, errors);
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

// `#line` for a compiler message that points into the doc or header.
std::string Line(int line, const std::string &file) {
  return "#line " + std::to_string(line) + " \"" + file + "\"\n";
}

// A C file to compile: a program (linked into an executable) or a fragment
// (linked into a shared object with no undefined symbol: every function it
// calls exists in libcapsa, libuv or libc).
struct Unit {
  std::string name;   // file name stem, unique
  std::string where;  // for messages
  std::string source;
  bool program;
  int rc = -1;
  std::string log;
};

Unit MakeUnit(const std::string &name, const std::string &where,
              const std::string &source, bool program) {
  Unit u;
  u.name = name;
  u.where = where;
  u.source = source;
  u.program = program;
  return u;
}

class Docs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing = capsa_sdk::MissingForSdkTests(), why, out;
    if (!missing.empty()) GTEST_SKIP() << missing;
    if (Sh("command -v flatc", &out) != 0)
      GTEST_SKIP() << "flatc not installed (capsa-idl needs it)";
    ASSERT_FALSE(tmp_.path.empty());
    prefix_ = tmp_.path + "/prefix";
    gen_ = tmp_.path + "/gen";
    ASSERT_TRUE(capsa_sdk::StageInstall(tmp_.path, prefix_, &why)) << why;
    ASSERT_EQ(0,
              Sh(capsa_sdk::PkgConfig(prefix_) + "--cflags --libs capsa", &pc_))
        << pc_;
    while (!pc_.empty() && (pc_.back() == '\n' || pc_.back() == ' '))
      pc_.pop_back();
    // The examples' interfaces, generated and compiled as an embedder's
    // build does with the installed capsa-idl.
    for (const auto &s : kSchemas) {
      std::string inc = s.include_as;
      std::string dir = gen_ + "/" + inc.substr(0, inc.rfind('/') + 1);
      std::string c = dir + inc.substr(inc.rfind('/') + 1);
      c = c.substr(0, c.size() - 1) + "c";  // NAME.capsa.c
      std::string cmd = Q(prefix_ + "/bin/capsa-idl") + " " +
                        Q(kRoot + "/" + s.schema) + " " + Q(dir) + " " +
                        Q(inc) + " && cc -c -fPIC " + kCFlags + " -I" +
                        Q(gen_) + " " + Q(c) + " -o " + Q(c + ".o") + " " + pc_;
      ASSERT_EQ(0, Sh(cmd, &out)) << cmd << "\n" << out;
      objects_ += " " + Q(c + ".o");
    }
  }

  // Compiles every unit, two at a time (the machine has two cores); each
  // unit's exit status and compiler output in its rc and log.
  void Compile(std::vector<Unit> *units) {
    std::string list, out;
    for (Unit &u : *units) {
      std::string base = tmp_.path + "/" + u.name;
      std::ofstream(base + ".c") << u.source;
      bool gen = u.source.find(".capsa.h\"") != std::string::npos;
      std::string cmd = "cc " + std::string(kCFlags) + " -I" + Q(gen_) + " " +
                        Q(base + ".c") + (gen ? objects_ : "") +
                        (u.program ? " -o " + Q(base)
                                   : " -fPIC -shared -Wl,--no-undefined -o " +
                                         Q(base + ".so")) +
                        " " + pc_ + " -Wl,-rpath," + prefix_ + "/lib";
      std::ofstream(base + ".sh")
          << cmd << " >" << Q(base + ".log") << " 2>&1; echo $? >"
          << Q(base + ".rc") << "\n";
      list += Q(base + ".sh") + " ";
    }
    ASSERT_EQ(0, Sh("printf '%s\\n' " + list + " | xargs -P 2 -n 1 sh", &out))
        << out;
    for (Unit &u : *units) {
      std::string base = tmp_.path + "/" + u.name;
      u.log = ReadFile(base + ".log");
      u.rc = atoi(ReadFile(base + ".rc").c_str());
      if (ReadFile(base + ".rc").empty()) u.rc = -1;
      chmod(base.c_str(), 0755);
    }
  }

  capsa_sdk::TempDir tmp_;
  std::string prefix_, gen_, pc_, objects_;
};

// The structure the convention asks for, before anything is compiled.
TEST(DocConvention, EveryCBlockIsAProgramWithItsOutputOrAFragment) {
  std::vector<std::string> errors;
  std::vector<DocBlock> blocks = AllBlocks(&errors);
  for (const std::string &e : errors) ADD_FAILURE() << e;
  int programs = 0, fragments = 0;
  for (size_t i = 0; i < blocks.size(); i++) {
    const DocBlock &b = blocks[i];
    bool c = b.info == "c";
    if (b.role == DocBlock::kProgram) {
      programs++;
      EXPECT_TRUE(c) << b.where << ": program " << b.name << " is not ```c";
      EXPECT_TRUE(capsa_docs::DefinesMain(b.text))
          << b.where << ": program " << b.name << " has no main()";
      ASSERT_LT(i + 1, blocks.size())
          << b.where << ": program " << b.name << " has no output block";
      EXPECT_TRUE(blocks[i + 1].role == DocBlock::kOutput &&
                  blocks[i + 1].name == b.name)
          << b.where << ": the block after program " << b.name
          << " must be marked `<!-- doc-test: output " << b.name << " -->`";
    } else if (b.role == DocBlock::kOutput) {
      EXPECT_TRUE(i > 0 && blocks[i - 1].role == DocBlock::kProgram &&
                  blocks[i - 1].name == b.name)
          << b.where << ": output " << b.name << " does not follow its program";
    } else if (c) {
      fragments++;
      EXPECT_FALSE(capsa_docs::DefinesMain(b.text))
          << b.where << ": defines main() but is not marked "
          << "`<!-- doc-test: program NAME -->`";
    }
  }
  std::set<std::string> names;
  for (const DocBlock &b : blocks) {
    if (b.role == DocBlock::kProgram) {
      EXPECT_TRUE(names.insert(b.name).second)
          << b.where << ": program name " << b.name << " used twice";
    }
  }
  EXPECT_GE(programs, 1);
  EXPECT_GE(fragments, 1);
}

TEST_F(Docs, ProgramsBuildFromTheInstallAndPrintWhatTheDocShows) {
  std::vector<std::string> errors;
  std::vector<DocBlock> blocks = AllBlocks(&errors);
  ASSERT_TRUE(errors.empty()) << errors[0];
  std::vector<Unit> units;
  std::map<std::string, std::string> shown;  // name -> output block
  for (size_t i = 0; i + 1 < blocks.size(); i++) {
    if (blocks[i].role != DocBlock::kProgram) continue;
    // Verbatim: the reader copies the block as it is into prog.c.
    units.push_back(
        MakeUnit("prog_" + blocks[i].name, blocks[i].where,
                 Line(blocks[i].first_line,
                      blocks[i].where.substr(0, blocks[i].where.find(':'))) +
                     blocks[i].text,
                 true));
    shown[blocks[i].name] = blocks[i + 1].text;
  }
  ASSERT_FALSE(units.empty());
  Compile(&units);
  std::vector<std::string> runs = {""};
  if (geteuid() == 0) runs.push_back(capsa_sdk::kAsNobody);
  for (const Unit &u : units) {
    EXPECT_EQ(0, u.rc) << u.where << ": does not build:\n" << u.log;
    if (u.rc != 0) continue;
    std::string name = u.name.substr(5);
    for (const std::string &as : runs) {
      // Standard output only: what the output block shows.
      std::string out, err = tmp_.path + "/" + u.name + ".stderr";
      std::string cmd = "cd " + Q(tmp_.path) + " && timeout 60 " + as +
                        Q(tmp_.path + "/" + u.name) + " 2>" + Q(err);
      int rc = Sh(cmd, &out);
      EXPECT_EQ(0, rc) << u.where << ": " << cmd << "\nstdout:\n"
                       << out << "stderr:\n"
                       << ReadFile(err);
      std::string why;
      EXPECT_TRUE(capsa_docs::OutputMatches(shown[name], out, &why))
          << u.where << ": program " << name << (as.empty() ? "" : " as 65534")
          << " printed what its output block does not show; " << why
          << "stderr:\n"
          << ReadFile(err);
    }
  }
}

TEST_F(Docs, FragmentsCompileAgainstTheInstall) {
  std::vector<std::string> errors;
  std::vector<DocBlock> blocks = AllBlocks(&errors);
  ASSERT_TRUE(errors.empty()) << errors[0];
  std::vector<Unit> units;
  for (const DocBlock &b : blocks) {
    if (b.info != "c" || b.role != DocBlock::kPlain) continue;
    std::string file = b.where.substr(0, b.where.find(':'));
    units.push_back(
        MakeUnit("fragment_" + std::to_string(units.size()), b.where,
                 kPrelude + Line(b.first_line, file) + b.text, false));
  }
  ASSERT_FALSE(units.empty());
  Compile(&units);
  for (const Unit &u : units)
    EXPECT_EQ(0, u.rc) << u.where << ": this fragment does not compile "
                       << "against the installed SDK:\n"
                       << u.log;
}

TEST_F(Docs, EveryPublicHeaderOpensWithAnExampleThatCompiles) {
  // build/sdk.py HEADERS: repository path -> installed name.
  std::string out;
  ASSERT_EQ(0, Sh("/usr/bin/python3 -c 'import sys; sys.path.insert(0, "
                  "sys.argv[1]); import sdk\n"
                  "for k, v in sorted(sdk.HEADERS.items()): print(k, v)' " +
                      Q(kRoot + "/build"),
                  &out))
      << out;
  std::vector<Unit> units;
  std::vector<std::string> repo;
  for (const std::string &l : capsa_sdk::Lines(out)) {
    std::string src = l.substr(0, l.find(' ')),
                name = l.substr(l.find(' ') + 1);
    std::string installed = prefix_ + "/include/" + name;
    int first = 0;
    std::string example =
        capsa_docs::HeaderExample(ReadFile(installed), &first);
    EXPECT_FALSE(example.empty())
        << src << " (installed as <" << name << ">) does not open with an "
        << "example (a comment whose lines indented by three spaces are C)";
    if (example.empty()) continue;
    std::string inc =
        name.rfind("capsa/compat/", 0) == 0 ? name.substr(13) : name;
    repo.push_back(src);
    units.push_back(MakeUnit(
        "header_" + std::to_string(units.size()), src,
        kPrelude + ("#include <" + inc + ">\n") + Line(first, src) + example,
        false));
  }
  EXPECT_GE(units.size(), 15u);
  Compile(&units);
  for (size_t i = 0; i < units.size(); i++) {
    if (kHeaderExamplesToConvert.count(repo[i])) {
      EXPECT_NE(0, units[i].rc)
          << repo[i] << "'s opening example compiles now: take it off "
          << "kHeaderExamplesToConvert in " << __FILE__;
      continue;
    }
    EXPECT_EQ(0, units[i].rc)
        << repo[i] << ": its opening example does not compile against the "
        << "installed SDK:\n"
        << units[i].log;
  }
  // <capsa/interface.h> shows the schema the examples are built with.
  std::string iface = ReadFile(prefix_ + "/include/capsa/interface.h");
  for (const std::string &l :
       capsa_sdk::Lines(ReadFile(kRoot + "/host/examples/thumb.fbs"))) {
    if (l.rfind("//", 0) == 0) continue;
    EXPECT_NE(std::string::npos, iface.find("//   //   " + l + "\n"))
        << "<capsa/interface.h>'s example does not show this line of "
        << "host/examples/thumb.fbs: " << l;
  }
  for (const std::string &h : kHeaderExamplesToConvert)
    EXPECT_NE(repo.end(), std::find(repo.begin(), repo.end(), h))
        << h << " is in kHeaderExamplesToConvert but is not a public header "
        << "with an opening example";
}

}  // namespace
