// The shared-memory SPSC ring (ipc/ring.h): framing and wraparound, a hostile
// peer that corrupts the shared indices and records, bounded waits, and futex
// wake-ups across processes.
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/ring.h"
#include "ipc/shm.h"
#include "tests/harness/child.h"

namespace {

constexpr size_t kCap = 4096;

struct Ring {
  capsa_shm_region_t region;
  capsa_ring_t tx, rx;
  Ring(size_t cap = kCap) {
    size_t size = capsa_ring_region_size(cap);
    EXPECT_NE(0u, size);
    EXPECT_EQ(0, capsa_shm_create(size, "ring", CAPSA_SHM_BOTH_WRITE, &region));
    EXPECT_EQ(0, capsa_ring_init(&tx, &region, CAPSA_RING_PRODUCER));
    EXPECT_EQ(0, capsa_ring_init(&rx, &region, CAPSA_RING_CONSUMER));
  }
  ~Ring() {
    capsa_shm_close(&region);
  }
  // The peer's view of a shared word: what a compromised process can write.
  volatile uint32_t *Word(uint32_t off) {
    return (volatile uint32_t *)((uint8_t *)region.base + off);
  }
  uint8_t *Data() {
    return (uint8_t *)region.base + CAPSA_RING_HEADER;
  }
};

void Fill(std::vector<uint8_t> *v, uint32_t seed) {
  for (size_t i = 0; i < v->size(); i++) (*v)[i] = (uint8_t)(seed * 31 + i);
}

TEST(Ring, RegionSizeAndInitChecks) {
  EXPECT_EQ(0u, capsa_ring_region_size(0));
  EXPECT_EQ(0u, capsa_ring_region_size(2048));
  EXPECT_EQ(0u, capsa_ring_region_size(4096 + 8));
  EXPECT_EQ(0u, capsa_ring_region_size(((size_t)1 << 30) * 2));
  EXPECT_EQ(CAPSA_RING_HEADER + 65536u, capsa_ring_region_size(65536));

  capsa_ring_t ring;
  capsa_shm_region_t bad;
  ASSERT_EQ(0, capsa_shm_create(4 * 4096, "odd", CAPSA_SHM_BOTH_WRITE, &bad));
  EXPECT_EQ(-EINVAL, capsa_ring_init(&ring, &bad, CAPSA_RING_PRODUCER));
  capsa_shm_close(&bad);
  capsa_shm_region_t ro;
  ASSERT_EQ(0, capsa_shm_create(capsa_ring_region_size(kCap), "ro",
                                CAPSA_SHM_PEER_WRITES, &ro));
  EXPECT_EQ(-EACCES, capsa_ring_init(&ring, &ro, CAPSA_RING_CONSUMER));
  EXPECT_EQ(-EINVAL, capsa_ring_init(&ring, &ro, (capsa_ring_role_t)5));
  capsa_shm_close(&ro);
}

TEST(Ring, FramingKindsAndRoles) {
  Ring r;
  char buf[64];
  uint32_t kind = 0;
  EXPECT_EQ(-EAGAIN, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 0));
  EXPECT_EQ(0, capsa_ring_poll(&r.rx));
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 7, "hello", 5, 0));
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 9, nullptr, 0, 0));
  EXPECT_EQ(1, capsa_ring_poll(&r.rx));
  // Too small a buffer: refused, and the record stays queued.
  EXPECT_EQ(-EMSGSIZE, capsa_ring_read(&r.rx, buf, 4, &kind, 0));
  ASSERT_EQ(5, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 0));
  EXPECT_EQ(0, memcmp(buf, "hello", 5));
  EXPECT_EQ(7u, kind);
  ASSERT_EQ(0, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 0));
  EXPECT_EQ(9u, kind);
  // Each side only does its own job.
  EXPECT_EQ(-EINVAL, capsa_ring_write(&r.rx, 1, "x", 1, 0));
  EXPECT_EQ(-EINVAL, capsa_ring_read(&r.tx, buf, sizeof buf, &kind, 0));
  std::vector<uint8_t> big(CAPSA_RING_MAX_MESSAGE + 1);
  EXPECT_EQ(-EMSGSIZE, capsa_ring_write(&r.tx, 1, big.data(), big.size(), 0));
  // A record can never exceed the data area (4096 - 8 header bytes).
  EXPECT_EQ(-EMSGSIZE, capsa_ring_write(&r.tx, 1, big.data(), kCap, 0));
  EXPECT_EQ(0, capsa_ring_write(&r.tx, 1, big.data(), kCap - 8, 0));
  EXPECT_EQ(-EAGAIN, capsa_ring_write(&r.tx, 1, "x", 1, 0));  // full
  EXPECT_EQ((int)(kCap - 8),
            capsa_ring_read(&r.rx, big.data(), big.size(), &kind, 0));
  // Nobody announced sleeping: no wake-up system call on either side.
  EXPECT_EQ(0u, r.tx.stats.wakes + r.tx.stats.doorbells);
  EXPECT_EQ(0u, r.rx.stats.wakes + r.rx.stats.doorbells);
}

