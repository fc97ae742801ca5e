// Data pipes (ipc/data_pipe.h): one header page and a data area mapped
// twice, back to back, in a sealed memfd both processes map read-write.
//
// Shared header (the ABI between the two processes; little-endian):
//   offset   0  u32 magic "CPDP", u32 version, u64 capacity (the creator's
//                word; an opener checks it against the size it verified)
//   offset  64  u64 written: bytes ever published by the producer;
//                u32 producer_closed, u32 producer_sleeping (for room: 1
//                on the futex, 2 in poll() on its doorbell),
//                u32 data_seq: bumped at each publish and at the producer's
//                close, the futex word the consumer sleeps on
//   offset 128  u64 consumed: bytes ever consumed by the consumer;
//                u32 consumer_closed, u32 consumer_sleeping (for data),
//                u32 space_seq: bumped at each consume and at the
//                consumer's close, the futex word the producer sleeps on
// A sleeper reads the word before it looks at the positions, so a publish
// or close between its look and its FUTEX_WAIT changes the word and the
// wait returns at once (no lost wake-up).
//   offset 4096 data[capacity], mapped again right after itself
#include "ipc/data_pipe.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/shm.h"

#define HEADER 4096u
#define MAGIC 0x50445043u  // "CPDP"
#define VERSION 1u
// Pause-loop iterations before sleeping on the futex (a few microseconds):
// a peer on another CPU usually answers within that; one on ours cannot
// run until we sleep.
#define SPIN 2000

struct header {
  uint32_t magic, version;
  uint64_t capacity;
  uint8_t pad0[48];
  _Atomic uint64_t written;
  _Atomic uint32_t producer_closed;
  _Atomic uint32_t producer_sleeping;
  _Atomic uint32_t data_seq;
  uint8_t pad1[44];
  _Atomic uint64_t consumed;
  _Atomic uint32_t consumer_closed;
  _Atomic uint32_t consumer_sleeping;
  _Atomic uint32_t space_seq;
};
_Static_assert(offsetof(struct header, written) == 64, "ABI");
_Static_assert(offsetof(struct header, consumed) == 128, "ABI");
_Static_assert(offsetof(struct header, data_seq) == 80, "ABI");
_Static_assert(offsetof(struct header, space_seq) == 144, "ABI");
_Static_assert(sizeof(struct header) <= HEADER, "ABI");

struct capsa_data_pipe {
  struct header *h;  // the shared header (hostile content)
  uint8_t *data;     // capacity bytes, then the same bytes again
  void *map;         // HEADER + 2 * capacity bytes of address space
  size_t capacity;   // from the verified size, never from the header
  bool producer;
  bool busy;          // between begin_* and end_*
  bool corrupt;       // the peer lied once: every call fails -EBADMSG
  uint64_t pos;       // ours: bytes written (producer) or consumed (consumer)
  size_t granted;     // what the last begin_* handed out
  int peer_doorbell;  // the peer's eventfd (borrowed), or -1
};

static bool power_of_two(size_t n) {
  return n && (n & (n - 1)) == 0;
}

static bool valid_capacity(size_t n) {
  return power_of_two(n) && n >= CAPSA_DATA_PIPE_MIN &&
         n <= CAPSA_DATA_PIPE_MAX;
}

