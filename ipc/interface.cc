// The runtime of embedder-defined interfaces (ipc/interface.h): encodes,
// verifies and checks any message from its generated descriptor, with the
// flatbuffers Builder and Verifier. Decoding trusts nothing of the bytes:
// the Verifier bounds every offset first, then each field is read through
// the verified table and held to the schema's limits.
#include "ipc/interface.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <flatbuffers/flatbuffers.h>

#include "ipc/handle.h"
#include "ipc/reason.h"
#include "ipc/utf8.h"

#if __SIZEOF_POINTER__ == 8
// Generated descriptors are compiled into embedders' programs: the text
// mark took padding, so a descriptor generated before it still fits.
static_assert(sizeof(capsa_ifield_t) == 104 &&
                  offsetof(capsa_ifield_t, min) == 24,
              "capsa_ifield_t's layout is ABI");
#endif

namespace {

using flatbuffers::Table;
using flatbuffers::Verifier;

// The same bounds as the core envelope (ipc/codec.cc): a message is one
// flat table, so depth 2 and a handful of tables are plenty.
constexpr flatbuffers::uoffset_t kMaxDepth = 8;
constexpr flatbuffers::uoffset_t kMaxTables = 16;

template <typename T>
T Load(const void *msg, uint32_t off) {
  T v;
  memcpy(&v, static_cast<const uint8_t *>(msg) + off, sizeof v);
  return v;
}

template <typename T>
void Store(void *msg, uint32_t off, T v) {
  memcpy(static_cast<uint8_t *>(msg) + off, &v, sizeof v);
}

bool IsInteger(capsa_ifield_type_t t) {
  return t >= CAPSA_IFIELD_BOOL && t <= CAPSA_IFIELD_U64;
}

bool IsUnsigned(capsa_ifield_type_t t) {
  return t == CAPSA_IFIELD_BOOL || t == CAPSA_IFIELD_U8 ||
         t == CAPSA_IFIELD_U16 || t == CAPSA_IFIELD_U32 ||
         t == CAPSA_IFIELD_U64;
}

const char *KindName(capsa_handle_kind_t k) {
  switch (k) {
    case CAPSA_HANDLE_SHM:
      return "shm";
    case CAPSA_HANDLE_FILE:
      return "file";
    case CAPSA_HANDLE_CHANNEL:
      return "channel";
    default:
      return "?";
  }
}

// An integer field's value as read from the C struct, widened.
struct Int {
  bool is_unsigned;
  uint64_t u;
  int64_t s;
};

Int LoadInt(const capsa_ifield_t *f, const void *msg) {
  Int v = {IsUnsigned(f->type), 0, 0};
  switch (f->type) {
    case CAPSA_IFIELD_BOOL:
      v.u = Load<bool>(msg, f->offset) ? 1 : 0;
      break;
    case CAPSA_IFIELD_I8:
      v.s = Load<int8_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_U8:
      v.u = Load<uint8_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_I16:
      v.s = Load<int16_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_U16:
      v.u = Load<uint16_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_I32:
      v.s = Load<int32_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_U32:
      v.u = Load<uint32_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_I64:
      v.s = Load<int64_t>(msg, f->offset);
      break;
    case CAPSA_IFIELD_U64:
      v.u = Load<uint64_t>(msg, f->offset);
      break;
    default:
      break;
  }
  return v;
}

int CheckInt(const capsa_imessage_t *m, const capsa_ifield_t *f, Int v, char *r,
             size_t n) {
  if (v.is_unsigned) {
    uint64_t lo = f->min > 0 ? static_cast<uint64_t>(f->min) : 0;
    if (v.u < lo || v.u > f->umax)
      return capsa__bad(r, n, "%s.%s: %llu outside %llu..%llu", m->name,
                        f->name, (unsigned long long)v.u,
                        (unsigned long long)lo, (unsigned long long)f->umax);
  } else if (v.s < f->min || v.s > f->max) {
    return capsa__bad(r, n, "%s.%s: %lld outside %lld..%lld", m->name, f->name,
                      (long long)v.s, (long long)f->min, (long long)f->max);
  }
  return 0;
}

// Handle fields: each names a distinct declared handle of the schema's kind
// and no wider than the schema allows; every handle is named by one field.
int CheckHandles(const capsa_imessage_t *m, const void *msg,
                 const capsa_handle_t *handles, uint32_t nhandles, char *r,
                 size_t n) {
  if (nhandles > CAPSA_IPC_MAX_HANDLES)
    return capsa__bad(r, n, "%s: %u handles", m->name, nhandles);
  if (nhandles && !handles) return capsa__bad(r, n, "%s: no handles", m->name);
  bool used[CAPSA_IPC_MAX_HANDLES] = {false};
  for (uint32_t i = 0; i < m->nfields; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    if (f->type != CAPSA_IFIELD_HANDLE) continue;
    int32_t idx = Load<int32_t>(msg, f->offset);
    if (idx < 0) {
      if (f->required)
        return capsa__bad(r, n, "%s.%s: required handle missing", m->name,
                          f->name);
      continue;
    }
    if (static_cast<uint32_t>(idx) >= nhandles)
      return capsa__bad(r, n, "%s.%s: handle %d of %u", m->name, f->name, idx,
                        nhandles);
    if (used[idx])
      return capsa__bad(r, n, "%s.%s: handle %d named twice", m->name, f->name,
                        idx);
    used[idx] = true;
    const capsa_handle_t *h = &handles[idx];
    if (h->kind != f->handle_kind)
      return capsa__bad(r, n, "%s.%s: a %s handle where the schema says %s",
                        m->name, f->name, KindName(h->kind),
                        KindName(f->handle_kind));
    if (h->writable && !f->handle_writable)
      return capsa__bad(r, n,
                        "%s.%s: writable handle, the schema says "
                        "read-only",
                        m->name, f->name);
    if (!capsa_rights_contains(&f->handle_rights, &h->rights))
      return capsa__bad(r, n,
                        "%s.%s: rights %#llx %#llx wider than the "
                        "schema's %#llx %#llx",
                        m->name, f->name,
                        (unsigned long long)h->rights.cr_rights[0],
                        (unsigned long long)h->rights.cr_rights[1],
                        (unsigned long long)f->handle_rights.cr_rights[0],
                        (unsigned long long)f->handle_rights.cr_rights[1]);
    if (f->handle_max_size && h->size > f->handle_max_size)
      return capsa__bad(r, n, "%s.%s: size %llu above the schema's %llu",
                        m->name, f->name, (unsigned long long)h->size,
                        (unsigned long long)f->handle_max_size);
  }
  for (uint32_t i = 0; i < nhandles; i++)
    if (!used[i])
      return capsa__bad(r, n, "%s: handle %u is named by no field", m->name, i);
  return 0;
}

int CheckString(const capsa_imessage_t *m, const capsa_ifield_t *f,
                const char *s, size_t len, char *r, size_t n) {
  if (len > f->max_len)
    return capsa__bad(r, n, "%s.%s: string of %zu bytes, at most %u", m->name,
                      f->name, len, f->max_len);
  if (memchr(s, 0, len))
    return capsa__bad(r, n, "%s.%s: string holds a NUL byte", m->name, f->name);
  if (f->text) {
    uint32_t cp = 0;
    size_t at = capsa__utf8_text_span(s, len, &cp);
    if (at < len && cp == UINT32_MAX)
      return capsa__bad(r, n, "%s.%s: text field, byte %#x at %zu is not UTF-8",
                        m->name, f->name, (unsigned)(unsigned char)s[at], at);
    if (at < len)
      return capsa__bad(r, n,
                        "%s.%s: text field, control or format character "
                        "U+%04X at byte %zu",
                        m->name, f->name, (unsigned)cp, at);
  }
  return 0;
}

// Every rule of the schema on a C struct (both directions use it).
int CheckStruct(const capsa_imessage_t *m, const void *msg,
                const capsa_handle_t *handles, uint32_t nhandles, char *r,
                size_t n) {
  for (uint32_t i = 0; i < m->nfields; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    int err = 0;
    if (IsInteger(f->type)) {
      err = CheckInt(m, f, LoadInt(f, msg), r, n);
    } else if (f->type == CAPSA_IFIELD_F32 || f->type == CAPSA_IFIELD_F64) {
      double d = f->type == CAPSA_IFIELD_F32 ? Load<float>(msg, f->offset)
                                             : Load<double>(msg, f->offset);
      if (!isfinite(d))
        err = capsa__bad(r, n, "%s.%s: not a finite number", m->name, f->name);
    } else if (f->type == CAPSA_IFIELD_STRING) {
      const char *s = Load<const char *>(msg, f->offset);
      if (!s && f->required)
        err = capsa__bad(r, n, "%s.%s: required string missing", m->name,
                         f->name);
      else if (s)
        err = CheckString(m, f, s, strnlen(s, (size_t)f->max_len + 1), r, n);
    } else if (f->type == CAPSA_IFIELD_BYTES) {
      capsa_bytes_t b = Load<capsa_bytes_t>(msg, f->offset);
      if (b.len == 0 && f->required)
        err =
            capsa__bad(r, n, "%s.%s: required bytes missing", m->name, f->name);
      else if (b.len > f->max_len)
        err = capsa__bad(r, n, "%s.%s: %zu bytes, at most %u", m->name, f->name,
                         b.len, f->max_len);
      else if (b.len && !b.data)
        err = capsa__bad(r, n, "%s.%s: %zu bytes at NULL", m->name, f->name,
                         b.len);
    }
    if (err) return err;
  }
  return CheckHandles(m, msg, handles, nhandles, r, n);
}

template <typename T>
void AddScalar(flatbuffers::FlatBufferBuilder &b, const capsa_ifield_t *f, T v,
               T def) {
  b.AddElement<T>(f->slot, v, def);
}

void AddField(flatbuffers::FlatBufferBuilder &b, const capsa_ifield_t *f,
              const void *msg) {
  switch (f->type) {
    case CAPSA_IFIELD_BOOL:
      AddScalar<uint8_t>(b, f, Load<bool>(msg, f->offset) ? 1 : 0,
                         f->def ? 1 : 0);
      break;
    case CAPSA_IFIELD_I8:
      AddScalar<int8_t>(b, f, Load<int8_t>(msg, f->offset),
                        static_cast<int8_t>(f->def));
      break;
    case CAPSA_IFIELD_U8:
      AddScalar<uint8_t>(b, f, Load<uint8_t>(msg, f->offset),
                         static_cast<uint8_t>(f->def));
      break;
    case CAPSA_IFIELD_I16:
      AddScalar<int16_t>(b, f, Load<int16_t>(msg, f->offset),
                         static_cast<int16_t>(f->def));
      break;
    case CAPSA_IFIELD_U16:
      AddScalar<uint16_t>(b, f, Load<uint16_t>(msg, f->offset),
                          static_cast<uint16_t>(f->def));
      break;
    case CAPSA_IFIELD_I32:
      AddScalar<int32_t>(b, f, Load<int32_t>(msg, f->offset),
                         static_cast<int32_t>(f->def));
      break;
    case CAPSA_IFIELD_U32:
      AddScalar<uint32_t>(b, f, Load<uint32_t>(msg, f->offset),
                          static_cast<uint32_t>(f->def));
      break;
    case CAPSA_IFIELD_I64:
      AddScalar<int64_t>(b, f, Load<int64_t>(msg, f->offset), f->def);
      break;
    case CAPSA_IFIELD_U64:
      AddScalar<uint64_t>(b, f, Load<uint64_t>(msg, f->offset),
                          static_cast<uint64_t>(f->def));
      break;
    case CAPSA_IFIELD_F32:
      AddScalar<float>(b, f, Load<float>(msg, f->offset),
                       static_cast<float>(f->fdef));
      break;
    case CAPSA_IFIELD_F64:
      AddScalar<double>(b, f, Load<double>(msg, f->offset), f->fdef);
      break;
    case CAPSA_IFIELD_HANDLE: {
      // On the wire: index + 1, 0 (the default, omitted) for none.
      int32_t idx = Load<int32_t>(msg, f->offset);
      AddScalar<uint8_t>(b, f, idx < 0 ? 0 : static_cast<uint8_t>(idx + 1), 0);
      break;
    }
    default:
      break;  // strings and bytes: offsets, added by the caller
  }
}

// Scalars of one field from a verified table into the C struct.
void ReadField(const Table *t, const capsa_ifield_t *f, void *out) {
  switch (f->type) {
    case CAPSA_IFIELD_BOOL:
      Store<bool>(out, f->offset, t->GetField<uint8_t>(f->slot, f->def) != 0);
      break;
    case CAPSA_IFIELD_I8:
      Store<int8_t>(out, f->offset,
                    t->GetField<int8_t>(f->slot, static_cast<int8_t>(f->def)));
      break;
    case CAPSA_IFIELD_U8:
      Store<uint8_t>(
          out, f->offset,
          t->GetField<uint8_t>(f->slot, static_cast<uint8_t>(f->def)));
      break;
    case CAPSA_IFIELD_I16:
      Store<int16_t>(
          out, f->offset,
          t->GetField<int16_t>(f->slot, static_cast<int16_t>(f->def)));
      break;
    case CAPSA_IFIELD_U16:
      Store<uint16_t>(
          out, f->offset,
          t->GetField<uint16_t>(f->slot, static_cast<uint16_t>(f->def)));
      break;
    case CAPSA_IFIELD_I32:
      Store<int32_t>(
          out, f->offset,
          t->GetField<int32_t>(f->slot, static_cast<int32_t>(f->def)));
      break;
    case CAPSA_IFIELD_U32:
      Store<uint32_t>(
          out, f->offset,
          t->GetField<uint32_t>(f->slot, static_cast<uint32_t>(f->def)));
      break;
    case CAPSA_IFIELD_I64:
      Store<int64_t>(out, f->offset, t->GetField<int64_t>(f->slot, f->def));
      break;
    case CAPSA_IFIELD_U64:
      Store<uint64_t>(
          out, f->offset,
          t->GetField<uint64_t>(f->slot, static_cast<uint64_t>(f->def)));
      break;
    case CAPSA_IFIELD_F32:
      Store<float>(out, f->offset,
                   t->GetField<float>(f->slot, static_cast<float>(f->fdef)));
      break;
    case CAPSA_IFIELD_F64:
      Store<double>(out, f->offset, t->GetField<double>(f->slot, f->fdef));
      break;
    case CAPSA_IFIELD_HANDLE: {
      uint8_t w = t->GetField<uint8_t>(f->slot, 0);
      Store<int32_t>(out, f->offset, static_cast<int32_t>(w) - 1);
      break;
    }
    case CAPSA_IFIELD_STRING: {
      auto *s = t->GetPointer<const flatbuffers::String *>(f->slot);
      Store<const char *>(out, f->offset, s ? s->c_str() : nullptr);
      break;
    }
    case CAPSA_IFIELD_BYTES: {
      auto *v = t->GetPointer<const flatbuffers::Vector<uint8_t> *>(f->slot);
      capsa_bytes_t b = {nullptr, 0};
      if (v && v->size()) b = {v->data(), v->size()};
      Store<capsa_bytes_t>(out, f->offset, b);
      break;
    }
  }
}

bool VerifyField(const Table *t, Verifier &v, const capsa_ifield_t *f) {
  switch (f->type) {
    case CAPSA_IFIELD_BOOL:
    case CAPSA_IFIELD_I8:
    case CAPSA_IFIELD_U8:
    case CAPSA_IFIELD_HANDLE:
      return t->VerifyField<uint8_t>(v, f->slot, 1);
    case CAPSA_IFIELD_I16:
    case CAPSA_IFIELD_U16:
      return t->VerifyField<uint16_t>(v, f->slot, 2);
    case CAPSA_IFIELD_I32:
    case CAPSA_IFIELD_U32:
    case CAPSA_IFIELD_F32:
      return t->VerifyField<uint32_t>(v, f->slot, 4);
    case CAPSA_IFIELD_I64:
    case CAPSA_IFIELD_U64:
    case CAPSA_IFIELD_F64:
      return t->VerifyField<uint64_t>(v, f->slot, 8);
    case CAPSA_IFIELD_STRING:
      return t->VerifyOffset(v, f->slot) &&
             v.VerifyString(
                 t->GetPointer<const flatbuffers::String *>(f->slot));
    case CAPSA_IFIELD_BYTES:
      return t->VerifyOffset(v, f->slot) &&
             v.VerifyVector(
                 t->GetPointer<const flatbuffers::Vector<uint8_t> *>(f->slot));
  }
  return false;
}

bool Present(const Table *t, const capsa_ifield_t *f) {
  return t->CheckField(f->slot);
}

}  // namespace

