// SPSC ring over a shared region. See ipc/ring.h for the layout and the
// trust model: the peer can write every byte of the region at any time.
#include "ipc/ring.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct capsa__ring_shared {
  _Atomic uint32_t tail;
  _Atomic uint32_t producer_sleeping;
  uint8_t pad0[56];
  _Atomic uint32_t head;
  _Atomic uint32_t consumer_sleeping;
  uint8_t pad1[56];
};

_Static_assert(offsetof(struct capsa__ring_shared, tail) == CAPSA_RING_OFF_TAIL,
               "layout");
_Static_assert(offsetof(struct capsa__ring_shared, producer_sleeping) ==
                   CAPSA_RING_OFF_PRODUCER_SLEEPING,
               "layout");
_Static_assert(offsetof(struct capsa__ring_shared, head) == CAPSA_RING_OFF_HEAD,
               "layout");
_Static_assert(offsetof(struct capsa__ring_shared, consumer_sleeping) ==
                   CAPSA_RING_OFF_CONSUMER_SLEEPING,
               "layout");
_Static_assert(sizeof(struct capsa__ring_shared) <= CAPSA_RING_HEADER,
               "header fits");
_Static_assert(sizeof(_Atomic uint32_t) == 4, "futex words are 32-bit");

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Shared futexes: no FUTEX_PRIVATE_FLAG, the word lives in a MAP_SHARED
// mapping that the peer process maps too.
static void futex_wait(_Atomic uint32_t *word, uint32_t seen,
                       const struct timespec *rel) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, rel, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

size_t capsa_ring_region_size(size_t capacity) {
  if (capacity < 4096 || capacity > ((size_t)1 << 30) ||
      (capacity & (capacity - 1)) != 0)
    return 0;
  return CAPSA_RING_HEADER + capacity;
}

int capsa_ring_init(capsa_ring_t *ring, capsa_shm_region_t *region,
                    capsa_ring_role_t role) {
  if (!ring || !region || !region->base) return -EINVAL;
  if (role != CAPSA_RING_PRODUCER && role != CAPSA_RING_CONSUMER)
    return -EINVAL;
  if (region->size <= CAPSA_RING_HEADER) return -EINVAL;
  size_t cap = region->size - CAPSA_RING_HEADER;
  if (capsa_ring_region_size(cap) != region->size) return -EINVAL;
  if (!region->writable) return -EACCES;
  memset(ring, 0, sizeof *ring);
  ring->sh = (struct capsa__ring_shared *)region->base;
  ring->data = (uint8_t *)region->base + CAPSA_RING_HEADER;
  ring->capacity = (uint32_t)cap;
  ring->pos = 0;
  ring->role = role;
  ring->spin_min = CAPSA_RING_SPIN_MIN;
  ring->spin_max = CAPSA_RING_SPIN_MAX;
  // Spinning is pointless when this process can only run on one CPU: the
  // peer cannot make progress while we spin.
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu == 1) ring->spin_min = ring->spin_max = 0;
  ring->spin = ring->spin_max;
  ring->doorbell = -1;
  return 0;
}

void capsa_ring_set_spin(capsa_ring_t *ring, uint32_t min, uint32_t max) {
  if (!ring) return;
  if (min > max) min = max;
  ring->spin_min = min;
  ring->spin_max = max;
  ring->spin = max;
}

// 1 when the condition this side waits for holds, 0 if not yet, -EBADMSG if
// the peer's index is impossible. *word_seen gets the peer word we read, the
// value to FUTEX_WAIT on. The consumer waits for any data; the producer for
// `need` bytes of space.
static int check(capsa_ring_t *r, uint32_t need, uint32_t *word_seen) {
  if (r->role == CAPSA_RING_CONSUMER) {
    uint32_t t = atomic_load_explicit(&r->sh->tail, memory_order_acquire);
    *word_seen = t;
    uint32_t avail = t - r->pos;
    if (avail > r->capacity) return -EBADMSG;
    return avail != 0;
  }
  uint32_t h = atomic_load_explicit(&r->sh->head, memory_order_acquire);
  *word_seen = h;
  uint32_t used = r->pos - h;
  if (used > r->capacity) return -EBADMSG;
  return r->capacity - used >= need;
}

