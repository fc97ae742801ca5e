// The live fuzzing renderer (generic.h). It writes its messages through the
// codec's envelope with payloads the schema mutator wrote, so the host's
// interface checks, its pairing of requests and responses and then the
// embedder's handler meet them; no message is checked on this side.
#include "host/fuzz/generic.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host/fuzz/fuzz_live.capsa.h"
#include "ipc/codec.h"
#include "ipc/fuzz.h"
#include "ipc/fuzz_internal.h"
#include "ipc/scm.h"

enum {
  kIdleMs = 2000,       // nothing to send and nothing asked: done
  kSeedWaitMs = 10000,  // the host's Seed comes at READY
  kDefaultRounds = 256,
  kMaxSlots = 64,     // message streams a renderer keeps
  kMaxAsked = 32,     // a told renderer's unanswered host requests
  kToldWaitMs = 20,   // for a request an answer in the input is for
  kToldLingerMs = 5,  // after the last record
  kMaxInput = CAPSA_IPC_MAX_MESSAGE + CAPSA_FUZZ_HEADER +
              CAPSA_IPC_MAX_HANDLES * CAPSA_FUZZ_HANDLE,
};

int capsa__fz_generic_init(capsa__fz_generic_t *g, const char *kind,
                           const capsa_interface_t *const *ifaces, unsigned n) {
  if (!g || !kind || strlen(kind) >= sizeof g->kind || (n && !ifaces) ||
      n + 1 > CAPSA_IFACE_MAX_PER_CHANNEL)
    return -EINVAL;
  memset(g, 0, sizeof *g);
  for (unsigned i = 0; i < n; i++) {
    if (!ifaces[i]) return -EINVAL;
    g->ifaces[i] = ifaces[i];
  }
  g->ifaces[n] = &capsa_fuzz_live_interface;
  g->nifaces = n + 1;
  strcpy(g->kind, kind);
  return 0;
}

int capsa__fz_generic_send_seed(capsa_renderer_t *r, uint64_t seed,
                                unsigned rounds) {
  capsa_fuzz_live_seed_t sd;
  capsa_fuzz_live_seed_init(&sd);
  sd.seed = seed;
  sd.rounds = rounds;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_fuzz_live_interface, CAPSA_FUZZ_LIVE_SEED,
                       &sd);
  return capsa_renderer_send(r, &m);
}

// --- the renderer

// One stream of messages: the last input the mutator wrote for interface
// `iface`'s message `id` (0: the unasked ones), which the next one starts
// from.
struct slot {
  unsigned iface;
  uint32_t id;
  size_t len;
  uint8_t *buf;
};

struct fz {
  int ch;
  bool told;  // sends what the host's input says (capsa__fz_told_main)
  const capsa__fz_generic_t *g;
  uint64_t rng, seq, next_request;
  struct slot slots[kMaxSlots];
  unsigned nslots;
  // Told: the host's requests not answered yet, oldest first.
  struct {
    unsigned iface;
    uint64_t request_id;
  } asked[kMaxAsked];
  unsigned nasked;
  uint8_t wire[CAPSA_IPC_MAX_MESSAGE];
  uint8_t damaged[CAPSA_IPC_MAX_MESSAGE];
};

