// sandbox/capmode/capmode.h "Encoding": a recorded policy survives the trip to
// a process that shares no memory with the recorder (the exec'd zygote).
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/capmode/capmode.h"
#include "tests/harness/child.h"

namespace {

std::vector<unsigned char> Encode(const capsa_capmode_policy *p,
                                  std::vector<int> *dirs) {
  std::vector<unsigned char> buf(16384);
  int fds[8];
  unsigned n = 0;
  ssize_t len =
      capsa_capmode_policy_encode(p, buf.data(), buf.size(), fds, 8, &n);
  EXPECT_GT(len, 0) << strerror((int)-len);
  buf.resize(len > 0 ? (size_t)len : 0);
  if (dirs) dirs->assign(fds, fds + n);
  return buf;
}

capsa_capmode_policy *Recorded(int dirfd) {
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  struct capsa_arg_cmp c = {0, CAPSA_CMP_MASKED_EQ, 0xffffffffu, 7};
  EXPECT_EQ(0, capsa_capmode_policy_allow_name(p, "sysinfo", nullptr, 0,
                                               "wire test: no argument"));
  EXPECT_EQ(0, capsa_capmode_policy_allow_name(p, "getpriority", &c, 1,
                                               "wire test: one comparison"));
  EXPECT_EQ(0, capsa_capmode_policy_allow_launcher(p, "capset", nullptr, 0,
                                                   "wire test: launcher row"));
  if (dirfd >= 0) {
    EXPECT_EQ(0, capsa_capmode_policy_allow_dir(p, dirfd));
  }
  EXPECT_EQ(0, capsa_capmode_policy_set_trace(p, true));
  EXPECT_EQ(0, capsa_capmode_policy_disable_layer(p, CAPSA_LAYER_LANDLOCK));
  return p;
}

TEST(CapModeWire, RoundTripKeepsEveryRecordedItem) {
  int dir = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  capsa_capmode_policy *p = Recorded(dir);
  std::vector<int> dirs;
  std::vector<unsigned char> a = Encode(p, &dirs);
  ASSERT_EQ(1u, dirs.size());
  EXPECT_EQ(dir, dirs[0]);  // the caller's own descriptor, to send
  int copy = fcntl(dir, F_DUPFD_CLOEXEC, 0);  // what a receiver would hold
  capsa_capmode_policy *q = nullptr;
  ASSERT_EQ(0, capsa_capmode_policy_decode(a.data(), a.size(), &copy, 1, &q));
  ASSERT_NE(nullptr, q);
  std::vector<int> dirs2;
  EXPECT_EQ(a, Encode(q, &dirs2));  // the same bytes again
  ASSERT_EQ(1u, dirs2.size());
  EXPECT_EQ(copy, dirs2[0]);
  // Both compile to the same policy.
  struct capsa_capmode_report rp, rq;
  ASSERT_EQ(0, capsa_capmode_policy_compile(p));
  ASSERT_EQ(0, capsa_capmode_policy_compile(q));
  ASSERT_EQ(0, capsa_capmode_policy_report(p, &rp));
  ASSERT_EQ(0, capsa_capmode_policy_report(q, &rq));
  char lp[512], lq[512];
  ASSERT_GT(capsa_capmode_report_format(&rp, false, lp, sizeof lp), 0);
  ASSERT_GT(capsa_capmode_report_format(&rq, false, lq, sizeof lq), 0);
  EXPECT_STREQ(lp, lq);
  EXPECT_EQ(CAPSA_LAYER_DISABLED, rq.landlock) << lq;
  // Compiled: nothing more to encode.
  unsigned char b[64];
  unsigned n;
  EXPECT_EQ(-EBUSY,
            capsa_capmode_policy_encode(q, b, sizeof b, nullptr, 0, &n));
  capsa_capmode_policy_free(p);
  capsa_capmode_policy_free(q);
  close(copy);
  close(dir);
}

TEST(CapModeWire, EveryTruncationAndBadFieldIsRefused) {
  capsa_capmode_policy *p = Recorded(-1);
  std::vector<unsigned char> a = Encode(p, nullptr);
  capsa_capmode_policy *q = reinterpret_cast<capsa_capmode_policy *>(1);
  for (size_t len = 0; len < a.size(); len++) {
    EXPECT_EQ(-EBADMSG,
              capsa_capmode_policy_decode(a.data(), len, nullptr, 0, &q))
        << len;
    EXPECT_EQ(nullptr, q);
  }
  std::vector<unsigned char> longer = a;
  longer.push_back(0);
  EXPECT_EQ(-EBADMSG, capsa_capmode_policy_decode(longer.data(), longer.size(),
                                                  nullptr, 0, &q));
  std::vector<unsigned char> bad = a;
  bad[0] ^= 1;  // magic
  EXPECT_EQ(-EBADMSG, capsa_capmode_policy_decode(bad.data(), bad.size(),
                                                  nullptr, 0, &q));
  int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // A descriptor the bytes do not announce.
  EXPECT_EQ(-EBADMSG,
            capsa_capmode_policy_decode(a.data(), a.size(), &fd, 1, &q));
  close(fd);
  capsa_capmode_policy_free(p);
}

TEST(CapModeWire, EncodeSaysWhenItDoesNotFit) {
  int dir = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  capsa_capmode_policy *p = Recorded(dir);
  unsigned char b[32];
  int fds[1];
  unsigned n = 99;
  EXPECT_EQ(-ENOSPC, capsa_capmode_policy_encode(p, b, sizeof b, fds, 1, &n));
  std::vector<unsigned char> big(16384);
  EXPECT_EQ(-E2BIG, capsa_capmode_policy_encode(p, big.data(), big.size(),
                                                nullptr, 0, &n));
  EXPECT_EQ(-EINVAL,
            capsa_capmode_policy_encode(nullptr, b, sizeof b, fds, 1, &n));
  capsa_capmode_policy_free(p);
  close(dir);
}

// Tracing left unset is the recorder's CAPSA_TRACE, not the receiver's
// (an exec'd zygote has an empty environment).
TEST(CapModeWire, UnsetTracingIsResolvedWhereRecorded) {
  CAPSA_EXPECT_CHILD_OK([] {
    capsa_capmode_policy *p = capsa_capmode_policy_new();
    unsetenv("CAPSA_TRACE");
    std::vector<unsigned char> off = Encode(p, nullptr);
    setenv("CAPSA_TRACE", "1", 1);
    std::vector<unsigned char> on = Encode(p, nullptr);
    EXPECT_NE(off, on);
    unsetenv("CAPSA_TRACE");
    capsa_capmode_policy *q = nullptr;
    ASSERT_EQ(
        0, capsa_capmode_policy_decode(on.data(), on.size(), nullptr, 0, &q));
    EXPECT_EQ(on, Encode(q, nullptr));  // still on, whatever the env says now
    capsa_capmode_policy_free(p);
    capsa_capmode_policy_free(q);
  });
}

}  // namespace
