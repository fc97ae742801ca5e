// The ring fast path (ipc/ring_fastpath.h, ipc/ring_watch.h): set-up checks on
// the peer side, the channel hook's contract, doorbell wake-ups across
// processes and on a libuv loop.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <uv.h>

#include "ipc/loop.h"
#include "ipc/ring_fastpath.h"
#include "ipc/ring_watch.h"
#include "ipc/uv_channel.h"
#include "sandbox/errors.h"
#include "tests/harness/child.h"

namespace {

constexpr size_t kCap = 16384;

bool IsOpen(int fd) {
  return fcntl(fd, F_GETFD) >= 0;
}

// Host and peer sides in one process (the peer attaches to the descriptors
// the host made, as a renderer would).
struct Pair {
  capsa_ring_fastpath_t host, peer;
  capsa_fastpath_t hh, ph;
  Pair() {
    capsa_ring_fastpath_fds_t fds;
    EXPECT_EQ(0, capsa_ring_fastpath_create(&host, kCap, &fds));
    EXPECT_EQ(0, capsa_ring_fastpath_attach(&peer, kCap, &fds));
    capsa_ring_fastpath_hook(&host, &hh);
    capsa_ring_fastpath_hook(&peer, &ph);
  }
  ~Pair() {
    capsa_ring_fastpath_close(&host);
    capsa_ring_fastpath_close(&peer);
  }
};

TEST(RingFastpath, HookCarriesMessagesBothWays) {
  Pair p;
  std::vector<uint8_t> buf(65536);
  EXPECT_EQ(0, p.ph.recv(p.ph.ctx, buf.data(), buf.size()));  // empty
  ASSERT_EQ(0, p.hh.send(p.hh.ctx, (const uint8_t *)"to-peer", 7));
  ASSERT_EQ(0, p.ph.send(p.ph.ctx, (const uint8_t *)"to-host!", 8));
  ASSERT_EQ(7, p.ph.recv(p.ph.ctx, buf.data(), buf.size()));
  EXPECT_EQ(0, memcmp(buf.data(), "to-peer", 7));
  ASSERT_EQ(8, p.hh.recv(p.hh.ctx, buf.data(), buf.size()));
  EXPECT_EQ(0, memcmp(buf.data(), "to-host!", 8));
  // Too big for the ring, or the ring full: -EAGAIN, so the channel takes
  // its socket instead (and keeps order by sequence numbers).
  EXPECT_EQ(-EAGAIN,
            p.hh.send(p.hh.ctx, buf.data(), CAPSA_RING_MAX_MESSAGE + 1));
  int sent = 0;
  while (p.hh.send(p.hh.ctx, buf.data(), 1000) == 0) sent++;
  EXPECT_EQ((int)(kCap / CAPSA_RING_RECORD_SIZE(1000)), sent);
  EXPECT_EQ(-EAGAIN, p.hh.send(p.hh.ctx, buf.data(), 1000));
  for (int i = 0; i < sent; i++)
    ASSERT_EQ(1000, p.ph.recv(p.ph.ctx, buf.data(), buf.size()));
  EXPECT_EQ(0, p.ph.recv(p.ph.ctx, buf.data(), buf.size()));
}

TEST(RingFastpath, ForeignRecordsAreBadMessages) {
  Pair p;
  std::vector<uint8_t> buf(65536);
  // A record of another kind, or an empty one, in the ring: a bad message.
  ASSERT_EQ(0, capsa_ring_write(&p.peer.tx, 1234, "x", 1, 0));
  EXPECT_EQ(-EBADMSG, p.hh.recv(p.hh.ctx, buf.data(), buf.size()));
  EXPECT_EQ(-EBADMSG, p.hh.recv(p.hh.ctx, buf.data(), buf.size()));  // sticky
  Pair q;
  ASSERT_EQ(0, capsa_ring_write(&q.peer.tx, CAPSA_RFP_KIND, nullptr, 0, 0));
  EXPECT_EQ(-EBADMSG, q.hh.recv(q.hh.ctx, buf.data(), buf.size()));
}

TEST(RingFastpath, AttachVerifiesAndKeepsFdsOnFailure) {
  capsa_ring_fastpath_t host, peer;
  capsa_ring_fastpath_fds_t fds;
  ASSERT_EQ(0, capsa_ring_fastpath_create(&host, kCap, &fds));
  // The size the peer expects differs from the regions'.
  EXPECT_EQ(-EMSGSIZE, capsa_ring_fastpath_attach(&peer, kCap * 2, &fds));
  EXPECT_EQ(-EINVAL, capsa_ring_fastpath_attach(&peer, 1000, &fds));
  // Regions and bells swapped: refused by kind.
  capsa_ring_fastpath_fds_t swapped = fds;
  swapped.fd[CAPSA_RFP_TO_PEER] = fds.fd[CAPSA_RFP_HOST_BELL];
  swapped.fd[CAPSA_RFP_HOST_BELL] = fds.fd[CAPSA_RFP_TO_PEER];
  EXPECT_EQ(-EINVAL, capsa_ring_fastpath_attach(&peer, kCap, &swapped));
  // A pipe is no doorbell.
  int pp[2];
  ASSERT_EQ(0, pipe2(pp, O_CLOEXEC | O_NONBLOCK));
  capsa_ring_fastpath_fds_t piped = fds;
  piped.fd[CAPSA_RFP_PEER_BELL] = pp[0];
  EXPECT_EQ(-EINVAL, capsa_ring_fastpath_attach(&peer, kCap, &piped));
  close(pp[0]);
  close(pp[1]);
  // An unsealed memfd of the right size instead of a ring region.
  int m = memfd_create("foreign", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(0, ftruncate(m, (off_t)capsa_ring_region_size(kCap)));
  capsa_ring_fastpath_fds_t foreign = fds;
  foreign.fd[CAPSA_RFP_FROM_PEER] = m;
  EXPECT_EQ(-ENOTCAPABLE, capsa_ring_fastpath_attach(&peer, kCap, &foreign));
  close(m);
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) EXPECT_TRUE(IsOpen(fds.fd[i])) << i;
  // Finally the right ones: the peer owns them now.
  ASSERT_EQ(0, capsa_ring_fastpath_attach(&peer, kCap, &fds));
  capsa_ring_fastpath_close(&peer);
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) EXPECT_FALSE(IsOpen(fds.fd[i])) << i;
  capsa_ring_fastpath_close(&host);
}

