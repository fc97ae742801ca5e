// demos/gzip: round trips, interoperability with the system gzip in both
// directions, multi-member input, corrupt and truncated input, limits.
#include "demos/gzip/gzip.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/workloads/test_util.h"

using capsa_workloads::MakeData;
using capsa_workloads::ReadFile;
using capsa_workloads::TempDir;
using capsa_workloads::WriteFile;

namespace {

int OpenRead(const std::string &p) {
  return open(p.c_str(), O_RDONLY | O_CLOEXEC);
}
int OpenWrite(const std::string &p) {
  return open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

// Compresses file `in` to file `out` with capsa_gzip_compress.
int Compress(const std::string &in, const std::string &out, int level = 0,
             capsa_gzip_stats *st = nullptr) {
  int i = OpenRead(in), o = OpenWrite(out);
  capsa_gzip_options opts = {level, 0, false, 0};
  int r = capsa_gzip_compress(i, o, &opts, st);
  close(i);
  close(o);
  return r;
}

int Decompress(const std::string &in, const std::string &out,
               capsa_gzip_stats *st = nullptr, uint64_t max_output = 0) {
  int i = OpenRead(in), o = OpenWrite(out);
  capsa_gzip_options opts = {0, max_output, false, 0};
  int r = capsa_gunzip(i, o, &opts, st);
  close(i);
  close(o);
  return r;
}

int Sh(const std::string &cmd) {
  return system(cmd.c_str());
}

TEST(Gzip, RoundTripSizes) {
  TempDir d;
  ASSERT_TRUE(d.ok());
  for (size_t n : {size_t{0}, size_t{1}, size_t{65535}, size_t{65536},
                   size_t{3 * 1024 * 1024 + 17}}) {
    std::string data = MakeData(n, static_cast<unsigned>(n));
    ASSERT_TRUE(WriteFile(d.File("in"), data));
    capsa_gzip_stats st;
    ASSERT_EQ(0, Compress(d.File("in"), d.File("in.gz"), 0, &st)) << n;
    EXPECT_EQ(n, st.bytes_in);
    ASSERT_EQ(0, Decompress(d.File("in.gz"), d.File("out"), &st)) << n;
    EXPECT_EQ(1u, st.members);
    EXPECT_EQ(n, st.bytes_out);
    EXPECT_EQ(0u, st.trailing_bytes);
    std::string back;
    ASSERT_TRUE(ReadFile(d.File("out"), &back));
    EXPECT_TRUE(back == data) << "size " << n;
  }
}

TEST(Gzip, OursReadBySystemGzip) {
  TempDir d;
  ASSERT_TRUE(d.ok());
  std::string data = MakeData(1 << 20, 7);
  ASSERT_TRUE(WriteFile(d.File("in"), data));
  for (int level : {1, 6, 9}) {
    ASSERT_EQ(0, Compress(d.File("in"), d.File("ours.gz"), level));
    ASSERT_EQ(0, Sh("gzip -t '" + d.File("ours.gz") + "'")) << level;
    ASSERT_EQ(0, Sh("gzip -dc '" + d.File("ours.gz") + "' > '" +
                    d.File("sys.out") + "'"));
    std::string back;
    ASSERT_TRUE(ReadFile(d.File("sys.out"), &back));
    EXPECT_TRUE(back == data) << "level " << level;
  }
}

TEST(Gzip, SystemGzipReadByOurs) {
  TempDir d;
  ASSERT_TRUE(d.ok());
  std::string data = MakeData(2 << 20, 11);
  ASSERT_TRUE(WriteFile(d.File("in"), data));
  for (const char *flag : {"-1", "-6", "-9", "-n", "-N"}) {
    ASSERT_EQ(0, Sh(std::string("gzip -c ") + flag + " '" + d.File("in") +
                    "' > '" + d.File("sys.gz") + "'"));
    capsa_gzip_stats st;
    ASSERT_EQ(0, Decompress(d.File("sys.gz"), d.File("out"), &st)) << flag;
    std::string back;
    ASSERT_TRUE(ReadFile(d.File("out"), &back));
    EXPECT_TRUE(back == data) << flag;
  }
}

TEST(Gzip, MultiMemberLikeCat) {
  TempDir d;
  ASSERT_TRUE(d.ok());
  std::string a = MakeData(100000, 1), b = MakeData(5, 2),
              c = MakeData(70000, 3);
  ASSERT_TRUE(WriteFile(d.File("a"), a));
  ASSERT_TRUE(WriteFile(d.File("b"), b));
  ASSERT_TRUE(WriteFile(d.File("c"), c));
  // One member from the system gzip, one of ours, one system again.
  ASSERT_EQ(0, Sh("gzip -c '" + d.File("a") + "' > '" + d.File("a.gz") + "'"));
  ASSERT_EQ(0, Compress(d.File("b"), d.File("b.gz")));
  ASSERT_EQ(0, Sh("gzip -c '" + d.File("c") + "' > '" + d.File("c.gz") + "'"));
  ASSERT_EQ(0, Sh("cat '" + d.File("a.gz") + "' '" + d.File("b.gz") + "' '" +
                  d.File("c.gz") + "' > '" + d.File("all.gz") + "'"));
  capsa_gzip_stats st;
  ASSERT_EQ(0, Decompress(d.File("all.gz"), d.File("out"), &st));
  EXPECT_EQ(3u, st.members);
  std::string back;
  ASSERT_TRUE(ReadFile(d.File("out"), &back));
  EXPECT_TRUE(back == a + b + c);
  // And the system gzip agrees on the same file.
  ASSERT_EQ(0, Sh("gzip -dc '" + d.File("all.gz") + "' | cmp -s - '" +
                  d.File("out") + "'"));
}

// A region is larger than its input (page rounding, reuse by a pool, the
// 1-byte region of an empty input): bounded_input reads input_size bytes and
// never the tail, in both directions.
TEST(Gzip, BoundedInputStopsAtInputSize) {
  TempDir d;
  ASSERT_TRUE(d.ok());
  std::string data = MakeData(100000, 7), tail = "TAIL NOT INPUT";
  ASSERT_TRUE(WriteFile(d.File("in"), data + tail));
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{data.size()}}) {
    int i = OpenRead(d.File("in")), o = OpenWrite(d.File("in.gz"));
    capsa_gzip_options bounded = {0, 0, true, n};
    capsa_gzip_stats st = {};
    ASSERT_EQ(0, capsa_gzip_compress(i, o, &bounded, &st)) << n;
    close(i);
    close(o);
    EXPECT_EQ(n, st.bytes_in);
    ASSERT_EQ(0, Decompress(d.File("in.gz"), d.File("out")));
    std::string back;
    ASSERT_TRUE(ReadFile(d.File("out"), &back));
    EXPECT_TRUE(back == data.substr(0, n)) << n;
  }
  // gunzip: bytes after input_size are neither trailing garbage nor read.
  ASSERT_EQ(0, Compress(d.File("in"), d.File("all.gz")));
  std::string gz;
  ASSERT_TRUE(ReadFile(d.File("all.gz"), &gz));
  ASSERT_TRUE(WriteFile(d.File("padded.gz"), gz + std::string(4096, 'x')));
  int i = OpenRead(d.File("padded.gz")), o = OpenWrite(d.File("out"));
  capsa_gzip_options bounded = {0, 0, true, gz.size()};
  capsa_gzip_stats st = {};
  EXPECT_EQ(0, capsa_gunzip(i, o, &bounded, &st));
  close(i);
  close(o);
  EXPECT_EQ(0u, st.trailing_bytes);
  EXPECT_EQ(gz.size(), st.bytes_in);
}

