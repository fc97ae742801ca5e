// Operations on capsa_rights_t values (no descriptors involved), with
// FreeBSD's semantics: a right names its word in bits 57..61, so a right from
// one word can never be mistaken for one in the other.
#include <stdarg.h>
#include <string.h>

#include "sandbox/rights/rights.h"

// Word index (0 or 1) of `right`, or -1 for a value naming no single word.
static int word_of(uint64_t right) {
  int idx = CAPSA_CAPIDXBIT(right);
  if (CAPSA_CAPRVER(right) != CAPSA_RIGHTS_VERSION) return -1;
  if (idx == 1) return 0;
  if (idx == 2) return 1;
  return -1;
}

capsa_rights_t *capsa_rights_init_none(capsa_rights_t *rights) {
  rights->cr_rights[0] = CAPSA_CAPRIGHT(0, 0ULL);
  rights->cr_rights[1] = CAPSA_CAPRIGHT(1, 0ULL);
  return rights;
}

capsa_rights_t *capsa_rights_init_all(capsa_rights_t *rights) {
  rights->cr_rights[0] = CAPSA_CAP_ALL0;
  rights->cr_rights[1] = CAPSA_CAP_ALL1;
  return rights;
}

capsa_rights_t *capsa_rights_vset(capsa_rights_t *rights, va_list ap) {
  for (uint64_t r; (r = va_arg(ap, uint64_t)) != 0;) {
    int w = word_of(r);
    if (w >= 0) rights->cr_rights[w] |= r;
  }
  return rights;
}

capsa_rights_t *capsa_rights_vclear(capsa_rights_t *rights, va_list ap) {
  for (uint64_t r; (r = va_arg(ap, uint64_t)) != 0;) {
    int w = word_of(r);
    // Keep the word's index bits: only the right's own bits go.
    if (w >= 0) rights->cr_rights[w] &= ~(r & 0x01FFFFFFFFFFFFFFULL);
  }
  return rights;
}

bool capsa_rights_vis_set(const capsa_rights_t *rights, va_list ap) {
  bool all = true;
  for (uint64_t r; (r = va_arg(ap, uint64_t)) != 0;) {
    int w = word_of(r);
    if (w < 0 || (rights->cr_rights[w] & r) != r) all = false;
  }
  return all;
}

capsa_rights_t *capsa_rights_init_list(int version, capsa_rights_t *rights,
                                       ...) {
  (void)version;  // only version 0 exists
  capsa_rights_init_none(rights);
  va_list ap;
  va_start(ap, rights);
  capsa_rights_vset(rights, ap);
  va_end(ap);
  return rights;
}

capsa_rights_t *capsa_rights_set_list(capsa_rights_t *rights, ...) {
  va_list ap;
  va_start(ap, rights);
  capsa_rights_vset(rights, ap);
  va_end(ap);
  return rights;
}

capsa_rights_t *capsa_rights_clear_list(capsa_rights_t *rights, ...) {
  va_list ap;
  va_start(ap, rights);
  capsa_rights_vclear(rights, ap);
  va_end(ap);
  return rights;
}

bool capsa_rights_is_set_list(const capsa_rights_t *rights, ...) {
  va_list ap;
  va_start(ap, rights);
  bool all = capsa_rights_vis_set(rights, ap);
  va_end(ap);
  return all;
}

bool capsa_rights_is_empty(const capsa_rights_t *rights) {
  return (rights->cr_rights[0] & 0x01FFFFFFFFFFFFFFULL) == 0 &&
         (rights->cr_rights[1] & 0x01FFFFFFFFFFFFFFULL) == 0;
}

bool capsa_rights_is_valid(const capsa_rights_t *rights) {
  if (!rights) return false;
  if (CAPSA_CAPRVER(rights->cr_rights[0]) != CAPSA_RIGHTS_VERSION) return false;
  // Each word carries exactly its own index bit and only defined rights.
  if ((rights->cr_rights[0] & ~CAPSA_CAP_ALL0) != 0) return false;
  if ((rights->cr_rights[1] & ~CAPSA_CAP_ALL1) != 0) return false;
  return CAPSA_CAPIDXBIT(rights->cr_rights[0]) == 1 &&
         CAPSA_CAPIDXBIT(rights->cr_rights[1]) == 2;
}

capsa_rights_t *capsa_rights_merge(capsa_rights_t *dst,
                                   const capsa_rights_t *src) {
  dst->cr_rights[0] |= src->cr_rights[0];
  dst->cr_rights[1] |= src->cr_rights[1];
  return dst;
}

capsa_rights_t *capsa_rights_remove(capsa_rights_t *dst,
                                    const capsa_rights_t *src) {
  dst->cr_rights[0] &= ~(src->cr_rights[0] & 0x01FFFFFFFFFFFFFFULL);
  dst->cr_rights[1] &= ~(src->cr_rights[1] & 0x01FFFFFFFFFFFFFFULL);
  return dst;
}

bool capsa_rights_contains(const capsa_rights_t *big,
                           const capsa_rights_t *little) {
  return (big->cr_rights[0] & little->cr_rights[0]) == little->cr_rights[0] &&
         (big->cr_rights[1] & little->cr_rights[1]) == little->cr_rights[1];
}
