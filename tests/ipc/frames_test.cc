// Frame chains (ipc/frames.h): the order of present/acquire/latest/release,
// the host's checks of a present, and a renderer that lies (bad presents,
// drawing into the held buffer while the host reads it, writing the control
// area) from a forked child in capability mode.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/frames.h"
#include "sandbox/capmode/capmode.h"
#include "sandbox/errors.h"
#include "tests/harness/child.h"

namespace {

constexpr size_t kBuf = 64 * 64 * 4;  // one page-rounded 64x64 RGBA buffer

// A renderer side mapped from descriptors the host handed out, as a
// renderer maps what Resize carried.
void MapRenderer(const capsa_frames_host_t &h, capsa_frames_renderer_t *r) {
  int b = -1, c = -1;
  ASSERT_EQ(0, capsa_frames_host_fds(&h, &b, &c));
  ASSERT_EQ(0, capsa_frames_renderer_map(r, b, c, h.count, h.buffer_size,
                                         h.control.size));
}

capsa_frame_desc_t Geometry(uint32_t w, uint32_t hgt) {
  capsa_frame_desc_t d = {};
  d.width = w;
  d.height = hgt;
  d.stride = w * 4;
  d.format = CAPSA_FRAMES_RGBA8;
  return d;
}

// Draws one frame filled with `byte` and presents it; returns the desc.
capsa_frame_desc_t Draw(capsa_frames_renderer_t *r, uint8_t byte, int *index) {
  void *px = nullptr;
  size_t len = 0;
  *index = capsa_frames_renderer_acquire(r, &px, &len);
  capsa_frame_desc_t d = Geometry(64, 64);
  if (*index < 0) return d;
  memset(px, byte, kBuf);
  EXPECT_EQ(0, capsa_frames_renderer_present(r, &d));
  return d;
}

TEST(Frames, ThreeBuffersInOrderNeverTheHeldOne) {
  capsa_frames_host_t h;
  ASSERT_EQ(0, capsa_frames_host_init(&h, 0, kBuf, "t"));
  EXPECT_EQ(3u, h.count);  // 0: the default
  capsa_frames_renderer_t r;
  MapRenderer(h, &r);
  ASSERT_EQ(-EAGAIN, [&] {
    capsa_frame_view_t f;
    return capsa_frames_host_latest(&h, &f);
  }());

  int a, b, c, d;
  capsa_frame_desc_t da = Draw(&r, 0xaa, &a);
  ASSERT_GE(a, 0);
  EXPECT_EQ(1u, da.seq);
  ASSERT_EQ(0, capsa_frames_host_present(&h, &da));
  capsa_frame_view_t f;
  ASSERT_EQ(1, capsa_frames_host_latest(&h, &f));  // the host reads a
  EXPECT_EQ(a, h.held);
  EXPECT_EQ(0xaa, f.pixels[0]);
  EXPECT_EQ(0xaa, f.pixels[f.len - 1]);
  EXPECT_EQ((size_t)64 * 4 * 64, f.len);

  // b, then c, presented but not yet seen by the host: no fourth buffer.
  capsa_frame_desc_t db = Draw(&r, 0xbb, &b);
  capsa_frame_desc_t dc = Draw(&r, 0xcc, &c);
  ASSERT_GE(b, 0);
  ASSERT_GE(c, 0);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  Draw(&r, 0xdd, &d);
  EXPECT_EQ(-EAGAIN, d);
  EXPECT_EQ(0xaa, f.pixels[0]);  // nothing drew into the held buffer

  // The host sees b: b pending, a held, c in flight: still none free.
  ASSERT_EQ(0, capsa_frames_host_present(&h, &db));
  Draw(&r, 0xdd, &d);
  EXPECT_EQ(-EAGAIN, d);
  // The host sees c: b is dropped unread and is the renderer's again.
  ASSERT_EQ(0, capsa_frames_host_present(&h, &dc));
  EXPECT_EQ(1u, h.dropped);
  capsa_frame_desc_t dd = Draw(&r, 0xdd, &d);
  EXPECT_EQ(b, d);
  // The host takes c, which gives a back.
  ASSERT_EQ(1, capsa_frames_host_latest(&h, &f));
  EXPECT_EQ(c, h.held);
  EXPECT_EQ(0xcc, f.pixels[0]);
  ASSERT_EQ(0, capsa_frames_host_present(&h, &dd));
  int e;
  Draw(&r, 0xee, &e);
  EXPECT_EQ(a, e);
  EXPECT_EQ(0xcc, f.pixels[f.len - 1]);
  // Nothing new: latest keeps c. Released: nothing held.
  ASSERT_EQ(1, capsa_frames_host_latest(&h, &f));  // dd (in b)
  EXPECT_EQ(0xdd, f.pixels[0]);
  ASSERT_EQ(0, capsa_frames_host_latest(&h, &f));
  EXPECT_EQ(b, h.held);
  EXPECT_EQ(0, capsa_frames_host_release(&h));
  EXPECT_EQ(-ENOENT, capsa_frames_host_release(&h));
  EXPECT_EQ(-EAGAIN, capsa_frames_host_latest(&h, &f));
  capsa_frames_renderer_close(&r);
  capsa_frames_host_close(&h);
}

// Random interleavings of an honest renderer and host, with presents in
// flight as messages are: never is one buffer acquired (being drawn) and
// held (being read) at once, and with nothing in flight an acquire always
// finds a buffer (N=3: one held, one pending, one to draw).
TEST(Frames, RandomScheduleKeepsDrawAndReadApart) {
  for (uint32_t n : {2u, 3u, 4u}) {
    capsa_frames_host_t h;
    ASSERT_EQ(0, capsa_frames_host_init(&h, n, kBuf, "t"));
    capsa_frames_renderer_t r;
    MapRenderer(h, &r);
    std::mt19937 rng(1234 + n);
    std::deque<capsa_frame_desc_t> wire;
    int drawing = -1;
    uint64_t taken = 0;
    for (int step = 0; step < 20000; step++) {
      switch (rng() % 4) {
        case 0:  // renderer: acquire or present
          if (drawing < 0) {
            void *px;
            size_t len;
            int i = capsa_frames_renderer_acquire(&r, &px, &len);
            if (i == -EAGAIN) {
              ASSERT_FALSE(n >= 3 && wire.empty()) << "step " << step;
              break;
            }
            ASSERT_GE(i, 0);
            ASSERT_NE(i, h.held) << "step " << step;
            ASSERT_NE(i, h.pending) << "step " << step;
            for (const auto &d : wire) {
              ASSERT_NE((uint32_t)i, d.buffer);
            }
            drawing = i;
          } else {
            capsa_frame_desc_t d = Geometry(64, 64);
            ASSERT_EQ(0, capsa_frames_renderer_present(&r, &d));
            wire.push_back(d);
            drawing = -1;
          }
          break;
        case 1:  // host: a present arrives
          if (!wire.empty()) {
            ASSERT_EQ(0, capsa_frames_host_present(&h, &wire.front()));
            wire.pop_front();
          }
          break;
        case 2: {  // host: takes the latest
          capsa_frame_view_t f;
          int got = capsa_frames_host_latest(&h, &f);
          if (got == 1) taken++;
          if (got >= 0) {
            ASSERT_NE(drawing, h.held) << "step " << step;
          }
          break;
        }
        case 3:
          capsa_frames_host_release(&h);
          break;
      }
    }
    EXPECT_GT(taken, 1000u) << n;  // the chain moved, not just stayed safe
    capsa_frames_renderer_close(&r);
    capsa_frames_host_close(&h);
  }
}

TEST(Frames, PresentOutsideTheBufferIsRefused) {
  capsa_frames_host_t h;
  ASSERT_EQ(0, capsa_frames_host_init(&h, 3, kBuf, "t"));
  const size_t size = h.buffer_size;
  auto refused = [&](capsa_frame_desc_t d, int want) {
    EXPECT_EQ(want, capsa_frames_host_present(&h, &d))
        << "buffer " << d.buffer << " " << d.width << "x" << d.height
        << " stride " << d.stride << " offset " << d.offset;
  };
  capsa_frame_desc_t ok = Geometry(64, 64);
  ok.seq = 5;
  // One row more than the buffer holds.
  capsa_frame_desc_t d = ok;
  d.height = (uint32_t)(size / d.stride) + 1;
  refused(d, -ERANGE);
  d = ok;
  d.offset = size - d.stride * d.height + 1;  // one byte past the end
  refused(d, -ERANGE);
  d = ok;
  d.offset = UINT64_MAX;
  refused(d, -ERANGE);
  d = ok;  // products that overflow 32 bits, and the largest values
  d.stride = UINT32_MAX;
  d.height = UINT32_MAX;
  d.width = UINT32_MAX / 4;
  refused(d, -ERANGE);
  d = ok;
  d.stride = d.width * 4 - 1;
  refused(d, -EINVAL);
  d = ok;
  d.width = 0x40000001;  // width * 4 wraps to 4 in 32 bits
  d.stride = 4;
  refused(d, -EINVAL);
  d = ok;
  d.format = 3;
  refused(d, -EINVAL);
  d = ok;
  d.height = 0;
  refused(d, -EINVAL);
  d = ok;
  d.buffer = 3;
  refused(d, -ERANGE);
  d.buffer = UINT32_MAX;
  refused(d, -ERANGE);
  d = ok;
  d.seq = 0;
  refused(d, -EBADMSG);
  d.seq = CAPSA_FRAMES_MAX_SEQ + 1;
  refused(d, -EBADMSG);
  // Nothing refused changed the host's state.
  EXPECT_EQ(-1, h.pending);
  EXPECT_EQ(0u, h.seen_seq);
  EXPECT_EQ(0u, h.presented);

  // Exactly the buffer is fine; then the held buffer and old seqs are not.
  d = ok;
  d.height = (uint32_t)(size / d.stride);
  ASSERT_EQ(0, capsa_frames_host_present(&h, &d));
  capsa_frame_view_t f;
  ASSERT_EQ(1, capsa_frames_host_latest(&h, &f));
  EXPECT_EQ(size, f.len);
  d = ok;
  d.seq = 6;
  d.buffer = 0;  // held
  refused(d, -EBUSY);
  d.buffer = 1;
  d.seq = 5;  // not above the last
  refused(d, -EBADMSG);
  d.seq = 6;
  EXPECT_EQ(0, capsa_frames_host_present(&h, &d));

  // The renderer side refuses the same before sending, and a present with
  // nothing acquired.
  capsa_frames_renderer_t r;
  MapRenderer(h, &r);
  d = ok;
  EXPECT_EQ(-ENOENT, capsa_frames_renderer_present(&r, &d));
  void *px;
  size_t len;
  ASSERT_GE(capsa_frames_renderer_acquire(&r, &px, &len), 0);
  EXPECT_EQ(-EBUSY, capsa_frames_renderer_acquire(&r, &px, &len));
  d.height = (uint32_t)(size / d.stride) + 1;
  EXPECT_EQ(-ERANGE, capsa_frames_renderer_present(&r, &d));
  EXPECT_EQ(0, capsa_frames_renderer_cancel(&r));
  capsa_frames_renderer_close(&r);

  EXPECT_EQ(-EINVAL, capsa_frames_host_init(&h, CAPSA_FRAMES_MAX_BUFFERS + 1,
                                            kBuf, "t"));
  EXPECT_EQ(-EINVAL, capsa_frames_host_init(&h, 3, 0, "t"));
  EXPECT_EQ(-EINVAL, capsa_frames_host_init(&h, 16, CAPSA_SHM_MAX_SIZE, "t"));
  capsa_frames_host_close(&h);
}

// The renderer's side of the descriptors: the buffers must be writable and
// the right size, the control area sealed; a swapped pair is refused and
// both descriptors stay the caller's.
TEST(Frames, RendererMapChecksTheRegions) {
  capsa_frames_host_t h;
  ASSERT_EQ(0, capsa_frames_host_init(&h, 3, kBuf, "t"));
  int b = -1, c = -1;
  ASSERT_EQ(0, capsa_frames_host_fds(&h, &b, &c));
  capsa_frames_renderer_t r;
  EXPECT_EQ(-EMSGSIZE, capsa_frames_renderer_map(&r, b, c, 4, h.buffer_size,
                                                 h.control.size));
  // The control area as buffers: not writable for us.
  EXPECT_GT(0, capsa_frames_renderer_map(&r, c, c, 1, h.control.size,
                                         h.control.size));
  // The buffers as the control area: no write seal.
  EXPECT_EQ(-ENOTCAPABLE, capsa_frames_renderer_map(&r, b, b, 3, h.buffer_size,
                                                    3 * h.buffer_size));
  EXPECT_EQ(-EINVAL, capsa_frames_renderer_map(&r, b, c, 3, h.buffer_size + 1,
                                               h.control.size));
  EXPECT_EQ(0, fcntl(b, F_GETFD) >= 0 ? 0 : -1);  // still open, still ours
  EXPECT_EQ(0, fcntl(c, F_GETFD) >= 0 ? 0 : -1);
  ASSERT_EQ(
      0, capsa_frames_renderer_map(&r, b, c, 3, h.buffer_size, h.control.size));
  capsa_frames_renderer_close(&r);
  capsa_frames_host_close(&h);
}

// capsa_frames_host_copy: a snapshot later writes do not reach.
TEST(Frames, CopyIsAStableSnapshot) {
  capsa_frames_host_t h;
  ASSERT_EQ(0, capsa_frames_host_init(&h, 3, kBuf, "t"));
  capsa_frames_renderer_t r;
  MapRenderer(h, &r);
  std::vector<uint8_t> snap(kBuf);
  EXPECT_EQ(-ENOENT, capsa_frames_host_copy(&h, snap.data(), snap.size()));
  int i;
  capsa_frame_desc_t d = Draw(&r, 0x11, &i);
  ASSERT_EQ(0, capsa_frames_host_present(&h, &d));
  capsa_frame_view_t f;
  ASSERT_EQ(1, capsa_frames_host_latest(&h, &f));
  EXPECT_EQ(-ENOSPC, capsa_frames_host_copy(&h, snap.data(), f.len - 1));
  ASSERT_EQ((long)f.len, capsa_frames_host_copy(&h, snap.data(), snap.size()));
  // A renderer breaking the rule: it writes the held buffer anyway.
  memset((uint8_t *)r.buffers.base + (size_t)i * r.buffer_size, 0x22, kBuf);
  EXPECT_EQ(0x22, f.pixels[0]);  // in place: the lie shows (its own frame)
  EXPECT_EQ(0x11, snap[0]);      // the copy: unchanged
  EXPECT_EQ(0x11, snap[kBuf - 1]);
  capsa_frames_renderer_close(&r);
  capsa_frames_host_close(&h);
}

// A compromised renderer in capability mode, in a forked child: it cannot
// write the control area by any path, it draws into every buffer all the
// time (the held one too) and sends presents that are mostly lies. The
// host, itself in a forked child so that a fault would fail the test rather
// than the runner, validates each, reads every accepted frame in full,
// checks the frame lies inside the held buffer, and never waits on the
// renderer (its reads of the pipe are polls with a deadline).
void LyingRendererHost() {
  {
    {
      {
        capsa_frames_host_t h;
        ASSERT_EQ(0, capsa_frames_host_init(&h, 3, kBuf, "t"));
        int p[2];
        ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
        int b = -1, c = -1;
        ASSERT_EQ(0, capsa_frames_host_fds(&h, &b, &c));
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
          close(p[0]);
          int err = capsa_cap_enter();
          if (err < 0 && err != -ENOSYS) _exit(10);
          capsa_frames_renderer_t r;
          if (capsa_frames_renderer_map(&r, b, c, h.count, h.buffer_size,
                                        h.control.size) != 0)
            _exit(11);
          // Every write path to the control area is closed by the seals.
          uint64_t zero = 0;
          if (pwrite(r.control.fd, &zero, sizeof zero, 0) != -1) _exit(12);
          if (mmap(nullptr, r.control.size, PROT_READ | PROT_WRITE, MAP_SHARED,
                   r.control.fd, 0) != MAP_FAILED)
            _exit(13);
          if (mprotect(r.control.base, r.control.size,
                       PROT_READ | PROT_WRITE) == 0)
            _exit(14);
          std::mt19937_64 rng(42);
          uint8_t *all = (uint8_t *)r.buffers.base;
          size_t total = r.buffers.size;
          for (uint64_t k = 0;; k++) {
            memset(all, (int)(k & 0xff), total);  // held buffer included
            capsa_frame_desc_t d = Geometry(64, 64);
            uint64_t x = rng();
            d.seq = k + 1;
            d.buffer = (uint32_t)(x % 5);  // 3 and 4: out of range
            if (x & 0x100) d.height = (uint32_t)(x >> 32);
            if (x & 0x200) d.stride = (uint32_t)(x >> 20);
            if (x & 0x400) d.offset = (x >> 40) << 4;
            if (x & 0x800) d.seq = x >> 8;  // jumps, repeats, past the max
            if (x & 0x1000) d.format = (uint32_t)(x >> 60);
            if (write(p[1], &d, sizeof d) != (ssize_t)sizeof d) _exit(0);
          }
        }
        close(p[1]);
        close(b);
        close(c);
        const uint8_t *lo = (const uint8_t *)h.buffers.base;
        uint64_t accepted = 0, refused = 0, read_bytes = 0, torn = 0;
        for (int n = 0; n < 20000; n++) {
          struct pollfd pfd = {p[0], POLLIN, 0};
          ASSERT_EQ(1, poll(&pfd, 1, 5000)) << "renderer went quiet";
          capsa_frame_desc_t d;
          ssize_t got = read(p[0], &d, sizeof d);
          if (got == 0) {  // the renderer ended: say how (its _exit code)
            int st = 0;
            waitpid(pid, &st, 0);
            FAIL() << "renderer ended early, status " << st;
          }
          ASSERT_EQ((ssize_t)sizeof d, got);
          if (capsa_frames_host_present(&h, &d) < 0) {
            refused++;
            continue;
          }
          accepted++;
          capsa_frame_view_t f;
          ASSERT_GE(capsa_frames_host_latest(&h, &f), 0);
          const uint8_t *slot = lo + (size_t)h.held * h.buffer_size;
          ASSERT_GE(f.pixels, slot);
          ASSERT_LE(f.pixels + f.len, slot + h.buffer_size);
          ASSERT_EQ((uint64_t)f.desc.stride * f.desc.height, f.len);
          // Read all of it, as an encoder would, while the renderer writes.
          uint8_t first = f.pixels[0];
          bool differs = false;
          for (size_t i = 0; i < f.len; i++) differs |= f.pixels[i] != first;
          torn += differs;
          read_bytes += f.len;
          if (n % 3 == 0) capsa_frames_host_release(&h);
        }
        kill(pid, SIGKILL);
        int st;
        ASSERT_EQ(pid, waitpid(pid, &st, 0));
        EXPECT_TRUE(WIFSIGNALED(st)) << "renderer exited " << WEXITSTATUS(st);
        EXPECT_GT(accepted, 100u);
        EXPECT_GT(refused, 100u);
        EXPECT_GT(read_bytes, 0u);
        // The control word is still the host's: seen is the last accepted.
        uint64_t w =
            __atomic_load_n((uint64_t *)h.control.base, __ATOMIC_ACQUIRE);
        EXPECT_EQ(h.seen_seq, w >> 16);
        printf("accepted %llu refused %llu torn %llu of the frames read\n",
               (unsigned long long)accepted, (unsigned long long)refused,
               (unsigned long long)torn);
        close(p[0]);
        capsa_frames_host_close(&h);
      }
    }
  }
}

