// capsa_idlc: the generator of embedder interfaces (ipc/interface.h).
//
//   flatc --schema -b -I ROOT -o GEN thumbnail.fbs      # -> thumbnail.bfbs
//   capsa_idlc GEN/thumbnail.bfbs SCHEMA_LABEL OUT.h OUT.c INCLUDE_OF_OUT.h
//
// A build-time tool, not part of libcapsa. It reads flatc's binary schema
// with flatbuffers' reflection (so the schema is parsed by flatc itself, the
// same parser and version that builds capsa's own protocol) and writes plain
// C: the message structs and ids, an init function per message (schema
// defaults) and the descriptor that ipc/interface.cc encodes, verifies and
// checks from. Everything the runtime enforces comes from the schema; a
// schema the runtime cannot enforce (a type it does not carry, a handle
// without rights, a rule on the wrong type) is refused here, with the field
// named, so a mistake fails the build rather than weakening a check. Each
// refusal also says what to write instead, with an example in schema syntax
// (tests/ipc/interface_test.cc checks one of each).
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <flatbuffers/reflection.h>

namespace {

using reflection::BaseType;

[[noreturn]] void Fail(const std::string &what) {
  fprintf(stderr, "capsa_idlc: %s\n", what.c_str());
  exit(1);
}

// `list` as "a, b or c".
template <size_t N>
std::string OneOf(const char *(&list)[N]) {
  std::string o;
  for (size_t i = 0; i < N; i++)
    o += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + list[i];
  return o;
}

// The field's name as written in the schema: "Surface.width" -> "width".
std::string FieldOf(const std::string &where) {
  size_t dot = where.rfind('.');
  return dot == std::string::npos ? where : where.substr(dot + 1);
}

std::map<std::string, std::string> Attrs(
    const flatbuffers::Vector<flatbuffers::Offset<reflection::KeyValue>> *kv) {
  std::map<std::string, std::string> m;
  if (!kv) return m;
  for (const auto *a : *kv)
    m[a->key()->str()] = a->value() ? a->value()->str() : "";
  return m;
}

std::string Snake(const std::string &s) {
  std::string o;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (isupper(static_cast<unsigned char>(c))) {
      if (i &&
          (islower(static_cast<unsigned char>(s[i - 1])) ||
           (i + 1 < s.size() && islower(static_cast<unsigned char>(s[i + 1])))))
        o += '_';
      o += static_cast<char>(tolower(c));
    } else if (c == '.') {
      o += '_';
    } else {
      o += c;
    }
  }
  return o;
}

std::string Upper(const std::string &s) {
  std::string o = s;
  for (char &c : o)
    c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return o;
}

bool ParseInt(const std::string &s, long long *v) {
  if (s.empty()) return false;
  char *end = nullptr;
  errno = 0;
  *v = strtoll(s.c_str(), &end, 0);
  return errno == 0 && end && *end == 0;
}

struct TypeInfo {
  const char *kind;   // CAPSA_IFIELD_*
  const char *fbs;    // the schema's name of the type
  const char *ctype;  // C declaration
  long long min;
  long long max;
  unsigned long long umax;
  bool is_int;
  bool is_unsigned;
};

TypeInfo ScalarInfo(BaseType t) {
  switch (t) {
    case BaseType::Bool:
      return {"CAPSA_IFIELD_BOOL", "bool", "bool", 0, 1, 1, true, true};
    case BaseType::Byte:
      return {"CAPSA_IFIELD_I8", "byte", "int8_t", INT8_MIN,
              INT8_MAX,          0,      true,     false};
    case BaseType::UByte:
      return {"CAPSA_IFIELD_U8", "ubyte",   "uint8_t", 0,
              UINT8_MAX,         UINT8_MAX, true,      true};
    case BaseType::Short:
      return {"CAPSA_IFIELD_I16", "short", "int16_t", INT16_MIN,
              INT16_MAX,          0,       true,      false};
    case BaseType::UShort:
      return {"CAPSA_IFIELD_U16", "ushort",   "uint16_t", 0,
              UINT16_MAX,         UINT16_MAX, true,       true};
    case BaseType::Int:
      return {"CAPSA_IFIELD_I32", "int", "int32_t", INT32_MIN,
              INT32_MAX,          0,     true,      false};
    case BaseType::UInt:
      return {"CAPSA_IFIELD_U32", "uint",     "uint32_t", 0,
              UINT32_MAX,         UINT32_MAX, true,       true};
    case BaseType::Long:
      return {"CAPSA_IFIELD_I64", "long", "int64_t", INT64_MIN,
              INT64_MAX,          0,      true,      false};
    case BaseType::ULong:
      return {"CAPSA_IFIELD_U64", "ulong",    "uint64_t", 0,
              INT64_MAX,          UINT64_MAX, true,       true};
    case BaseType::Float:
      return {"CAPSA_IFIELD_F32", "float", "float", 0, 0, 0, false, false};
    case BaseType::Double:
      return {"CAPSA_IFIELD_F64", "double", "double", 0, 0, 0, false, false};
    default:
      return {nullptr, nullptr, nullptr, 0, 0, 0, false, false};
  }
}