TEST(Ring, WrapsAroundManyTimesWithoutLosingBytes) {
  Ring r;
  std::vector<uint8_t> out(1000), in(CAPSA_RING_MAX_MESSAGE);
  uint32_t sent = 0, got = 0;
  // Varying lengths put record boundaries at every alignment of the wrap.
  while (got < 20000) {
    for (;;) {
      out.resize((sent * 37) % 1000);
      Fill(&out, sent);
      int err = capsa_ring_write(&r.tx, sent, out.data(), out.size(), 0);
      if (err == -EAGAIN) break;
      ASSERT_EQ(0, err);
      sent++;
    }
    for (;;) {
      uint32_t kind;
      int n = capsa_ring_read(&r.rx, in.data(), in.size(), &kind, 0);
      if (n == -EAGAIN) break;
      ASSERT_EQ((int)((got * 37) % 1000), n);
      ASSERT_EQ(got, kind);
      std::vector<uint8_t> want(n);
      Fill(&want, got);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), in.begin()))
          << "message " << got;
      got++;
    }
  }
  EXPECT_EQ(sent, got);
  EXPECT_GT(r.tx.pos, 20 * kCap);  // really wrapped many times
}

TEST(Ring, IndicesWrapAroundTwoToThe32) {
  Ring r;
  // Start both sides just below 2^32 (as after 4 GiB of traffic).
  uint32_t start = 0xFFFFF000u;
  r.tx.pos = r.rx.pos = start;
  *r.Word(CAPSA_RING_OFF_TAIL) = start;
  *r.Word(CAPSA_RING_OFF_HEAD) = start;
  std::vector<uint8_t> out(600), in(600);
  for (uint32_t i = 0; i < 100; i++) {
    Fill(&out, i);
    ASSERT_EQ(0, capsa_ring_write(&r.tx, i, out.data(), out.size(), 0));
    uint32_t kind;
    ASSERT_EQ(600, capsa_ring_read(&r.rx, in.data(), in.size(), &kind, 0));
    ASSERT_EQ(out, in);
  }
  EXPECT_LT(r.tx.pos, start);  // crossed 2^32
}

TEST(Ring, ConsumerRefusesCorruptTail) {
  struct Case {
    const char *what;
    uint32_t tail;
  } cases[] = {
      {"beyond capacity", kCap + 8},
      {"backwards", 0xFFFFFFF8u},
      {"misaligned", 12},
      {"partial header", 4},
  };
  for (const Case &c : cases) {
    Ring r;
    ASSERT_EQ(0, capsa_ring_write(&r.tx, 1, "abcd", 4, 0));
    *r.Word(CAPSA_RING_OFF_TAIL) = c.tail;
    char buf[64];
    uint32_t kind;
    EXPECT_EQ(-EBADMSG, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 0))
        << c.what;
    // Sticky: the ring is never trusted again, even if the peer repairs it.
    *r.Word(CAPSA_RING_OFF_TAIL) = 16;
    EXPECT_EQ(-EBADMSG, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 0))
        << c.what;
    EXPECT_EQ(-EBADMSG, capsa_ring_poll(&r.rx)) << c.what;
  }
}

TEST(Ring, ConsumerRefusesCorruptRecordLength) {
  uint32_t lens[] = {17, CAPSA_RING_MAX_MESSAGE + 1, 0xFFFFFFFFu, 0x80000000u};
  for (uint32_t len : lens) {
    Ring r;
    ASSERT_EQ(0, capsa_ring_write(&r.tx, 1, "0123456789", 10, 0));
    memcpy(r.Data(), &len, 4);  // the peer rewrites the header it published
    std::vector<uint8_t> buf(CAPSA_RING_MAX_MESSAGE * 2);
    uint32_t kind;
    EXPECT_EQ(-EBADMSG,
              capsa_ring_read(&r.rx, buf.data(), buf.size(), &kind, 0))
        << len;
  }
}

