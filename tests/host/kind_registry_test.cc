// The kind registry and the early hook (host/kind_registry.h): kinds found
// by name, define_kind checked against the registration, capsa_main holding
// the running binary and recognising the zygote image only with its socket.
#include "host/kind_registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/harness/child.h"

namespace {

int EntryA(int, const capsa_sandbox_report_t *, void *) {
  return 0;
}
int EntryB(int, const capsa_sandbox_report_t *, void *) {
  return 1;
}

const int kArgA = 7;

}  // namespace

CAPSA_RENDERER_KIND(registry_a, "registry-test-a", EntryA, &kArgA)

namespace {

TEST(KindRegistry, RegisteredKindIsFoundByName) {
  const capsa_kind_registration_t *r = capsa_kind_lookup("registry-test-a");
  ASSERT_NE(r, nullptr);
  EXPECT_STREQ(r->name, "registry-test-a");
  EXPECT_EQ(r->main, &EntryA);
  EXPECT_EQ(r->arg, (void *)&kArgA);
  EXPECT_EQ(capsa_kind_lookup("registry-test-none"), nullptr);
  EXPECT_EQ(capsa_kind_lookup(nullptr), nullptr);
  EXPECT_FALSE(capsa_kind_registry_overflowed());
}

TEST(KindRegistry, TwoKindsOfOneNameAreAmbiguous) {
  static const capsa_kind_registration_t a = {"registry-test-dup", EntryA,
                                              nullptr};
  static const capsa_kind_registration_t b = {"registry-test-dup", EntryB,
                                              nullptr};
  capsa_kind_register(&a);
  ASSERT_NE(capsa_kind_lookup("registry-test-dup"), nullptr);
  capsa_kind_register(&a);  // the same registration again: harmless
  EXPECT_EQ(capsa_kind_lookup("registry-test-dup"), &a);
  capsa_kind_register(&b);
  EXPECT_EQ(capsa_kind_lookup("registry-test-dup"), nullptr);
}

TEST(KindRegistry, DefineKindRefusesAnotherEntryUnderARegisteredName) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  capsa_host_t host;
  ASSERT_EQ(capsa_host_init(&loop, &host, nullptr, nullptr), 0);
  capsa_kind_options_t k;
  capsa_kind_options_init(&k, "registry-test-a", EntryB, (void *)&kArgA);
  EXPECT_EQ(capsa_host_define_kind(&host, &k), -ENOENT);
  EXPECT_NE(strstr(capsa_host_start_error(&host), "CAPSA_RENDERER_KIND"),
            nullptr)
      << capsa_host_start_error(&host);
  static int other_arg;
  capsa_kind_options_init(&k, "registry-test-a", EntryA, &other_arg);
  EXPECT_EQ(capsa_host_define_kind(&host, &k), -ENOENT);
  capsa_kind_options_init(&k, "registry-test-a", EntryA, (void *)&kArgA);
  EXPECT_EQ(capsa_host_define_kind(&host, &k), 0);
  capsa_host_close(&host, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// The shared test main called the hook: this process holds a descriptor of
// its own binary (the file a zygote image is to exec), close-on-exec.
TEST(KindRegistry, HookHoldsTheRunningBinary) {
  EXPECT_TRUE(capsa_main_called());
  struct stat exe;
  ASSERT_EQ(stat("/proc/self/exe", &exe), 0);
  DIR *d = opendir("/proc/self/fd");
  ASSERT_NE(d, nullptr);
  int found = -1;
  while (struct dirent *e = readdir(d)) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == dirfd(d)) continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_dev == exe.st_dev &&
        st.st_ino == exe.st_ino)
      found = fd;
  }
  closedir(d);
  ASSERT_GE(found, 0);
  EXPECT_EQ(fcntl(found, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(fcntl(found, F_GETFL) & O_ACCMODE, O_RDONLY);
  // Called again: the same descriptor, not a second one.
  char arg0[] = "kind_registry_test";
  char *argv[] = {arg0, nullptr};
  EXPECT_EQ(capsa_main(1, argv), 0);
}

// argv[0] "capsa-zygote" alone is not the zygote image: a user can set it.
// Without a connected unix socket at fd 3 the hook returns to main.
TEST(KindRegistry, ZygoteNameWithoutItsSocketReturnsToMain) {
  auto body = [] {
    char arg0[] = "capsa-zygote";
    char *argv[] = {arg0, nullptr};
    close(3);
    EXPECT_EQ(capsa_main(1, argv), 0);  // nothing at fd 3
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    ASSERT_EQ(dup2(p[0], 3), 3);
    EXPECT_EQ(capsa_main(1, argv), 0);  // a pipe
    int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    ASSERT_GE(s, 0);
    ASSERT_EQ(dup2(s, 3), 3);
    EXPECT_EQ(capsa_main(1, argv), 0);  // a socket connected to nothing
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ASSERT_EQ(dup2(sv[0], 3), 3);
    EXPECT_EQ(capsa_main(1, argv), 0);  // not the control socket's type
  };
  CAPSA_EXPECT_CHILD_OK(body);
}

}  // namespace