extern "C" {

const capsa_imessage_t *capsa_iface_message(const capsa_interface_t *iface,
                                            uint32_t id) {
  if (!iface || id == 0 || id > iface->nmessages) return nullptr;
  const capsa_imessage_t *m = &iface->messages[id - 1];
  return m->id == id ? m : nullptr;
}

int capsa_iface_encode(const capsa_interface_t *iface, uint32_t id,
                       const void *msg, const capsa_handle_t *handles,
                       uint32_t nhandles, uint8_t *buf, size_t cap,
                       char *reason, size_t reason_size) {
  const capsa_imessage_t *m = capsa_iface_message(iface, id);
  if (!m) return -ENOENT;
  if (!msg || !buf) return -EINVAL;
  if (CheckStruct(m, msg, handles, nhandles, reason, reason_size) < 0)
    return -EINVAL;
  flatbuffers::FlatBufferBuilder b(256);
  // Offsets (strings, vectors) before the table that refers to them.
  flatbuffers::uoffset_t offs[CAPSA_IFACE_MAX_FIELDS] = {0};
  for (uint32_t i = 0; i < m->nfields && i < CAPSA_IFACE_MAX_FIELDS; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    if (f->type == CAPSA_IFIELD_STRING) {
      const char *s = Load<const char *>(msg, f->offset);
      if (s) offs[i] = b.CreateString(s, strlen(s)).o;
    } else if (f->type == CAPSA_IFIELD_BYTES) {
      capsa_bytes_t v = Load<capsa_bytes_t>(msg, f->offset);
      if (v.len) offs[i] = b.CreateVector(v.data, v.len).o;
    }
  }
  flatbuffers::uoffset_t start = b.StartTable();
  for (uint32_t i = 0; i < m->nfields && i < CAPSA_IFACE_MAX_FIELDS; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    if (offs[i])
      b.AddOffset(f->slot, flatbuffers::Offset<void>(offs[i]));
    else
      AddField(b, f, msg);
  }
  b.Finish(flatbuffers::Offset<Table>(b.EndTable(start)));
  size_t size = b.GetSize();
  if (size > cap || size > CAPSA_IPC_MAX_MESSAGE) return -EMSGSIZE;
  memcpy(buf, b.GetBufferPointer(), size);
  return static_cast<int>(size);
}

int capsa_iface_decode(const capsa_interface_t *iface, uint32_t id,
                       const uint8_t *buf, size_t len,
                       const capsa_handle_t *handles, uint32_t nhandles,
                       void *out, char *r, size_t n) {
  const capsa_imessage_t *m = capsa_iface_message(iface, id);
  if (!m) return -ENOENT;
  if (!out) return -EINVAL;
  memset(out, 0, m->c_size);
  if (!buf || len > CAPSA_IPC_MAX_MESSAGE)
    return capsa__bad(r, n, "%s: %zu bytes", m->name, len);
  // The Verifier checks alignment relative to the buffer's start; scalars
  // are then read in place, so the start itself must be 8-aligned (a
  // caller's contract, not something a peer controls).
  if (reinterpret_cast<uintptr_t>(buf) % 8 != 0) return -EINVAL;
  // The smallest flatbuffer: root offset, vtable offset, a 2-entry vtable.
  constexpr size_t kMinBuffer = sizeof(flatbuffers::uoffset_t) +
                                sizeof(flatbuffers::soffset_t) +
                                2 * sizeof(flatbuffers::voffset_t);
  if (len < kMinBuffer)
    return capsa__bad(r, n, "%s: %zu bytes is no flatbuffer", m->name, len);
  Verifier v(buf, len, kMaxDepth, kMaxTables);
  flatbuffers::uoffset_t root = v.VerifyOffset(0);
  if (!root) return capsa__bad(r, n, "%s: bad root offset", m->name);
  const Table *t = reinterpret_cast<const Table *>(buf + root);
  if (!t->VerifyTableStart(v))
    return capsa__bad(r, n, "%s: bad table", m->name);
  for (uint32_t i = 0; i < m->nfields; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    if (!VerifyField(t, v, f))
      return capsa__bad(r, n, "%s.%s: fails verification", m->name, f->name);
    // Handles and scalars are "present" only when sent: flatbuffers omits
    // defaults, so a required scalar is checked by value, not presence.
    if (f->required &&
        (f->type == CAPSA_IFIELD_STRING || f->type == CAPSA_IFIELD_BYTES ||
         f->type == CAPSA_IFIELD_HANDLE) &&
        !Present(t, f))
      return capsa__bad(r, n, "%s.%s: required field missing", m->name,
                        f->name);
    ReadField(t, f, out);
  }
  if (!v.EndTable()) return capsa__bad(r, n, "%s: bad table end", m->name);
  // Strings: the Verifier checked their bounds and terminator; the limits
  // and the NUL rule apply to the length the sender declared.
  for (uint32_t i = 0; i < m->nfields; i++) {
    const capsa_ifield_t *f = &m->fields[i];
    if (f->type != CAPSA_IFIELD_STRING) continue;
    auto *s = t->GetPointer<const flatbuffers::String *>(f->slot);
    if (s && CheckString(m, f, s->c_str(), s->size(), r, n) < 0)
      return -EBADMSG;
  }
  if (CheckStruct(m, out, handles, nhandles, r, n) < 0) return -EBADMSG;
  return 0;
}

int capsa_iface_check_envelope(const capsa_interface_t *iface, uint32_t id,
                               capsa_peer_role_t from, uint32_t flags,
                               uint32_t request_id_of, char *r, size_t n) {
  const capsa_imessage_t *m = capsa_iface_message(iface, id);
  if (!m) {
    if (!iface) return -ENOENT;
    return capsa__bad(r, n, "%s: no message %u", iface->name, id);
  }
  unsigned bit = from == CAPSA_PEER_HOST       ? CAPSA_IFROM_HOST
                 : from == CAPSA_PEER_RENDERER ? CAPSA_IFROM_RENDERER
                                               : 0;
  if (!(m->from & bit))
    return capsa__bad(r, n, "%s.%s: not sent by the %s", iface->name, m->name,
                      bit == CAPSA_IFROM_HOST ? "host" : "renderer");
  uint32_t want = m->kind == CAPSA_IMSG_REQUEST    ? CAPSA_MSG_F_REQUEST
                  : m->kind == CAPSA_IMSG_RESPONSE ? CAPSA_MSG_F_RESPONSE
                                                   : 0;
  if (flags != want)
    return capsa__bad(r, n, "%s.%s: flags %#x, its kind needs %#x", iface->name,
                      m->name, flags, want);
  if (m->kind == CAPSA_IMSG_RESPONSE) {
    const capsa_imessage_t *q = capsa_iface_message(iface, request_id_of);
    if (!q || q->kind != CAPSA_IMSG_REQUEST || q->reply != id)
      return capsa__bad(r, n, "%s.%s: answers no request of its kind",
                        iface->name, m->name);
  }
  return 0;
}

int capsa_iface_check_descriptor(const capsa_interface_t *iface, char *r,
                                 size_t n) {
  if (!iface || !iface->name || !iface->messages || iface->nmessages == 0)
    return -EINVAL;
  if (strnlen(iface->name, CAPSA_IFACE_MAX_NAME + 1) > CAPSA_IFACE_MAX_NAME) {
    capsa__bad(r, n, "interface name too long");
    return -EINVAL;
  }
  for (uint32_t i = 0; i < iface->nmessages; i++) {
    const capsa_imessage_t *m = &iface->messages[i];
    bool ok = m->id == i + 1 && m->name &&
              m->nfields <= CAPSA_IFACE_MAX_FIELDS &&
              (m->nfields == 0 || m->fields) && m->from &&
              !(m->from & ~(CAPSA_IFROM_HOST | CAPSA_IFROM_RENDERER)) &&
              m->kind >= CAPSA_IMSG_EVENT && m->kind <= CAPSA_IMSG_RESPONSE;
    if (ok && m->kind == CAPSA_IMSG_REQUEST) {
      const capsa_imessage_t *q = capsa_iface_message(iface, m->reply);
      ok = q && q->kind == CAPSA_IMSG_RESPONSE;
    }
    uint32_t nh = 0;
    for (uint32_t k = 0; ok && k < m->nfields; k++) {
      const capsa_ifield_t *f = &m->fields[k];
      ok = f->name && f->type >= CAPSA_IFIELD_BOOL &&
           f->type <= CAPSA_IFIELD_HANDLE && f->slot >= 4 && !(f->slot & 1) &&
           f->offset < m->c_size &&
           (!f->text || f->type == CAPSA_IFIELD_STRING);
      if (ok && f->type == CAPSA_IFIELD_HANDLE) {
        nh++;
        ok = capsa_rights_is_valid(&f->handle_rights) &&
             f->handle_kind >= CAPSA_HANDLE_SHM &&
             f->handle_kind <= CAPSA_HANDLE_FILE;
      }
    }
    if (!ok || nh != m->nhandles || nh > CAPSA_IPC_MAX_HANDLES) {
      capsa__bad(r, n, "%s: message %u (%s) is malformed", iface->name, i + 1,
                 m->name ? m->name : "?");
      return -EINVAL;
    }
  }
  return 0;
}

}  // extern "C"