// Spins up to the current budget; adapts the budget: doubles it (to the
// maximum) when spinning paid off, halves it (to the minimum) when not. At 0,
// every CAPSA_RING_PROBE_EVERY-th wait probes with a short spin.
static int spin(capsa_ring_t *r, uint32_t need) {
  uint32_t seen, budget = r->spin;
  r->waits++;
  if (budget == 0 && r->spin_max > 0 && r->waits % CAPSA_RING_PROBE_EVERY == 0)
    budget = CAPSA_RING_SPIN_PROBE < r->spin_max ? CAPSA_RING_SPIN_PROBE
                                                 : r->spin_max;
  for (uint32_t i = 0; i < budget; i++) {
    cpu_relax();
    int c = check(r, need, &seen);
    if (c > 0) {
      r->stats.spin_hits++;
      uint32_t grown = budget * 2;
      r->spin = grown > r->spin_max || grown < budget ? r->spin_max : grown;
    }
    if (c != 0) return c;
  }
  r->spin = r->spin / 2 < r->spin_min ? r->spin_min : r->spin / 2;
  return 0;
}

static int wait_until(capsa_ring_t *r, uint32_t need, int timeout_ms) {
  uint32_t seen;
  int c = check(r, need, &seen);
  if (c != 0) return c < 0 ? c : 0;
  if (timeout_ms == 0) return -EAGAIN;

  c = spin(r, need);
  if (c != 0) return c < 0 ? c : 0;

  bool consumer = r->role == CAPSA_RING_CONSUMER;
  _Atomic uint32_t *flag =
      consumer ? &r->sh->consumer_sleeping : &r->sh->producer_sleeping;
  _Atomic uint32_t *word = consumer ? &r->sh->tail : &r->sh->head;
  int64_t deadline =
      timeout_ms > 0 ? now_ns() + (int64_t)timeout_ms * 1000000 : 0;
  for (;;) {
    // Announce, then re-check: with the peer's publish-then-check of this
    // flag (both seq_cst), one of us sees the other, so no wake-up is lost.
    atomic_store_explicit(flag, CAPSA_RING_SLEEP_FUTEX, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    c = check(r, need, &seen);
    if (c != 0) break;
    struct timespec rel, *relp = NULL;
    if (timeout_ms > 0) {
      int64_t left = deadline - now_ns();
      if (left <= 0) {
        c = -ETIMEDOUT;
        break;
      }
      rel.tv_sec = left / 1000000000;
      rel.tv_nsec = left % 1000000000;
      relp = &rel;
    }
    r->stats.sleeps++;
    // EAGAIN (word moved), EINTR and ETIMEDOUT all lead to the re-check.
    futex_wait(word, seen, relp);
  }
  atomic_store_explicit(flag, CAPSA_RING_AWAKE, memory_order_relaxed);
  return c < 0 ? c : 0;
}

// Tells the peer we moved our index, if and only if it announced sleeping.
static void publish(capsa_ring_t *r, _Atomic uint32_t *word,
                    _Atomic uint32_t *peer_flag) {
  atomic_store_explicit(word, r->pos, memory_order_seq_cst);
  atomic_thread_fence(memory_order_seq_cst);
  uint32_t sleeping = atomic_load_explicit(peer_flag, memory_order_relaxed);
  if (sleeping == CAPSA_RING_AWAKE) return;
  if (sleeping == CAPSA_RING_SLEEP_DOORBELL && r->doorbell >= 0) {
    uint64_t one = 1;
    r->stats.doorbells++;
    // Non-blocking by contract; EAGAIN means the counter is already set.
    ssize_t n = write(r->doorbell, &one, sizeof one);
    (void)n;
    return;
  }
  // Any other value (1, or garbage from a hostile peer): the futex.
  r->stats.wakes++;
  futex_wake(word);
}

// Copies between a private buffer and the data area starting at ring
// position `at`, wrapping at the end (capacity is a power of two).
static void copy_in(capsa_ring_t *r, uint32_t at, const void *src,
                    uint32_t len) {
  uint32_t off = at & (r->capacity - 1);
  uint32_t first = r->capacity - off < len ? r->capacity - off : len;
  memcpy(r->data + off, src, first);
  memcpy(r->data, (const uint8_t *)src + first, len - first);
}

static void copy_out(capsa_ring_t *r, uint32_t at, void *dst, uint32_t len) {
  uint32_t off = at & (r->capacity - 1);
  uint32_t first = r->capacity - off < len ? r->capacity - off : len;
  memcpy(dst, r->data + off, first);
  memcpy((uint8_t *)dst + first, r->data, len - first);
}

int capsa_ring_write(capsa_ring_t *ring, uint32_t kind, const void *msg,
                     size_t len, int timeout_ms) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_PRODUCER) return -EINVAL;
  if (len && !msg) return -EINVAL;
  if (ring->broken) return -EBADMSG;
  if (len > CAPSA_RING_MAX_MESSAGE ||
      CAPSA_RING_RECORD_SIZE(len) > ring->capacity)
    return -EMSGSIZE;
  uint32_t rec = CAPSA_RING_RECORD_SIZE(len);
  int c = wait_until(ring, rec, timeout_ms);
  if (c < 0) {
    if (c == -EBADMSG) ring->broken = true;
    return c;
  }
  uint32_t hdr[2] = {(uint32_t)len, kind};
  copy_in(ring, ring->pos, hdr, sizeof hdr);
  if (len) copy_in(ring, ring->pos + 8, msg, (uint32_t)len);
  ring->pos += rec;
  publish(ring, &ring->sh->tail, &ring->sh->consumer_sleeping);
  return 0;
}

