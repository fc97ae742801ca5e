// The fuzzing renderer (fuzz_renderer.h). Messages are built through the
// codec from the schema's own types, so most records are well-formed
// envelopes whose fields, order or attachments are wrong in one way, which
// is what reaches the host's semantic checks and state machine; the rest are
// damaged bytes for the decoder.
#include "demos/fuzz/fuzz_renderer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/codec.h"
#include "ipc/scm.h"

const capsa_interface_t *const capsa_fuzz_interfaces[1] = {
    &capsa_fuzz_interface};

uint64_t capsa_fuzz_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t capsa_fuzz_renderer_seed(uint64_t seed, uint64_t index) {
  uint64_t s = seed ^ (index * 0xD1B54A32D192ED03ULL);
  return capsa_fuzz_next(&s);
}

static uint32_t pick(uint64_t *s, uint32_t n) {
  return (uint32_t)(capsa_fuzz_next(s) % n);
}

// Values near the limits the validator checks.
static uint32_t edgy_u32(uint64_t *s) {
  static const uint32_t k[] = {
      0,     1,     2,     7,          255,         4096,       16383,
      16384, 16385, 65535, 0x7fffffff, 0x80000000u, 0xffffffffu};
  return pick(s, 3) == 0 ? (uint32_t)capsa_fuzz_next(s)
                         : k[pick(s, sizeof k / sizeof k[0])];
}

static const char *edgy_str(uint64_t *s, char *buf, size_t cap) {
  static const char *k[] = {"",
                            "file:a.txt",
                            "file:../../etc/passwd",
                            "file:/etc/passwd",
                            "font:regular",
                            "dns:localhost",
                            "gopher:x",
                            "%s%n%s",
                            NULL};
  uint32_t i = pick(s, 10);
  if (i < 9) return k[i];
  size_t n = pick(s, (uint32_t)cap - 1);
  for (size_t j = 0; j < n; j++) buf[j] = (char)(1 + pick(s, 255));
  buf[n] = 0;
  return buf;
}

