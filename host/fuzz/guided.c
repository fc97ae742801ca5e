// Coverage-guided live fuzzing (<capsa/fuzz_live.h>, capsa_fuzz_live_one):
// libFuzzer's process is the embedder's host; each input is the whole
// conversation of one sandboxed renderer (generic.h, capsa__fz_told_main),
// so a saved crash input replays alone.
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/fuzz/capsa_fuzz_live.h"
#include "host/fuzz/generic.h"
#include "ipc/fuzz.h"
#include "ipc/fuzz_internal.h"

// libFuzzer's byte mutator, present only when linked with -fsanitize=fuzzer.
extern size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
    __attribute__((weak));

static const char kKind[] = "capsa-fuzz-live-told";

enum {
  kHead = 4,  // a record's u8 interface, u8 flags, u16 length
  kMaxInput = CAPSA_IPC_MAX_MESSAGE + CAPSA_FUZZ_HEADER +
              CAPSA_IPC_MAX_HANDLES * CAPSA_FUZZ_HANDLE,
};

static struct {
  const capsa_fuzz_live_options_t *o;
  capsa__fz_generic_t g;
  capsa__fz_told_t *in;
  uv_loop_t loop;
  capsa_host_t host;
  int kind;
  capsa_renderer_t *current;
  bool closed;
} G;

static void on_event(capsa_host_t *h, const capsa_host_event_t *ev) {
  (void)h;
  const capsa_fuzz_live_options_t *o = G.o;
  switch (ev->type) {
    case CAPSA_EV_READY:
      if (o->on_ready) o->on_ready(ev->renderer, o->arg);
      break;
    case CAPSA_EV_MESSAGE:
      if (o->on_message) o->on_message(ev->renderer, ev->msg, o->arg);
      break;
    case CAPSA_EV_CLOSED:
      if (ev->renderer == G.current) G.closed = true;
      break;
    default:
      break;
  }
}

// Once, at the first input. Failing here is the harness's setup failing:
// abort with the reason (libFuzzer reports it), as an assert would.
static void setup(const capsa_fuzz_live_options_t *o) {
  const char *what = NULL;
  int err = 0;
  G.o = o;
  if (!o || !o->interfaces || o->ninterfaces == 0) {
    what = "capsa_fuzz_live_options_t.interfaces is empty";
    err = -EINVAL;
  } else if ((err = capsa__fz_generic_init(&G.g, kKind, o->interfaces,
                                           o->ninterfaces)) < 0) {
    what = "capsa_fuzz_live_options_t.interfaces: too many (at most 7)";
  }
  void *m = MAP_FAILED;
  if (!what) {
    m = mmap(NULL, sizeof *G.in, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) err = -errno, what = "mmap of the input";
  }
  if (!what) {
    G.in = m;
    G.g.told = G.in;
    capsa_host_options_t ho;
    capsa_host_options_init(&ho);
    // The renderer is a function of this binary and reads its input from
    // memory the zygote inherits: a forked zygote, on purpose.
    ho.allow_forked_zygote = true;
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, kKind, capsa__fz_told_main, &G.g);
    k.interfaces = G.g.ifaces;
    k.ninterfaces = G.g.nifaces;
    k.heartbeat_ms = 0;  // an input's life is short; none answers PING
    k.max_restarts = 0;  // one renderer per input
    // It knows its input by its pid, which is then the host's view of it.
    k.pid_namespace = false;
    // The next renderer is forked while this input runs; it waits for its
    // pid in G.in->target before reading.
    k.keep_spare = true;
    if ((err = uv_loop_init(&G.loop)) < 0)
      what = "uv_loop_init";
    else if ((err = capsa_host_init(&G.loop, &G.host, &ho, on_event)) < 0)
      what = "capsa_host_init";
    else if ((err = G.kind = capsa_host_define_kind(&G.host, &k)) < 0)
      what = "capsa_host_define_kind";
    else if ((err = capsa_host_start(&G.host)) < 0)
      what = capsa_host_start_error(&G.host);
  }
  if (what) {
    fprintf(stderr, "capsa_fuzz_live_one: cannot start the host: %s (%s)\n",
            what, strerror(err < 0 ? -err : EINVAL));
    abort();
  }
}

int capsa_fuzz_live_one(const capsa_fuzz_live_options_t *o, const uint8_t *data,
                        size_t size) {
  if (G.o == NULL) setup(o);
  G.in->len = size < sizeof G.in->data ? size : sizeof G.in->data;
  if (G.in->len) memcpy(G.in->data, data, G.in->len);
  G.closed = false;
  G.current = NULL;
  int err = capsa_host_spawn(&G.host, G.kind, NULL, &G.current);
  if (err < 0) {
    fprintf(stderr, "capsa_fuzz_live_one: capsa_host_spawn: %s\n",
            strerror(-err));
    abort();
  }
  atomic_store(&G.in->target, (int)capsa_renderer_pid(G.current));
  syscall(SYS_futex, (int *)&G.in->target, FUTEX_WAKE, INT32_MAX, NULL, NULL,
          0);
  while (!G.closed) uv_run(&G.loop, UV_RUN_ONCE);
  // No stale pid: a later spare given the same number must not take it.
  atomic_store(&G.in->target, 0);
  return 0;
}