static uint64_t next(uint64_t *s) {  // splitmix64
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static struct slot *slot_of(struct fz *f, unsigned iface, uint32_t id) {
  for (unsigned i = 0; i < f->nslots; i++)
    if (f->slots[i].iface == iface && f->slots[i].id == id) return &f->slots[i];
  // Full: the oldest stream starts over.
  struct slot *s = f->nslots < kMaxSlots ? &f->slots[f->nslots++]
                                         : &f->slots[next(&f->rng) % kMaxSlots];
  if (s->buf == NULL) s->buf = malloc(kMaxInput);
  if (s->buf == NULL) return NULL;
  s->iface = iface;
  s->id = id;
  s->len = 0;
  return s;
}

static void close_all(int *fds, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

// Sends the message that input `in` (`n` bytes, ipc/fuzz.h's layout) of
// interface `iface` describes: a request gets the next request id, a
// response answers `request_id`. 1 sent, 0 not sendable (the codec
// refuses the envelope, a descriptor could not be made), -1 the host hung
// up.
static int send_input(struct fz *f, unsigned iface, const uint8_t *in, size_t n,
                      uint64_t request_id) {
  const capsa_interface_t *it = f->g->ifaces[iface];
  uint32_t mid, nh;
  capsa_handle_t decl[CAPSA_IPC_MAX_HANDLES];
  const uint8_t *payload;
  size_t plen;
  if (capsa__fuzz_parse(it, in, n, &mid, decl, &nh, &payload, &plen) < 0)
    return 0;
  const capsa_imessage_t *im = capsa_iface_message(it, mid);
  if (im == NULL) return 0;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, it, mid, NULL);
  m.seq = f->seq;
  m.u.iface.index = iface;
  m.u.iface.payload = (capsa_bytes_t){payload, plen};
  if (im->kind == CAPSA_IMSG_REQUEST) {
    m.flags = CAPSA_MSG_F_REQUEST;
    m.request_id = f->next_request++;
  } else if (im->kind == CAPSA_IMSG_RESPONSE) {
    m.flags = CAPSA_MSG_F_RESPONSE;
    m.request_id = request_id;
  }
  // A campaign's renderer damages one message in thirty-two on the wire;
  // a told one sends what it was told.
  if (!f->told && next(&f->rng) % 32 == 0) {
    if (plen > 0 && next(&f->rng) % 2) {
      memcpy(f->damaged, payload, plen);
      f->damaged[next(&f->rng) % plen] ^= (uint8_t)(1u << next(&f->rng) % 8);
      m.u.iface.payload.data = f->damaged;
    } else {
      m.request_id ^= 1ULL << (next(&f->rng) % 8);  // pairs with nothing
    }
  }
  int fds[CAPSA_IPC_MAX_HANDLES];
  bool made = true;
  for (uint32_t i = 0; i < nh; i++) {
    decl[i].fd = fds[i] = capsa__fuzz_make_fd(&decl[i]);
    m.handles[i] = decl[i];
    made &= fds[i] >= 0;
  }
  m.handle_count = nh;
  if (!made) {  // a size past this renderer's RLIMIT_FSIZE, say
    close_all(fds, nh);
    return 0;
  }
  int len = capsa_msg_encode(&m, f->wire, sizeof f->wire);
  if (len < 0) {  // an envelope the codec refuses: not this one
    close_all(fds, nh);
    return 0;
  }
  ssize_t sent =
      capsa_scm_send(f->ch, f->wire, (size_t)len, fds, (int)nh, MSG_NOSIGNAL);
  close_all(fds, nh);
  if (sent < 0) return -1;
  f->seq++;
  return 1;
}

// Sends one message of interface `iface`: the response `id` to
// `request_id`, or (id 0) an unasked one, written by the mutator from the
// last one of its stream. As send_input.
static int send_one(struct fz *f, unsigned iface, uint32_t id,
                    uint64_t request_id) {
  const capsa_interface_t *it = f->g->ifaces[iface];
  struct slot *s = slot_of(f, iface, id);
  if (s == NULL) return 0;
  for (unsigned k = 0, n = 1 + (unsigned)(next(&f->rng) % 3); k < n; k++)
    s->len =
        capsa__fuzz_mutate_as(it, id, id ? 0 : CAPSA_IFROM_RENDERER, s->buf,
                              s->len, kMaxInput, (unsigned)next(&f->rng));
  if (s->len == 0) return 0;  // no such message in this interface
  return send_input(f, iface, s->buf, s->len, request_id);
}

static bool speaks_unasked(const capsa_interface_t *it) {
  for (uint32_t i = 0; i < it->nmessages; i++)
    if ((it->messages[i].from & CAPSA_IFROM_RENDERER) &&
        it->messages[i].kind != CAPSA_IMSG_RESPONSE)
      return true;
  return false;
}

// Reads what the host sent: answers each request of an embedder interface
// with its response. Returns the number answered, or -1 (hung up).
// *seed/*rounds: set by a Seed. Descriptors the host sent are not kept.
static int serve(struct fz *f, int timeout_ms, uint64_t *seed,
                 unsigned *rounds) {
  static uint8_t in[CAPSA_IPC_MAX_MESSAGE];
  struct pollfd p = {.fd = f->ch, .events = POLLIN};
  int answered = 0;
  while (poll(&p, 1, timeout_ms) > 0) {
    timeout_ms = 0;
    ssize_t n = recv(f->ch, in, sizeof in, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n == 0) return -1;
    if (n < 0) return errno == EAGAIN || errno == EINTR ? answered : -1;
    capsa_msg_t m;
    if (capsa_msg_decode(in, (size_t)n, &m, NULL, 0) < 0) continue;
    if (m.type == CAPSA_MSG_SHUTDOWN) return -1;
    if (m.type != CAPSA_MSG_INTERFACE || m.u.iface.index >= f->g->nifaces)
      continue;
    unsigned last = f->g->nifaces - 1;
    if (m.u.iface.index == last) {
      capsa_fuzz_live_seed_t sd;
      if (seed && m.u.iface.id == CAPSA_FUZZ_LIVE_SEED &&
          capsa_fuzz_live_seed_decode(m.u.iface.payload.data,
                                      m.u.iface.payload.len, NULL, 0, &sd, NULL,
                                      0) == 0) {
        *seed = sd.seed;
        *rounds = sd.rounds;
      }
      continue;
    }
    const capsa_imessage_t *im =
        capsa_iface_message(f->g->ifaces[m.u.iface.index], m.u.iface.id);
    if (!im || im->kind != CAPSA_IMSG_REQUEST || !im->reply ||
        !(m.flags & CAPSA_MSG_F_REQUEST))
      continue;
    if (f->told) {  // answered when the input says so
      if (f->nasked < kMaxAsked) {
        f->asked[f->nasked].iface = m.u.iface.index;
        f->asked[f->nasked++].request_id = m.request_id;
      }
      continue;
    }
    int r = send_one(f, m.u.iface.index, im->reply, m.request_id);
    if (r < 0) return -1;
    answered += r;
  }
  return answered;
}

static int hello(struct fz *f, const capsa_sandbox_report_t *sandbox) {
  char names[CAPSA_IFACE_MAX_PER_CHANNEL * (CAPSA_IFACE_MAX_NAME + 1)];
  if (capsa_iface_list_names(f->g->ifaces, f->g->nifaces, names, sizeof names) <
      0)
    return -1;
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_HELLO);
  m.seq = f->seq++;
  m.u.hello.protocol_version = CAPSA_IPC_VERSION;
  m.u.hello.pid = getpid();
  m.u.hello.renderer_kind = f->g->kind;
  m.u.hello.interfaces = names;
  m.u.hello.interfaces_hash =
      capsa_iface_list_hash(f->g->ifaces, f->g->nifaces);
  if (sandbox) m.u.hello.sandbox = *sandbox;
  m.u.hello.sandbox.detail = NULL;
  int n = capsa_msg_encode(&m, f->wire, sizeof f->wire);
  if (n < 0) return -1;
  return capsa_scm_send(f->ch, f->wire, (size_t)n, NULL, 0, MSG_NOSIGNAL) < 0
             ? -1
             : 0;
}