TEST(Ring, ProducerRefusesCorruptHead) {
  Ring r;
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 1, "x", 1, 0));
  *r.Word(CAPSA_RING_OFF_HEAD) = 64;  // consumed more than was ever written
  EXPECT_EQ(-EBADMSG, capsa_ring_write(&r.tx, 1, "y", 1, 0));
  *r.Word(CAPSA_RING_OFF_HEAD) = 0;
  EXPECT_EQ(-EBADMSG, capsa_ring_write(&r.tx, 1, "y", 1, 0));  // sticky
}

TEST(Ring, WaitsAreBounded) {
  Ring r;
  capsa_ring_set_spin(&r.rx, 0, 0);
  char buf[8];
  uint32_t kind;
  EXPECT_EQ(-ETIMEDOUT, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 30));
  EXPECT_GE(r.rx.stats.sleeps, 1u);
  // The announcement is withdrawn after the wait.
  EXPECT_EQ(0u, *r.Word(CAPSA_RING_OFF_CONSUMER_SLEEPING));
  // A full ring: the producer gives up too.
  std::vector<uint8_t> big(kCap - 8);
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 1, big.data(), big.size(), 0));
  EXPECT_EQ(-ETIMEDOUT, capsa_ring_write(&r.tx, 1, "x", 1, 30));
}

// Adaptive spinning: a peer that never answers while we spin (idle, or on
// our own CPU) drives the budget down to nothing, so waiting stops burning
// CPU; a record that is already there costs no spin at all.
TEST(Ring, SpinBudgetDecaysWhenSpinningNeverPays) {
  Ring r;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: no spin";
  EXPECT_EQ(CAPSA_RING_SPIN_MAX, r.rx.spin);
  char buf[8];
  uint32_t kind;
  for (int i = 0; i < 20; i++)
    ASSERT_EQ(-ETIMEDOUT, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 1));
  EXPECT_EQ(0u, r.rx.spin);
  EXPECT_EQ(0u, r.rx.stats.spin_hits);
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 1, "x", 1, 0));
  ASSERT_EQ(1, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 1000));
  EXPECT_EQ(0u, r.rx.stats.spin_hits);
}

// A compromised peer scribbles over the whole region while we read: every
// result is a message, an empty ring or a bad message; never a crash, an
// out-of-bounds access (ASan) or a hang.
TEST(Ring, HostileScribblerCannotCrashOrHangTheConsumer) {
  Ring r;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    uint32_t x = 12345;
    volatile uint32_t *w = (volatile uint32_t *)r.region.base;
    size_t words = r.region.size / 4;
    for (;;) {
      x = x * 1103515245u + 12345u;
      uint32_t v = x >> 3;
      // Mostly hit the indices and the first records, sometimes anywhere.
      size_t at = (x & 1) ? (x >> 8) % 40 : (x >> 8) % words;
      if (at < 40 && at >= 20) at = CAPSA_RING_OFF_HEAD / 4 + (at - 20);
      w[at] = (x & 2) ? v % 128 : v;
    }
  }
  std::vector<uint8_t> buf(CAPSA_RING_MAX_MESSAGE);
  int bad = 0;
  for (int round = 0; round < 200; round++) {
    capsa_ring_t rx;
    ASSERT_EQ(0, capsa_ring_init(&rx, &r.region, CAPSA_RING_CONSUMER));
    capsa_ring_set_spin(&rx, 0, 100);
    for (int i = 0; i < 200; i++) {
      uint32_t kind;
      int n = capsa_ring_read(&rx, buf.data(), buf.size(), &kind, 1);
      ASSERT_TRUE(n >= 0 || n == -EBADMSG || n == -ETIMEDOUT || n == -EAGAIN ||
                  n == -EMSGSIZE)
          << n;
      ASSERT_LE(n, (int)CAPSA_RING_MAX_MESSAGE);
      if (n == -EBADMSG) {
        bad++;
        break;
      }
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_GT(bad, 0);  // the scribbling was noticed
}

// The consumer in another process sleeps in FUTEX_WAIT (spinning off); the
// producer sees its announcement and wakes it with exactly one FUTEX_WAKE.
TEST(Ring, FutexWakesConsumerInAnotherProcess) {
  Ring r;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    capsa_ring_t rx;
    capsa_ring_init(&rx, &r.region, CAPSA_RING_CONSUMER);
    capsa_ring_set_spin(&rx, 0, 0);
    char buf[16] = {};
    uint32_t kind = 0;
    int n = capsa_ring_read(&rx, buf, sizeof buf, &kind, 10000);
    bool ok = n == 4 && kind == 3 && memcmp(buf, "wake", 4) == 0 &&
              rx.stats.sleeps >= 1;
    _exit(ok ? 0 : 1);
  }
  // Wait (bounded) for the child's announcement before publishing, so the
  // test always exercises the sleeping path.
  for (int i = 0; i < 10000 && !*r.Word(CAPSA_RING_OFF_CONSUMER_SLEEPING); i++)
    usleep(1000);
  ASSERT_EQ(1u, *r.Word(CAPSA_RING_OFF_CONSUMER_SLEEPING));
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 3, "wake", 4, 0));
  EXPECT_EQ(1u, r.tx.stats.wakes);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The producer in another process waits for space; the consumer's read wakes