TEST(RingFastpath, WaitReportsRingSocketAndTimeout) {
  Pair p;
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  EXPECT_EQ(0, p.ph.wait(p.ph.ctx, sv[1], 20));  // nothing: timeout
  ASSERT_EQ(1, write(sv[0], "s", 1));
  EXPECT_EQ(2, p.ph.wait(p.ph.ctx, sv[1], 1000));
  char c;
  ASSERT_EQ(1, read(sv[1], &c, 1));
  ASSERT_EQ(0, p.hh.send(p.hh.ctx, (const uint8_t *)"r", 1));
  EXPECT_EQ(1, p.ph.wait(p.ph.ctx, sv[1], 1000));
  uint8_t buf[8];
  ASSERT_EQ(1, p.ph.recv(p.ph.ctx, buf, sizeof buf));
  // A peer that died (its socket end closed) ends the wait at once: a ring
  // has no way to say so, the socket does.
  close(sv[0]);
  EXPECT_EQ(2, p.ph.wait(p.ph.ctx, sv[1], 10000));
  close(sv[1]);
}

// The peer in another process blocks in poll() on its doorbell (spinning
// off); the host's send sees the ring armed and rings it exactly once.
TEST(RingFastpath, DoorbellWakesPeerInAnotherProcess) {
  capsa_ring_fastpath_t host;
  capsa_ring_fastpath_fds_t fds;
  ASSERT_EQ(0, capsa_ring_fastpath_create(&host, kCap, &fds));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    capsa_ring_fastpath_t peer;
    if (capsa_ring_fastpath_attach(&peer, kCap, &fds) != 0) _exit(2);
    capsa_ring_set_spin(&peer.rx, 0, 0);
    if (capsa_ring_fastpath_wait(&peer, -1, 10000) != 1) _exit(3);
    uint8_t buf[16];
    capsa_fastpath_t h;
    capsa_ring_fastpath_hook(&peer, &h);
    _exit(h.recv(h.ctx, buf, sizeof buf) == 4 && memcmp(buf, "ding", 4) == 0
              ? 0
              : 4);
  }
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) close(fds.fd[i]);
  volatile uint32_t *armed =
      (volatile uint32_t *)((uint8_t *)host.tx_region.base +
                            CAPSA_RING_OFF_CONSUMER_SLEEPING);
  for (int i = 0; i < 10000 && *armed != CAPSA_RING_SLEEP_DOORBELL; i++)
    usleep(1000);
  ASSERT_EQ(CAPSA_RING_SLEEP_DOORBELL, *armed);
  capsa_fastpath_t h;
  capsa_ring_fastpath_hook(&host, &h);
  ASSERT_EQ(0, h.send(h.ctx, (const uint8_t *)"ding", 4));
  EXPECT_EQ(1u, host.tx.stats.doorbells);
  EXPECT_EQ(0u, host.tx.stats.wakes);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  capsa_ring_fastpath_close(&host);
}

