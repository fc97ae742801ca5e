// Data pipes (ipc/data_pipe.h): bytes in order across the ring's end and
// across processes, contiguous spans, end of data both ways, bounded waits
// and wake-ups, a hostile peer that lies in the shared header, descriptors
// that are no data pipe, and a consumer in capability mode.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "ipc/data_pipe.h"
#include "ipc/shm.h"
#include "sandbox/capmode/capmode.h"
#include "tests/harness/child.h"

namespace {

uint8_t Byte(uint64_t i) {
  return (uint8_t)(i * 131 + (i >> 9));
}

// A producer end and its consumer end in this process.
struct Pair {
  capsa_data_pipe_t *tx = nullptr, *rx = nullptr;
  int fd = -1;
  explicit Pair(size_t cap = 4096) {
    EXPECT_EQ(0, capsa_data_pipe_create(cap, &tx, &fd));
    int dup_fd = dup(fd);
    EXPECT_EQ(0, capsa_data_pipe_open(dup_fd, &rx));
  }
  ~Pair() {
    capsa_data_pipe_close(tx);
    capsa_data_pipe_close(rx);
    if (fd >= 0) close(fd);
  }
  // The header as a compromised peer sees it (its own writable mapping).
  uint8_t *Header() {
    void *m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(MAP_FAILED, m);
    return (uint8_t *)m;
  }
};

size_t Write(capsa_data_pipe_t *p, uint64_t *next, size_t n) {
  void *room;
  size_t len;
  if (capsa_data_pipe_begin_write(p, &room, &len, 0) != 0) return 0;
  if (len > n) len = n;
  for (size_t i = 0; i < len; i++) ((uint8_t *)room)[i] = Byte((*next)++);
  EXPECT_EQ(0, capsa_data_pipe_end_write(p, len));
  return len;
}

size_t ReadCheck(capsa_data_pipe_t *p, uint64_t *next, size_t n) {
  const void *in;
  size_t len;
  if (capsa_data_pipe_begin_read(p, &in, &len, 0) != 0) return 0;
  if (len > n) len = n;
  for (size_t i = 0; i < len; i++) {
    if (((const uint8_t *)in)[i] != Byte(*next)) {
      ADD_FAILURE() << "byte " << *next << " differs";
      return 0;
    }
    (*next)++;
  }
  EXPECT_EQ(0, capsa_data_pipe_end_read(p, len));
  return len;
}

TEST(DataPipe, BytesArriveInOrderAndSpansAreContiguousAcrossTheEnd) {
  Pair p(4096);
  uint64_t w = 0, r = 0;
  EXPECT_EQ(3000u, Write(p.tx, &w, 3000));
  EXPECT_EQ(3000u, ReadCheck(p.rx, &r, 3000));
  // The whole capacity is free again and offered as one span, though it
  // crosses the end of the data area (at 4096 - 3000).
  void *room;
  size_t len;
  ASSERT_EQ(0, capsa_data_pipe_begin_write(p.tx, &room, &len, 0));
  EXPECT_EQ(4096u, len);
  for (size_t i = 0; i < len; i++) ((uint8_t *)room)[i] = Byte(w++);
  ASSERT_EQ(0, capsa_data_pipe_end_write(p.tx, len));
  const void *in;
  ASSERT_EQ(0, capsa_data_pipe_begin_read(p.rx, &in, &len, 0));
  EXPECT_EQ(4096u, len) << "one span across the end";
  for (size_t i = 0; i < len; i++)
    ASSERT_EQ(Byte(r + i), ((const uint8_t *)in)[i]) << i;
  ASSERT_EQ(0, capsa_data_pipe_end_read(p.rx, len));
  r += len;
  // Odd sizes, many times around.
  for (int round = 0; round < 2000; round++) {
    Write(p.tx, &w, 1 + (size_t)round % 977);
    ReadCheck(p.rx, &r, 1 + (size_t)round % 613);
  }
  while (ReadCheck(p.rx, &r, SIZE_MAX) > 0) {
  }
  EXPECT_EQ(w, r);
}

TEST(DataPipe, FullAndEmptyWaitsAreBoundedAndMisuseIsRefused) {
  Pair p(4096);
  const void *in;
  void *room;
  size_t len;
  EXPECT_EQ(-ETIMEDOUT, capsa_data_pipe_begin_read(p.rx, &in, &len, 0));
  EXPECT_EQ(-ETIMEDOUT, capsa_data_pipe_begin_read(p.rx, &in, &len, 20));
  uint64_t w = 0;
  EXPECT_EQ(4096u, Write(p.tx, &w, 4096));
  EXPECT_EQ(-ETIMEDOUT, capsa_data_pipe_begin_write(p.tx, &room, &len, 20));
  EXPECT_EQ(4096, capsa_data_pipe_available(p.tx));
  EXPECT_EQ(4096, capsa_data_pipe_available(p.rx));
  // Wrong end, nested begin, end past what was granted, bad arguments.
  EXPECT_EQ(-EINVAL, capsa_data_pipe_begin_write(p.rx, &room, &len, 0));
  EXPECT_EQ(-EINVAL, capsa_data_pipe_begin_read(p.tx, &in, &len, 0));
  ASSERT_EQ(0, capsa_data_pipe_begin_read(p.rx, &in, &len, 0));
  EXPECT_EQ(-EINVAL, capsa_data_pipe_begin_read(p.rx, &in, &len, 0));
  EXPECT_EQ(-EINVAL, capsa_data_pipe_end_read(p.rx, len + 1));
  EXPECT_EQ(0, capsa_data_pipe_end_read(p.rx, 0));
  EXPECT_EQ(-EINVAL, capsa_data_pipe_end_read(p.rx, 0)) << "not begun";
  EXPECT_EQ(-EINVAL, capsa_data_pipe_begin_read(p.rx, &in, &len, -1));
  capsa_data_pipe_t *q;
  int fd;
  EXPECT_EQ(-EINVAL, capsa_data_pipe_create(5000, &q, &fd)) << "no power of 2";
  EXPECT_EQ(-EINVAL, capsa_data_pipe_create(2048, &q, &fd)) << "too small";
  EXPECT_EQ(-EINVAL, capsa_data_pipe_create(CAPSA_DATA_PIPE_MAX * 2, &q, &fd));
  EXPECT_EQ(-EINVAL, capsa_data_pipe_open(-1, &q));
  capsa_data_pipe_close(nullptr);
}

TEST(DataPipe, EndOfDataAndAClosedConsumer) {
  {
    Pair p(4096);
    uint64_t w = 0, r = 0;
    Write(p.tx, &w, 1000);
    capsa_data_pipe_close(p.tx);
    p.tx = nullptr;
    EXPECT_EQ(1000u, ReadCheck(p.rx, &r, SIZE_MAX)) << "what came before";
    const void *in;
    size_t len;
    EXPECT_EQ(-EPIPE, capsa_data_pipe_begin_read(p.rx, &in, &len, 1000));
  }
  {
    Pair p(4096);
    capsa_data_pipe_close(p.rx);
    p.rx = nullptr;
    void *room;
    size_t len;
    EXPECT_EQ(-EPIPE, capsa_data_pipe_begin_write(p.tx, &room, &len, 1000));
  }
}

// Offsets of the shared header (ipc/data_pipe.c): the peer can write them.
constexpr size_t kCapacity = 8, kWritten = 64, kConsumed = 128;

TEST(DataPipe, APeerThatLiesInTheHeaderIsABadMessageNeverAnOverrun) {
  {
    Pair p(4096);
    uint8_t *h = p.Header();
    uint64_t lie = 4097;  // more than the capacity published
    memcpy(h + kWritten, &lie, 8);
    const void *in;
    size_t len;
    EXPECT_EQ(-EBADMSG, capsa_data_pipe_begin_read(p.rx, &in, &len, 0));
    lie = 0;
    memcpy(h + kWritten, &lie, 8);
    EXPECT_EQ(-EBADMSG, capsa_data_pipe_begin_read(p.rx, &in, &len, 0))
        << "sticky";
    EXPECT_EQ(-EBADMSG, capsa_data_pipe_available(p.rx));
    munmap(h, 4096);
  }
  {
    Pair p(4096);
    uint64_t w = 0, r = 0;
    Write(p.tx, &w, 100);
    ReadCheck(p.rx, &r, 100);
    uint8_t *h = p.Header();
    uint64_t lie = 50;  // consumed going backwards: the producer was fooled?
    memcpy(h + kConsumed, &lie, 8);
    EXPECT_EQ(50, capsa_data_pipe_available(p.tx))
        << "50 of 100 unconsumed is possible";
    lie = 200;  // more consumed than was ever written
    memcpy(h + kConsumed, &lie, 8);
    void *room;
    size_t len;
    EXPECT_EQ(-EBADMSG, capsa_data_pipe_begin_write(p.tx, &room, &len, 0));
    munmap(h, 4096);
  }
  {
    // The capacity word is the creator's, read once at open: rewriting it
    // later changes nothing (spans stay within the verified size).
    Pair p(4096);
    uint8_t *h = p.Header();
    uint64_t huge = 1ull << 40;
    memcpy(h + kCapacity, &huge, 8);
    uint64_t w = 0, r = 0;
    for (int i = 0; i < 20; i++) {
      Write(p.tx, &w, 4096);
      ReadCheck(p.rx, &r, 4096);
    }
    EXPECT_EQ(w, r);
    EXPECT_EQ(4096u, capsa_data_pipe_capacity(p.rx));
    munmap(h, 4096);
  }
}

TEST(DataPipe, DescriptorsThatAreNoDataPipeAreRefused) {
  capsa_data_pipe_t *q = nullptr;
  // A sealed region of the right size without the header.
  capsa_shm_region_t r;
  ASSERT_EQ(0, capsa_shm_create(4096 + 4096, "x", CAPSA_SHM_BOTH_WRITE, &r));
  EXPECT_EQ(-EBADMSG, capsa_data_pipe_open(r.fd, &q));
  EXPECT_GE(fcntl(r.fd, F_GETFD), 0) << "still the caller's on failure";
  capsa_shm_close(&r);
  // A size that is no header page plus a power of two.
  ASSERT_EQ(0, capsa_shm_create(4096 + 12288, "x", CAPSA_SHM_BOTH_WRITE, &r));
  EXPECT_EQ(-EMSGSIZE, capsa_data_pipe_open(r.fd, &q));
  capsa_shm_close(&r);
  // A read-only region (the consumer must be able to publish its position).
  ASSERT_EQ(0, capsa_shm_create(8192, "x", CAPSA_SHM_CREATOR_WRITES, &r));
  int ro = capsa_shm_release_fd(&r);
  EXPECT_LT(capsa_data_pipe_open(ro, &q), 0);
  close(ro);
  capsa_shm_close(&r);
  // Not sealed: the peer could shrink it under our loads.
  int fd = memfd_create("plain", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, 8192));
  EXPECT_LT(capsa_data_pipe_open(fd, &q), 0);
  close(fd);
  // A pipe.
  int pp[2];
  ASSERT_EQ(0, pipe(pp));
  EXPECT_LT(capsa_data_pipe_open(pp[0], &q), 0);
  close(pp[0]);
  close(pp[1]);
  EXPECT_EQ(nullptr, q);
}