// --- the mutator

struct rec {
  unsigned iface;
  bool answer;
  const uint8_t *p;
  size_t len;
};

static uint64_t next(uint64_t *s) {  // xorshift64*
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

static unsigned parse(const uint8_t *d, size_t n, unsigned ni, struct rec *r) {
  unsigned k = 0;
  while (k < CAPSA__FZ_TOLD_MAX_RECORDS && n >= kHead) {
    size_t len = (size_t)d[2] | (size_t)d[3] << 8;
    if (len > n - kHead) len = n - kHead;
    r[k++] = (struct rec){d[0] % ni, d[1] & 1, d + kHead, len};
    d += kHead + len;
    n -= kHead + len;
  }
  return k;
}

// One record's bytes, mutated (or made, from none) as the schema says:
// an unasked message or (answer) a response the renderer may send.
static size_t mutate_one(const capsa_fuzz_live_options_t *o, unsigned iface,
                         bool answer, uint8_t *buf, size_t len, uint64_t *s) {
  unsigned from = CAPSA_IFROM_RENDERER | (answer ? CAPSA__FUZZ_RESPONSES : 0);
  for (unsigned k = 0, n = 1 + (unsigned)(next(s) % 3); k < n; k++)
    len = capsa__fuzz_mutate_as(o->interfaces[iface], 0, from, buf, len,
                                kMaxInput, (unsigned)next(s));
  return len;
}

size_t capsa_fuzz_live_mutate(const capsa_fuzz_live_options_t *o, uint8_t *data,
                              size_t size, size_t max_size, unsigned seed) {
  static struct rec r[CAPSA__FZ_TOLD_MAX_RECORDS + 1];
  static uint8_t one[kMaxInput], out[1 << 20];
  if (!o || !o->interfaces || o->ninterfaces == 0 || !data) return size;
  uint64_t s = 0x9E3779B97F4A7C15ULL ^ seed;
  if (s == 0) s = 1;
  unsigned ni = o->ninterfaces;
  unsigned n = parse(data, size, ni, r);
  unsigned op = (unsigned)(next(&s) % 16);
  if (op == 0 && LLVMFuzzerMutate)  // now and then: bytes, not schema
    return LLVMFuzzerMutate(data, size, max_size);
  size_t onelen = 0;
  unsigned at = n ? (unsigned)(next(&s) % n) : 0;
  if (n == 0 || (op <= 3 && n < CAPSA__FZ_TOLD_MAX_RECORDS)) {
    // A new record: a fresh message of some interface, or a copy.
    unsigned iface = (unsigned)(next(&s) % ni);
    bool answer = next(&s) % 3 == 0;
    if (n && op == 3) {
      iface = r[at].iface, answer = r[at].answer;
      memcpy(one, r[at].p, r[at].len);
      onelen = r[at].len;
    }
    onelen = mutate_one(o, iface, answer, one, onelen, &s);
    if (onelen == 0) {  // no such message: the other kind
      answer = !answer;
      onelen = mutate_one(o, iface, answer, one, 0, &s);
    }
    if (onelen == 0) return size;
    at = n ? (unsigned)(next(&s) % (n + 1)) : 0;
    memmove(r + at + 1, r + at, (n - at) * sizeof r[0]);
    r[at] = (struct rec){iface, answer, one, onelen};
    n++;
  } else if (op == 4 && n > 1) {  // drop one
    memmove(r + at, r + at + 1, (n - at - 1) * sizeof r[0]);
    n--;
  } else if (op == 5 && n > 1) {  // swap two
    unsigned b = (unsigned)(next(&s) % n);
    struct rec t = r[at];
    r[at] = r[b];
    r[b] = t;
  } else if (op == 6) {  // an answer in place of an unasked one, or back
    onelen = mutate_one(o, r[at].iface, !r[at].answer, one, 0, &s);
    if (onelen == 0) return size;  // the interface has no such message
    r[at] = (struct rec){r[at].iface, !r[at].answer, one, onelen};
  } else {  // change one message within its schema
    memcpy(one, r[at].p, r[at].len);
    onelen = mutate_one(o, r[at].iface, r[at].answer, one, r[at].len, &s);
    if (onelen == 0) return size;
    r[at].p = one;
    r[at].len = onelen;
  }
  size_t w = 0;
  for (unsigned i = 0; i < n; i++) {
    if (r[i].len > 0xffff || w + kHead + r[i].len > sizeof out) return size;
    out[w] = (uint8_t)r[i].iface;
    out[w + 1] = r[i].answer ? 1 : 0;
    out[w + 2] = (uint8_t)r[i].len;
    out[w + 3] = (uint8_t)(r[i].len >> 8);
    memcpy(out + w + kHead, r[i].p, r[i].len);
    w += kHead + r[i].len;
  }
  if (w > max_size) return size;
  memcpy(data, out, w);
  return w;
}