struct WatchState {
  capsa_ring_fastpath_t *fp;
  capsa_fastpath_t hook;
  int got = 0;
  std::vector<int> order;
};

// A libuv loop with nothing else to do wakes for ring records written by
// another process, in order, and stops when asked.
TEST(RingFastpath, WatchWakesALibuvLoop) {
  capsa_ring_fastpath_t host;
  capsa_ring_fastpath_fds_t fds;
  ASSERT_EQ(0, capsa_ring_fastpath_create(&host, kCap, &fds));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    capsa_ring_fastpath_t peer;
    if (capsa_ring_fastpath_attach(&peer, kCap, &fds) != 0) _exit(2);
    capsa_fastpath_t h;
    capsa_ring_fastpath_hook(&peer, &h);
    for (int i = 1; i <= 100; i++) {
      // Pause now and then so that the host loop really goes to sleep.
      if (i % 10 == 0) usleep(2000);
      while (h.send(h.ctx, (const uint8_t *)&i, sizeof i) == -EAGAIN)
        usleep(100);
    }
    _exit(0);
  }
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) close(fds.fd[i]);

  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  WatchState st;
  st.fp = &host;
  capsa_ring_fastpath_hook(&host, &st.hook);
  capsa_ring_watch_t watch;
  ASSERT_EQ(0, capsa_ring_watch_init(&loop, &watch, &host));
  watch.data = &st;
  ASSERT_EQ(0, capsa_ring_watch_start(&watch, [](capsa_ring_watch_t *w) {
              WatchState *s = (WatchState *)w->data;
              uint8_t buf[64];
              ssize_t n;
              while ((n = s->hook.recv(s->hook.ctx, buf, sizeof buf)) > 0) {
                int v;
                memcpy(&v, buf, sizeof v);
                s->order.push_back(v);
              }
              if (s->order.size() == 100) capsa_ring_watch_stop(w);
            }));
  // A guard timer so that a lost wake-up fails the test instead of hanging.
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  uv_timer_start(
      &guard, [](uv_timer_t *t) { uv_stop(t->loop); }, 10000, 0);
  uv_unref((uv_handle_t *)&guard);
  uv_run(&loop, UV_RUN_DEFAULT);
  ASSERT_EQ(100u, st.order.size());
  for (int i = 0; i < 100; i++) EXPECT_EQ(i + 1, st.order[i]);
  capsa_ring_watch_close(&watch, nullptr);
  uv_close((uv_handle_t *)&guard, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&loop));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  capsa_ring_fastpath_close(&host);
}

// End to end across two processes: a renderer loop sends hello and 300 logs
// through a small real ring; every 7th log is too big for the ring and bursts
// overflow it, so those take the socket. The host channel (libuv, woken by
// the ring watch) must deliver all of them in the order they were sent.
constexpr int kLogs = 300;

