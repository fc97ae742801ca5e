// A renderer executable of its own (capsa_host_options_t.renderer_exe):
// kinds defined by name come from the executable's registry, the zygote and
// every renderer run its image (not the host's), the example host decodes a
// PNG through it, and every way the option can be wrong fails
// capsa_host_start with a reason naming the option, the file and, for a
// kind the executable lacks, the kind and what it registers. Run as root
// and as uid 65534.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/examples/png.capsa.h"
#include "host/png_writer.h"
#include "renderer/runtime.h"
#include "tests/harness/child.h"
#include "tests/harness/run_loop.h"

namespace {

const capsa_interface_t *const kPngIface[] = {&capsa_example_png_interface};

std::string ExeDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  std::string s(buf);
  return s.substr(0, s.rfind('/'));
}

std::string Renderer() {
  return ExeDir() + "/png_renderer_example";
}

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A scratch directory of the running user (root, or 65534 in the
// unprivileged pass), removed at the end.
struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/capsa-rexe-XXXXXX";
    if (mkdtemp(tmpl)) dir = tmpl;
  }
  ~Scratch() {
    if (!dir.empty())
      (void)!system(("rm -rf '" + dir + "'").c_str());  // test scratch only
  }
  // A file with `data` and `mode` (chmod'ed: umask does not cut it).
  std::string File(const std::string &name, const std::string &data,
                   mode_t mode) {
    std::string p = dir + "/" + name;
    std::ofstream(p, std::ios::binary) << data;
    EXPECT_EQ(0, chmod(p.c_str(), mode)) << p << ": " << strerror(errno);
    return p;
  }
};

// A host with renderer_exe = `exe` and the kinds `names` (by name alone),
// started: returns capsa_host_start's result, the error text in *why.
int StartWith(const char *exe, const std::vector<const char *> &names,
              std::string *why) {
  uv_loop_t loop;
  EXPECT_EQ(0, uv_loop_init(&loop));
  capsa_host_t host;
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  o.renderer_exe = exe;
  EXPECT_EQ(0, capsa_host_init(&loop, &host, &o, nullptr));
  for (const char *n : names) {
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, n, nullptr, nullptr);
    k.interfaces = kPngIface;
    k.ninterfaces = 1;
    EXPECT_GE(capsa_host_define_kind(&host, &k), 0)
        << capsa_host_start_error(&host);
  }
  int rc = capsa_host_start(&host);
  *why = capsa_host_start_error(&host);
  if (rc < 0) {
    // A failed start leaves no process behind (a zygote that was started
    // is stopped and reaped): this forked test child has no child left.
    siginfo_t si;
    EXPECT_EQ(-1, waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT));
    EXPECT_EQ(ECHILD, errno);
  }
  capsa_host_close(&host, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&loop));
  return rc;
}

bool Has(const std::string &s, const std::string &what) {
  return s.find(what) != std::string::npos;
}

struct HostRun {
  uv_loop_t loop;
  capsa_host_t host;
  capsa_renderer_t *ready = nullptr;
  bool closed = false;
  std::string events;
};

bool SameInode(const std::string &a, const struct stat &b) {
  struct stat sa;
  return stat(a.c_str(), &sa) == 0 && sa.st_dev == b.st_dev &&
         sa.st_ino == b.st_ino;
}

void OnEvent(capsa_host_t *h, const capsa_host_event_t *ev) {
  HostRun *r = static_cast<HostRun *>(h->data);
  r->events += capsa_host_event_name(ev->type);
  r->events += " ";
  if (ev->type == CAPSA_EV_READY) r->ready = ev->renderer;
}

// Spawns a renderer of `kind` and checks from outside that it runs the
// file `exe` (its inode: the path may be gone), with its libpng mapped.
void SpawnAndCheck(HostRun *t, int kind, const struct stat &exe) {
  t->ready = nullptr;
  t->events.clear();
  capsa_renderer_t *r;
  ASSERT_EQ(0, capsa_host_spawn(&t->host, kind, nullptr, &r));
  ASSERT_TRUE(capsa_test::RunLoopUntil(
      &t->loop, [&] { return t->ready != nullptr; }, 10000))
      << t->events;
  std::string rp = "/proc/" + std::to_string(capsa_renderer_pid(r));
  EXPECT_TRUE(SameInode(rp + "/exe", exe)) << rp;
  std::string maps = ReadFile(rp + "/maps");
  EXPECT_TRUE(Has(maps, "/renderer-copy")) << maps;
  EXPECT_TRUE(Has(maps, "libpng")) << maps;
  EXPECT_EQ(0, capsa_renderer_shutdown(r, 1000));
  ASSERT_TRUE(capsa_test::RunLoopUntil(
      &t->loop, [&] { return Has(t->events, "closed"); }, 10000))
      << t->events;
  EXPECT_EQ("ready shutdown closed ", t->events);
}

