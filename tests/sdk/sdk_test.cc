// The installed SDK, as an embedder outside the tree meets it: each test
// runs `./dev install` with DESTDIR into a temporary directory, moves the
// staged tree to the prefix it was installed for (as a package manager
// unpacks a package), and then uses nothing but those files and
// pkg-config. What it checks:
//   - only the public headers are installed, as <capsa/...>, and each one
//     compiles on its own;
//   - libcapsa.so.0.1.0 with its soname links, no run path, no libpng;
//     capsa.pc says Requires: libuv and the private rest;
//   - libcapsa.so exports only the public API, versioned (no capsa__, no
//     C++);
//   - the README's embedding example (the very text of README.md) and a
//     FreeBSD Capsicum program build against the install, shared and
//     static, and run: the example spawns a renderer and prints its reply,
//     as the running user and (when that is root) as uid 65534.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/version.h"
#include "tests/sdk/sdk_install.h"

namespace {

using capsa_sdk::kAsNobody;
using capsa_sdk::kRoot;
using capsa_sdk::Lines;
using capsa_sdk::Q;
using capsa_sdk::ReadFile;
using capsa_sdk::Sh;
using capsa_sdk::TempDir;

constexpr const char *kVersion = CAPSA_VERSION_STRING;  // libcapsa.so.VERSION

class Sdk : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing = capsa_sdk::MissingForSdkTests(), why;
    if (!missing.empty()) GTEST_SKIP() << missing;
    ASSERT_FALSE(tmp_.path.empty());
    prefix_ = tmp_.path + "/prefix";
    ASSERT_TRUE(capsa_sdk::StageInstall(tmp_.path, prefix_, &why)) << why;
    pc_ = capsa_sdk::PkgConfig(prefix_);
  }

  // pkg-config's answer about the installed SDK.
  std::string Pc(const std::string &args) {
    std::string out;
    EXPECT_EQ(0, Sh(pc_ + args, &out)) << args << ": " << out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    return out;
  }

  // Compiles `src` outside the tree into tmp/`name`, with `flags` (from
  // pkg-config) after it, as a user's Makefile does.
  std::string Build(const std::string &src, const std::string &name,
                    const std::string &flags) {
    std::string exe = tmp_.path + "/" + name, out;
    std::string cmd = "cd " + Q(tmp_.path) + " && cc -Wall -Werror " + Q(src) +
                      " -o " + Q(exe) + " " + flags;
    EXPECT_EQ(0, Sh(cmd, &out)) << cmd << "\n" << out;
    chmod(exe.c_str(), 0755);
    return exe;
  }

  // Runs `exe` as this user and, when that is root, as uid/gid 65534.
  // Each run must exit 0 and print `expect`.
  void RunAsEveryone(const std::string &exe, const std::string &expect) {
    std::vector<std::string> runs = {""};
    if (geteuid() == 0) runs.push_back(kAsNobody);
    for (const std::string &as : runs) {
      std::string out;
      std::string cmd = "cd " + Q(tmp_.path) + " && timeout 60 " + as + Q(exe);
      int rc = Sh(cmd, &out);
      EXPECT_EQ(0, rc) << cmd << "\n" << out;
      EXPECT_NE(std::string::npos, out.find(expect))
          << cmd << "\nexpected \"" << expect << "\" in:\n"
          << out;
    }
  }

  std::string Needed(const std::string &exe) {
    std::string out;
    EXPECT_EQ(0, Sh("readelf -d " + Q(exe) + " | grep NEEDED", &out)) << out;
    return out;
  }

  // The README's embedding example: the first ```c block after its
  // "## Embedding" heading, which must be host/examples/embed.c (the
  // in-tree build's copy) from its first #include on.
  std::string ReadmeExample() {
    std::string readme = ReadFile(kRoot + "/README.md");
    size_t h = readme.find("\n## Embedding");
    EXPECT_NE(std::string::npos, h);
    size_t b = readme.find("\n```c\n", h);
    EXPECT_NE(std::string::npos, b);
    b += 6;
    size_t e = readme.find("\n```\n", b);
    EXPECT_NE(std::string::npos, e);
    std::string code = readme.substr(b, e + 1 - b);
    std::string tree = ReadFile(kRoot + "/host/examples/embed.c");
    size_t first = tree.find("#include");
    EXPECT_EQ(tree.substr(first), code)
        << "README.md's embedding example differs from host/examples/embed.c";
    std::string path = tmp_.path + "/prog.c";
    std::ofstream(path) << code;
    return path;
  }

  TempDir tmp_;
  std::string prefix_, pc_;
};

