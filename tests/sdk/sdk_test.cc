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
//     as the running user and (when that is root) as uid 65534;
//   - the renderer-executable example (host/examples/png_*.c): a host
//     linking libcapsa and libuv alone runs a renderer executable linking
//     libpng, which decodes PNGs for it; the host's memory maps no libpng
//     or zlib while its renderer's does.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/png_writer.h"
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

// A program run with a pipe to its standard input and one from its output
// (standard error too), through /bin/sh (for setpriv and timeout).
struct Piped {
  pid_t pid = -1;
  int in = -1, out = -1;
  std::string got;  // everything read so far

  explicit Piped(const std::string &cmd) {
    int i[2], o[2];
    if (pipe2(i, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(i[0], 0);
      dup2(o[1], 1);
      dup2(o[1], 2);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), (char *)nullptr);
      _exit(127);
    }
    close(i[0]);
    close(o[1]);
    in = i[1];
    out = o[0];
  }
  ~Piped() {
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // Reads until `what` was printed (true) or EOF / timeout_ms (false).
  bool ReadUntil(const std::string &what, int timeout_ms) {
    for (int waited = 0; got.find(what) == std::string::npos;) {
      struct pollfd p = {out, POLLIN, 0};
      if (waited >= timeout_ms || poll(&p, 1, 100) < 0) return false;
      waited += 100;
      if (!(p.revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(out, buf, sizeof buf);
      if (n <= 0) return false;
      got.append(buf, (size_t)n);
    }
    return true;
  }
  // Closes its input, reads the rest and reaps it: its exit status.
  int Finish(int timeout_ms) {
    close(in);
    in = -1;
    ReadUntil("\x01never printed\x01", timeout_ms);
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return -1;
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
};

bool SameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The field of `key` in /proc/PID/status.
long StatusField(pid_t pid, const std::string &key) {
  for (const std::string &l :
       Lines(ReadFile("/proc/" + std::to_string(pid) + "/status")))
    if (l.compare(0, key.size() + 1, key + ":") == 0)
      return strtol(l.c_str() + key.size() + 1, nullptr, 10);
  return -1;
}

// The renderer-executable example from the install, shared and static: the
// host (png_host.c: libcapsa + libuv) has png_renderer (libpng, zlib)
// decode a PNG from a file and one from its standard input; while it waits
// for the second, its /proc/PID/maps has no libpng or zlib and its
// renderer's has both (and /proc/PID/exe is the renderer executable).
TEST_F(Sdk, RendererExecutableKeepsTheParserOutOfTheHost) {
  std::string out;
  ASSERT_EQ(0, Sh("command -v flatc", &out)) << "flatc (./dev setup)";
  ASSERT_EQ(0, Sh("pkg-config --exists libpng", &out)) << "libpng-dev";
  std::string gen = tmp_.path + "/gen";
  ASSERT_EQ(0, Sh("cd " + Q(kRoot + "/host/examples") +
                      " && cp png_host.c png_renderer.c png.fbs " +
                      Q(tmp_.path) + " && " + Q(prefix_ + "/bin/capsa-idl") +
                      " " + Q(tmp_.path + "/png.fbs") + " " +
                      Q(gen + "/host/examples") + " host/examples/png.capsa.h",
                  &out))
      << out;
  std::string iface =
      "-I" + Q(gen) + " " + Q(gen + "/host/examples/png.capsa.c") + " ";

  // The input: RGBA with every channel varying, written by capsa's own PNG
  // writer; what the host must print for it.
  const uint32_t w = 53, h = 31;
  std::vector<uint8_t> px(w * h * 4);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      uint8_t *p = &px[(y * w + x) * 4];
      p[0] = (uint8_t)(x * 5);
      p[1] = (uint8_t)(y * 8);
      p[2] = (uint8_t)(x ^ y);
      p[3] = (uint8_t)(255 - 2 * y);
    }
  std::string png = tmp_.path + "/in.png";
  int fd = open(png.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  struct capsa_png_image img = {px.data(), px.size(), w,
                                h,         w * 4,     CAPSA_PNG_RGBA8};
  ASSERT_EQ(0, capsa_png_write_fd(&img, fd));
  close(fd);
  uint64_t fnv = 0xcbf29ce484222325ull;
  for (uint8_t c : px) fnv = (fnv ^ c) * 0x100000001b3ull;
  char want[96];
  snprintf(want, sizeof want, ": %ux%u RGBA, fnv1a64 %016llx (renderer ", w, h,
           (unsigned long long)fnv);

  for (const char *pc : {"capsa", "capsa-static"}) {
    SCOPED_TRACE(pc);
    bool shared = std::string(pc) == "capsa";
    std::string rpath = shared ? " -Wl,-rpath," + prefix_ + "/lib" : "";
    std::string host =
        Build(tmp_.path + "/png_host.c", std::string("png_host_") + pc,
              iface + Pc(std::string("--cflags --libs ") + pc) + rpath);
    std::string renderer =
        Build(tmp_.path + "/png_renderer.c", std::string("png_renderer_") + pc,
              iface + Pc(std::string("--cflags --libs libpng ") + pc) + rpath);
    std::string needed = Needed(host);
    EXPECT_EQ(std::string::npos, needed.find("libpng")) << needed;
    EXPECT_EQ(std::string::npos, needed.find("libz.")) << needed;
    EXPECT_NE(std::string::npos, needed.find("libuv")) << needed;
    EXPECT_EQ(shared, needed.find("libcapsa.so.0") != std::string::npos)
        << needed;
    EXPECT_NE(std::string::npos, Needed(renderer).find("libpng16"));

    std::vector<std::string> runs = {""};
    if (geteuid() == 0)
      runs.push_back(
          "setpriv --reuid=65534 --regid=65534 --clear-groups "
          "--inh-caps=-all ");
    for (const std::string &as : runs) {
      SCOPED_TRACE(as.empty() ? "this user" : "uid 65534");
      Piped p("cd " + Q(tmp_.path) + " && exec timeout 60 " + as + Q(host) +
              " " + Q(renderer) + " " + Q(png) + " -");
      ASSERT_GT(p.pid, 0);
      ASSERT_TRUE(p.ReadUntil(png + want, 30000)) << p.got;
      // Waiting for its standard input now: the renderer is alive, and
      // it is the host's child (the zygote forks it with CLONE_PARENT).
      size_t at = p.got.find("(renderer ") + 10;
      pid_t rpid = (pid_t)strtol(p.got.c_str() + at, nullptr, 10);
      ASSERT_GT(rpid, 0) << p.got;
      pid_t hpid = (pid_t)StatusField(rpid, "PPid");
      std::string hp = "/proc/" + std::to_string(hpid);
      std::string rp = "/proc/" + std::to_string(rpid);
      EXPECT_TRUE(SameFile(hp + "/exe", host)) << hp;
      EXPECT_TRUE(SameFile(rp + "/exe", renderer)) << rp;
      std::string hmaps = ReadFile(hp + "/maps");
      std::string rmaps = ReadFile(rp + "/maps");
      EXPECT_EQ(std::string::npos, hmaps.find("libpng")) << hmaps;
      EXPECT_EQ(std::string::npos, hmaps.find("/libz.so")) << hmaps;
      EXPECT_EQ(std::string::npos, hmaps.find("png_renderer")) << hmaps;
      EXPECT_EQ(shared, hmaps.find("libcapsa.so") != std::string::npos);
      EXPECT_NE(std::string::npos, hmaps.find("libuv")) << hmaps;
      EXPECT_NE(std::string::npos, rmaps.find("libpng16")) << rmaps;
      EXPECT_NE(std::string::npos, rmaps.find("/libz.so")) << rmaps;
      EXPECT_NE(std::string::npos, rmaps.find("png_renderer_")) << rmaps;
      // The second image through the pipe; then it is done.
      std::string data = ReadFile(png);
      ASSERT_EQ((ssize_t)data.size(), write(p.in, data.data(), data.size()));
      EXPECT_EQ(0, p.Finish(30000)) << p.got;
      EXPECT_NE(std::string::npos, p.got.find("\n-" + std::string(want)))
          << p.got;
    }
  }
}

// Fuzzing an embedder's own interface from the install (<capsa/fuzz.h>,
// capsa-fuzz.pc, docs/interfaces.md "Fuzzing"): a held-out schema (offset
// <= 100, data <= 200 bytes) whose handler trusts offset + data.len <= 256.
// capsa-idl generates it, clang builds the harness with capsa-fuzz's flags,
// and from an empty corpus the structure-aware mutator reaches the overflow
// within 60 s; the saved reproducer replays it. The same harness with the
// check in place runs clean, so the crash is the planted bug's.
TEST_F(Sdk, FuzzerFromTheInstallFindsAPlantedHandlerBugAndReplaysIt) {
  std::string out;
  ASSERT_EQ(0, Sh("command -v flatc && command -v clang", &out))
      << "flatc and clang (./dev setup)";
  std::string src = kRoot + "/tests/fuzz/heldout/";
  std::string dir = tmp_.path + "/fuzz";
  ASSERT_EQ(0, Sh("mkdir -p " + Q(dir + "/corpus") + " && cp " +
                      Q(src + "heldout.fbs") + " " + Q(src + "heldout_fuzz.c") +
                      " " + Q(dir) + " && cd " + Q(dir) + " && " +
                      Q(prefix_ + "/bin/capsa-idl") + " heldout.fbs .",
                  &out))
      << out;
  std::string flags = Pc("--cflags --libs capsa-fuzz");
  EXPECT_NE(std::string::npos, flags.find("libcapsa-fuzz.a")) << flags;
  EXPECT_NE(std::string::npos, flags.find("-fsanitize=fuzzer")) << flags;
  for (const char *variant : {"heldout_fuzz", "heldout_fixed"}) {
    std::string def =
        std::string(variant) == "heldout_fixed" ? " -DHELDOUT_FIXED" : "";
    ASSERT_EQ(
        0, Sh("cd " + Q(dir) + " && clang -Wall -Werror" + def +
                  " heldout_fuzz.c heldout.capsa.c " + flags + " -o " + variant,
              &out))
        << out;
  }
  // The fixed handler: 5 s of the same mutations, nothing found.
  EXPECT_EQ(0, Sh("cd " + Q(dir) +
                      " && timeout 60 ./heldout_fixed "
                      "-max_total_time=5 -seed=1 corpus",
                  &out))
      << out.substr(out.size() > 4000 ? out.size() - 4000 : 0);
  ASSERT_EQ(
      0, Sh("rm -rf " + Q(dir + "/corpus") + " && mkdir " + Q(dir + "/corpus"),
            &out));
  // The planted bug: found from the empty corpus well within 60 s.
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = Sh("cd " + Q(dir) +
                  " && timeout 90 ./heldout_fuzz "
                  "-max_total_time=60 -seed=1 corpus",
              &out);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs =
      (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  EXPECT_NE(0, rc) << out;
  EXPECT_NE(std::string::npos, out.find("global-buffer-overflow")) << out;
  EXPECT_LT(secs, 60.0) << out;
  std::string crash;
  ASSERT_EQ(0, Sh("cd " + Q(dir) + " && ls crash-*", &crash)) << crash;
  crash = Lines(crash)[0];
  // The reproducer replays it, alone.
  EXPECT_NE(0, Sh("cd " + Q(dir) + " && timeout 60 ./heldout_fuzz " + Q(crash),
                  &out));
  EXPECT_NE(std::string::npos, out.find("global-buffer-overflow")) << out;
  printf("[ sdk ] planted bug found in %.2f s (harness start included)\n",
         secs);
}

// Live fuzzing from the install (<capsa/fuzz_live.h>, docs/interfaces.md
// "Fuzzing, live"): the held-out schema's planted bug, now in a real
// host's on_message (tests/fuzz/heldout/heldout_live.c), built with ASan
// against the shared library as an embedder builds it. From no corpus the
// campaign's sandboxed renderers reach it over real channels; the saved
// reproducer replays it to the same stack; with the check in place the
// campaign finds nothing.
TEST_F(Sdk, LiveFuzzerFromTheInstallFindsTheHeldOutHostBugAndReplaysIt) {
  std::string out;
  ASSERT_EQ(0, Sh("command -v flatc && command -v clang", &out))
      << "flatc and clang (./dev setup)";
  std::string src = kRoot + "/tests/fuzz/heldout/";
  std::string dir = tmp_.path + "/live";
  ASSERT_EQ(
      0, Sh("mkdir -p " + Q(dir + "/found") + " " + Q(dir + "/none") +
                " && cp " + Q(src + "heldout.fbs") + " " +
                Q(src + "heldout_live.c") + " " + Q(dir) + " && cd " + Q(dir) +
                " && " + Q(prefix_ + "/bin/capsa-idl") + " heldout.fbs .",
            &out))
      << out;
  std::string flags =
      Pc("--cflags --libs capsa") + " -Wl,-rpath," + prefix_ + "/lib";
  for (const char *variant : {"heldout_live", "heldout_fixed"}) {
    std::string def =
        std::string(variant) == "heldout_fixed" ? " -DHELDOUT_FIXED" : "";
    ASSERT_EQ(0, Sh("cd " + Q(dir) +
                        " && clang -g -fsanitize=address -Wall "
                        "-Werror" +
                        def + " heldout_live.c heldout.capsa.c " + flags +
                        " -o " + variant,
                    &out))
        << out;
  }
  int rc = Sh("cd " + Q(dir) +
                  " && timeout 120 ./heldout_live --seconds 60 "
                  "--stop-after-unique 1 --out found",
              &out);
  EXPECT_EQ(1, rc) << out;
  EXPECT_NE(std::string::npos, out.find("global-buffer-overflow")) << out;
  EXPECT_NE(std::string::npos, out.find("reproducer saved: found/crash-"))
      << out;
  std::string repro;
  ASSERT_EQ(0, Sh("cd " + Q(dir) + " && ls found/crash-*.repro", &repro))
      << repro;
  repro = Lines(repro)[0];
  // Replayed: the same records in their order reach the same stack.
  rc = Sh("cd " + Q(dir) + " && timeout 60 ./heldout_live --replay " + Q(repro),
          &out);
  EXPECT_EQ(1, rc) << out;
  EXPECT_NE(std::string::npos, out.find("replay: same stack as the saved"))
      << out;
  // The control: the same campaign against the fixed handler.
  rc = Sh(
      "cd " + Q(dir) + " && timeout 60 ./heldout_fixed --seconds 4 --out none",
      &out);
  EXPECT_EQ(0, rc) << out;
  EXPECT_NE(std::string::npos, out.find("host survived")) << out;
  EXPECT_NE(0, Sh("ls " + Q(dir + "/none") + "/*.repro", &out)) << out;
}

// Coverage-guided live fuzzing from the install (CAPSA_FUZZ_LIVE_TARGET,
// capsa-fuzz.pc): libFuzzer's process is the host, with the held-out
// planted bug in its on_message (tests/fuzz/heldout/heldout_live_fuzz.c);
// each input is one sandboxed renderer's messages. Found from an empty
// corpus, the crash input replays alone; the fixed handler runs clean.
TEST_F(Sdk, GuidedLiveFuzzerFromTheInstallFindsTheHeldOutHostBug) {
  std::string out;
  ASSERT_EQ(0, Sh("command -v flatc && command -v clang", &out))
      << "flatc and clang (./dev setup)";
  std::string src = kRoot + "/tests/fuzz/heldout/";
  std::string dir = tmp_.path + "/guided";
  ASSERT_EQ(0, Sh("mkdir -p " + Q(dir + "/corpus") + " " + Q(dir + "/clean") +
                      " && cp " + Q(src + "heldout.fbs") + " " +
                      Q(src + "heldout_live_fuzz.c") + " " + Q(dir) +
                      " && cd " + Q(dir) + " && " +
                      Q(prefix_ + "/bin/capsa-idl") + " heldout.fbs .",
                  &out))
      << out;
  std::string flags = Pc("--cflags --libs capsa-fuzz");
  for (const char *variant : {"guided", "guided_fixed"}) {
    std::string def =
        std::string(variant) == "guided_fixed" ? " -DHELDOUT_FIXED" : "";
    ASSERT_EQ(0, Sh("cd " + Q(dir) + " && clang -Wall -Werror" + def +
                        " heldout_live_fuzz.c heldout.capsa.c " + flags +
                        " -o " + variant,
                    &out))
        << out;
  }
  int rc = Sh("cd " + Q(dir) +
                  " && timeout 120 ./guided -max_total_time=60 -seed=1 corpus",
              &out);
  EXPECT_NE(0, rc) << out;
  EXPECT_NE(std::string::npos, out.find("global-buffer-overflow")) << out;
  EXPECT_NE(std::string::npos, out.find("in on_message")) << out;
  std::string crash;
  ASSERT_EQ(0, Sh("cd " + Q(dir) + " && ls crash-*", &crash)) << crash;
  crash = Lines(crash)[0];
  EXPECT_NE(0,
            Sh("cd " + Q(dir) + " && timeout 60 ./guided " + Q(crash), &out));
  EXPECT_NE(std::string::npos, out.find("global-buffer-overflow")) << out;
  rc = Sh("cd " + Q(dir) +
              " && timeout 60 ./guided_fixed -max_total_time=4 -seed=1 clean",
          &out);
  EXPECT_EQ(0, rc) << out.substr(out.size() > 4000 ? out.size() - 4000 : 0);
}

// The convert example's host (host/examples/convert_fuzz.c): its reply
// handler trusts the schema's errno range, and the fuzzing renderers'
// answers to its real requests reach it. Shared with ASan: found in the
// handler and replayed (on_ready runs again for the replaying renderer, so
// the recorded reply meets a request); static, with the check: clean, and
// bad flags name themselves.
TEST_F(Sdk, LiveFuzzerDrivesTheConvertHostsRequestsSharedAndStatic) {
  std::string out;
  ASSERT_EQ(0, Sh("command -v flatc && command -v clang", &out))
      << "flatc and clang (./dev setup)";
  std::string dir = tmp_.path + "/live_convert", gen = dir + "/gen";
  ASSERT_EQ(
      0,
      Sh("mkdir -p " + Q(dir + "/found") + " && cp " +
             Q(kRoot + "/host/examples/convert_fuzz.c") + " " +
             Q(kRoot + "/host/examples/convert.fbs") + " " + Q(dir) + " && " +
             Q(prefix_ + "/bin/capsa-idl") + " " + Q(dir + "/convert.fbs") +
             " " + Q(gen + "/host/examples") + " host/examples/convert.capsa.h",
         &out))
      << out;
  std::string srcs = "convert_fuzz.c -I" + Q(gen) + " " +
                     Q(gen + "/host/examples/convert.capsa.c") + " ";
  ASSERT_EQ(0, Sh("cd " + Q(dir) +
                      " && clang -g -fsanitize=address -Wall "
                      "-Werror " +
                      srcs + Pc("--cflags --libs capsa") + " -Wl,-rpath," +
                      prefix_ + "/lib -o convert_fuzz",
                  &out))
      << out;
  ASSERT_EQ(
      0, Sh("cd " + Q(dir) + " && cc -Wall -Werror -DCONVERT_CHECKED " + srcs +
                Pc("--cflags --libs capsa-static") + " -o convert_checked",
            &out))
      << out;
  int rc = Sh("cd " + Q(dir) +
                  " && timeout 120 ./convert_fuzz --seconds 60 "
                  "--stop-after-unique 1 --out found",
              &out);
  EXPECT_EQ(1, rc) << out;
  EXPECT_NE(std::string::npos, out.find("on_converted")) << out;
  std::string repro;
  ASSERT_EQ(0, Sh("cd " + Q(dir) + " && ls found/*.repro", &repro)) << repro;
  repro = Lines(repro)[0];
  rc = Sh("cd " + Q(dir) + " && timeout 60 ./convert_fuzz --replay " + Q(repro),
          &out);
  EXPECT_EQ(1, rc) << out;
  EXPECT_NE(std::string::npos, out.find("replay: same stack as the saved"))
      << out;
  rc =
      Sh("cd " + Q(dir) + " && timeout 60 ./convert_checked --seconds 3", &out);
  EXPECT_EQ(0, rc) << out;
  EXPECT_NE(std::string::npos, out.find("host survived")) << out;
  EXPECT_EQ(std::string::npos, out.find("records received 0 ")) << out;
  rc = Sh("cd " + Q(dir) + " && ./convert_checked --rounds 0", &out);
  EXPECT_EQ(2, rc) << out;
  EXPECT_NE(std::string::npos, out.find("bad --rounds (1..65536) '0'")) << out;
}

// `capsa-idl --fuzz`: the harness skeleton next to the bindings, one case
// per message of the schema; it builds with capsa-fuzz's flags as written
// (-Wall -Wextra -Werror) and runs clean; a second --fuzz leaves the
// embedder's edited file alone.
TEST_F(Sdk, IdlFuzzWritesAHarnessSkeletonThatBuildsAndRuns) {
  std::string out;
  ASSERT_EQ(0, Sh("command -v flatc && command -v clang", &out))
      << "flatc and clang (./dev setup)";
  std::string dir = tmp_.path + "/skel";
  ASSERT_EQ(0, Sh("mkdir -p " + Q(dir + "/corpus") + " && cp " +
                      Q(kRoot + "/tests/fuzz/heldout/heldout.fbs") + " " +
                      Q(dir) + " && cd " + Q(dir) + " && " +
                      Q(prefix_ + "/bin/capsa-idl") + " --fuzz heldout.fbs .",
                  &out))
      << out;
  std::string skel = ReadFile(dir + "/heldout_fuzz.c");
  EXPECT_NE(std::string::npos, skel.find("case CAPSA_TEST_HELDOUT_WRITE:"))
      << skel;
  EXPECT_NE(std::string::npos, skel.find("case CAPSA_TEST_HELDOUT_FLUSH:"))
      << skel;
  EXPECT_NE(std::string::npos,
            skel.find("CAPSA_FUZZ_INTERFACE(capsa_test_heldout_interface"))
      << skel;
  ASSERT_EQ(0, Sh("cd " + Q(dir) +
                      " && clang -Wall -Wextra -Werror heldout_fuzz.c "
                      "heldout.capsa.c " +
                      Pc("--cflags --libs capsa-fuzz") + " -o heldout_fuzz" +
                      " && timeout 60 ./heldout_fuzz -max_total_time=3 corpus",
                  &out))
      << out.substr(out.size() > 4000 ? out.size() - 4000 : 0);
  std::ofstream(dir + "/heldout_fuzz.c") << "// edited\n";
  EXPECT_EQ(0, Sh("cd " + Q(dir) + " && " + Q(prefix_ + "/bin/capsa-idl") +
                      " --fuzz heldout.fbs .",
                  &out))
      << out;
  EXPECT_NE(std::string::npos, out.find("left as it is")) << out;
  EXPECT_EQ("// edited\n", ReadFile(dir + "/heldout_fuzz.c"));
}

}  // namespace

// An embedder's host built with -fsanitize=address against the SDK's
// uninstrumented libcapsa (shared and static), renderers with the default
// limits: the host finds the ASan runtime in its process at run time and
// applies no RLIMIT_AS (host/sanitizer_limits.h), so the renderer reaches
// READY instead of dying at its first mmap, and the limits summary says
// so where rlimits are the mechanism. The same program without ASan says
// nothing of it.
TEST_F(Sdk, AsanHostOnTheUninstrumentedLibraryStartsRenderersWithDefaults) {
  std::string src = tmp_.path + "/asan_host.c";
  std::ofstream(src) << R"(#include <stdio.h>
#include <string.h>
#include <capsa/capsa.h>
static int on_start(capsa_rctx_t *r) {
  return capsa_rctx_log(r, CAPSA_LOG_INFO, "started");
}
static const capsa_renderer_handlers_t kH = {.kind = "k", .on_start = on_start};
CAPSA_RENDERER_KIND(k, "k", capsa_renderer_main, &kH)
static void on_event(capsa_host_t *host, const capsa_host_event_t *ev) {
  char line[512];
  if (ev->type == CAPSA_EV_READY) {
    if (capsa_host_limits_summary(host, line, sizeof line) > 0)
      printf("%s\n", line);
  } else if (ev->type == CAPSA_EV_LOG) {
    printf("renderer says: %s\n", ev->text);
    capsa_renderer_shutdown(ev->renderer, 1000);
  } else if (ev->type == CAPSA_EV_CLOSED) {
    capsa_host_close(host, NULL);
  } else if (ev->type != CAPSA_EV_EXITED) {
    printf("event %s %s\n", capsa_host_event_name(ev->type),
           ev->text ? ev->text : "");
  }
}
int main(int argc, char **argv) {
  if (capsa_main(argc, argv) < 0) return 1;
  uv_loop_t *loop = uv_default_loop();
  capsa_host_t host;
  if (capsa_host_init(loop, &host, NULL, on_event) < 0) return 1;
  capsa_kind_options_t kind;  /* default limits: limit_memory 1 GiB */
  capsa_kind_options_init(&kind, "k", capsa_renderer_main, (void *)&kH);
  int k = capsa_host_define_kind(&host, &kind);
  if (k < 0 || capsa_host_start(&host) < 0) return 1;
  capsa_renderer_t *r;
  if (capsa_host_spawn(&host, k, NULL, &r) < 0) return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
)";
  std::string rpath = " -Wl,-rpath," + prefix_ + "/lib";
  struct Variant {
    const char *name, *cflags, *pc;
    bool asan;
  } variants[] = {
      {"asan_shared", "-fsanitize=address -fno-omit-frame-pointer", "capsa",
       true},
      {"asan_static", "-fsanitize=address -fno-omit-frame-pointer",
       "capsa-static", true},
      {"plain_shared", "", "capsa", false},
  };
  std::vector<std::string> runs = {""};
  if (geteuid() == 0) runs.push_back(kAsNobody);
  for (const Variant &v : variants) {
    std::string exe =
        Build(src, v.name,
              std::string(v.cflags) + " " +
                  Pc("--cflags --libs " + std::string(v.pc)) + rpath);
    for (const std::string &as : runs) {
      std::string out;
      // The host's own leaks are not the point (it never frees the loop).
      std::string cmd = "cd " + Q(tmp_.path) +
                        " && ASAN_OPTIONS=detect_leaks=0 timeout 60 " + as +
                        Q(exe);
      EXPECT_EQ(0, Sh(cmd, &out)) << cmd << "\n" << out;
      EXPECT_NE(std::string::npos, out.find("renderer says: started"))
          << cmd << "\n"
          << out;
      EXPECT_EQ(std::string::npos, out.find("Failed to mmap")) << out;
      bool rlimits = out.find("limits: rlimits") != std::string::npos;
      bool said = out.find(
                      "RLIMIT_AS not applied (AddressSanitizer runtime in this "
                      "process)") != std::string::npos;
      size_t at = out.find("limits: ");
      if (at != std::string::npos && as.empty())
        printf("[ sdk ] %s: %s\n", v.name,
               out.substr(at, out.find('\n', at) - at).c_str());
      if (v.asan && rlimits) {
        EXPECT_TRUE(said) << cmd << "\n" << out;
      }
      if (!v.asan) {
        EXPECT_FALSE(said) << cmd << "\n" << out;
      }
    }
  }
}