int capsa__fz_generic_main(int ch, const capsa_sandbox_report_t *sandbox,
                           void *arg) {
  static struct fz f;
  f.ch = ch;
  f.g = arg;
  f.seq = 1;
  f.next_request = 1;
  if (f.g == NULL || f.g->nifaces < 2 || hello(&f, sandbox) < 0) return 4;
  uint64_t seed = 0;
  unsigned rounds = 0;
  bool seeded = false;
  for (long t0 = now_ms(); !seeded && now_ms() - t0 < kSeedWaitMs;) {
    uint64_t s = 0;
    unsigned r = UINT32_MAX;
    if (serve(&f, 100, &s, &r) < 0) return 0;
    if (r != UINT32_MAX) {
      seed = s;
      rounds = r ? r : kDefaultRounds;
      seeded = true;
    }
  }
  if (!seeded) return 5;
  f.rng = seed;
  unsigned unasked[CAPSA_IFACE_MAX_PER_CHANNEL], nunasked = 0;
  for (unsigned i = 0; i + 1 < f.g->nifaces; i++)
    if (speaks_unasked(f.g->ifaces[i])) unasked[nunasked++] = i;
  long idle = now_ms();
  // Attempts are bounded too: a stream the codec keeps refusing ends it.
  for (unsigned sent = 0, tries = 0; sent < rounds && tries < 4 * rounds;
       tries++) {
    int r = serve(&f, nunasked ? 0 : 50, NULL, NULL);
    if (r < 0) return 0;  // the host hung up: it caught something
    if (r > 0) idle = now_ms();
    sent += (unsigned)r;
    if (nunasked) {
      r = send_one(&f, unasked[next(&f.rng) % nunasked], 0, 0);
      if (r < 0) return 0;
      sent += (unsigned)r;
    } else if (now_ms() - idle > kIdleMs) {
      break;  // the host asks nothing more
    }
  }
  return 0;
}