TEST_F(Sdk, InstallsOnlyThePublicHeadersAndEachCompilesAlone) {
  std::string out;
  // Exactly the SDK's headers (build/sdk.py HEADERS plus the umbrella).
  ASSERT_EQ(
      0, Sh("/usr/bin/python3 " + Q(kRoot + "/build/sdk.py") + " list", &out));
  std::vector<std::string> want = Lines(out);
  ASSERT_EQ(0, Sh("cd " + Q(prefix_ + "/include") +
                      " && find . -type f | sed 's|^\\./||' | sort",
                  &out));
  std::vector<std::string> got = Lines(out);
  EXPECT_EQ(want, got);
  EXPECT_GE(got.size(), 15u);
  for (const char *internal :
       {"host_internal.h", "zygote.h", "fork_guard.h", "channel_core.h",
        "message_table.h", "codec.h", "seccomp.h", "landlock.h", "text.h"})
    for (const std::string &h : got)
      EXPECT_EQ(std::string::npos, h.find(internal)) << h;
  // Everything is under <capsa/...>: no generic host/, ipc/, sandbox/.
  for (const std::string &h : got) EXPECT_EQ(0u, h.rfind("capsa/", 0)) << h;
  EXPECT_NE(0,
            Sh("grep -rn '^ *# *include \"' " + Q(prefix_ + "/include"), &out))
      << "quoted includes left in installed headers:\n"
      << out;

  // Each header compiles on its own from the install, in C and C++.
  std::string cflags = Pc("--cflags capsa");
  for (const std::string &h : want) {
    std::string inc = h.rfind("capsa/compat/", 0) == 0 ? h.substr(13) : h;
    for (const char *lang : {"c -std=gnu17", "c++ -std=gnu++17"}) {
      std::string cmd = "printf '#include <%s>\\nint capsa_sdk_probe;\\n' " +
                        Q(inc) + " | cc -x " + lang +
                        " -Wall -Wextra -Werror -fsyntax-only " + cflags + " -";
      EXPECT_EQ(0, Sh(cmd, &out)) << inc << " (" << lang << ")\n" << out;
    }
  }
}

TEST_F(Sdk, LibrariesAndPkgConfigAreWhatAPackagerExpects) {
  std::string lib = prefix_ + "/lib", out;
  std::string real = std::string("libcapsa.so.") + kVersion;
  // libcapsa.so -> libcapsa.so.0 -> libcapsa.so.0.1.0 (the file).
  ASSERT_EQ(0, Sh("readlink " + Q(lib + "/libcapsa.so"), &out));
  EXPECT_EQ("libcapsa.so.0\n", out);
  ASSERT_EQ(0, Sh("readlink " + Q(lib + "/libcapsa.so.0"), &out));
  EXPECT_EQ(real + "\n", out);
  struct stat st;
  ASSERT_EQ(0, lstat((lib + "/" + real).c_str(), &st));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ASSERT_EQ(0, lstat((lib + "/libcapsa.a").c_str(), &st));
  EXPECT_TRUE(S_ISREG(st.st_mode));

  ASSERT_EQ(0, Sh("readelf -d " + Q(lib + "/" + real), &out)) << out;
  EXPECT_NE(std::string::npos, out.find("Library soname: [libcapsa.so.0]"))
      << out;
  EXPECT_EQ(std::string::npos, out.find("RPATH")) << out;
  EXPECT_EQ(std::string::npos, out.find("RUNPATH")) << out;
  // The PNG writer is the demo's: no libpng or zlib in the library.
  EXPECT_EQ(std::string::npos, out.find("libpng")) << out;
  EXPECT_EQ(std::string::npos, out.find("libz.")) << out;
  EXPECT_NE(std::string::npos, out.find("libuv.so")) << out;

  EXPECT_EQ(kVersion, Pc("--modversion capsa"));
  EXPECT_EQ("libuv", Pc("--print-requires capsa"));
  EXPECT_EQ("libseccomp", Pc("--print-requires-private capsa"));
  std::string libs = Pc("--libs capsa");
  EXPECT_NE(std::string::npos, libs.find("-L" + lib)) << libs;
  EXPECT_NE(std::string::npos, libs.find("-lcapsa")) << libs;
  EXPECT_NE(std::string::npos, libs.find("-luv")) << libs;
  EXPECT_EQ(std::string::npos, libs.find("rpath")) << libs;
  EXPECT_EQ(std::string::npos, libs.find("-lseccomp")) << libs;
  EXPECT_EQ(std::string::npos, libs.find("png")) << libs;
  std::string slibs = Pc("--static --libs capsa");
  for (const char *l : {"-lcapsa", "-luv", "-lseccomp", "-lstdc++"})
    EXPECT_NE(std::string::npos, slibs.find(l)) << slibs;
  std::string alibs = Pc("--libs capsa-static");
  EXPECT_NE(std::string::npos, alibs.find(lib + "/libcapsa.a")) << alibs;
  EXPECT_EQ(std::string::npos, alibs.find("-lcapsa")) << alibs;
  EXPECT_EQ("-I" + prefix_ + "/include -I" + prefix_ + "/include/capsa/compat",
            Pc("--cflags-only-I capsa"));
}