class GzipBad : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(d_.ok());
    data_ = MakeData(200000, 5);
    ASSERT_TRUE(WriteFile(d_.File("in"), data_));
    ASSERT_EQ(0, Compress(d_.File("in"), d_.File("good.gz")));
    ASSERT_TRUE(ReadFile(d_.File("good.gz"), &gz_));
    ASSERT_GT(gz_.size(), 30u);
  }
  int Gunzip(const std::string &bytes, capsa_gzip_stats *st = nullptr) {
    EXPECT_TRUE(WriteFile(d_.File("bad.gz"), bytes));
    return Decompress(d_.File("bad.gz"), d_.File("out"), st);
  }
  TempDir d_;
  std::string data_, gz_;
};

TEST_F(GzipBad, TruncatedEverywhereIsENODATA) {
  // Every cut inside the member, header included, is truncation.
  for (size_t cut : {size_t{1}, size_t{2}, size_t{9}, size_t{10}, size_t{100},
                     gz_.size() / 2, gz_.size() - 8, gz_.size() - 1}) {
    EXPECT_EQ(-ENODATA, Gunzip(gz_.substr(0, cut))) << "cut " << cut;
  }
  EXPECT_EQ(-ENODATA, Gunzip(""));
}

TEST_F(GzipBad, CorruptIsEBADMSG) {
  std::string crc = gz_;
  crc[crc.size() - 6] ^= 0x55;  // CRC-32 in the trailer
  EXPECT_EQ(-EBADMSG, Gunzip(crc));
  std::string len = gz_;
  len[len.size() - 2] ^= 0x01;  // ISIZE in the trailer
  EXPECT_EQ(-EBADMSG, Gunzip(len));
  std::string method = gz_;
  method[2] = 7;  // compression method other than deflate
  EXPECT_EQ(-EBADMSG, Gunzip(method));
  EXPECT_EQ(-EBADMSG, Gunzip("this is plain text, not gzip\n"));
  std::string body = gz_;
  for (size_t i = 20; i < 60; i++) body[i] = static_cast<char>(0xff);
  EXPECT_EQ(-EBADMSG, Gunzip(body));
}

