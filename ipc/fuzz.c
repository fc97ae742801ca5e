// Structure-aware fuzzing from the generated descriptors (ipc/fuzz.h):
// the input layout, the harness that hands accepted messages to the
// embedder, and the custom mutator.
#include "ipc/fuzz.h"

#include "ipc/fuzz_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/message.h"
#include "sandbox/memfd.h"

// libFuzzer's byte mutator, present only when linked with -fsanitize=fuzzer:
// weak, so libcapsa never needs libFuzzer.
extern size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
    __attribute__((weak));

// Generated structs are at most CAPSA_IFACE_MAX_FIELDS fields of 16 bytes.
#define VALUE_MAX (CAPSA_IFACE_MAX_FIELDS * 16)

typedef struct {
  uint32_t id;
  uint32_t nh;
  capsa_handle_t h[CAPSA_IPC_MAX_HANDLES];
  const uint8_t *payload;
  size_t len;
} input_t;

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

// Any bytes parse: what is missing reads as zero-length.
static void parse(const capsa_interface_t *iface, const uint8_t *d, size_t n,
                  input_t *in) {
  memset(in, 0, sizeof *in);
  in->id = 1 + (n > 0 ? d[0] : 0) % (iface->nmessages ? iface->nmessages : 1);
  uint32_t nh = n > 1 ? d[1] % (CAPSA_IPC_MAX_HANDLES + 1) : 0;
  size_t off = CAPSA_FUZZ_HEADER;
  for (uint32_t i = 0; i < nh && off + CAPSA_FUZZ_HANDLE <= n; i++) {
    const uint8_t *p = d + off;
    capsa_handle_t *h = &in->h[in->nh++];
    h->fd = -1;
    h->kind = (capsa_handle_kind_t)p[0];
    h->writable = p[1] & 1;
    h->size = get_u64(p + 8);
    h->rights.cr_rights[0] = get_u64(p + 16);
    h->rights.cr_rights[1] = get_u64(p + 24);
    off += CAPSA_FUZZ_HANDLE;
  }
  if (off < n) {
    in->payload = d + off;
    in->len = n - off;
  }
}

int capsa_fuzz_write(const capsa_interface_t *iface, uint32_t id,
                     const void *value, const capsa_handle_t *handles,
                     uint32_t nhandles, uint8_t *out, size_t cap) {
  _Alignas(8) static uint8_t payload[CAPSA_IPC_MAX_MESSAGE];
  if (!iface || !out || nhandles > CAPSA_IPC_MAX_HANDLES || id == 0)
    return -EINVAL;
  int n = capsa_iface_encode(iface, id, value, handles, nhandles, payload,
                             sizeof payload, NULL, 0);
  if (n < 0) return n;
  size_t off = CAPSA_FUZZ_HEADER + (size_t)nhandles * CAPSA_FUZZ_HANDLE;
  if (off + (size_t)n > cap) return -EMSGSIZE;
  memset(out, 0, off);
  out[0] = (uint8_t)(id - 1);
  out[1] = (uint8_t)nhandles;
  for (uint32_t i = 0; i < nhandles; i++) {
    uint8_t *p = out + CAPSA_FUZZ_HEADER + i * CAPSA_FUZZ_HANDLE;
    p[0] = (uint8_t)handles[i].kind;
    p[1] = handles[i].writable ? 1 : 0;
    put_u64(p + 8, handles[i].size);
    put_u64(p + 16, handles[i].rights.cr_rights[0]);
    put_u64(p + 24, handles[i].rights.cr_rights[1]);
  }
  memcpy(out + off, payload, (size_t)n);
  return (int)(off + (size_t)n);
}

// Decodes `in` into `value` from an aligned copy (`copy`, which the
// value's strings and bytes then point into). Returns capsa_iface_decode's.
static int decode(const capsa_interface_t *iface, const input_t *in,
                  uint8_t *copy, void *value) {
  const capsa_imessage_t *m = capsa_iface_message(iface, in->id);
  if (!m || m->c_size > VALUE_MAX) return -ENOENT;
  size_t len =
      in->len > CAPSA_IPC_MAX_MESSAGE ? CAPSA_IPC_MAX_MESSAGE : in->len;
  if (len) memcpy(copy, in->payload, len);
  return capsa_iface_decode(iface, in->id, copy, len, in->h, in->nh, value,
                            NULL, 0);
}