struct HostState {
  capsa_channel_t ch;
  capsa_ring_watch_t watch;
  std::vector<int> order;
  bool hello = false;
  std::string error;
};

int LogNumber(const char *text) {
  return atoi(text);
}

TEST(RingFastpath, ChannelKeepsOrderAcrossRingAndSocket) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  capsa_ring_fastpath_t host;
  capsa_ring_fastpath_fds_t fds;
  ASSERT_EQ(0, capsa_ring_fastpath_create(&host, 4096, &fds));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sp[0]);
    capsa_ring_fastpath_t peer;
    if (capsa_ring_fastpath_attach(&peer, 4096, &fds) != 0) _exit(2);
    capsa_fastpath_t hook;
    capsa_ring_fastpath_hook(&peer, &hook);
    capsa_rloop_t l;
    if (capsa_rloop_init(&l, sp[1], nullptr, nullptr) != 0) _exit(3);
    l.on_message = [](capsa_rloop_t *, capsa_msg_t *m) {
      return m->type == CAPSA_MSG_SHUTDOWN ? 1 : 0;
    };
    if (capsa_rloop_set_fastpath(&l, &hook) != 0) _exit(4);
    capsa_msg_t m;
    capsa_msg_init(&m, CAPSA_MSG_HELLO);
    m.u.hello.protocol_version = CAPSA_IPC_VERSION;
    m.u.hello.pid = getpid();
    if (capsa_rloop_send(&l, &m) != 0) _exit(5);
    std::string text;
    for (int i = 0; i < kLogs; i++) {
      text = std::to_string(i) + " ";
      if (i % 7 == 3) text.append(4080, 'x');  // over the ring's maximum
      capsa_msg_init(&m, CAPSA_MSG_LOG);
      m.u.log.level = CAPSA_LOG_INFO;
      m.u.log.text = text.c_str();
      if (capsa_rloop_send(&l, &m) != 0) _exit(6);
    }
    // Stay until the host has everything (its shutdown comes back through
    // the ring and wakes us through the fast path's wait hook).
    int r = capsa_rloop_run(&l);
    _exit(r == 1 ? 0 : 7);
  }
  close(sp[1]);
  for (int i = 0; i < CAPSA_RFP_NFDS; i++) close(fds.fd[i]);

  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  HostState st;
  ASSERT_EQ(0, capsa_channel_init(&loop, &st.ch, sp[0], nullptr));
  st.ch.data = &st;
  capsa_fastpath_t hook;
  capsa_ring_fastpath_hook(&host, &hook);
  ASSERT_EQ(0, capsa_channel_set_fastpath(&st.ch, &hook));
  ASSERT_EQ(0, capsa_ring_watch_init(&loop, &st.watch, &host));
  st.watch.data = &st;
  ASSERT_EQ(0, capsa_ring_watch_start(&st.watch, [](capsa_ring_watch_t *w) {
              capsa_channel_poll_fastpath(&((HostState *)w->data)->ch);
            }));
  ASSERT_EQ(0, capsa_channel_start(
                   &st.ch,
                   [](capsa_channel_t *ch, capsa_msg_t *m) {
                     HostState *s = (HostState *)ch->data;
                     if (m->type == CAPSA_MSG_HELLO) {
                       s->hello = s->order.empty();
                       return;
                     }
                     if (m->type != CAPSA_MSG_LOG) return;
                     s->order.push_back(LogNumber(m->u.log.text));
                     if (s->order.size() == kLogs) {
                       capsa_msg_t bye;
                       capsa_msg_init(&bye, CAPSA_MSG_SHUTDOWN);
                       capsa_channel_send(ch, &bye);
                     }
                   },
                   [](capsa_channel_t *ch, int err, const char *why) {
                     HostState *s = (HostState *)ch->data;
                     // The renderer leaving after shutdown is the expected end.
                     if (err != -EPIPE || s->order.size() != kLogs)
                       s->error = std::to_string(err) + " " + (why ? why : "");
                     capsa_ring_watch_stop(&s->watch);
                     capsa_channel_stop(ch);
                   }));
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  uv_timer_start(
      &guard, [](uv_timer_t *t) { uv_stop(t->loop); }, 10000, 0);
  uv_unref((uv_handle_t *)&guard);
  uv_run(&loop, UV_RUN_DEFAULT);

  EXPECT_EQ("", st.error);
  EXPECT_TRUE(st.hello);
  ASSERT_EQ((size_t)kLogs, st.order.size());
  for (int i = 0; i < kLogs; i++) ASSERT_EQ(i, st.order[i]) << "position " << i;
  // Both transports really carried messages.
  EXPECT_GT(host.rx.pos, 0u);
  capsa_ring_watch_close(&st.watch, nullptr);
  capsa_channel_close(&st.ch, nullptr);
  uv_close((uv_handle_t *)&guard, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&loop));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  capsa_ring_fastpath_close(&host);
}