// Maps the header and the data area twice from `fd` (borrowed), populated:
// the ring is used whole after one lap anyway, and faulting its pages in
// on the first lap, in both processes and both mappings, cost a fifth of
// a 256 MiB transfer through a 4 MiB pipe (capsa bench ipc: 0.71-0.76x
// memcpy lazily, 0.80-0.97x populated).
static int map_twice(int fd, size_t capacity, capsa_data_pipe_t *p) {
  size_t span = HEADER + 2 * capacity;
  uint8_t *base =
      mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return -errno;
  if (mmap(base, HEADER + capacity, PROT_READ | PROT_WRITE,
           MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED ||
      mmap(base + HEADER + capacity, capacity, PROT_READ | PROT_WRITE,
           MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, HEADER) == MAP_FAILED) {
    int err = -errno;
    munmap(base, span);
    return err;
  }
  p->map = base;
  p->h = (struct header *)base;
  p->data = base + HEADER;
  p->capacity = capacity;
  return 0;
}

int capsa_data_pipe_create(size_t capacity, capsa_data_pipe_t **out,
                           int *peer_fd) {
  if (!out || !peer_fd || !valid_capacity(capacity)) return -EINVAL;
  *out = NULL;
  *peer_fd = -1;
  capsa_data_pipe_t *p = calloc(1, sizeof *p);
  if (!p) return -ENOMEM;
  capsa_shm_region_t r;
  int err = capsa_shm_create(HEADER + capacity, "capsa-data-pipe",
                             CAPSA_SHM_BOTH_WRITE, &r);
  if (err < 0) {
    free(p);
    return err;
  }
  struct header *h = r.base;
  h->magic = MAGIC;
  h->version = VERSION;
  h->capacity = capacity;
  // Our own view is the double mapping; the region's single one goes.
  err = capsa_shm_unmap(&r);
  if (err == 0) err = map_twice(r.fd, capacity, p);
  if (err < 0) {
    capsa_shm_close(&r);
    free(p);
    return err;
  }
  p->producer = true;
  p->peer_doorbell = -1;
  *peer_fd = capsa_shm_release_fd(&r);
  capsa_shm_close(&r);
  *out = p;
  return 0;
}

int capsa_data_pipe_open(int fd, capsa_data_pipe_t **out) {
  if (!out || fd < 0) return -EINVAL;
  *out = NULL;
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  if (st.st_size < 0 || (uint64_t)st.st_size <= HEADER ||
      !valid_capacity((size_t)st.st_size - HEADER))
    return -EMSGSIZE;
  size_t capacity = (size_t)st.st_size - HEADER;
  int seals =
      capsa_shm_verify(fd, (size_t)st.st_size, CAPSA_SHM_PEER_READWRITE);
  if (seals < 0) return seals;
  capsa_data_pipe_t *p = calloc(1, sizeof *p);
  if (!p) return -ENOMEM;
  int err = map_twice(fd, capacity, p);
  if (err < 0) {
    free(p);
    return err;
  }
  // Read once; the creator may rewrite it at any time, which changes
  // nothing here: the capacity in use is the one derived above.
  uint32_t magic = p->h->magic, version = p->h->version;
  uint64_t declared = p->h->capacity;
  if (magic != MAGIC || version != VERSION || declared != capacity) {
    munmap(p->map, HEADER + 2 * capacity);
    free(p);
    return -EBADMSG;
  }
  p->producer = false;
  p->pos = 0;
  p->peer_doorbell = -1;
  close(fd);
  *out = p;
  return 0;
}

// The peer's position, checked: a producer's view of `consumed` lies in
// [written - capacity, written]; a consumer's view of `written` in
// [consumed, consumed + capacity]. Returns the bytes in the pipe.
static int64_t fill(capsa_data_pipe_t *p) {
  if (p->corrupt) return -EBADMSG;
  uint64_t other, used;
  if (p->producer) {
    other = atomic_load_explicit(&p->h->consumed, memory_order_acquire);
    used = p->pos - other;
    if (other > p->pos || used > p->capacity) goto lied;
  } else {
    other = atomic_load_explicit(&p->h->written, memory_order_acquire);
    used = other - p->pos;
    if (other < p->pos || used > p->capacity) goto lied;
  }
  return (int64_t)used;
lied:
  p->corrupt = true;
  return -EBADMSG;
}

static bool peer_closed(capsa_data_pipe_t *p) {
  return atomic_load_explicit(
             p->producer ? &p->h->consumer_closed : &p->h->producer_closed,
             memory_order_acquire) != 0;
}

static int futex(_Atomic uint32_t *word, int op, uint32_t val,
                 const struct timespec *ts) {
  return (int)syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

// The word this side sleeps on, and the one it bumps for its peer.
static _Atomic uint32_t *sleep_word(capsa_data_pipe_t *p) {
  return p->producer ? &p->h->space_seq : &p->h->data_seq;
}
static _Atomic uint32_t *signal_word(capsa_data_pipe_t *p) {
  return p->producer ? &p->h->data_seq : &p->h->space_seq;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

// Waits until ready(p) (room for a producer, data for a consumer), the
// peer closes, or timeout_ms passes: a bounded spin, then the futex on the
// peer's position with our "sleeping" word raised so that it wakes us.
static int wait_for(capsa_data_pipe_t *p, int timeout_ms) {
  _Atomic uint32_t *word = sleep_word(p);
  _Atomic uint32_t *sleeping =
      p->producer ? &p->h->producer_sleeping : &p->h->consumer_sleeping;
  uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    for (int i = 0; i < SPIN; i++) {
      int64_t used = fill(p);
      if (used < 0) return (int)used;
      if (p->producer ? (size_t)used < p->capacity : used > 0) return 0;
      if (peer_closed(p)) return -EPIPE;
      __builtin_ia32_pause();
    }
    uint64_t now = now_ms();
    if (now >= deadline) return -ETIMEDOUT;
    uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
    atomic_store_explicit(sleeping, 1, memory_order_seq_cst);
    int64_t used = fill(p);
    bool ready =
        used >= 0 && (p->producer ? (size_t)used < p->capacity : used > 0);
    if (used >= 0 && !ready && !peer_closed(p)) {
      uint64_t left = deadline - now;
      struct timespec ts = {(time_t)(left / 1000),
                            (long)(left % 1000) * 1000000L};
      futex(word, FUTEX_WAIT, seen, &ts);  // EAGAIN/EINTR: look again
    }
    atomic_store_explicit(sleeping, 0, memory_order_relaxed);
  }
}

// After publishing a position or closing: bump the peer's word, and wake
// it if it said it sleeps.
static void wake_peer(capsa_data_pipe_t *p, bool always) {
  _Atomic uint32_t *sleeping =
      p->producer ? &p->h->consumer_sleeping : &p->h->producer_sleeping;
  atomic_fetch_add_explicit(signal_word(p), 1, memory_order_seq_cst);
  uint32_t how = atomic_load_explicit(sleeping, memory_order_seq_cst);
  if (always || how == 1) futex(signal_word(p), FUTEX_WAKE, 1, NULL);
  if ((always || how == 2) && p->peer_doorbell >= 0) {
    uint64_t one = 1;  // EAGAIN (counter full) still leaves it readable
    ssize_t n = write(p->peer_doorbell, &one, sizeof one);
    (void)n;
  }
}

static int begin(capsa_data_pipe_t *p, bool producer, uint8_t **at, size_t *len,
                 int timeout_ms) {
  if (!p || !at || !len || p->producer != producer || p->busy || timeout_ms < 0)
    return -EINVAL;
  int64_t used = fill(p);
  if (used < 0) return (int)used;
  size_t n = producer ? p->capacity - (size_t)used : (size_t)used;
  if (producer && peer_closed(p)) return -EPIPE;
  if (n == 0) {
    if (!producer && peer_closed(p)) {
      // Closed: what it wrote before closing is all there is; look once more.
      used = fill(p);
      if (used < 0) return (int)used;
      if (used == 0) return -EPIPE;
    } else {
      int err = timeout_ms == 0 ? -ETIMEDOUT : wait_for(p, timeout_ms);
      if (err == -EPIPE && !producer) err = 0;  // drain what is left first
      if (err < 0) return err;
      used = fill(p);
      if (used < 0) return (int)used;
      if (!producer && used == 0) return -EPIPE;
    }
    n = producer ? p->capacity - (size_t)used : (size_t)used;
  }
  *at = p->data + (p->pos & (p->capacity - 1));
  *len = n;
  p->granted = n;
  p->busy = true;
  return 0;
}

static int end(capsa_data_pipe_t *p, bool producer, size_t n) {
  if (!p || p->producer != producer || !p->busy || n > p->granted)
    return -EINVAL;
  p->busy = false;
  p->granted = 0;
  if (n == 0) return 0;
  p->pos += n;
  atomic_store_explicit(producer ? &p->h->written : &p->h->consumed, p->pos,
                        memory_order_release);
  wake_peer(p, false);
  return 0;
}

int capsa_data_pipe_begin_write(capsa_data_pipe_t *p, void **room, size_t *len,
                                int timeout_ms) {
  uint8_t *at = NULL;
  int err = begin(p, true, &at, len, timeout_ms);
  if (err == 0) *room = at;
  return err;
}

int capsa_data_pipe_end_write(capsa_data_pipe_t *p, size_t n) {
  return end(p, true, n);
}

int capsa_data_pipe_begin_read(capsa_data_pipe_t *p, const void **data,
                               size_t *len, int timeout_ms) {
  uint8_t *at = NULL;
  int err = begin(p, false, &at, len, timeout_ms);
  if (err == 0) *data = at;
  return err;
}

int capsa_data_pipe_end_read(capsa_data_pipe_t *p, size_t n) {
  return end(p, false, n);
}

void capsa_data_pipe_set_peer_doorbell(capsa_data_pipe_t *p, int fd) {
  if (p) p->peer_doorbell = fd;
}

int capsa_data_pipe_arm(capsa_data_pipe_t *p) {
  if (!p) return -EINVAL;
  _Atomic uint32_t *sleeping =
      p->producer ? &p->h->producer_sleeping : &p->h->consumer_sleeping;
  atomic_store_explicit(sleeping, 2, memory_order_seq_cst);
  // Looked at after announcing: what the peer published before it saw the
  // announcement is found here, what it publishes after rings the bell.
  int64_t used = fill(p);
  if (used < 0) return (int)used;
  bool ready = p->producer ? (size_t)used < p->capacity || peer_closed(p)
                           : used > 0 || peer_closed(p);
  if (ready) atomic_store_explicit(sleeping, 0, memory_order_relaxed);
  return ready ? 1 : 0;
}

void capsa_data_pipe_disarm(capsa_data_pipe_t *p) {
  if (!p) return;
  atomic_store_explicit(
      p->producer ? &p->h->producer_sleeping : &p->h->consumer_sleeping, 0,
      memory_order_relaxed);
}

int64_t capsa_data_pipe_available(capsa_data_pipe_t *p) {
  return p ? fill(p) : -EINVAL;
}

size_t capsa_data_pipe_capacity(const capsa_data_pipe_t *p) {
  return p ? p->capacity : 0;
}

void capsa_data_pipe_close(capsa_data_pipe_t *p) {
  if (!p) return;
  _Atomic uint32_t *closed =
      p->producer ? &p->h->producer_closed : &p->h->consumer_closed;
  atomic_store_explicit(closed, 1, memory_order_seq_cst);
  wake_peer(p, true);
  munmap(p->map, HEADER + 2 * p->capacity);
  free(p);
}