int capsa_ring_poll(capsa_ring_t *ring) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_CONSUMER) return -EINVAL;
  if (ring->broken) return -EBADMSG;
  uint32_t seen;
  int c = check(ring, 0, &seen);
  if (c < 0) ring->broken = true;
  return c;
}

int capsa_ring_read(capsa_ring_t *ring, void *buf, size_t cap, uint32_t *kind,
                    int timeout_ms) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_CONSUMER) return -EINVAL;
  if (cap && !buf) return -EINVAL;
  if (ring->broken) return -EBADMSG;
  int c = wait_until(ring, 0, timeout_ms);
  if (c < 0) {
    if (c == -EBADMSG) ring->broken = true;
    return c;
  }
  // One snapshot of the peer's tail and of the record header: whatever the
  // peer writes afterwards, we act on the values we checked.
  uint32_t t = atomic_load_explicit(&ring->sh->tail, memory_order_acquire);
  uint32_t avail = t - ring->pos;
  uint32_t hdr[2];
  if (avail > ring->capacity || avail < 8 || (avail & 7u) != 0) {
    ring->broken = true;
    return -EBADMSG;
  }
  copy_out(ring, ring->pos, hdr, sizeof hdr);
  uint32_t len = hdr[0];
  if (len > CAPSA_RING_MAX_MESSAGE || CAPSA_RING_RECORD_SIZE(len) > avail) {
    ring->broken = true;
    return -EBADMSG;
  }
  if (len > cap) return -EMSGSIZE;
  if (len) copy_out(ring, ring->pos + 8, buf, len);
  if (kind) *kind = hdr[1];
  ring->pos += CAPSA_RING_RECORD_SIZE(len);
  publish(ring, &ring->sh->head, &ring->sh->producer_sleeping);
  return (int)len;
}

int capsa_ring_wait(capsa_ring_t *ring, int timeout_ms) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_CONSUMER) return -EINVAL;
  if (ring->broken) return -EBADMSG;
  int c = wait_until(ring, 0, timeout_ms);
  if (c == -EBADMSG) ring->broken = true;
  return c;
}

void capsa_ring_set_doorbell(capsa_ring_t *ring, int fd) {
  if (ring) ring->doorbell = fd;
}

int capsa_ring_arm(capsa_ring_t *ring) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_CONSUMER) return -EINVAL;
  if (ring->broken) return -EBADMSG;
  // Same handshake as the futex path: announce, fence, re-check.
  atomic_store_explicit(&ring->sh->consumer_sleeping, CAPSA_RING_SLEEP_DOORBELL,
                        memory_order_seq_cst);
  atomic_thread_fence(memory_order_seq_cst);
  uint32_t seen;
  int c = check(ring, 0, &seen);
  if (c < 0) ring->broken = true;
  return c;
}

void capsa_ring_disarm(capsa_ring_t *ring) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_CONSUMER) return;
  atomic_store_explicit(&ring->sh->consumer_sleeping, CAPSA_RING_AWAKE,
                        memory_order_relaxed);
}

int capsa_ring_spin(capsa_ring_t *ring) {
  if (!ring || !ring->sh || ring->role != CAPSA_RING_CONSUMER) return -EINVAL;
  if (ring->broken) return -EBADMSG;
  uint32_t seen;
  int c = check(ring, 0, &seen);
  if (c == 0) c = spin(ring, 0);
  if (c < 0) ring->broken = true;
  return c;
}