TEST_F(Sdk, SharedLibraryExportsOnlyThePublicApiVersioned) {
  std::string so = prefix_ + "/lib/libcapsa.so.0", out;
  ASSERT_EQ(0, Sh("nm -D --defined-only " + Q(so), &out)) << out;
  std::vector<std::string> syms;
  for (const std::string &l : Lines(out)) {
    std::istringstream in(l);
    std::string addr, type, name;
    in >> addr >> type >> name;
    syms.push_back(name);
  }
  // The whole API: the host, the renderer runtime, capability mode,
  // rights, channels and FreeBSD's cap_*/pd* names.
  EXPECT_GT(syms.size(), 150u);
  std::string headers;
  ASSERT_EQ(0, Sh("cat $(find " + Q(prefix_ + "/include") + " -name '*.h')",
                  &headers));
  std::set<std::string> names;
  for (std::string s : syms) {
    EXPECT_EQ(std::string::npos, s.find("capsa__")) << s;
    EXPECT_NE(0u, s.rfind("_Z", 0)) << "C++ symbol exported: " << s;
    if (s == "CAPSA_0.1") continue;  // the version node itself
    size_t at = s.find("@@CAPSA_0.1");
    EXPECT_NE(std::string::npos, at) << "unversioned: " << s;
    s = s.substr(0, at);
    names.insert(s);
    // Each export is named by an installed header.
    EXPECT_NE(std::string::npos, headers.find(s)) << s;
  }
  for (const char *api :
       {"capsa_host_init", "capsa_main", "capsa_renderer_main",
        "capsa_kind_register", "capsa_cap_enter", "capsa_rights_limit",
        "cap_enter", "cap_rights_limit", "__cap_rights_init", "pdfork"})
    EXPECT_EQ(1u, names.count(api)) << api;
}

TEST_F(Sdk, ReadmeEmbeddingExampleBuildsSharedAndRuns) {
  std::string src = ReadmeExample();
  // No run path from pkg-config: where the loader finds libcapsa is the
  // embedder's choice. LD_LIBRARY_PATH would not do: the zygote is a
  // fresh exec of the program with an empty environment.
  std::string exe =
      Build(src, "embed",
            Pc("--cflags --libs capsa") + " -Wl,-rpath," + prefix_ + "/lib");
  EXPECT_NE(std::string::npos, Needed(exe).find("[libcapsa.so.0]"));
  RunAsEveryone(exe, "says: open(/etc/passwd): ECAPMODE");
}

TEST_F(Sdk, ReadmeEmbeddingExampleBuildsStaticAndRuns) {
  std::string src = ReadmeExample();
  // capsa-static: libcapsa.a even with libcapsa.so installed next to it.
  std::string exe =
      Build(src, "embed_static", Pc("--cflags --libs capsa-static"));
  EXPECT_EQ(std::string::npos, Needed(exe).find("libcapsa"));
  RunAsEveryone(exe, "says: open(/etc/passwd): ECAPMODE");

  // `pkg-config --static capsa` where only the archive is installed (a
  // system without the runtime package): its private flags are complete.
  std::string aonly = tmp_.path + "/aonly", out;
  ASSERT_EQ(0, Sh("cp -a " + Q(prefix_) + " " + Q(aonly) + " && rm " +
                      Q(aonly + "/lib") +
                      "/libcapsa.so* && sed -i 's|^prefix=.*|" + "prefix=" +
                      aonly + "|' " + Q(aonly + "/lib/pkgconfig/capsa.pc"),
                  &out))
      << out;
  std::string flags;
  ASSERT_EQ(0, Sh("PKG_CONFIG_PATH=" + Q(aonly + "/lib/pkgconfig") +
                      " pkg-config --static --cflags --libs capsa",
                  &flags))
      << flags;
  flags.erase(flags.find_last_not_of(" \n") + 1);
  exe = Build(src, "embed_archive", flags);
  EXPECT_EQ(std::string::npos, Needed(exe).find("libcapsa"));
  RunAsEveryone(exe, "says: open(/etc/passwd): ECAPMODE");
}