struct Field {
  std::string name, kind, ctype, comment;
  uint16_t slot = 0, id = 0;
  bool required = false;
  long long min = 0, max = 0, def = 0;
  unsigned long long umax = 0;
  double fdef = 0;
  unsigned max_len = 0;
  std::string handle_kind = "CAPSA_HANDLE_NONE";
  bool writable = false;
  bool text = false;
  std::vector<std::string> rights;
  unsigned long long max_size = 0;
  std::vector<std::string> doc;
};

struct Message {
  std::string name, snake, kind, from, reply_name;
  uint32_t id = 0, reply = 0;
  std::vector<Field> fields;
  std::vector<std::string> doc;
};

const char *kMessageAttrs[] = {"capsa_request", "capsa_response", "capsa_event",
                               "capsa_from"};
const char *kFieldAttrs[] = {
    "capsa_min",      "capsa_max",      "capsa_max_len",
    "capsa_handle",   "capsa_rights",   "capsa_writable",
    "capsa_max_size", "capsa_required", "capsa_text"};

template <size_t N>
bool Known(const std::string &k, const char *(&list)[N]) {
  for (const char *a : list)
    if (k == a) return true;
  return false;
}

std::vector<std::string> Split(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> Doc(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>> *d) {
  std::vector<std::string> out;
  if (d)
    for (const auto *s : *d) out.push_back(s->str());
  return out;
}

Field MakeField(const Message &m, const reflection::Field *rf) {
  Field f;
  f.name = rf->name()->str();
  std::string where = m.name + "." + f.name;
  f.slot = rf->offset();
  f.id = rf->id();
  f.doc = Doc(rf->documentation());
  auto at = Attrs(rf->attributes());
  for (const auto &kv : at)
    if (kv.first.rfind("capsa_", 0) == 0 && !Known(kv.first, kFieldAttrs))
      Fail(where + ": unknown attribute " + kv.first + ": a field takes " +
           OneOf(kFieldAttrs) +
           " (ipc/interface/capsa_attributes.fbs); remove it or fix its "
           "spelling, e.g. `" +
           FieldOf(where) + ": uint (capsa_min: \"1\", capsa_max: \"4096\");`");
  BaseType bt = rf->type()->base_type();
  bool handle = at.count("capsa_handle") != 0;
  f.text = at.count("capsa_text") != 0;
  if (f.text && bt != BaseType::String)
    Fail(where +
         ": capsa_text applies to strings: declare the field a string, e.g. "
         "`" +
         FieldOf(where) +
         ": string (capsa_text, capsa_max_len: \"256\");`, or remove "
         "capsa_text ([ubyte] carries any bytes)");
  f.required = rf->required() || at.count("capsa_required");
  std::ostringstream c;
  if (handle) {
    if (bt != BaseType::UByte)
      Fail(where +
           ": a capsa_handle field must be declared ubyte (its value is the "
           "handle's index), e.g. `" +
           FieldOf(where) +
           ": ubyte (capsa_handle: \"shm\", capsa_rights: \"read,mmap_r\", "
           "capsa_max_size: \"1048576\");`");
    const std::string &k = at["capsa_handle"];
    if (k == "shm")
      f.handle_kind = "CAPSA_HANDLE_SHM";
    else if (k == "file")
      f.handle_kind = "CAPSA_HANDLE_FILE";
    else if (k == "channel")
      f.handle_kind = "CAPSA_HANDLE_CHANNEL";
    else
      Fail(where + ": capsa_handle must be shm, file or channel, not '" + k +
           "': write capsa_handle: \"shm\" (shared memory), \"file\" (a "
           "read-only file) or \"channel\" (a capsa channel)");
    if (!at.count("capsa_rights") || Split(at["capsa_rights"]).empty())
      Fail(where +
           ": a handle needs capsa_rights (the widest a sender may "
           "declare): add the CAPSA_CAP_* names it may carry, lower case "
           "without the prefix, e.g. `" +
           FieldOf(where) + ": ubyte (capsa_handle: \"" + k +
           "\", capsa_rights: \"read,mmap_r\"" +
           (k == "channel" ? "" : ", capsa_max_size: \"1048576\"") + ");`");
    for (const std::string &r : Split(at["capsa_rights"])) {
      for (char ch : r)
        if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_')
          Fail(where + ": bad right name '" + r +
               "': rights are CAPSA_CAP_* names in lower case without the "
               "prefix (letters, digits, _), separated by commas, e.g. "
               "capsa_rights: \"read,mmap_r,fstat\"");
      f.rights.push_back("CAPSA_CAP_" + Upper(r));
    }
    f.writable = at.count("capsa_writable") != 0;
    if (f.writable && k != "shm")
      Fail(where +
           ": only shm handles may be capsa_writable: remove "
           "capsa_writable, or make it shared memory, e.g. `" +
           FieldOf(where) +
           ": ubyte (capsa_handle: \"shm\", capsa_writable, capsa_rights: "
           "\"read,write,mmap_rw\", capsa_max_size: \"1048576\");`");
    if (at.count("capsa_max_size")) {
      long long v;
      if (!ParseInt(at["capsa_max_size"], &v) || v <= 0)
        Fail(where + ": capsa_max_size must be a positive integer, not '" +
             at["capsa_max_size"] +
             "': the largest size in bytes a sender may declare, in decimal "
             "or 0x hex, e.g. capsa_max_size: \"1048576\"");
      f.max_size = static_cast<unsigned long long>(v);
    } else if (k == "shm" || k == "file") {
      Fail(where + ": a " + k +
           " handle needs capsa_max_size (the largest size in bytes a "
           "sender may declare): add it, e.g. `" +
           FieldOf(where) + ": ubyte (capsa_handle: \"" + k +
           "\", capsa_rights: \"" + at["capsa_rights"] +
           "\", capsa_max_size: \"1048576\");`");
    }
    if (at.count("capsa_min") || at.count("capsa_max") ||
        at.count("capsa_max_len"))
      Fail(where +
           ": ranges and lengths do not apply to a handle: remove "
           "capsa_min, capsa_max and capsa_max_len from it; its size is "
           "bounded by capsa_max_size, e.g. capsa_max_size: \"1048576\"");
    f.kind = "CAPSA_IFIELD_HANDLE";
    f.ctype = "int32_t";
    c << "handle index, -1: none; " << k
      << (f.writable ? ", may be writable" : ", read-only");
    if (f.max_size) c << ", at most " << f.max_size << " bytes";
    c << "; rights within " << at["capsa_rights"];
  } else if (bt == BaseType::String ||
             (bt == BaseType::Vector &&
              rf->type()->element() == BaseType::UByte)) {
    bool str = bt == BaseType::String;
    f.kind = str ? "CAPSA_IFIELD_STRING" : "CAPSA_IFIELD_BYTES";
    f.ctype = str ? "const char *" : "capsa_bytes_t";
    f.max_len = str ? 4096 : 65536;  // CAPSA_IPC_MAX_STRING, _MESSAGE
    if (at.count("capsa_max_len")) {
      long long v;
      if (!ParseInt(at["capsa_max_len"], &v) || v <= 0 || v > 65536)
        Fail(where + ": capsa_max_len must be 1..65536, not '" +
             at["capsa_max_len"] + "': the most bytes accepted, e.g. `" +
             FieldOf(where) + ": " + (str ? "string" : "[ubyte]") +
             " (capsa_max_len: \"256\");`");
      f.max_len = static_cast<unsigned>(v);
    }
    if (at.count("capsa_min") || at.count("capsa_max"))
      Fail(where + ": capsa_min/capsa_max apply to integers: bound a " +
           (str ? "string" : "[ubyte]") +
           "'s length with capsa_max_len instead, e.g. `" + FieldOf(where) +
           ": " + (str ? "string" : "[ubyte]") + " (capsa_max_len: \"256\");`");
    c << (str ? "string, NULL: absent" : "bytes, len 0: absent") << "; at most "
      << f.max_len << " bytes";
    if (f.text) c << "; text (UTF-8, no controls or format characters)";
  } else {
    TypeInfo ti = ScalarInfo(bt);
    if (!ti.kind)
      Fail(where +
           ": type not carried by capsa interfaces (scalars, string, "
           "[ubyte] and ubyte handles are): declare it as one of those, "
           "e.g. `" +
           FieldOf(where) +
           ": [ubyte] (capsa_max_len: \"4096\");` for data you encode "
           "yourself, or one field per element or member");
    if (at.count("capsa_required"))
      Fail(where +
           ": capsa_required applies to strings, bytes and handles "
           "(a scalar equal to its default is not sent): remove it and "
           "give the field a default that means \"not given\", e.g. `" +
           FieldOf(where) + ": " + ti.fbs + " = " +
           (ti.is_unsigned ? "0" : "-1") + ";`");
    if (at.count("capsa_max_len"))
      Fail(where +
           ": capsa_max_len applies to strings and [ubyte]: bound "
           "the field with capsa_min/capsa_max instead, e.g. `" +
           FieldOf(where) + ": " + ti.fbs +
           (ti.is_int ? " (capsa_min: \"0\", capsa_max: \"100\");`"
                      : ";` (floats are checked finite, not ranged)"));
    f.kind = ti.kind;
    f.ctype = ti.ctype;
    f.min = ti.min;
    f.max = ti.max;
    f.umax = ti.umax;
    f.def = rf->default_integer();
    f.fdef = rf->default_real();
    if (!ti.is_int && (at.count("capsa_min") || at.count("capsa_max")))
      Fail(where + ": capsa_min/capsa_max apply to integers, not " + ti.fbs +
           " (floats are only checked finite): remove them, or carry an "
           "integer (e.g. thousandths) and range it, e.g. `" +
           FieldOf(where) +
           "_milli: int (capsa_min: \"0\", capsa_max: \"1000\");`");
    long long v;
    // The type's range as written ("0..4294967295"), for the messages.
    // (ti.max: ulong's bounds are read as int64, so that is what is taken.)
    std::string range = std::to_string(ti.min) + ".." + std::to_string(ti.max);
    if (at.count("capsa_min")) {
      if (!ParseInt(at["capsa_min"], &v) || v < ti.min ||
          (ti.is_unsigned && v < 0))
        Fail(where + ": capsa_min '" + at["capsa_min"] +
             "' is not an integer in " + ti.fbs + "'s range " + range +
             ": write one in it, in decimal or 0x hex, e.g. `" +
             FieldOf(where) + ": " + ti.fbs + " (capsa_min: \"" +
             std::to_string(ti.is_unsigned ? 0 : ti.min) +
             "\");`, or widen "
             "the field's type");
      f.min = v;
    }
    if (at.count("capsa_max")) {
      bool parsed = ParseInt(at["capsa_max"], &v);
      if (!parsed || (!ti.is_unsigned && v > ti.max) ||
          (ti.is_unsigned &&
           (v < 0 || static_cast<unsigned long long>(v) > ti.umax)))
        Fail(where + ": capsa_max '" + at["capsa_max"] +
             "' is not an integer in " + ti.fbs + "'s range " + range +
             ": write one in it, in decimal or 0x hex, e.g. `" +
             FieldOf(where) + ": " + ti.fbs + " (capsa_max: \"" +
             std::to_string(ti.max) + "\");`, or widen the field's type");
      if (v < f.min)
        Fail(where + ": capsa_max " + std::to_string(v) +
             " is below capsa_min " + std::to_string(f.min) +
             ": the range is capsa_min..capsa_max, so swap them or raise "
             "capsa_max, e.g. `" +
             FieldOf(where) + ": " + ti.fbs + " = " + std::to_string(f.min) +
             " (capsa_min: \"" + std::to_string(f.min) + "\", capsa_max: \"" +
             std::to_string(f.min) + "\");`");
      f.max = v;
      if (ti.is_unsigned) f.umax = static_cast<unsigned long long>(v);
    }
    if (ti.is_int) {
      bool def_ok = ti.is_unsigned
                        ? (f.def >= f.min &&
                           static_cast<unsigned long long>(f.def) <= f.umax)
                        : (f.def >= f.min && f.def <= f.max);
      if (!def_ok) {
        std::string lo =
            std::to_string(ti.is_unsigned && f.min < 0 ? 0 : f.min);
        std::string hi =
            ti.is_unsigned ? std::to_string(f.umax) : std::to_string(f.max);
        std::string attrs;
        if (at.count("capsa_min"))
          attrs += "capsa_min: \"" + at["capsa_min"] + "\"";
        if (at.count("capsa_max"))
          attrs += (attrs.empty() ? "" : ", ") + std::string("capsa_max: \"") +
                   at["capsa_max"] + "\"";
        Fail(where + ": the default " + std::to_string(f.def) +
             " is outside capsa_min..capsa_max (" + lo + ".." + hi +
             "): a field without `= N` defaults to 0, and the default is "
             "what an unset field reads as, so it must pass the check: give "
             "the field a default inside the range, e.g. `" +
             FieldOf(where) + ": " + ti.fbs + " = " + lo + " (" + attrs +
             ");`");
      }
      if (at.count("capsa_min") || at.count("capsa_max")) {
        c << (ti.is_unsigned ? std::to_string(f.min < 0 ? 0 : f.min)
                             : std::to_string(f.min))
          << ".."
          << (ti.is_unsigned ? std::to_string(f.umax) : std::to_string(f.max));
      }
      if (f.def) c << (c.tellp() > 0 ? ", " : "") << "default " << f.def;
    } else {
      c << "finite";
      if (f.fdef != 0) c << ", default " << f.fdef;
    }
  }
  if (f.required) c << "; required";
  f.comment = c.str();
  return f;
}

struct Iface {
  std::string name, prefix, upper;
  std::vector<Message> messages;
};

Iface Read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    Fail("cannot read " + path + ": " + strerror(errno) +
         ": pass the .bfbs flatc wrote, e.g. `flatc --schema -b -o GEN "
         "NAME.fbs` then `capsa_idlc GEN/NAME.bfbs ...` (capsa-idl does "
         "both)");
  std::string buf((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  flatbuffers::Verifier v(reinterpret_cast<const uint8_t *>(buf.data()),
                          buf.size());
  if (!reflection::VerifySchemaBuffer(v))
    Fail(path +
         ": not a flatc binary schema (.bfbs): pass what `flatc --schema -b "
         "NAME.fbs` writes (NAME.bfbs), not the .fbs source (capsa-idl "
         "SCHEMA.fbs OUTDIR runs flatc for you)");
  const reflection::Schema *s = reflection::GetSchema(buf.data());
  const reflection::Enum *un = nullptr;
  for (const auto *e : *s->enums()) {
    auto at = Attrs(e->attributes());
    if (!at.count("capsa_interface")) continue;
    if (!e->is_union())
      Fail(e->name()->str() +
           ": capsa_interface goes on a union: put it on the union that "
           "lists the messages, e.g. `union Messages (capsa_interface) { "
           "Decode, DecodeDone }`, and remove it from the enum");
    if (un)
      Fail("two unions with capsa_interface: " + un->name()->str() + ", " +
           e->name()->str() +
           ": a schema is one interface: keep capsa_interface on one union "
           "and move the other's messages into it, or into a schema of its "
           "own");
    un = e;
  }
  if (!un)
    Fail(path +
         ": no union with the capsa_interface attribute: list the "
         "interface's messages (tables) in a union marked so, e.g. `union "
         "Messages (capsa_interface) { Decode, DecodeDone }`");
  Iface f;
  std::string full = un->name()->str();
  size_t dot = full.rfind('.');
  if (dot == std::string::npos)
    Fail(full +
         ": an interface needs a namespace (its name): add `namespace "
         "NAME;` (e.g. `namespace thumb;`) before the tables and the union");
  f.name = full.substr(0, dot);
  if (f.name.size() > 64)
    Fail(f.name + ": interface name over 64 bytes (" +
         std::to_string(f.name.size()) +
         "): shorten the schema's `namespace` line, e.g. `namespace "
         "thumb;`");
  f.prefix = Snake(f.name);
  f.upper = Upper(f.prefix);
  std::map<std::string, uint32_t> ids;
  for (const auto *ev : *un->values()) {
    if (ev->value() == 0) continue;  // NONE
    const reflection::Type *ut = ev->union_type();
    if (!ut || ut->base_type() != BaseType::Obj || ut->index() < 0)
      Fail(full +
           ": every member must be a table: list only tables in the union "
           "(a struct, string or vector is a field of a table, e.g. `table "
           "Decode (capsa_request: \"DecodeDone\", capsa_from: \"host\") { "
           "width: uint; }`)");
    const reflection::Object *o = s->objects()->Get(ut->index());
    if (o->is_struct())
      Fail(o->name()->str() +
           ": a message must be a table: declare it with `table`, not "
           "`struct`, e.g. `table " +
           o->name()->str().substr(o->name()->str().rfind('.') + 1) +
           " (capsa_event, capsa_from: \"host\") { ... }`");
    Message m;
    std::string oname = o->name()->str();
    if (oname.compare(0, f.name.size() + 1, f.name + ".") != 0)
      Fail(oname + ": a message must be in the interface's namespace (" +
           f.name + "): declare the table after `namespace " + f.name +
           ";`, in the same schema as the union");
    m.name = oname.substr(f.name.size() + 1);
    m.snake = Snake(m.name);
    m.id = static_cast<uint32_t>(ev->value());
    if (m.id != f.messages.size() + 1)
      Fail(full +
           ": member values must be 1, 2, 3... (no gaps; they are the "
           "message ids): remove the explicit values (`A = 5`) from the "
           "union's members, or number them from 1, e.g. `union M "
           "(capsa_interface) { A = 1, B = 2 }`");
    m.doc = Doc(o->documentation());
    auto at = Attrs(o->attributes());
    for (const auto &kv : at)
      if (kv.first.rfind("capsa_", 0) == 0 && !Known(kv.first, kMessageAttrs))
        Fail(m.name + ": unknown attribute " + kv.first + ": a message takes " +
             OneOf(kMessageAttrs) +
             "; remove it or fix its spelling, e.g. `table " + m.name +
             " (capsa_event, capsa_from: \"host\") { ... }`");
    int kinds = (int)at.count("capsa_request") +
                (int)at.count("capsa_response") + (int)at.count("capsa_event");
    if (kinds != 1)
      Fail(m.name +
           ": exactly one of capsa_request, capsa_response, "
           "capsa_event (found " +
           std::to_string(kinds) + "): say what the message is, e.g. `table " +
           m.name + " (capsa_request: \"" + m.name +
           "Done\", capsa_from: \"host\")` for a request answered by "
           "table " +
           m.name + "Done, or `(capsa_event, capsa_from: \"renderer\")`");
    if (at.count("capsa_request")) {
      m.kind = "CAPSA_IMSG_REQUEST";
      m.reply_name = at["capsa_request"];
      if (m.reply_name.empty())
        Fail(m.name +
             ": capsa_request names its response table: give the name of "
             "a capsa_response table of the union, e.g. `table " +
             m.name + " (capsa_request: \"" + m.name +
             "Done\", capsa_from: \"host\")`");
    } else {
      m.kind = at.count("capsa_response") ? "CAPSA_IMSG_RESPONSE"
                                          : "CAPSA_IMSG_EVENT";
    }
    bool has_from = at.count("capsa_from") != 0;
    const std::string &from = at["capsa_from"];
    if (from == "host")
      m.from = "CAPSA_IFROM_HOST";
    else if (from == "renderer")
      m.from = "CAPSA_IFROM_RENDERER";
    else if (from == "any")
      m.from = "CAPSA_IFROM_HOST | CAPSA_IFROM_RENDERER";
    else
      Fail(m.name + ": capsa_from must be host, renderer or any" +
           (has_from ? ", not '" + from + "'"
                     : std::string(", and is missing")) +
           ": say who may send it, e.g. `table " + m.name +
           " (capsa_event, capsa_from: \"host\")` (\"renderer\": only "
           "renderers; \"any\": both)");
    std::vector<const reflection::Field *> rfs;
    for (const auto *rf : *o->fields())
      if (!rf->deprecated()) rfs.push_back(rf);
    std::sort(rfs.begin(), rfs.end(),
              [](auto *a, auto *b) { return a->id() < b->id(); });
    if (rfs.size() > 64)
      Fail(m.name + ": more than 64 fields (" + std::to_string(rfs.size()) +
           "): split it into two messages, or group rarely used fields "
           "into a [ubyte] field you encode yourself");
    size_t handles = 0;
    for (const auto *rf : rfs) {
      m.fields.push_back(MakeField(m, rf));
      handles += m.fields.back().kind == "CAPSA_IFIELD_HANDLE";
    }
    if (handles > 8)
      Fail(m.name + ": more than 8 handle fields (" + std::to_string(handles) +
           "; a message carries at most 8 descriptors): split it into "
           "messages of 8 handles or fewer, or share one region (shm) "
           "holding what several would");
    ids[m.name] = m.id;
    f.messages.push_back(m);
  }
  if (f.messages.empty())
    Fail(full +
         ": no messages: list at least one table in the union, e.g. "
         "`union " +
         full.substr(full.rfind('.') + 1) + " (capsa_interface) { Ping }`");
  for (Message &m : f.messages) {
    if (m.kind != "CAPSA_IMSG_REQUEST") continue;
    auto it = ids.find(m.reply_name);
    if (it == ids.end())
      Fail(m.name + ": response " + m.reply_name + " is not in " + full +
           ": add table " + m.reply_name +
           " to the union's members, or name one that is there in "
           "capsa_request, e.g. `table " +
           m.reply_name +
           " (capsa_response, capsa_from: \"renderer\") { "
           "... }` and `union ... { " +
           m.name + ", " + m.reply_name + " }`");
    if (f.messages[it->second - 1].kind != "CAPSA_IMSG_RESPONSE")
      Fail(m.name + ": " + m.reply_name +
           " is not a capsa_response: mark it as the answer, e.g. `table " +
           m.reply_name + " (capsa_response, capsa_from: \"renderer\")`, " +
           "or name a capsa_response table in " + m.name + "'s capsa_request");
    m.reply = it->second;
  }
  return f;
}

void Comment(std::ostream &o, const std::vector<std::string> &doc,
             const char *indent) {
  for (const std::string &d : doc) o << indent << "//" << d << "\n";
}

std::string Guard(const std::string &inc) {
  std::string g = "CAPSA_GEN_";
  for (char c : inc)
    g += isalnum(static_cast<unsigned char>(c))
             ? static_cast<char>(toupper(static_cast<unsigned char>(c)))
             : '_';
  return g + "_";
}

void WriteHeader(const Iface &f, const std::string &schema,
                 const std::string &include, bool sdk, std::ostream &o) {
  std::string g = Guard(include);
  o << "// Generated by build/idl/capsa_idlc from " << schema
    << ". Do not edit:\n// change the schema. Interface \"" << f.name
    << "\" (ipc/interface.h).\n";
  o << "#ifndef " << g << "\n#define " << g << "\n\n";
  o << "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n";
  // In the tree the runtime's header is a repository path; from an
  // installed SDK (capsa-idl) it is <capsa/interface.h>.
  o << (sdk ? "#include <capsa/interface.h>\n\n"
            : "#include \"ipc/interface.h\"\n\n");
  o << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  o << "// Message ids: the order of the schema's capsa_interface union.\n";
  o << "enum {\n";
  for (const Message &m : f.messages)
    o << "  " << f.upper << "_" << Upper(m.snake) << " = " << m.id << ",\n";
  o << "};\n\n";
  for (const Message &m : f.messages) {
    Comment(o, m.doc, "");
    o << "// " << m.name << ": "
      << (m.kind == "CAPSA_IMSG_REQUEST"
              ? "request, answered by " + m.reply_name
          : m.kind == "CAPSA_IMSG_RESPONSE" ? std::string("response")
                                            : std::string("event"))
      << "; sent by "
      << (m.from == "CAPSA_IFROM_HOST"       ? "the host"
          : m.from == "CAPSA_IFROM_RENDERER" ? "a renderer"
                                             : "either side")
      << ".\n";
    std::string t = f.prefix + "_" + m.snake;
    o << "typedef struct " << t << " {\n";
    if (m.fields.empty()) o << "  char unused_;  // no fields\n";
    for (const Field &fl : m.fields) {
      Comment(o, fl.doc, "  ");
      std::string decl = fl.ctype;
      if (decl.back() != '*') decl += " ";
      o << "  " << decl << fl.name << ";";
      if (!fl.comment.empty()) o << "  // " << fl.comment;
      o << "\n";
    }
    o << "} " << t << "_t;\n\n";
  }
  o << "extern const capsa_interface_t " << f.prefix << "_interface;\n\n";
  for (const Message &m : f.messages) {
    std::string t = f.prefix + "_" + m.snake;
    std::string id = f.upper + "_" + Upper(m.snake);
    o << "// Every field of *m at its schema default (handles -1, strings "
         "NULL).\n";
    o << "void " << t << "_init(" << t << "_t *m);\n";
    o << "static inline int " << t << "_encode(const " << t
      << "_t *m, const capsa_handle_t *handles, uint32_t nhandles, uint8_t "
         "*buf, size_t cap, char *reason, size_t reason_size) {\n"
      << "  return capsa_iface_encode(&" << f.prefix << "_interface, " << id
      << ", m, handles, nhandles, buf, cap, reason, reason_size);\n}\n";
    o << "static inline int " << t
      << "_decode(const uint8_t *buf, size_t len, const capsa_handle_t "
         "*handles, uint32_t nhandles, "
      << t << "_t *out, char *reason, size_t reason_size) {\n"
      << "  return capsa_iface_decode(&" << f.prefix << "_interface, " << id
      << ", buf, len, handles, nhandles, out, reason, reason_size);\n}\n\n";
  }
  o << "#ifdef __cplusplus\n}\n#endif\n\n#endif  // " << g << "\n";
}

std::string Rights(const Field &fl, int word) {
  std::ostringstream o;
  o << "CAPSA_CAPRIGHT(" << word << ", 0)";
  for (const std::string &r : fl.rights)
    o << " | CAPSA_IFACE_RIGHT_WORD(" << r << ", " << word << ")";
  return o.str();
}

std::string Int64(long long v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v) + "LL";
}

void WriteSource(const Iface &f, const std::string &schema,
                 const std::string &include, std::ostream &o) {
  o << "// Generated by build/idl/capsa_idlc from " << schema
    << ". Do not edit.\n";
  o << "#include \"" << include << "\"\n\n#include <stddef.h>\n\n";
  for (const Message &m : f.messages) {
    std::string t = f.prefix + "_" + m.snake;
    if (m.fields.empty()) continue;
    o << "static const capsa_ifield_t k_" << m.snake << "_fields[] = {\n";
    for (const Field &fl : m.fields) {
      o << "    {.name = \"" << fl.name << "\", .type = " << fl.kind
        << ", .slot = " << fl.slot << ", .offset = offsetof(" << t << "_t, "
        << fl.name << "), .required = " << (fl.required ? "true" : "false")
        << ", .min = " << Int64(fl.min) << ", .max = " << Int64(fl.max)
        << ", .umax = " << fl.umax << "ULL, .def = " << Int64(fl.def)
        << ", .fdef = " << fl.fdef << ", .max_len = " << fl.max_len
        << ", .handle_kind = " << fl.handle_kind
        << ", .handle_writable = " << (fl.writable ? "true" : "false");
      if (!fl.rights.empty())
        o << ", .handle_rights = {{" << Rights(fl, 0) << ", " << Rights(fl, 1)
          << "}}";
      o << ", .handle_max_size = " << fl.max_size << "ULL";
      if (fl.text) o << ", .text = true";
      o << "},\n";
    }
    o << "};\n\n";
  }
  o << "static const capsa_imessage_t k_messages[] = {\n";
  for (const Message &m : f.messages) {
    size_t nh = 0;
    for (const Field &fl : m.fields) nh += fl.kind == "CAPSA_IFIELD_HANDLE";
    std::string t = f.prefix + "_" + m.snake;
    o << "    {.name = \"" << m.name << "\", .id = " << m.id
      << ", .kind = " << m.kind << ", .from = " << m.from
      << ", .reply = " << m.reply << ", .c_size = sizeof(" << t << "_t)"
      << ", .nfields = " << m.fields.size() << ", .nhandles = " << nh
      << ", .fields = "
      << (m.fields.empty() ? std::string("NULL") : "k_" + m.snake + "_fields")
      << "},\n";
  }
  o << "};\n\n";
  o << "const capsa_interface_t " << f.prefix << "_interface = {\n"
    << "    .name = \"" << f.name
    << "\",\n    .nmessages = " << f.messages.size()
    << ",\n    .messages = k_messages,\n};\n";
  for (const Message &m : f.messages) {
    std::string t = f.prefix + "_" + m.snake;
    o << "\nvoid " << t << "_init(" << t << "_t *m) {\n";
    o << "  *m = (" << t << "_t){0};\n";
    for (const Field &fl : m.fields) {
      if (fl.kind == "CAPSA_IFIELD_HANDLE")
        o << "  m->" << fl.name << " = -1;\n";
      else if (fl.kind == "CAPSA_IFIELD_BOOL" && fl.def)
        o << "  m->" << fl.name << " = true;\n";
      else if ((fl.kind == "CAPSA_IFIELD_F32" ||
                fl.kind == "CAPSA_IFIELD_F64") &&
               fl.fdef != 0)
        o << "  m->" << fl.name << " = " << fl.fdef << ";\n";
      else if (fl.def && fl.kind != "CAPSA_IFIELD_STRING" &&
               fl.kind != "CAPSA_IFIELD_BYTES")
        o << "  m->" << fl.name << " = " << Int64(fl.def) << ";\n";
    }
    o << "}\n";
  }
}

}  // namespace

int main(int argc, char **argv) {
  bool sdk = argc == 7 && strcmp(argv[6], "--sdk") == 0;
  if (argc != 6 && !sdk) {
    fprintf(stderr,
            "usage: capsa_idlc SCHEMA.bfbs SCHEMA_NAME OUT.h OUT.c "
            "INCLUDE_OF_OUT_H [--sdk]\n");
    return 2;
  }
  Iface f = Read(argv[1]);
  std::ostringstream h, c;
  h << std::setprecision(17);
  c << std::setprecision(17);
  WriteHeader(f, argv[2], argv[5], sdk, h);
  WriteSource(f, argv[2], argv[5], c);
  std::ofstream oh(argv[3]), oc(argv[4]);
  oh << h.str();
  oc << c.str();
  if (!oh || !oc)
    Fail(std::string("cannot write the outputs ") + argv[3] + ", " + argv[4] +
         ": " + strerror(errno) +
         ": make their directory exist and be writable (capsa-idl creates "
         "OUTDIR)");
  return 0;
}