// A descriptor for declaration `h` (ipc/fuzz.h, capsa_fuzz_handler_fn), or
// -1 when the kernel refused one (the handler then sees fd -1).
static int make_fd(const capsa_handle_t *h) {
  if (h->kind == CAPSA_HANDLE_CHANNEL) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
      return -1;
    close(sv[1]);
    return sv[0];
  }
  // Sparse: a declared 64 MiB costs nothing until someone touches it. Not
  // executable, size sealed (sandbox/memfd.h), as a receiver checks.
  int fd = h->size
               ? capsa_memfd_create("capsa-fuzz", (size_t)h->size)
               : memfd_create("capsa-fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  unsigned seals = F_SEAL_SEAL | F_SEAL_GROW | F_SEAL_SHRINK;
  if (!h->writable) seals |= F_SEAL_WRITE;
  fcntl(fd, F_ADD_SEALS, seals);
  if (h->kind == CAPSA_HANDLE_FILE) {  // a regular file, opened read-only
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    if (ro >= 0) {
      close(fd);
      fd = ro;
    }
  }
  return fd;
}

int capsa_fuzz_one(const capsa_interface_t *iface, const uint8_t *data,
                   size_t size, capsa_fuzz_handler_fn handler, void *arg) {
  _Alignas(16) static uint8_t value[VALUE_MAX];
  _Alignas(8) static uint8_t copy[CAPSA_IPC_MAX_MESSAGE];
  _Alignas(8) static uint8_t again[CAPSA_IPC_MAX_MESSAGE];
  if (!iface || iface->nmessages == 0) return 0;
  input_t in;
  parse(iface, data, size, &in);
  if (decode(iface, &in, copy, value) != 0) return 0;
  // Accepted once, refused now: the runtime's checks disagree with
  // themselves, a bug of capsa's to report.
  if (capsa_iface_encode(iface, in.id, value, in.h, in.nh, again, sizeof again,
                         NULL, 0) <= 0)
    __builtin_trap();
  if (!handler) return 0;
  for (uint32_t i = 0; i < in.nh; i++) in.h[i].fd = make_fd(&in.h[i]);
  handler(in.id, value, in.h, in.nh, arg);
  for (uint32_t i = 0; i < in.nh; i++)
    if (in.h[i].fd >= 0) close(in.h[i].fd);
  return 0;
}

// --- the mutator