// The kind "png" of the example's renderer executable (a copy of it): the
// zygote and the renderer are that program (their /proc/PID/exe), the
// renderer maps its libpng, and capsa_host_image() says which file. The
// host holds the file: with its path removed, a replaced zygote still
// execs it.
void RunFromTheExecutable() {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  std::string exe = s.File("renderer-copy", ReadFile(Renderer()), 0755);
  struct stat st;
  ASSERT_EQ(0, stat(exe.c_str(), &st));
  HostRun t;
  ASSERT_EQ(0, uv_loop_init(&t.loop));
  capsa_host_options_t o;
  capsa_host_options_init(&o);
  o.renderer_exe = exe.c_str();
  ASSERT_EQ(0, capsa_host_init(&t.loop, &t.host, &o, OnEvent));
  t.host.data = &t;
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "png", nullptr, nullptr);
  k.interfaces = kPngIface;
  k.ninterfaces = 1;
  int kind = capsa_host_define_kind(&t.host, &k);
  ASSERT_EQ(0, kind) << capsa_host_start_error(&t.host);
  ASSERT_EQ(0, capsa_host_start(&t.host)) << capsa_host_start_error(&t.host);
  EXPECT_EQ("exec: " + exe, capsa_host_image(&t.host));
  pid_t z = capsa_host_zygote_pid(&t.host);
  std::string zp = "/proc/" + std::to_string(z);
  EXPECT_TRUE(SameInode(zp + "/exe", st)) << zp;
  EXPECT_EQ(std::string("capsa-zygote", 13), ReadFile(zp + "/cmdline"));
  EXPECT_EQ("", ReadFile(zp + "/environ"));
  // no_new_privs before its exec, and held.
  EXPECT_TRUE(Has(ReadFile(zp + "/status"), "NoNewPrivs:\t1"));
  SpawnAndCheck(&t, kind, st);

  ASSERT_EQ(0, unlink(exe.c_str()));
  ASSERT_EQ(0, kill(z, SIGKILL));
  usleep(100 * 1000);
  SpawnAndCheck(&t, kind, st);  // replaces the zygote first
  EXPECT_EQ(1u, capsa_host_zygote_restarts(&t.host));
  EXPECT_NE(z, capsa_host_zygote_pid(&t.host));
  EXPECT_TRUE(SameInode(
      "/proc/" + std::to_string(capsa_host_zygote_pid(&t.host)) + "/exe", st));

  capsa_host_close(&t.host, nullptr);
  uv_run(&t.loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&t.loop));
}

TEST(RendererExe, ZygoteAndRenderersAreTheRendererExecutable) {
  CAPSA_EXPECT_CHILD_OK_T(RunFromTheExecutable, 30000);
}

// 64-bit FNV-1a, as png_host prints it.
uint64_t Fnv1a64(const std::vector<uint8_t> &v) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : v) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// The example as its user runs it: png_host (no libpng) has
// png_renderer_example decode a PNG written here, pixel for pixel.
TEST(RendererExe, ExampleHostDecodesThroughTheRendererExecutable) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  const uint32_t w = 41, h = 29;
  std::vector<uint8_t> px(w * h * 4);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      uint8_t *p = &px[(y * w + x) * 4];
      p[0] = (uint8_t)(x * 6);
      p[1] = (uint8_t)(y * 9);
      p[2] = (uint8_t)(x * y);
      p[3] = (uint8_t)(255 - x);
    }
  std::string png = s.dir + "/in.png";
  int fd = open(png.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  struct capsa_png_image img = {px.data(), px.size(), w,
                                h,         w * 4,     CAPSA_PNG_RGBA8};
  ASSERT_EQ(0, capsa_png_write_fd(&img, fd));
  close(fd);
  char want[128];
  snprintf(want, sizeof want, "%s: %ux%u RGBA, fnv1a64 %016llx (renderer ",
           png.c_str(), w, h, (unsigned long long)Fnv1a64(px));
  std::string cmd = ExeDir() + "/png_host_example '" + Renderer() + "' '" +
                    png + "' '" + s.dir + "/missing.png' 2>&1";
  FILE *f = popen(cmd.c_str(), "r");
  ASSERT_NE(nullptr, f);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  int st = pclose(f);
  ASSERT_TRUE(WIFEXITED(st)) << out;
  // One file of two could not be read: decoded the other, exit 1.
  EXPECT_EQ(1, WEXITSTATUS(st)) << out;
  EXPECT_TRUE(Has(out, want)) << "want: " << want << "\n" << out;
  EXPECT_TRUE(Has(out, "missing.png: No such file or directory")) << out;
}

TEST(RendererExe, MissingFileIsRefusedNamingTheOption) {
  CAPSA_EXPECT_CHILD_OK([] {
    std::string why;
    EXPECT_EQ(-ENOENT, StartWith("/nonexistent/capsa-renderer", {"png"}, &why));
    EXPECT_EQ(
        "renderer_exe '/nonexistent/capsa-renderer': cannot open: No such "
        "file or directory",
        why);
  });
}