// A producer process's whole life: `total` bytes of the pattern, in pieces
// of at most `piece`, then the end of the data.
[[noreturn]] void Produce(capsa_data_pipe_t *tx, uint64_t total, size_t piece) {
  uint64_t w = 0;
  while (w < total) {
    void *room;
    size_t len;
    if (capsa_data_pipe_begin_write(tx, &room, &len, 10000) != 0) _exit(1);
    if (len > piece) len = piece;
    if (len > total - w) len = total - w;
    for (size_t i = 0; i < len; i++) ((uint8_t *)room)[i] = Byte(w + i);
    w += len;
    if (capsa_data_pipe_end_write(tx, len) != 0) _exit(2);
  }
  capsa_data_pipe_close(tx);
  _exit(0);
}

// Across processes, the consumer in capability mode: 64 MiB through a
// 1 MiB pipe, checked byte by byte, ending at the producer's close; each
// side sleeps on the futex when the other is behind and is woken.
TEST(DataPipe, AcrossProcessesIntoCapabilityMode) {
  capsa_data_pipe_t *tx;
  int fd;
  ASSERT_EQ(0, capsa_data_pipe_create(1 << 20, &tx, &fd));
  const uint64_t total = 64ull << 20;
  pid_t producer = fork();
  ASSERT_GE(producer, 0);
  if (producer == 0) {
    Produce(tx, total, SIZE_MAX);
  }
  // (The producer end stays open here until the end: closing it would
  // tell the consumer the data ended, whichever process closes.)
  CAPSA_EXPECT_CHILD_OK_T(
      [&] {
        ASSERT_EQ(0, capsa_cap_enter());
        capsa_data_pipe_t *rx;
        ASSERT_EQ(0, capsa_data_pipe_open(fd, &rx));
        uint64_t r = 0;
        int err;
        const void *in;
        size_t len;
        while ((err = capsa_data_pipe_begin_read(rx, &in, &len, 10000)) == 0) {
          const uint8_t *b = (const uint8_t *)in;
          for (size_t i = 0; i < len; i++)
            if (b[i] != Byte(r + i)) FAIL() << "byte " << r + i;
          r += len;
          ASSERT_EQ(0, capsa_data_pipe_end_read(rx, len));
        }
        EXPECT_EQ(-EPIPE, err);
        EXPECT_EQ(total, r);
        capsa_data_pipe_close(rx);
      },
      30000);
  int status = -1;
  ASSERT_EQ(producer, waitpid(producer, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  capsa_data_pipe_close(tx);
  close(fd);
}

// A consumer that waits in poll() on its doorbell (as a libuv loop would),
// never on the futex: 16 MiB arrive, each wait is rung, and the end of the
// data rings too.
TEST(DataPipe, AConsumerPollingItsDoorbellIsRungForDataAndForTheEnd) {
  capsa_data_pipe_t *tx;
  int fd;
  ASSERT_EQ(0, capsa_data_pipe_create(64 * 1024, &tx, &fd));
  int bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(bell, 0);
  const uint64_t total = 16ull << 20;
  pid_t producer = fork();
  ASSERT_GE(producer, 0);
  if (producer == 0) {
    capsa_data_pipe_set_peer_doorbell(tx, bell);
    Produce(tx, total, 4096);  // many small publishes
  }
  CAPSA_EXPECT_CHILD_OK_T(
      [&] {
        capsa_data_pipe_t *rx;
        ASSERT_EQ(0, capsa_data_pipe_open(fd, &rx));
        uint64_t r = 0;
        unsigned polls = 0;
        for (;;) {
          const void *in;
          size_t len;
          int err = capsa_data_pipe_begin_read(rx, &in, &len, 0);
          if (err == -EPIPE) break;
          if (err == -ETIMEDOUT) {
            int armed = capsa_data_pipe_arm(rx);
            ASSERT_GE(armed, 0);
            if (armed == 0) {
              struct pollfd pfd;
              pfd.fd = bell;
              pfd.events = POLLIN;
              pfd.revents = 0;
              ASSERT_EQ(1, poll(&pfd, 1, 10000)) << "never rung";
              uint64_t v;
              ASSERT_EQ(8, read(bell, &v, sizeof v));
              polls++;
            }
            capsa_data_pipe_disarm(rx);
            continue;
          }
          ASSERT_EQ(0, err);
          const uint8_t *b = (const uint8_t *)in;
          for (size_t i = 0; i < len; i++)
            if (b[i] != Byte(r + i)) FAIL() << "byte " << r + i;
          r += len;
          ASSERT_EQ(0, capsa_data_pipe_end_read(rx, len));
        }
        EXPECT_EQ(total, r);
        EXPECT_GT(polls, 0u) << "the consumer never had to wait";
        capsa_data_pipe_close(rx);
      },
      30000);
  int status = -1;
  ASSERT_EQ(producer, waitpid(producer, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  capsa_data_pipe_close(tx);
  close(fd);
  close(bell);
}

}  // namespace