// --- told: the input of a coverage-guided run (told.h)

// Waits until the host names this renderer as the input's (its pid: no
// pid namespace of its own).
static bool wait_turn(capsa__fz_told_t *in) {
  pid_t self = getpid();
  for (int i = 0; i < 600; i++) {
    int t = atomic_load(&in->target);
    if (t == self) return true;
    struct timespec ts = {0, 100 * 1000 * 1000};
    syscall(SYS_futex, (int *)&in->target, FUTEX_WAIT, t, &ts, NULL, 0);
  }
  return false;
}

int capsa__fz_told_main(int ch, const capsa_sandbox_report_t *sandbox,
                        void *arg) {
  static struct fz f;
  f.ch = ch;
  f.g = arg;
  f.told = true;
  f.seq = 1;
  f.next_request = 1;
  capsa__fz_told_t *in = f.g ? f.g->told : NULL;
  if (in == NULL || f.g->nifaces < 2 || !wait_turn(in)) return 0;
  if (hello(&f, sandbox) < 0) return 4;
  const uint8_t *p = in->data;
  size_t n = in->len < sizeof in->data ? in->len : sizeof in->data;
  unsigned ni = f.g->nifaces - 1;
  for (unsigned rec = 0; rec < CAPSA__FZ_TOLD_MAX_RECORDS && n >= 4; rec++) {
    unsigned iface = p[0] % ni;
    bool answer = p[1] & 1;
    size_t len = (size_t)p[2] | (size_t)p[3] << 8;
    p += 4;
    n -= 4;
    if (len > n) len = n;
    if (serve(&f, 0, NULL, NULL) < 0) return 0;
    uint64_t request_id = 0;
    if (answer) {
      // The request it answers may still be on its way.
      if (f.nasked == 0 && serve(&f, kToldWaitMs, NULL, NULL) < 0) return 0;
      if (f.nasked > 0) {
        request_id = f.asked[0].request_id;
        memmove(f.asked, f.asked + 1, --f.nasked * sizeof f.asked[0]);
      }
    }
    if (send_input(&f, iface, p, len, request_id) < 0) return 0;
    p += len;
    n -= len;
  }
  serve(&f, kToldLingerMs, NULL, NULL);
  // Exiting closes the channel: the host serves what it has, then ends
  // this renderer.
  return 0;
}