TEST(Frames, LyingRendererTearsOnlyItsOwnFrame) {
  CAPSA_EXPECT_CHILD_OK_T(LyingRendererHost, 60000);
}

// The other side of the same coin: an honest renderer in capability mode
// (forked) draws frame k as 16 KiB of the byte k, as fast as it can, while
// the host takes frames as they arrive and checks each one it holds, before
// and after reading it whole: never a torn frame, so the renderer never
// drew into a buffer the host held, with presents in flight on the pipe.
void HonestRendererHost() {
  capsa_frames_host_t h;
  ASSERT_EQ(0, capsa_frames_host_init(&h, 3, kBuf, "t"));
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  int b = -1, c = -1;
  ASSERT_EQ(0, capsa_frames_host_fds(&h, &b, &c));
  constexpr uint64_t kFrames = 5000;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(p[0]);
    int err = capsa_cap_enter();
    if (err < 0 && err != -ENOSYS) _exit(10);
    capsa_frames_renderer_t r;
    if (capsa_frames_renderer_map(&r, b, c, h.count, h.buffer_size,
                                  h.control.size) != 0)
      _exit(11);
    for (uint64_t k = 1; k <= kFrames; k++) {
      void *px;
      size_t len;
      int i;
      // -EAGAIN until the host takes or drops a frame: this renderer spins
      // (yields); the host never waits for it.
      while ((i = capsa_frames_renderer_acquire(&r, &px, &len)) == -EAGAIN)
        sched_yield();
      if (i < 0) _exit(12);
      memset(px, (int)(k & 0xff), kBuf);
      capsa_frame_desc_t d = Geometry(64, 64);
      if (capsa_frames_renderer_present(&r, &d) != 0 || d.seq != k) _exit(13);
      if (write(p[1], &d, sizeof d) != (ssize_t)sizeof d) _exit(14);
    }
    _exit(0);
  }
  close(p[1]);
  close(b);
  close(c);
  uint64_t held = 0, torn = 0, last = 0;
  capsa_frame_desc_t d;
  for (;;) {
    struct pollfd pfd = {p[0], POLLIN, 0};
    ASSERT_EQ(1, poll(&pfd, 1, 5000)) << "renderer went quiet";
    ssize_t got = read(p[0], &d, sizeof d);
    if (got == 0) break;
    ASSERT_EQ((ssize_t)sizeof d, got);
    ASSERT_EQ(0, capsa_frames_host_present(&h, &d));
    last = d.seq;
    // Take only some frames, so that presents pile up in flight and
    // pending ones get dropped.
    if (d.seq % 3 == 0) continue;
    capsa_frame_view_t f;
    ASSERT_EQ(1, capsa_frames_host_latest(&h, &f));
    held++;
    uint8_t want = (uint8_t)(f.desc.seq & 0xff);
    for (int pass = 0; pass < 2; pass++)
      for (size_t i = 0; i < f.len; i++)
        if (f.pixels[i] != want) {
          torn++;
          break;
        }
    if (d.seq % 2 == 0) capsa_frames_host_release(&h);
  }
  int st;
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "renderer " << st;
  EXPECT_EQ(kFrames, last);
  EXPECT_GT(held, kFrames / 2);
  EXPECT_EQ(0u, torn) << "of " << held << " frames held";
  EXPECT_GT(h.dropped, 0u);
  close(p[0]);
  capsa_frames_host_close(&h);
}

TEST(Frames, HonestRendererNeverDrawsIntoTheHeldBuffer) {
  CAPSA_EXPECT_CHILD_OK_T(HonestRendererHost, 60000);
}

}  // namespace