// Mode 0644: not executable, for root too (no x bit at all).
TEST(RendererExe, NonExecutableFileIsRefused) {
  CAPSA_EXPECT_CHILD_OK([] {
    Scratch s;
    ASSERT_FALSE(s.dir.empty());
    std::string p = s.File("renderer", ReadFile(Renderer()), 0644);
    std::string why;
    EXPECT_EQ(-EACCES, StartWith(p.c_str(), {"png"}, &why));
    EXPECT_TRUE(Has(why, "renderer_exe '" + p +
                             "': not executable by this process (mode 0644"))
        << why;
  });
}

TEST(RendererExe, DirectoryScriptAndSetIdFileAreRefused) {
  CAPSA_EXPECT_CHILD_OK([] {
    Scratch s;
    ASSERT_FALSE(s.dir.empty());
    std::string why;
    EXPECT_EQ(-EISDIR, StartWith(s.dir.c_str(), {"png"}, &why));
    EXPECT_TRUE(Has(why, "a directory, not an executable file")) << why;
    // execveat of a descriptor cannot run a script: said before the exec.
    std::string sh = s.File("renderer.sh", "#!/bin/sh\nexit 0\n", 0755);
    EXPECT_EQ(-ENOEXEC, StartWith(sh.c_str(), {"png"}, &why));
    EXPECT_TRUE(Has(why, "renderer_exe '" + sh + "': not an ELF executable"))
        << why;
    std::string suid = s.File("renderer-suid", ReadFile(Renderer()), 04755);
    EXPECT_EQ(-EPERM, StartWith(suid.c_str(), {"png"}, &why));
    EXPECT_TRUE(Has(why, "set-user-ID or set-group-ID: refused")) << why;
  });
}

// The host cannot see the executable's registry: its zygote reports the
// names, and a kind it lacks fails the start, naming kind and file.
void KindNotRegistered() {
  std::string exe = Renderer(), why;
  EXPECT_EQ(-ENOENT, StartWith(exe.c_str(), {"png", "jpeg"}, &why));
  EXPECT_EQ("renderer_exe '" + exe +
                "': kind 'jpeg' is not registered in it "
                "(CAPSA_RENDERER_KIND; it registers: png)",
            why);
  // The kinds it has: started.
  EXPECT_EQ(0, StartWith(exe.c_str(), {"png"}, &why)) << why;
  EXPECT_EQ("", why);
}

TEST(RendererExe, KindNotRegisteredInTheExecutableFailsTheStart) {
  CAPSA_EXPECT_CHILD_OK_T(KindNotRegistered, 30000);
}

// ELF that the kernel will not run, and an ELF program that is no zygote
// (its main never calls capsa_main): each said as such.
TEST(RendererExe, ExecutableThatIsNoZygoteFailsTheStart) {
  CAPSA_EXPECT_CHILD_OK_T(
      [] {
        Scratch s;
        ASSERT_FALSE(s.dir.empty());
        std::string bad = s.File(
            "broken", std::string("\177ELF") + std::string(60, '\0'), 0755);
        std::string why;
        EXPECT_EQ(-ENOEXEC, StartWith(bad.c_str(), {"png"}, &why));
        EXPECT_EQ("renderer_exe '" + bad + "': exec failed: Exec format error",
                  why);
        EXPECT_EQ(-EPROTO, StartWith("/bin/true", {"png"}, &why));
        EXPECT_TRUE(Has(why,
                        "renderer_exe '/bin/true': did not answer as a capsa "
                        "zygote"))
            << why;
        EXPECT_TRUE(Has(why, "must call capsa_main(argc, argv) first")) << why;
      },
      30000);
}

// With renderer_exe a kind is a name: an entry of the host's is refused,
// and without it a kind needs one.
TEST(RendererExe, KindEntryMustBeNullExactlyWithARendererExecutable) {
  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  for (bool exe : {true, false}) {
    capsa_host_t host;
    capsa_host_options_t o;
    capsa_host_options_init(&o);
    o.renderer_exe = exe ? "/nonexistent" : nullptr;
    ASSERT_EQ(0, capsa_host_init(&loop, &host, &o, nullptr));
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, "png", exe ? capsa_renderer_main : nullptr,
                            nullptr);
    EXPECT_EQ(-EINVAL, capsa_host_define_kind(&host, &k));
    EXPECT_TRUE(Has(capsa_host_start_error(&host),
                    exe ? "main and arg must be NULL" : "main is NULL"))
        << capsa_host_start_error(&host);
    capsa_kind_options_init(&k, "png", exe ? nullptr : capsa_renderer_main,
                            nullptr);
    EXPECT_EQ(0, capsa_host_define_kind(&host, &k));
    capsa_host_close(&host, nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  EXPECT_EQ(0, uv_loop_close(&loop));
}

}  // namespace
