// What identifies an interface's version: a hash of everything its
// descriptor makes the runtime check (message names, ids, kinds, senders,
// pairing; each field's name, type, wire slot, limits, text rule, handle
// kind, widest rights). Comments and C layout are not part of it. Host and
// renderer compare the hash of their interface lists in HELLO
// (docs/interfaces.md).
#include <stdio.h>
#include <string.h>

#include "ipc/interface.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * FNV_PRIME;
  return h;
}

static uint64_t mix_u64(uint64_t h, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  return mix(h, b, sizeof b);
}

static uint64_t mix_str(uint64_t h, const char *s) {
  size_t n = s ? strlen(s) : 0;
  return mix(mix_u64(h, n), s ? s : "", n);
}

static uint64_t mix_field(uint64_t h, const capsa_ifield_t *f) {
  h = mix_str(h, f->name);
  uint64_t v[] = {(uint64_t)f->type,
                  f->slot,
                  f->required,
                  (uint64_t)f->min,
                  (uint64_t)f->max,
                  f->umax,
                  (uint64_t)f->def,
                  f->max_len,
                  (uint64_t)f->handle_kind,
                  f->handle_writable,
                  f->handle_rights.cr_rights[0],
                  f->handle_rights.cr_rights[1],
                  f->handle_max_size};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) h = mix_u64(h, v[i]);
  h = mix(h, &f->fdef, sizeof f->fdef);
  // Only when set: an interface without text fields keeps the hash it had
  // before the rule existed, so such peers still agree in HELLO.
  if (f->text) h = mix_str(h, "capsa_text");
  return h;
}

uint64_t capsa_iface_hash(const capsa_interface_t *iface) {
  if (iface == NULL) return 0;
  uint64_t h = mix_str(FNV_OFFSET, iface->name);
  h = mix_u64(h, iface->nmessages);
  for (uint32_t i = 0; i < iface->nmessages; i++) {
    const capsa_imessage_t *m = &iface->messages[i];
    h = mix_str(h, m->name);
    uint64_t v[] = {m->id, (uint64_t)m->kind, m->from, m->reply, m->nfields};
    for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) h = mix_u64(h, v[j]);
    for (uint32_t j = 0; j < m->nfields; j++) h = mix_field(h, &m->fields[j]);
  }
  return h;
}

uint64_t capsa_iface_list_hash(const capsa_interface_t *const *list,
                               unsigned n) {
  if (n == 0) return 0;  // speaks none: what an older peer sends
  uint64_t h = mix_u64(FNV_OFFSET, n);
  for (unsigned i = 0; i < n; i++) h = mix_u64(h, capsa_iface_hash(list[i]));
  return h;
}

int capsa_iface_list_names(const capsa_interface_t *const *list, unsigned n,
                           char *buf, size_t cap) {
  if (buf == NULL || cap == 0) return -1;
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned i = 0; i < n; i++) {
    int w = snprintf(buf + used, cap - used, "%s%s", i ? "," : "",
                     list[i] && list[i]->name ? list[i]->name : "?");
    if (w < 0 || (size_t)w >= cap - used) return -1;
    used += (size_t)w;
  }
  return (int)used;
}