// The README's interface example, outside the tree from the install alone:
// the installed generator (capsa-idl: flatc + capsa_idlc) turns the
// embedder's schema into C that includes <capsa/interface.h>, and the
// program's typed request with a read-only and a writable region runs.
TEST_F(Sdk, InterfaceExampleIsGeneratedBuiltAndRunsFromTheInstall) {
  std::string out;
  if (Sh("command -v flatc", &out) != 0) GTEST_SKIP() << "flatc not installed";
  std::string src = tmp_.path + "/convert.c", gen = tmp_.path + "/gen";
  ASSERT_EQ(0,
            Sh("cp " + Q(kRoot + "/host/examples/convert.c") + " " +
                   Q(kRoot + "/host/examples/convert.fbs") + " " + Q(tmp_.path),
               &out))
      << out;
  std::string idl =
      Q(prefix_ + "/bin/capsa-idl") + " " + Q(tmp_.path + "/convert.fbs") +
      " " + Q(gen + "/host/examples") + " host/examples/convert.capsa.h";
  ASSERT_EQ(0, Sh(idl, &out)) << idl << "\n" << out;
  EXPECT_NE(std::string::npos, ReadFile(gen + "/host/examples/convert.capsa.h")
                                   .find("#include <capsa/interface.h>"));
  EXPECT_EQ(std::string::npos,
            ReadFile(gen + "/host/examples/convert.capsa.h").find("\"ipc/"));
  // A schema the generator refuses fails with its reason, not a half file.
  std::ofstream(tmp_.path + "/bad.fbs")
      << "include \"ipc/interface/capsa_attributes.fbs\";\nnamespace b;\n"
         "table T (capsa_event, capsa_from: \"host\") { v: [int]; }\n"
         "union M (capsa_interface) { T }\n";
  EXPECT_NE(0, Sh(Q(prefix_ + "/bin/capsa-idl") + " " +
                      Q(tmp_.path + "/bad.fbs") + " " + Q(gen),
                  &out));
  EXPECT_NE(std::string::npos, out.find("T.v: type not carried")) << out;
  EXPECT_NE(0, access((gen + "/bad.capsa.h").c_str(), F_OK));
  std::string exe = Build(
      src, "convert",
      "-I" + Q(gen) + " " + Q(gen + "/host/examples/convert.capsa.c") + " " +
          Pc("--cflags --libs capsa") + " -Wl,-rpath," + prefix_ + "/lib");
  RunAsEveryone(exe, "converted: HELLO, CAPSA");
}

// FreeBSD code, unchanged, against the install: <sys/capsicum.h> and
// <sys/procdesc.h> (cap_enter, cap_rights_limit, pdfork...).
TEST_F(Sdk, FreeBsdProgramBuildsSharedAndStaticAndRuns) {
  std::string src = kRoot + "/tests/compat/freebsd_prog.c";
  std::string exe =
      Build(src, "freebsd",
            Pc("--cflags --libs capsa") + " -Wl,-rpath," + prefix_ + "/lib");
  EXPECT_NE(std::string::npos, Needed(exe).find("[libcapsa.so.0]"));
  RunAsEveryone(exe, "freebsd_prog: ok");
  exe = Build(src, "freebsd_static", Pc("--cflags --libs capsa-static"));
  EXPECT_EQ(std::string::npos, Needed(exe).find("libcapsa"));
  RunAsEveryone(exe, "freebsd_prog: ok");
}

