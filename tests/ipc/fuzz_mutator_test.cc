// <capsa/fuzz.h> without libFuzzer: the mutator, driven by the thumbnail
// interface's descriptors from an empty input, must produce messages the
// schema accepts most of the time, of every message, with fields at the
// edges of their declared ranges and lengths and handles declared as the
// schema says (kind, writability, sizes up to capsa_max_size), plus some
// deliberately refused ones; capsa_fuzz_one must hand exactly what was
// written to the handler.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/fuzz.h"
#include "tests/ipc/interfaces/thumbnail.capsa.h"

namespace {

struct Seen {
  unsigned accepted = 0;
  std::set<uint32_t> ids;
  std::set<uint32_t> max_width;
  std::set<size_t> name_len, preview_len;
  std::set<unsigned> percent;
  bool frame_writable = false, frame_at_max = false, png_read_only = true;
  std::set<int32_t> status;
};

int Record(uint32_t id, const void *value, const capsa_handle_t *h, uint32_t nh,
           void *arg) {
  Seen *s = static_cast<Seen *>(arg);
  s->accepted++;
  s->ids.insert(id);
  if (id == CAPSA_TEST_THUMBNAIL_DECODE) {
    auto *d = static_cast<const capsa_test_thumbnail_decode_t *>(value);
    s->max_width.insert(d->max_width);
    if (d->name) s->name_len.insert(strlen(d->name));
    EXPECT_LT((uint32_t)d->png, nh);
    if ((uint32_t)d->png < nh && h[d->png].writable) s->png_read_only = false;
    if (d->frame >= 0 && (uint32_t)d->frame < nh) {
      const capsa_handle_t &f = h[d->frame];
      EXPECT_EQ(CAPSA_HANDLE_SHM, f.kind);
      // A real descriptor as declared: a memfd of the size, write-sealed
      // unless writable.
      struct stat st;
      EXPECT_EQ(0, fstat(f.fd, &st));
      EXPECT_EQ((off_t)f.size, st.st_size);
      int seals = fcntl(f.fd, F_GET_SEALS);
      EXPECT_EQ(!f.writable, (seals & F_SEAL_WRITE) != 0) << seals;
      if (f.writable) s->frame_writable = true;
      if (f.size == 67108864) s->frame_at_max = true;
    }
  } else if (id == CAPSA_TEST_THUMBNAIL_DECODE_RESULT) {
    auto *r = static_cast<const capsa_test_thumbnail_decode_result_t *>(value);
    s->preview_len.insert(r->preview.len);
    s->status.insert(r->status);
  } else if (id == CAPSA_TEST_THUMBNAIL_PROGRESS) {
    auto *p = static_cast<const capsa_test_thumbnail_progress_t *>(value);
    s->percent.insert(p->percent);
  }
  return 0;
}

TEST(FuzzMutator, ReachesEveryMessageAndTheEdgesOfTheSchema) {
  const capsa_interface_t *iface = &capsa_test_thumbnail_interface;
  std::vector<uint8_t> buf(8192);
  size_t size = 0;
  Seen seen;
  const unsigned kRounds = 4000;
  int lowest = dup(0);  // the lowest free number: grows if one leaked
  close(lowest);
  for (unsigned i = 0; i < kRounds; i++) {
    size = capsa_fuzz_mutate(iface, buf.data(), size, buf.size(), i);
    ASSERT_LE(size, buf.size());
    EXPECT_EQ(0, capsa_fuzz_one(iface, buf.data(), size, Record, &seen));
  }
  int now = dup(0);
  close(now);
  EXPECT_EQ(lowest, now) << "a handle's descriptor was not closed";
  printf("[ fuzz ] %u of %u mutations accepted by the schema\n", seen.accepted,
         kRounds);
  // Most are accepted; the rest are the deliberate out-of-schema ones.
  EXPECT_GT(seen.accepted, kRounds / 2);
  EXPECT_LT(seen.accepted, kRounds);
  EXPECT_EQ((std::set<uint32_t>{1, 2, 3}), seen.ids);
  EXPECT_TRUE(seen.max_width.count(1)) << "capsa_min of max_width";
  EXPECT_TRUE(seen.max_width.count(4096)) << "capsa_max of max_width";
  EXPECT_TRUE(seen.name_len.count(64)) << "capsa_max_len of name";
  EXPECT_TRUE(seen.preview_len.count(1024)) << "capsa_max_len of preview";
  EXPECT_TRUE(seen.percent.count(100));
  EXPECT_TRUE(seen.status.count(-4095));
  EXPECT_TRUE(seen.frame_writable);
  EXPECT_TRUE(seen.frame_at_max) << "capsa_max_size of frame";
  EXPECT_TRUE(seen.png_read_only);
}

TEST(FuzzMutator, WriteThenOneHandsTheSameMessageToTheHandler) {
  capsa_test_thumbnail_progress_t p;
  capsa_test_thumbnail_progress_init(&p);
  p.percent = 42;
  p.note = "edge";
  p.offset = -7;
  uint8_t buf[4096];
  int n = capsa_fuzz_write(&capsa_test_thumbnail_interface,
                           CAPSA_TEST_THUMBNAIL_PROGRESS, &p, nullptr, 0, buf,
                           sizeof buf);
  ASSERT_GT(n, CAPSA_FUZZ_HEADER);
  struct Got {
    uint32_t id = 0;
    capsa_test_thumbnail_progress_t v;
    std::string note;
  } got;
  auto cb = [](uint32_t id, const void *value, const capsa_handle_t *, uint32_t,
               void *arg) {
    Got *g = static_cast<Got *>(arg);
    g->id = id;
    g->v = *static_cast<const capsa_test_thumbnail_progress_t *>(value);
    g->note = g->v.note ? g->v.note : "";
    return 0;
  };
  EXPECT_EQ(0, capsa_fuzz_one(&capsa_test_thumbnail_interface, buf, (size_t)n,
                              cb, &got));
  EXPECT_EQ((uint32_t)CAPSA_TEST_THUMBNAIL_PROGRESS, got.id);
  EXPECT_EQ(42, got.v.percent);
  EXPECT_EQ(-7, got.v.offset);
  EXPECT_EQ("edge", got.note);
  // Out of range: the encoder refuses it, as the decoder would.
  p.percent = 101;
  EXPECT_EQ(-EINVAL, capsa_fuzz_write(&capsa_test_thumbnail_interface,
                                      CAPSA_TEST_THUMBNAIL_PROGRESS, &p,
                                      nullptr, 0, buf, sizeof buf));
  // Garbage never reaches the handler.
  got.id = 0;
  uint8_t junk[64];
  memset(junk, 0xa5, sizeof junk);
  EXPECT_EQ(0, capsa_fuzz_one(&capsa_test_thumbnail_interface, junk,
                              sizeof junk, cb, &got));
  EXPECT_EQ(0u, got.id);
}

}  // namespace