// A renderer that corrupts its ring is a bad message for the host channel:
// reported once through on_error with -EBADMSG, never a crash or a hang.
TEST(RingFastpath, CorruptRingIsABadMessageForTheChannel) {
  int sp[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp));
  capsa_ring_fastpath_t host, peer;
  capsa_ring_fastpath_fds_t fds;
  ASSERT_EQ(0, capsa_ring_fastpath_create(&host, 4096, &fds));
  ASSERT_EQ(0, capsa_ring_fastpath_attach(&peer, 4096, &fds));
  // The compromised renderer: a plausible record, then a tail far beyond
  // anything it wrote, then the doorbell.
  const char junk[16] = "not an envelope";
  ASSERT_EQ(0, capsa_ring_write(&peer.tx, CAPSA_RFP_KIND, junk, 16, 0));
  *(volatile uint32_t *)((uint8_t *)peer.tx_region.base + CAPSA_RING_OFF_TAIL) =
      0x10000;
  uint64_t one = 1;
  ASSERT_EQ(8, write(peer.peer_bell, &one, sizeof one));

  uv_loop_t loop;
  ASSERT_EQ(0, uv_loop_init(&loop));
  HostState st;
  ASSERT_EQ(0, capsa_channel_init(&loop, &st.ch, sp[0], nullptr));
  st.ch.data = &st;
  capsa_fastpath_t hook;
  capsa_ring_fastpath_hook(&host, &hook);
  ASSERT_EQ(0, capsa_channel_set_fastpath(&st.ch, &hook));
  ASSERT_EQ(0, capsa_ring_watch_init(&loop, &st.watch, &host));
  st.watch.data = &st;
  ASSERT_EQ(0, capsa_ring_watch_start(&st.watch, [](capsa_ring_watch_t *w) {
              capsa_channel_poll_fastpath(&((HostState *)w->data)->ch);
            }));
  static int errors;
  errors = 0;
  ASSERT_EQ(0, capsa_channel_start(
                   &st.ch,
                   [](capsa_channel_t *ch, capsa_msg_t *) {
                     ((HostState *)ch->data)->order.push_back(-1);
                   },
                   [](capsa_channel_t *ch, int err, const char *why) {
                     HostState *s = (HostState *)ch->data;
                     errors++;
                     s->error = std::to_string(err);
                     // The watch is left running: it must stop itself.
                     capsa_channel_stop(ch);
                   }));
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  static bool guard_fired;
  guard_fired = false;
  uv_timer_start(
      &guard,
      [](uv_timer_t *t) {
        guard_fired = true;
        uv_stop(t->loop);
      },
      10000, 0);
  uv_unref((uv_handle_t *)&guard);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_FALSE(guard_fired);  // the loop ran out of work by itself
  EXPECT_EQ(std::to_string(-EBADMSG), st.error);
  EXPECT_EQ(1, errors);
  EXPECT_TRUE(st.order.empty());  // nothing was delivered
  capsa_ring_watch_close(&st.watch, nullptr);
  capsa_channel_close(&st.ch, nullptr);
  uv_close((uv_handle_t *)&guard, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(0, uv_loop_close(&loop));
  close(sp[1]);
  capsa_ring_fastpath_close(&peer);
  capsa_ring_fastpath_close(&host);
}

}  // namespace