// it.
TEST(Ring, FutexWakesProducerWaitingForSpace) {
  Ring r;
  std::vector<uint8_t> big(kCap - 8);
  ASSERT_EQ(0, capsa_ring_write(&r.tx, 1, big.data(), big.size(), 0));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    capsa_ring_set_spin(&r.tx, 0, 0);
    int err = capsa_ring_write(&r.tx, 2, "after", 5, 10000);
    _exit(err == 0 && r.tx.stats.sleeps >= 1 ? 0 : 1);
  }
  for (int i = 0; i < 10000 && !*r.Word(CAPSA_RING_OFF_PRODUCER_SLEEPING); i++)
    usleep(1000);
  ASSERT_EQ(1u, *r.Word(CAPSA_RING_OFF_PRODUCER_SLEEPING));
  uint32_t kind;
  ASSERT_EQ((int)big.size(),
            capsa_ring_read(&r.rx, big.data(), big.size(), &kind, 0));
  EXPECT_EQ(1u, r.rx.stats.wakes);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  char buf[8];
  ASSERT_EQ(5, capsa_ring_read(&r.rx, buf, sizeof buf, &kind, 1000));
  EXPECT_EQ(2u, kind);
}

// Two rings, two processes, many round trips with the default adaptive
// spinning: nothing lost, reordered or corrupted under real concurrency.
TEST(Ring, PingPongAcrossProcesses) {
  Ring a, b;  // a: parent -> child, b: child -> parent
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    capsa_ring_t rx, tx;
    capsa_ring_init(&rx, &a.region, CAPSA_RING_CONSUMER);
    capsa_ring_init(&tx, &b.region, CAPSA_RING_PRODUCER);
    uint8_t buf[64];
    for (;;) {
      uint32_t kind;
      int n = capsa_ring_read(&rx, buf, sizeof buf, &kind, 10000);
      if (n < 0) _exit(2);
      if (kind == 0) _exit(0);
      buf[0] ^= 0xff;
      if (capsa_ring_write(&tx, kind + 1, buf, n, 10000) != 0) _exit(3);
    }
  }
  capsa_ring_t tx, rx;
  ASSERT_EQ(0, capsa_ring_init(&tx, &a.region, CAPSA_RING_PRODUCER));
  ASSERT_EQ(0, capsa_ring_init(&rx, &b.region, CAPSA_RING_CONSUMER));
  uint8_t msg[64], got[64];
  for (uint32_t i = 1; i <= 5000; i++) {
    memset(msg, (int)i, sizeof msg);
    ASSERT_EQ(0, capsa_ring_write(&tx, 2 * i, msg, sizeof msg, 10000));
    uint32_t kind;
    ASSERT_EQ(64, capsa_ring_read(&rx, got, sizeof got, &kind, 10000));
    ASSERT_EQ(2 * i + 1, kind);
    msg[0] ^= 0xff;
    ASSERT_EQ(0, memcmp(msg, got, sizeof msg));
  }
  ASSERT_EQ(0, capsa_ring_write(&tx, 0, nullptr, 0, 10000));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