int capsa_fuzz_build(uint64_t seed, unsigned round, uint8_t *buf, size_t cap,
                     int *fd_kinds, int *nfds, int max_fds) {
  uint64_t s = seed ^ ((uint64_t)round << 32);
  capsa_fuzz_next(&s);
  char text[600];
  uint8_t bytes[256];
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)pick(&s, 256);
  static const capsa_msg_type_t kTypes[] = {
      CAPSA_MSG_LOG,       CAPSA_MSG_RESOURCE_REQUEST,
      CAPSA_MSG_INTERFACE, CAPSA_MSG_PONG,
      CAPSA_MSG_PING,      CAPSA_MSG_ERROR,
      CAPSA_MSG_HELLO,     CAPSA_MSG_INTERFACE,
      CAPSA_MSG_SHUTDOWN};
  alignas(8) static uint8_t payload[2048];
  capsa_msg_t m;
  // Two records in three are clean (a LOG, or a broker request with a fresh
  // id), so that a renderer lives long enough for the damaged ones to reach
  // the host in every state, not just right after HELLO.
  bool clean = pick(&s, 3) != 0;
  if (clean) {
    capsa_msg_init(&m,
                   pick(&s, 2) ? CAPSA_MSG_LOG : CAPSA_MSG_RESOURCE_REQUEST);
  } else {
    capsa_msg_init(&m, kTypes[pick(&s, sizeof kTypes / sizeof kTypes[0])]);
  }
  m.seq = round + 2;  // HELLO was 1
  switch (m.type) {
    case CAPSA_MSG_LOG:
      m.u.log.level = pick(&s, 4) || clean ? pick(&s, 4) : edgy_u32(&s);
      m.u.log.text = clean ? "fuzz" : edgy_str(&s, text, sizeof text);
      break;
    case CAPSA_MSG_RESOURCE_REQUEST:
      m.flags = CAPSA_MSG_F_REQUEST;
      // Fresh ids for clean requests; reused ones otherwise.
      m.request_id = clean ? 1000 + round : 1 + pick(&s, 4);
      m.u.resource_request.url = edgy_str(&s, text, sizeof text);
      if (clean && (m.u.resource_request.url == NULL ||
                    m.u.resource_request.url[0] == 0))
        m.u.resource_request.url = "file:a.txt";
      break;
    case CAPSA_MSG_INTERFACE: {
      // A Noise through the generated encoder (so the host's schema checks
      // see valid flatbuffers with edgy fields), or raw bytes; under its
      // interface or another index, as Noise or another message id.
      capsa_fuzz_noise_t nz;
      capsa_fuzz_noise_init(&nz);
      nz.level = (uint8_t)pick(&s, 6);
      nz.note = edgy_str(&s, text, sizeof text);
      nz.data = (capsa_bytes_t){bytes, pick(&s, sizeof bytes)};
      int n = -1;
      if (pick(&s, 4) != 0)
        n = capsa_fuzz_noise_encode(&nz, NULL, 0, payload, sizeof payload, NULL,
                                    0);
      if (n < 0) {
        n = (int)pick(&s, sizeof bytes);
        memcpy(payload, bytes, (size_t)n);
      }
      m.u.iface.index = pick(&s, 8) == 0 ? 1 + pick(&s, 3) : 0;
      m.u.iface.id = pick(&s, 4) == 0 ? pick(&s, 4) : CAPSA_FUZZ_NOISE;
      m.u.iface.payload = (capsa_bytes_t){payload, (size_t)n};
      break;
    }
    case CAPSA_MSG_PONG:
    case CAPSA_MSG_PING:
      m.flags =
          m.type == CAPSA_MSG_PING ? CAPSA_MSG_F_REQUEST : CAPSA_MSG_F_RESPONSE;
      m.request_id = pick(&s, 8);
      m.u.ping.seq = capsa_fuzz_next(&s);
      m.u.ping.payload = (capsa_bytes_t){bytes, pick(&s, sizeof bytes)};
      break;
    case CAPSA_MSG_ERROR:
      m.u.error.code = (int32_t)edgy_u32(&s);
      m.u.error.message = edgy_str(&s, text, sizeof text);
      break;
    case CAPSA_MSG_HELLO:
      m.u.hello.protocol_version = pick(&s, 3);
      m.u.hello.pid = (int32_t)edgy_u32(&s);
      m.u.hello.renderer_kind = edgy_str(&s, text, sizeof text);
      break;
    default:
      break;
  }
  // Structural damage to a valid envelope.
  uint32_t how = clean ? 16 : pick(&s, 16);
  if (how == 0) m.seq += 1 + pick(&s, 3);  // reordered / skipped
  if (how == 1) m.seq = round;             // replayed
  if (how == 2) m.flags = pick(&s, 8);
  if (how == 3) m.request_id = capsa_fuzz_next(&s);
  int len = capsa_msg_encode(&m, buf, cap);
  if (len < 0) {
    // The codec refuses to encode what breaks a rule: send the envelope of
    // a plain LOG with the same damage instead, so the round still counts.
    capsa_msg_init(&m, CAPSA_MSG_LOG);
    m.seq = round + 2 + (how == 0);
    m.u.log.text = "fallback";
    len = capsa_msg_encode(&m, buf, cap);
    if (len < 0) return len;
  }
  *nfds = 0;
  uint32_t dmg = clean ? 12 : pick(&s, 12);
  if (dmg == 0 && len > 1) {
    len = 1 + (int)pick(&s, (uint32_t)len - 1);  // truncated
  } else if (dmg == 1 || dmg == 2) {
    for (uint32_t i = 0, n = 1 + pick(&s, 8); i < n; i++)  // bit flips
      buf[pick(&s, (uint32_t)len)] ^= (uint8_t)(1u << pick(&s, 8));
  } else if (dmg == 3 && (size_t)len + 16 <= cap) {
    for (int i = 0; i < 16; i++) buf[len + i] = (uint8_t)pick(&s, 256);
    len += 16;  // trailing bytes
  } else if (dmg == 4 || dmg == 5) {
    int n = 1 + (int)pick(&s, (uint32_t)max_fds);  // wrong handles
    for (int i = 0; i < n; i++) fd_kinds[i] = (int)pick(&s, 4);
    *nfds = n;
  }
  return len;
}

