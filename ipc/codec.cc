// The one C++ file of ipc/: capsa_msg_t <-> flatbuffers, behind ipc/codec.h.
// Decoding trusts nothing: the Verifier bounds every offset with depth and
// table limits, then every field is range-checked (strings: length limit, no
// embedded NUL) and the semantic checks of ipc/validate.c run.
#include "ipc/codec.h"

#include <errno.h>
#include <string.h>

#include "ipc/reason.h"
#include "ipc/schema/capsa_ipc_generated.h"
#include "ipc/validate.h"

namespace fb = capsa::ipc::fb;

namespace {

static_assert(static_cast<int>(fb::Body::Hello) == CAPSA_MSG_HELLO, "order");
static_assert(static_cast<int>(fb::Body::ResourceRequest) ==
                  CAPSA_MSG_RESOURCE_REQUEST,
              "order");
static_assert(static_cast<int>(fb::Body::ResourceResponse) ==
                  CAPSA_MSG_RESOURCE_RESPONSE,
              "order");
static_assert(static_cast<int>(fb::Body::Log) == CAPSA_MSG_LOG, "order");
static_assert(static_cast<int>(fb::Body::Ping) == CAPSA_MSG_PING, "order");
static_assert(static_cast<int>(fb::Body::Pong) == CAPSA_MSG_PONG, "order");
static_assert(static_cast<int>(fb::Body::Shutdown) == CAPSA_MSG_SHUTDOWN,
              "order");
static_assert(static_cast<int>(fb::Body::Error) == CAPSA_MSG_ERROR, "order");
static_assert(static_cast<int>(fb::Body::InterfaceMessage) ==
                  CAPSA_MSG_INTERFACE,
              "order");
static_assert(static_cast<int>(fb::Body::OpenChannel) == CAPSA_MSG_OPEN_CHANNEL,
              "order");
static_assert(static_cast<int>(fb::Body::MAX) == CAPSA_MSG_TYPE_COUNT - 1,
              "every union member has a capsa_msg_type_t");

using Builder = flatbuffers::FlatBufferBuilder;

// Set when a string is longer than any receiver accepts: encoding then
// fails rather than sending what the peer must treat as a bad message.
thread_local bool g_string_too_long;

flatbuffers::Offset<flatbuffers::String> Str(Builder &b, const char *s) {
  if (s == nullptr) return 0;
  size_t len = strnlen(s, CAPSA_IPC_MAX_STRING + 1);
  if (len > CAPSA_IPC_MAX_STRING) {
    g_string_too_long = true;
    return 0;
  }
  return b.CreateString(s, len);
}

flatbuffers::Offset<flatbuffers::Vector<uint8_t>> Bytes(Builder &b,
                                                        capsa_bytes_t v) {
  return v.len != 0 ? b.CreateVector(v.data, v.len) : 0;
}

flatbuffers::Offset<void> EncodeBody(Builder &b, const capsa_msg_t *m) {
  const auto &u = m->u;
  switch (m->type) {
    case CAPSA_MSG_HELLO: {
      auto detail = Str(b, u.hello.sandbox.detail);
      auto sb = fb::CreateSandboxReport(
          b, u.hello.sandbox.capmode, u.hello.sandbox.no_new_privs,
          u.hello.sandbox.landlock_abi, u.hello.sandbox.namespaces, detail);
      auto kind = Str(b, u.hello.renderer_kind);
      auto ifaces = Str(b, u.hello.interfaces);
      return fb::CreateHello(b, u.hello.protocol_version, u.hello.pid, kind, sb,
                             ifaces, u.hello.interfaces_hash)
          .Union();
    }
    case CAPSA_MSG_RESOURCE_REQUEST: {
      auto url = Str(b, u.resource_request.url);
      return fb::CreateResourceRequest(b, url).Union();
    }
    case CAPSA_MSG_RESOURCE_RESPONSE: {
      auto mime = Str(b, u.resource_response.mime);
      auto data = Bytes(b, u.resource_response.data);
      return fb::CreateResourceResponse(b, u.resource_response.status, mime,
                                        data)
          .Union();
    }
    case CAPSA_MSG_LOG: {
      auto text = Str(b, u.log.text);
      return fb::CreateLog(b, u.log.level, text).Union();
    }
    case CAPSA_MSG_PING: {
      auto p = Bytes(b, u.ping.payload);
      return fb::CreatePing(b, u.ping.seq, p).Union();
    }
    case CAPSA_MSG_PONG: {
      auto p = Bytes(b, u.ping.payload);
      return fb::CreatePong(b, u.ping.seq, p).Union();
    }
    case CAPSA_MSG_SHUTDOWN: {
      auto reason = Str(b, u.shutdown.reason);
      return fb::CreateShutdown(b, reason).Union();
    }
    case CAPSA_MSG_ERROR: {
      auto text = Str(b, u.error.message);
      return fb::CreateError(b, u.error.code, text).Union();
    }
    case CAPSA_MSG_OPEN_CHANNEL: {
      auto purpose = Str(b, u.open_channel.purpose);
      return fb::CreateOpenChannel(b, u.open_channel.channel_id, purpose)
          .Union();
    }
    case CAPSA_MSG_INTERFACE: {
      auto payload = Bytes(b, u.iface.payload);
      return fb::CreateInterfaceMessage(b, u.iface.index, u.iface.id, payload)
          .Union();
    }
    default:
      return 0;
  }
}

// Field readers for hostile buffers. Each returns false with a reason.
struct Reader {
  char *reason;
  size_t reason_size;
  const char *field = "";