static uint64_t next(uint64_t *s) {  // xorshift64*
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

// A value in [lo, hi], at or next to an edge half the time.
static uint64_t pick_u(uint64_t *s, uint64_t lo, uint64_t hi) {
  uint64_t span = hi - lo + 1;  // 0: the whole 64-bit range
  switch (next(s) % 8) {
    case 0:
      return lo;
    case 1:
      return hi;
    case 2:
      return lo < hi ? lo + 1 : lo;
    case 3:
      return lo < hi ? hi - 1 : hi;
    default:
      return span ? lo + next(s) % span : next(s);
  }
}

static int64_t pick_i(uint64_t *s, int64_t lo, int64_t hi) {
  return (int64_t)((uint64_t)lo + pick_u(s, 0, (uint64_t)hi - (uint64_t)lo));
}

static bool is_signed(capsa_ifield_type_t t) {
  return t == CAPSA_IFIELD_I8 || t == CAPSA_IFIELD_I16 ||
         t == CAPSA_IFIELD_I32 || t == CAPSA_IFIELD_I64;
}

static void store_int(uint8_t *p, capsa_ifield_type_t t, uint64_t v) {
  switch (t) {
    case CAPSA_IFIELD_I8:
    case CAPSA_IFIELD_U8:
      *(uint8_t *)p = (uint8_t)v;
      break;
    case CAPSA_IFIELD_I16:
    case CAPSA_IFIELD_U16:
      *(uint16_t *)p = (uint16_t)v;
      break;
    case CAPSA_IFIELD_I32:
    case CAPSA_IFIELD_U32:
      *(uint32_t *)p = (uint32_t)v;
      break;
    default:
      *(uint64_t *)p = v;
      break;
  }
}

// Strings and bytes the mutator makes live here until the next call.
static uint8_t g_arena[CAPSA_IPC_MAX_MESSAGE];
static size_t g_used;

static uint8_t *arena(size_t n) {
  if (n + 1 > sizeof g_arena - g_used) return NULL;
  uint8_t *p = g_arena + g_used;
  g_used += n + 1;
  return p;
}

static size_t pick_len(uint64_t *s, uint32_t max_len) {
  if (max_len > 8192) max_len = 8192;  // within one envelope with the rest
  return (size_t)pick_u(s, 0, max_len);
}

static uint64_t pick_size(uint64_t *s, const capsa_ifield_t *f) {
  if (f->handle_kind == CAPSA_HANDLE_CHANNEL) return 0;
  uint64_t max = f->handle_max_size ? f->handle_max_size : UINT32_MAX;
  return pick_u(s, 1, max);
}

static void mutate_field(uint64_t *s, const capsa_ifield_t *f, uint8_t *v,
                         bool *fresh_handle) {
  uint8_t *p = v + f->offset;
  switch (f->type) {
    case CAPSA_IFIELD_BOOL:
      *(bool *)p = !*(bool *)p;
      break;
    case CAPSA_IFIELD_F32:
    case CAPSA_IFIELD_F64: {
      static const double kF[] = {0.0, 1.0, -1.0, 0.5, 1e30, -1e-30};
      double d = next(s) % 2 ? kF[next(s) % 6]
                             : (double)(int64_t)next(s) / 4294967296.0;
      if (f->type == CAPSA_IFIELD_F32)
        *(float *)p = (float)d;
      else
        *(double *)p = d;
      break;
    }
    case CAPSA_IFIELD_STRING: {
      size_t n = pick_len(s, f->max_len);
      if (n == 0 && !f->required && next(s) % 2) {
        *(const char **)p = NULL;
        break;
      }
      char *t = (char *)arena(n);
      if (!t) break;
      for (size_t i = 0; i < n; i++) t[i] = (char)('a' + next(s) % 26);
      t[n] = 0;
      *(const char **)p = t;
      break;
    }
    case CAPSA_IFIELD_BYTES: {
      size_t n = pick_len(s, f->max_len);
      uint8_t *b = n ? arena(n) : NULL;
      if (n && !b) break;
      for (size_t i = 0; i < n; i++) b[i] = (uint8_t)next(s);
      ((capsa_bytes_t *)p)->data = b;
      ((capsa_bytes_t *)p)->len = n;
      break;
    }
    case CAPSA_IFIELD_HANDLE:
      // Present (a fresh declaration) or, when optional, absent.
      *(int32_t *)p = !f->required && next(s) % 4 == 0 ? -1 : 0;
      *fresh_handle = *(int32_t *)p >= 0;
      break;
    default:
      if (is_signed(f->type))
        store_int(p, f->type, (uint64_t)pick_i(s, f->min, f->max));
      else
        store_int(p, f->type, pick_u(s, (uint64_t)f->min, f->umax));
      break;
  }
}

// The schema's defaults, handles absent (required ones added below),
// required strings empty.
static void defaults(const capsa_imessage_t *m, uint8_t *v) {
  memset(v, 0, m->c_size);
  for (uint32_t i = 0; i < m->nfields; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    uint8_t *p = v + f->offset;
    if (f->type == CAPSA_IFIELD_HANDLE)
      *(int32_t *)p = -1;
    else if (f->type == CAPSA_IFIELD_F32)
      *(float *)p = (float)f->fdef;
    else if (f->type == CAPSA_IFIELD_F64)
      *(double *)p = f->fdef;
    else if (f->type == CAPSA_IFIELD_BOOL)
      *(bool *)p = f->def != 0;
    else if (f->type == CAPSA_IFIELD_STRING)
      *(const char **)p = f->required ? "" : NULL;  // present, if it must be
    else if (f->type != CAPSA_IFIELD_BYTES)
      store_int(p, f->type, (uint64_t)f->def);
  }
}

// A declaration as the schema allows it for field `f`.
static capsa_handle_t declare(uint64_t *s, const capsa_ifield_t *f) {
  capsa_handle_t h;
  memset(&h, 0, sizeof h);
  h.fd = -1;
  h.kind = f->handle_kind;
  h.writable = f->handle_writable;
  h.rights = f->handle_rights;
  h.size = pick_size(s, f);
  return h;
}

// Deliberately out of schema: another kind, writability flipped, a right
// more, or a size past capsa_max_size.
static void break_handle(uint64_t *s, capsa_handle_t *h) {
  switch (next(s) % 4) {
    case 0:
      h->kind = (capsa_handle_kind_t)(1 + (h->kind + next(s) % 2) % 3);
      break;
    case 1:
      h->writable = !h->writable;
      break;
    case 2:
      h->rights.cr_rights[next(s) % 2] |= 1ULL << (next(s) % 57);
      break;
    default:
      h->size = h->size + 1 + next(s) % 4096;
      break;
  }
}

// May message `id` be the one this mutation writes? `want_id`: only that
// one (0: any); `from`: only messages that sender may send, responses not
// (0: any).
static bool wanted(const capsa_interface_t *iface, uint32_t id,
                   uint32_t want_id, unsigned from) {
  if (want_id) return id == want_id;
  if (!from) return true;
  const capsa_imessage_t *m = capsa_iface_message(iface, id);
  bool responses = (from & CAPSA__FUZZ_RESPONSES) != 0;
  return m && (m->from & from) && (m->kind == CAPSA_IMSG_RESPONSE) == responses;
}

// A fresh message id that `wanted` allows, or 0 when none is.
static uint32_t fresh_id(const capsa_interface_t *iface, uint64_t *s,
                         uint32_t want_id, unsigned from) {
  if (want_id) return capsa_iface_message(iface, want_id) ? want_id : 0;
  uint32_t start = (uint32_t)(next(s) % iface->nmessages);
  for (uint32_t k = 0; k < iface->nmessages; k++) {
    uint32_t id = 1 + (start + k) % iface->nmessages;
    if (wanted(iface, id, 0, from)) return id;
  }
  return 0;
}

static size_t mutate(const capsa_interface_t *iface, uint32_t want_id,
                     unsigned from, uint8_t *data, size_t size, size_t max_size,
                     unsigned seed) {
  _Alignas(16) static uint8_t value[VALUE_MAX];
  _Alignas(8) static uint8_t copy[CAPSA_IPC_MAX_MESSAGE];
  static uint8_t out[CAPSA_IPC_MAX_MESSAGE + CAPSA_FUZZ_HEADER +
                     CAPSA_IPC_MAX_HANDLES * CAPSA_FUZZ_HANDLE];
  if (!iface || iface->nmessages == 0 || !data) return size;
  uint64_t s = 0x9E3779B97F4A7C15ULL ^ seed;
  if (s == 0) s = 1;
  g_used = 0;
  input_t in;
  parse(iface, data, size, &in);
  unsigned roll = (unsigned)(next(&s) % 16);
  size_t head = CAPSA_FUZZ_HEADER + in.nh * CAPSA_FUZZ_HANDLE;
  if (roll == 0 && LLVMFuzzerMutate && size > head && max_size > head &&
      wanted(iface, in.id, want_id, from)) {
    // Out of schema: libFuzzer's byte mutations of the payload only.
    return head + LLVMFuzzerMutate(data + head, size - head, max_size - head);
  }
  bool valid = decode(iface, &in, copy, value) == 0;
  uint32_t id = in.id;
  if (!valid || roll == 1 || !wanted(iface, id, want_id, from)) {
    // A fresh message: any of the interface's the caller allows.
    id = fresh_id(iface, &s, want_id, from);
    if (id == 0) return size;
    defaults(capsa_iface_message(iface, id), value);
    in.nh = 0;
  }
  const capsa_imessage_t *m = capsa_iface_message(iface, id);
  // Which handle fields get a fresh declaration.
  bool fresh[CAPSA_IFACE_MAX_FIELDS] = {false};
  for (uint32_t i = 0; i < m->nfields; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    int32_t *idx = (int32_t *)(value + f->offset);
    if (f->type == CAPSA_IFIELD_HANDLE && f->required && *idx < 0) {
      *idx = 0;
      fresh[i] = true;
    }
  }
  unsigned changes = m->nfields ? 1 + (unsigned)(next(&s) % 3) : 0;
  for (unsigned c = 0; c < changes; c++) {
    uint32_t i = (uint32_t)(next(&s) % m->nfields);
    mutate_field(&s, &m->fields[i], value, &fresh[i]);
  }
  // The declarations, in field order: kept when decoded, fresh otherwise.
  capsa_handle_t h[CAPSA_IPC_MAX_HANDLES];
  uint32_t nh = 0;
  for (uint32_t i = 0; i < m->nfields && nh < CAPSA_IPC_MAX_HANDLES; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    if (f->type != CAPSA_IFIELD_HANDLE) continue;
    int32_t *idx = (int32_t *)(value + f->offset);
    if (*idx < 0) continue;
    h[nh] = !fresh[i] && (uint32_t)*idx < in.nh ? in.h[*idx] : declare(&s, f);
    *idx = (int32_t)nh++;
  }
  int n = capsa_fuzz_write(iface, id, value, h, nh, out, sizeof out);
  if (n < 0 || (size_t)n > max_size) {
    // The change broke a rule the encoder keeps (or did not fit): leave
    // the structure to libFuzzer's bytes this once (for the whole
    // interface only: bytes may become any message).
    return LLVMFuzzerMutate && !want_id && !from
               ? LLVMFuzzerMutate(data, size, max_size)
               : size;
  }
  if (roll == 2 && nh > 0) {  // out of schema: one declaration broken
    uint32_t i = (uint32_t)(next(&s) % nh);
    uint8_t *p = out + CAPSA_FUZZ_HEADER + i * CAPSA_FUZZ_HANDLE;
    capsa_handle_t b = h[i];
    break_handle(&s, &b);
    p[0] = (uint8_t)b.kind;
    p[1] = b.writable ? 1 : 0;
    put_u64(p + 8, b.size);
    put_u64(p + 16, b.rights.cr_rights[0]);
    put_u64(p + 24, b.rights.cr_rights[1]);
  }
  memcpy(data, out, (size_t)n);
  return (size_t)n;
}

size_t capsa_fuzz_mutate(const capsa_interface_t *iface, uint8_t *data,
                         size_t size, size_t max_size, unsigned seed) {
  return mutate(iface, 0, 0, data, size, max_size, seed);
}

size_t capsa__fuzz_mutate_as(const capsa_interface_t *iface, uint32_t want_id,
                             unsigned from, uint8_t *data, size_t size,
                             size_t max_size, unsigned seed) {
  return mutate(iface, want_id, from, data, size, max_size, seed);
}

int capsa__fuzz_make_fd(const capsa_handle_t *h) {
  return make_fd(h);
}

int capsa__fuzz_parse(const capsa_interface_t *iface, const uint8_t *data,
                      size_t size, uint32_t *id, capsa_handle_t *handles,
                      uint32_t *nhandles, const uint8_t **payload,
                      size_t *len) {
  if (!iface || iface->nmessages == 0) return -EINVAL;
  input_t in;
  parse(iface, data, size, &in);
  *id = in.id;
  *nhandles = in.nh;
  memcpy(handles, in.h, in.nh * sizeof *handles);
  *payload = in.payload;
  *len = in.len;
  return 0;
}