static int send_record(int ch, const uint8_t *buf, size_t len, const int *fds,
                       int nfds) {
  ssize_t n = capsa_scm_send(ch, buf, len, fds, nfds, MSG_NOSIGNAL);
  return n < 0 ? (int)n : 0;
}

// Reads what the host sent (PINGs, the seed); returns the seed once seen.
static int drain(int ch, uint8_t *buf, size_t cap, int timeout_ms,
                 uint64_t *seed) {
  struct pollfd p = {.fd = ch, .events = POLLIN};
  int got = 0;
  while (poll(&p, 1, timeout_ms) > 0) {
    ssize_t n = recv(ch, buf, cap, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n <= 0) return n == 0 ? -EPIPE : got;
    capsa_msg_t m;
    capsa_fuzz_seed_t sd;
    if (capsa_msg_decode(buf, (size_t)n, &m, NULL, 0) == 0 &&
        m.type == CAPSA_MSG_INTERFACE && m.u.iface.index == 0 &&
        m.u.iface.id == CAPSA_FUZZ_SEED && seed != NULL &&
        capsa_fuzz_seed_decode(m.u.iface.payload.data, m.u.iface.payload.len,
                               NULL, 0, &sd, NULL, 0) == 0) {
      *seed = sd.seed;
      return 1;
    }
    timeout_ms = 0;
  }
  return got;
}

int capsa_fuzz_renderer_main(int ch, const capsa_sandbox_report_t *sandbox,
                             void *arg) {
  (void)arg;
  static uint8_t buf[CAPSA_IPC_MAX_MESSAGE + 64];
  capsa_msg_t hello;
  capsa_msg_init(&hello, CAPSA_MSG_HELLO);
  hello.seq = 1;
  hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
  hello.u.hello.pid = getpid();
  hello.u.hello.renderer_kind = "fuzz";
  // The host refuses a HELLO whose interfaces are not its kind's.
  char names[64];
  if (capsa_iface_list_names(capsa_fuzz_interfaces, 1, names, sizeof names) < 0)
    return 4;
  hello.u.hello.interfaces = names;
  hello.u.hello.interfaces_hash =
      capsa_iface_list_hash(capsa_fuzz_interfaces, 1);
  if (sandbox) hello.u.hello.sandbox = *sandbox;
  hello.u.hello.sandbox.detail = NULL;
  int len = capsa_msg_encode(&hello, buf, sizeof buf);
  if (len < 0 || send_record(ch, buf, (size_t)len, NULL, 0) < 0) return 4;
  uint64_t seed = 0;
  for (int tries = 0; tries < 100; tries++) {
    int r = drain(ch, buf, sizeof buf, 100, &seed);
    if (r < 0) return 4;
    if (r == 1) break;
  }
  for (unsigned round = 0; round < CAPSA_FUZZ_ROUNDS; round++) {
    int kinds[16], nfds = 0, fds[16];
    len = capsa_fuzz_build(seed, round, buf, CAPSA_IPC_MAX_MESSAGE + 64, kinds,
                           &nfds, 12);
    if (len < 0) return 5;
    int pipefd[2] = {-1, -1}, sp[2] = {-1, -1}, mfd = -1;
    for (int i = 0; i < nfds; i++) {
      if ((kinds[i] == 0 || kinds[i] == 3) && pipefd[0] < 0)
        if (pipe2(pipefd, O_CLOEXEC) < 0) return 6;
      if (kinds[i] == 1 && sp[0] < 0)
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
          return 6;
      if (kinds[i] == 2 && mfd < 0) {
        mfd = memfd_create("fuzz", MFD_CLOEXEC);
        if (mfd < 0 || ftruncate(mfd, 4096) < 0) return 6;
      }
      fds[i] = kinds[i] == 1 ? sp[0] : kinds[i] == 2 ? mfd : pipefd[0];
    }
    int err = send_record(ch, buf, (size_t)len, fds, nfds);
    if (pipefd[0] >= 0) close(pipefd[0]), close(pipefd[1]);
    if (sp[0] >= 0) close(sp[0]), close(sp[1]);
    if (mfd >= 0) close(mfd);
    if (err < 0) return 0;  // the host hung up: it caught something
    if (drain(ch, buf, sizeof buf, 0, NULL) < 0) return 0;
  }
  return 0;
}