  bool Str(const flatbuffers::String *s, const char **out) {
    *out = nullptr;
    if (s == nullptr) return true;
    if (s->size() > CAPSA_IPC_MAX_STRING) {
      capsa__bad(reason, reason_size, "%s: string of %u bytes (max %d)", field,
                 s->size(), CAPSA_IPC_MAX_STRING);
      return false;
    }
    // The Verifier checked the terminating NUL; an embedded one would make
    // C code see a different string than the declared length.
    if (memchr(s->data(), '\0', s->size()) != nullptr) {
      capsa__bad(reason, reason_size, "%s: string with an embedded NUL", field);
      return false;
    }
    *out = s->c_str();
    return true;
  }

  void Bytes(const flatbuffers::Vector<uint8_t> *v, capsa_bytes_t *out) {
    out->data = v != nullptr && v->size() != 0 ? v->data() : nullptr;
    out->len = out->data != nullptr ? v->size() : 0;
  }
};

bool DecodeBody(const fb::Envelope *env, capsa_msg_t *m, Reader &rd) {
  auto &u = m->u;
  switch (m->type) {
    case CAPSA_MSG_HELLO: {
      auto h = env->body_as_Hello();
      u.hello.protocol_version = h->protocol_version();
      u.hello.pid = h->pid();
      rd.field = "hello.renderer_kind";
      if (!rd.Str(h->renderer_kind(), &u.hello.renderer_kind)) return false;
      if (auto sb = h->sandbox()) {
        u.hello.sandbox.capmode = sb->capmode();
        u.hello.sandbox.no_new_privs = sb->no_new_privs();
        u.hello.sandbox.landlock_abi = sb->landlock_abi();
        u.hello.sandbox.namespaces = sb->namespaces();
        rd.field = "hello.sandbox.detail";
        if (!rd.Str(sb->detail(), &u.hello.sandbox.detail)) return false;
      }
      u.hello.interfaces_hash = h->interfaces_hash();
      rd.field = "hello.interfaces";
      return rd.Str(h->interfaces(), &u.hello.interfaces);
    }
    case CAPSA_MSG_RESOURCE_REQUEST: {
      rd.field = "resource_request.url";
      return rd.Str(env->body_as_ResourceRequest()->url(),
                    &u.resource_request.url);
    }
    case CAPSA_MSG_RESOURCE_RESPONSE: {
      auto p = env->body_as_ResourceResponse();
      u.resource_response.status = p->status();
      rd.field = "resource_response.mime";
      if (!rd.Str(p->mime(), &u.resource_response.mime)) return false;
      rd.Bytes(p->data(), &u.resource_response.data);
      return true;
    }
    case CAPSA_MSG_LOG: {
      auto l = env->body_as_Log();
      u.log.level = l->level();
      rd.field = "log.text";
      return rd.Str(l->text(), &u.log.text);
    }
    case CAPSA_MSG_PING: {
      auto p = env->body_as_Ping();
      u.ping.seq = p->seq();
      rd.Bytes(p->payload(), &u.ping.payload);
      return true;
    }
    case CAPSA_MSG_PONG: {
      auto p = env->body_as_Pong();
      u.ping.seq = p->seq();
      rd.Bytes(p->payload(), &u.ping.payload);
      return true;
    }
    case CAPSA_MSG_SHUTDOWN: {
      rd.field = "shutdown.reason";
      return rd.Str(env->body_as_Shutdown()->reason(), &u.shutdown.reason);
    }
    case CAPSA_MSG_ERROR: {
      auto e = env->body_as_Error();
      u.error.code = e->code();
      rd.field = "error.message";
      return rd.Str(e->message(), &u.error.message);
    }
    case CAPSA_MSG_OPEN_CHANNEL: {
      auto o = env->body_as_OpenChannel();
      u.open_channel.channel_id = o->channel_id();
      rd.field = "open_channel.purpose";
      return rd.Str(o->purpose(), &u.open_channel.purpose);
    }
    case CAPSA_MSG_INTERFACE: {
      // The payload is checked by the channel, which knows the interfaces.
      auto i = env->body_as_InterfaceMessage();
      u.iface.index = i->iface();
      u.iface.id = i->message();
      rd.Bytes(i->payload(), &u.iface.payload);
      return true;
    }
    default:
      capsa__bad(rd.reason, rd.reason_size, "unknown message type %u",
                 static_cast<unsigned>(m->type));
      return false;
  }
}

}  // namespace

