// A recorded capability-mode policy as bytes, for a process that shares no
// memory with the one that recorded it (an exec'd zygote). See
// sandbox/capmode/capmode.h, "Encoding".
//
// Layout (host byte order: both ends run the same binary):
//   u32 magic, u32 nextra, u32 nlaunch, u32 ndirs, u32 disabled,
//   u8 held_dirs, u8 trace, 2 bytes zero,
//   then nextra + nlaunch rows: i32 nr, u32 ncmp, 3 x {u32 arg, u32 op,
//   u64 mask, u64 value}, u32 reason length, the reason's bytes (no NUL).
// Directories travel as descriptors beside the bytes, in order.
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox/capmode/capmode.h"
#include "sandbox/capmode/capmode_internal.h"

#define WIRE_MAGIC 0x31575043u /* "CPW1" */
#define MAX_ROWS 4096
#define MAX_REASON 4096

struct wbuf {
  unsigned char *p;
  size_t len, off;
  bool overflow;
};

static void put(struct wbuf *w, const void *v, size_t n) {
  if (w->overflow || w->len - w->off < n) {
    w->overflow = true;
    return;
  }
  memcpy(w->p + w->off, v, n);
  w->off += n;
}

static void put_u32(struct wbuf *w, uint32_t v) {
  put(w, &v, sizeof v);
}
static void put_u64(struct wbuf *w, uint64_t v) {
  put(w, &v, sizeof v);
}

static void put_row(struct wbuf *w, const struct extra_row *r) {
  put_u32(w, (uint32_t)r->nr);
  put_u32(w, r->ncmp);
  for (unsigned i = 0; i < 3; i++) {
    put_u32(w, r->cmp[i].arg);
    put_u32(w, (uint32_t)r->cmp[i].op);
    put_u64(w, r->cmp[i].mask);
    put_u64(w, r->cmp[i].value);
  }
  size_t n = r->reason ? strlen(r->reason) : 0;
  put_u32(w, (uint32_t)n);
  put(w, r->reason, n);
}

ssize_t capsa_capmode_policy_encode(const capsa_capmode_policy *p, void *buf,
                                    size_t len, int *dirfds,
                                    unsigned max_dirfds, unsigned *ndirfds) {
  if (!p || !buf || !ndirfds || (max_dirfds && !dirfds)) return -EINVAL;
  if (p->compiled) return -EBUSY;
  if (p->ndirs > max_dirfds) return -E2BIG;
  // The recording process's environment decides tracing when the policy
  // does not: the decoding process has none of it.
  bool trace = p->trace;
  if (!p->trace_set) {
    const char *env = getenv("CAPSA_TRACE");
    trace = env && strcmp(env, "1") == 0;
  }
  struct wbuf w = {buf, len, 0, false};
  put_u32(&w, WIRE_MAGIC);
  put_u32(&w, p->nextra);
  put_u32(&w, p->nlaunch);
  put_u32(&w, p->ndirs);
  put_u32(&w, p->disabled);
  unsigned char flags[4] = {p->held_dirs, trace, 0, 0};
  put(&w, flags, sizeof flags);
  for (unsigned i = 0; i < p->nextra; i++) put_row(&w, &p->extra[i]);
  for (unsigned i = 0; i < p->nlaunch; i++) put_row(&w, &p->launch[i]);
  if (w.overflow) return -ENOSPC;
  for (unsigned i = 0; i < p->ndirs; i++) dirfds[i] = p->dirs[i];
  *ndirfds = p->ndirs;
  return (ssize_t)w.off;
}

struct rbuf {
  const unsigned char *p;
  size_t len, off;
  bool bad;
};

static void get(struct rbuf *r, void *v, size_t n) {
  if (r->bad || r->len - r->off < n) {
    r->bad = true;
    memset(v, 0, n);
    return;
  }
  memcpy(v, r->p + r->off, n);
  r->off += n;
}

static uint32_t get_u32(struct rbuf *r) {
  uint32_t v;
  get(r, &v, sizeof v);
  return v;
}

static uint64_t get_u64(struct rbuf *r) {
  uint64_t v;
  get(r, &v, sizeof v);
  return v;
}

static int get_row(struct rbuf *r, struct extra_row **rows, unsigned *n,
                   unsigned *cap) {
  int nr = (int)get_u32(r);
  unsigned ncmp = get_u32(r);
  struct capsa_arg_cmp cmp[3];
  for (unsigned i = 0; i < 3; i++) {
    cmp[i].arg = get_u32(r);
    cmp[i].op = (enum capsa_cmp_op)get_u32(r);
    cmp[i].mask = get_u64(r);
    cmp[i].value = get_u64(r);
  }
  uint32_t rlen = get_u32(r);
  if (r->bad || nr < 0 || ncmp > 3 || rlen == 0 || rlen > MAX_REASON ||
      r->len - r->off < rlen)
    return -EBADMSG;
  for (unsigned i = 0; i < ncmp; i++)
    if (cmp[i].arg > 5 || cmp[i].op < CAPSA_CMP_NE ||
        cmp[i].op > CAPSA_CMP_MASKED_EQ)
      return -EBADMSG;
  char reason[MAX_REASON + 1];
  get(r, reason, rlen);
  reason[rlen] = 0;
  if (memchr(reason, 0, rlen)) return -EBADMSG;
  return capsa__capmode_push_row(rows, n, cap, nr, cmp, ncmp, reason);
}

int capsa_capmode_policy_decode(const void *buf, size_t len, const int *dirfds,
                                unsigned ndirfds, capsa_capmode_policy **out) {
  if (!buf || !out || (ndirfds && !dirfds)) return -EINVAL;
  *out = NULL;
  struct rbuf r = {buf, len, 0, false};
  uint32_t magic = get_u32(&r);
  uint32_t nextra = get_u32(&r), nlaunch = get_u32(&r);
  uint32_t ndirs = get_u32(&r), disabled = get_u32(&r);
  unsigned char flags[4];
  get(&r, flags, sizeof flags);
  if (r.bad || magic != WIRE_MAGIC || nextra > MAX_ROWS || nlaunch > MAX_ROWS ||
      ndirs != ndirfds || (disabled & ~CAPSA_LAYER_ALL) || flags[0] > 1 ||
      flags[1] > 1)
    return -EBADMSG;
  capsa_capmode_policy *p = capsa_capmode_policy_new();
  if (!p) return -ENOMEM;
  int rc = 0;
  for (uint32_t i = 0; rc == 0 && i < nextra; i++)
    rc = get_row(&r, &p->extra, &p->nextra, &p->cap_extra);
  for (uint32_t i = 0; rc == 0 && i < nlaunch; i++)
    rc = get_row(&r, &p->launch, &p->nlaunch, &p->cap_launch);
  if (rc == 0 && r.off != r.len) rc = -EBADMSG;
  for (unsigned i = 0; rc == 0 && i < ndirfds; i++)
    rc = capsa_capmode_policy_allow_dir(p, dirfds[i]);
  if (rc == 0 && flags[0]) rc = capsa_capmode_policy_allow_held_dirs(p);
  if (rc == 0) rc = capsa_capmode_policy_set_trace(p, flags[1]);
  if (rc == 0 && disabled) rc = capsa_capmode_policy_disable_layer(p, disabled);
  if (rc < 0) {
    capsa_capmode_policy_free(p);
    return rc;
  }
  *out = p;
  return 0;
}
