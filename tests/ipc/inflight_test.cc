// The in-flight descriptor count (ipc/inflight.h) on positions given by
// hand: what a peer reading during a send, or sends measured only in part,
// may make SIOCOUTQ show.
#include "ipc/inflight.h"

#include <gtest/gtest.h>

namespace {

struct Inflight {
  capsa__inflight_t f = {};
  ~Inflight() {
    capsa__inflight_free(&f);
  }
};

TEST(Inflight, ARecordIsReceivedOnceLessIsUnreadThanWasSentAfterIt) {
  Inflight t;
  capsa__inflight_sent(&t.f, 0, 300, 1);    // ends at 300
  capsa__inflight_sent(&t.f, 300, 600, 0);  // 300 bytes after it
  EXPECT_EQ(1u, capsa__inflight_update(&t.f, 600));
  EXPECT_EQ(1u, capsa__inflight_update(&t.f, 301));  // its last byte unread
  EXPECT_EQ(0u, capsa__inflight_update(&t.f, 300));
  EXPECT_EQ(0u, capsa__inflight_update(&t.f, 0));
}

// The peer read an earlier, larger message between the two SIOCOUTQ reads:
// the send shows no rise, and what was sent before the first record was not
// measured at all. The record must still count until the socket is empty.
TEST(Inflight, ASendThatShowsNoRiseIsNotTakenForRead) {
  Inflight t;
  capsa__inflight_sent(&t.f, 5000, 5000, 2);
  EXPECT_EQ(2u, capsa__inflight_update(&t.f, 5000));
  capsa__inflight_sent(&t.f, 4000, 4000, 3);  // again
  EXPECT_EQ(5u, capsa__inflight_update(&t.f, 10));
  EXPECT_EQ(0u, capsa__inflight_update(&t.f, 0));
  EXPECT_EQ(0, capsa__inflight_active(&t.f));
}

TEST(Inflight, UnknownUnreadKeepsTheCount) {
  Inflight t;
  capsa__inflight_sent(&t.f, 0, 100, 1);
  EXPECT_EQ(1u, capsa__inflight_update(&t.f, -EBADF));
  capsa__inflight_sent(&t.f, -EBADF, -EBADF, 4);  // not measured: counted
  EXPECT_EQ(5u, capsa__inflight_update(&t.f, 1));
  EXPECT_EQ(0u, capsa__inflight_update(&t.f, 0));
}

// More records than the ring holds are counted until the socket is empty.
TEST(Inflight, PastTheRecordLimitDescriptorsStillCount) {
  Inflight t;
  const unsigned n = CAPSA__INFLIGHT_MAX_RECORDS + 10;
  for (unsigned i = 0; i < n; i++)
    capsa__inflight_sent(&t.f, (int64_t)i * 100, (int64_t)(i + 1) * 100, 1);
  EXPECT_EQ(n, capsa__inflight_update(&t.f, (int64_t)n * 100));
  // Everything but the last 10 messages read: the records are, and the 10
  // untracked descriptors still count.
  EXPECT_EQ(10u, capsa__inflight_update(&t.f, 10 * 100));
  EXPECT_EQ(0u, capsa__inflight_update(&t.f, 0));
}

}  // namespace