extern "C" int capsa_msg_encode(const capsa_msg_t *msg, uint8_t *buf,
                                size_t cap) {
  if (msg == nullptr || buf == nullptr) return -EINVAL;
  if (msg->handle_count > CAPSA_IPC_MAX_HANDLES) return -EINVAL;
  if (capsa_msg_validate(msg, nullptr, 0) < 0) return -EINVAL;
  Builder b(1024);
  g_string_too_long = false;
  auto body = EncodeBody(b, msg);
  if (body.IsNull() || g_string_too_long) return -EINVAL;
  std::vector<fb::HandleDecl> decls;
  decls.reserve(msg->handle_count);
  for (uint32_t i = 0; i < msg->handle_count; i++) {
    const capsa_handle_t &h = msg->handles[i];
    decls.emplace_back(static_cast<fb::HandleKind>(h.kind), h.writable,
                       h.rights.cr_rights[0], h.rights.cr_rights[1], h.size);
  }
  auto handles = msg->handle_count != 0
                     ? b.CreateVectorOfStructs(decls)
                     : decltype(b.CreateVectorOfStructs(decls))(0);
  auto env = fb::CreateEnvelope(b, CAPSA_IPC_VERSION, msg->flags,
                                msg->request_id, msg->seq, handles,
                                static_cast<fb::Body>(msg->type), body);
  fb::FinishEnvelopeBuffer(b, env);
  size_t len = b.GetSize();
  if (len > cap || len > CAPSA_IPC_MAX_MESSAGE) return -EMSGSIZE;
  memcpy(buf, b.GetBufferPointer(), len);
  return static_cast<int>(len);
}

extern "C" int capsa_msg_decode(const uint8_t *buf, size_t len,
                                capsa_msg_t *out, char *reason,
                                size_t reason_size) {
  capsa_msg_init(out, CAPSA_MSG_NONE);
  if (buf == nullptr || len < 8)
    return capsa__bad(reason, reason_size, "message of %zu bytes too short",
                      len);
  if (len > CAPSA_IPC_MAX_MESSAGE)
    return capsa__bad(reason, reason_size, "message of %zu bytes too long",
                      len);
  if (reinterpret_cast<uintptr_t>(buf) % 8 != 0)
    return capsa__bad(reason, reason_size, "misaligned buffer");
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 8;  // envelope > body > sandbox report > string
  opts.max_tables = 16;
  opts.check_alignment = true;
  opts.check_nested_flatbuffers = false;
  flatbuffers::Verifier v(buf, len, opts);
  if (!fb::VerifyEnvelopeBuffer(v))
    return capsa__bad(reason, reason_size, "flatbuffers verification failed");
  const fb::Envelope *env = fb::GetEnvelope(buf);
  if (env->version() != CAPSA_IPC_VERSION)
    return capsa__bad(reason, reason_size, "envelope version %u, expected %d",
                      env->version(), CAPSA_IPC_VERSION);
  uint32_t type = static_cast<uint32_t>(env->body_type());
  if (type == CAPSA_MSG_NONE || type >= CAPSA_MSG_TYPE_COUNT ||
      env->body() == nullptr)
    return capsa__bad(reason, reason_size, "unknown message type %u", type);
  out->type = static_cast<capsa_msg_type_t>(type);
  out->flags = env->flags();
  out->request_id = env->request_id();
  out->seq = env->seq();
  if (auto hs = env->handles()) {
    if (hs->size() > CAPSA_IPC_MAX_HANDLES)
      return capsa__bad(reason, reason_size, "%u handles declared (max %d)",
                        hs->size(), CAPSA_IPC_MAX_HANDLES);
    // flatbuffers 2.0.8's Verifier checks a vector's length word, not the
    // 8-byte alignment of its struct elements: a forged buffer could place
    // them misaligned. The builder never does.
    if (reinterpret_cast<uintptr_t>(hs->Data()) % alignof(fb::HandleDecl) != 0)
      return capsa__bad(reason, reason_size, "misaligned handle declarations");
    out->handle_count = hs->size();
    for (uint32_t i = 0; i < hs->size(); i++) {
      const fb::HandleDecl *d = hs->Get(i);
      capsa_handle_t &h = out->handles[i];
      h.fd = -1;
      h.kind = static_cast<capsa_handle_kind_t>(d->kind());
      h.writable = d->writable();
      h.rights.cr_rights[0] = d->rights0();
      h.rights.cr_rights[1] = d->rights1();
      h.size = d->size();
    }
  }
  Reader rd{reason, reason_size};
  if (!DecodeBody(env, out, rd)) return -EBADMSG;
  return capsa_msg_validate(out, reason, reason_size);
}