TEST_F(GzipBad, TrailingGarbageIgnoredAndCounted) {
  capsa_gzip_stats st;
  EXPECT_EQ(0, Gunzip(gz_ + "garbage!", &st));
  EXPECT_EQ(8u, st.trailing_bytes);
  EXPECT_EQ(1u, st.members);
  std::string back;
  ASSERT_TRUE(ReadFile(d_.File("out"), &back));
  EXPECT_TRUE(back == data_);
  // A second member cut short after a complete one is still truncation.
  EXPECT_EQ(-ENODATA, Gunzip(gz_ + gz_.substr(0, 20)));
}

TEST_F(GzipBad, OutputLimitIsEFBIG) {
  capsa_gzip_stats st;
  int i = OpenRead(d_.File("good.gz")), o = OpenWrite(d_.File("out"));
  capsa_gzip_options opts = {0, 1000, false, 0};
  EXPECT_EQ(-EFBIG, capsa_gunzip(i, o, &opts, &st));
  EXPECT_LE(st.bytes_out, 1000u);
  close(i);
  close(o);
  EXPECT_EQ(0, Decompress(d_.File("good.gz"), d_.File("out"), &st,
                          data_.size()));  // exactly the limit is fine
}

TEST(GzipArgs, BadArgumentsAndDescriptors) {
  EXPECT_EQ(-EINVAL, capsa_gzip_compress(-1, 1, nullptr, nullptr));
  EXPECT_EQ(-EINVAL, capsa_gunzip(0, -1, nullptr, nullptr));
  capsa_gzip_options bad = {10, 0, false, 0};
  EXPECT_EQ(-EINVAL, capsa_gzip_compress(0, 1, &bad, nullptr));
  bad.level = -1;
  EXPECT_EQ(-EINVAL, capsa_gzip_compress(0, 1, &bad, nullptr));

  // Input read-only, output write-only, as the sandbox hands them out: the
  // wrong direction fails with EBADF.
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  ASSERT_EQ(1, write(p[1], "x", 1));
  EXPECT_EQ(-EBADF, capsa_gzip_compress(p[1], p[0], nullptr, nullptr));
  close(p[0]);
  close(p[1]);

  // Reader gone: EPIPE (SIGPIPE ignored, as the renderer runtime does).
  int in[2], out[2];
  ASSERT_EQ(0, pipe2(in, O_CLOEXEC));
  ASSERT_EQ(0, pipe2(out, O_CLOEXEC));
  close(out[0]);
  ASSERT_EQ(3, write(in[1], "abc", 3));
  close(in[1]);
  struct sigaction sa = {}, old;
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, &old);
  EXPECT_EQ(-EPIPE, capsa_gzip_compress(in[0], out[1], nullptr, nullptr));
  sigaction(SIGPIPE, &old, nullptr);
  close(in[0]);
  close(out[1]);
}

TEST(GzipArgs, StrerrorNamesGzipErrors) {
  EXPECT_STREQ("unexpected end of file (truncated input)",
               capsa_gzip_strerror(-ENODATA));
  EXPECT_STREQ("not in gzip format or corrupt data",
               capsa_gzip_strerror(-EBADMSG));
  EXPECT_STREQ(strerror(ENOSPC), capsa_gzip_strerror(-ENOSPC));
}

}  // namespace