// The SDK tested both ways: every function an installed header declares is
// exported by libcapsa.so (a header without the visibility pragma once hid
// every capsa_pool_* while the version script listed them) and resolves in
// a program linked with `pkg-config --libs capsa` and with capsa-static.
// The declarations are the compiler's own list (gcc -aux-info), not a
// parse of ours.
TEST_F(Sdk, EveryDeclaredFunctionIsExportedAndLinksSharedAndStatic) {
  std::string out, inc = prefix_ + "/include";
  std::ofstream(tmp_.path + "/all.c") << "#include <capsa/capsa.h>\n"
                                         "#include <sys/capsicum.h>\n"
                                         "#include <sys/procdesc.h>\n";
  std::string aux = tmp_.path + "/decl.txt";
  ASSERT_EQ(0, Sh("cd " + Q(tmp_.path) + " && cc -aux-info " + Q(aux) +
                      " -c all.c -o /dev/null " + Pc("--cflags capsa"),
                  &out))
      << out;
  std::set<std::string> declared;
  for (const std::string &l : Lines(ReadFile(aux))) {
    if (l.rfind("/* " + inc + "/", 0) != 0) continue;  // libc's, libuv's
    size_t body = l.find("*/ ");
    size_t paren = l.find(" (", body);
    ASSERT_NE(std::string::npos, paren) << l;
    size_t start = l.find_last_of(" *", paren - 1) + 1;
    declared.insert(l.substr(start, paren - start));
  }
  for (const char *api : {"capsa_pool_init", "capsa_pool_submit",
                          "capsa_pool_error", "capsa_host_init", "cap_enter",
                          "capsa_renderer_send_error", "capsa_main"})
    EXPECT_EQ(1u, declared.count(api)) << api << " not seen in the headers";
  ASSERT_EQ(0, Sh("nm -D --defined-only " + Q(prefix_ + "/lib/libcapsa.so.0") +
                      " | awk '{print $3}' | sed 's/@.*//'",
                  &out))
      << out;
  std::set<std::string> exported;
  for (const std::string &l : Lines(out)) exported.insert(l);
  std::string refs = "#include <stdio.h>\ntypedef void fn(void);\n";
  std::string table = "static fn *const all[] = {\n";
  for (const std::string &f : declared) {
    EXPECT_EQ(1u, exported.count(f)) << f << ": declared, not exported";
    refs += "extern fn " + f + ";\n";
    table += "    " + f + ",\n";
  }
  refs += table +
          "};\nint main(void) {\n  printf(\"%zu functions\\n\", "
          "sizeof all / sizeof *all);\n  return all[0] == 0;\n}\n";
  std::string src = tmp_.path + "/refs.c";
  std::ofstream(src) << refs;
  std::string expect = std::to_string(declared.size()) + " functions";
  std::string exe =
      Build(src, "refs_shared",
            Pc("--libs capsa") + " -Wl,-rpath," + prefix_ + "/lib");
  RunAsEveryone(exe, expect);
  exe = Build(src, "refs_static", Pc("--libs capsa-static"));
  RunAsEveryone(exe, expect);
}

// The README's pool example from the install, shared and static: a batch in
// a pool with its default options, one input crashing its worker; the
// job's done() names the crash, the worker is replaced, the rest served.
TEST_F(Sdk, PoolExampleBuildsSharedAndStaticAndServesThroughACrash) {
  std::string out;
  if (Sh("command -v flatc", &out) != 0) GTEST_SKIP() << "flatc not installed";
  std::string gen = tmp_.path + "/gen";
  ASSERT_EQ(0,
            Sh("cp " + Q(kRoot + "/host/examples/pool.c") + " " +
                   Q(kRoot + "/host/examples/convert.fbs") + " " + Q(tmp_.path),
               &out))
      << out;
  std::string idl =
      Q(prefix_ + "/bin/capsa-idl") + " " + Q(tmp_.path + "/convert.fbs") +
      " " + Q(gen + "/host/examples") + " host/examples/convert.capsa.h";
  ASSERT_EQ(0, Sh(idl, &out)) << idl << "\n" << out;
  const std::string generated =
      "-I" + Q(gen) + " " + Q(gen + "/host/examples/convert.capsa.c") + " ";
  const std::string expect =
      "hello -> HELLO\ncrash me -> failed: crashed: signal 11 (SEGV)\n"
      "world -> WORLD\ncapsa -> CAPSA\npools -> POOLS\n"
      "4 served, 1 failed\n";
  std::string exe = Build(tmp_.path + "/pool.c", "pool",
                          generated + Pc("--cflags --libs capsa") +
                              " -Wl,-rpath," + prefix_ + "/lib");
  EXPECT_NE(std::string::npos, Needed(exe).find("[libcapsa.so.0]"));
  RunAsEveryone(exe, expect);
  exe = Build(tmp_.path + "/pool.c", "pool_static",
              generated + Pc("--cflags --libs capsa-static"));
  EXPECT_EQ(std::string::npos, Needed(exe).find("libcapsa"));
  RunAsEveryone(exe, expect);
}

}  // namespace
