// The ring fast path from inside capability mode: attaching (fstat, seals,
// mmap), futex sleeps and wake-ups, doorbell polls all keep working, while an
// executable mapping of the shared region is refused.
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ipc/ring_fastpath.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/errors.h"
#include "tests/harness/child.h"

namespace {

constexpr size_t kCap = 16384;

constexpr int kFutexRounds = 20;

// Echoes every fast-path record back. For the first kFutexRounds it first
// waits (bounded) until the peer announced sleeping on the futex, so that
// those replies must go through FUTEX_WAIT / FUTEX_WAKE in capability mode.
[[noreturn]] void Echo(capsa_ring_fastpath_t *host) {
  uint8_t buf[CAPSA_RING_MAX_MESSAGE];
  volatile uint32_t *peer_sleeping =
      (volatile uint32_t *)((uint8_t *)host->tx_region.base +
                            CAPSA_RING_OFF_CONSUMER_SLEEPING);
  for (int round = 0;; round++) {
    uint32_t kind;
    int n = capsa_ring_read(&host->rx, buf, sizeof buf, &kind, -1);
    if (n < 0) _exit(2);
    for (int i = 0; round < kFutexRounds && i < 5000 &&
                    *peer_sleeping != CAPSA_RING_SLEEP_FUTEX;
         i++)
      usleep(1000);
    if (capsa_ring_write(&host->tx, kind, buf, (size_t)n, 5000) != 0) _exit(3);
  }
}

TEST(RingCapmode, RoundTripsInsideCapabilityMode) {
  capsa_ring_fastpath_t host;
  capsa_ring_fastpath_fds_t fds;
  ASSERT_EQ(0, capsa_ring_fastpath_create(&host, kCap, &fds));
  pid_t echo = fork();
  ASSERT_GE(echo, 0);
  if (echo == 0) Echo(&host);

  CAPSA_EXPECT_CHILD_OK([&] {
    capsa_ring_fastpath_close(&host);  // the renderer holds only its side
    int err = capsa_cap_enter();
    if (err == -ENOSYS) GTEST_SKIP() << "capability mode unavailable";
    ASSERT_EQ(0, err);
    unsigned mode = 0;
    ASSERT_EQ(0, capsa_cap_getmode(&mode));
    ASSERT_EQ(1u, mode);

    // Executable mappings of the shared region are what seals cannot stop;
    // capability mode does.
    errno = 0;
    EXPECT_EQ(MAP_FAILED, mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_SHARED,
                               fds.fd[CAPSA_RFP_TO_PEER], 0));
    EXPECT_EQ(ECAPMODE, errno);

    // The futex itself is allowed: a shared (not private) FUTEX_WAIT on a
    // word that moved answers EAGAIN, not ECAPMODE; FUTEX_WAKE answers 0.
    uint32_t word = 7;
    errno = 0;
    EXPECT_EQ(-1,
              syscall(SYS_futex, &word, FUTEX_WAIT, 8, nullptr, nullptr, 0));
    EXPECT_EQ(EAGAIN, errno);
    EXPECT_EQ(0, syscall(SYS_futex, &word, FUTEX_WAKE, 1, nullptr, nullptr, 0));

    capsa_ring_fastpath_t peer;
    ASSERT_EQ(0, capsa_ring_fastpath_attach(&peer, kCap, &fds));
    // Futex path: no spinning, so every reply is waited for in FUTEX_WAIT.
    capsa_ring_set_spin(&peer.rx, 0, 0);
    for (int i = 0; i < 200; i++) {
      ASSERT_EQ(0,
                capsa_ring_write(&peer.tx, CAPSA_RFP_KIND, &i, sizeof i, 5000));
      int got = -1;
      uint32_t kind;
      ASSERT_EQ((int)sizeof got,
                capsa_ring_read(&peer.rx, &got, sizeof got, &kind, 5000));
      ASSERT_EQ(i, got);
    }
    // Doorbell path: poll() on the eventfd the echo rings.
    capsa_fastpath_t hook;
    capsa_ring_fastpath_hook(&peer, &hook);
    for (int i = 0; i < 50; i++) {
      ASSERT_EQ(0, hook.send(hook.ctx, (const uint8_t *)&i, sizeof i));
      int w = hook.wait(hook.ctx, -1, 5000);
      ASSERT_EQ(1, w) << capsa_strerror(w);
      int got = -1;
      ASSERT_EQ((ssize_t)sizeof got,
                hook.recv(hook.ctx, (uint8_t *)&got, sizeof got));
      ASSERT_EQ(i, got);
    }
    EXPECT_GE(peer.rx.stats.sleeps, (uint64_t)kFutexRounds);
    capsa_ring_fastpath_close(&peer);
    _exit(::testing::Test::HasFailure() ? 1 : 0);  // LeakSanitizer-free exit
  });
  kill(echo, SIGKILL);
  waitpid(echo, nullptr, 0);
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) close(fds.fd[i]);
  capsa_ring_fastpath_close(&host);
}

}  // namespace
