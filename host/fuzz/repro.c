// capsa fuzz reproducers: in memory, files, recording (fuzz_repro.h).

#include "host/fuzz/repro.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ipc/codec.h"
#include "ipc/ipc_dump.h"

// --- reproducers in memory

void capsa__fz_repro_free(capsa__fz_repro_t *r) {
  free(r->rec);
  free(r->store);
  memset(r, 0, sizeof *r);
}

// A growable list of records with their bytes, built while parsing.
struct builder {
  capsa__fz_rec_t *rec;
  size_t nrec, caprec;
  uint8_t *store;
  size_t used, cap;
};

static int add_rec(struct builder *b, const capsa__fz_rec_t *in) {
  if (b->nrec >= CAPSA__FZ_MAX_RECORDS) return -E2BIG;
  if (b->nrec == b->caprec) {
    size_t n = b->caprec ? b->caprec * 2 : 64;
    capsa__fz_rec_t *p = realloc(b->rec, n * sizeof *p);
    if (p == NULL) return -ENOMEM;
    b->rec = p;
    b->caprec = n;
  }
  if (b->used + in->len > b->cap) {
    size_t n = b->cap ? b->cap : 65536;
    while (n < b->used + in->len) n *= 2;
    uint8_t *p = realloc(b->store, n);
    if (p == NULL) return -ENOMEM;
    b->store = p;
    b->cap = n;
  }
  capsa__fz_rec_t *r = &b->rec[b->nrec++];
  *r = *in;
  if (in->len) memcpy(b->store + b->used, in->data, in->len);
  r->data = (const uint8_t *)(uintptr_t)b->used;  // an offset until done
  b->used += in->len;
  return 0;
}

// Adds record i of an unfinished builder (whose data are offsets).
static int add_from(struct builder *b, const struct builder *from, size_t i) {
  capsa__fz_rec_t x = from->rec[i];
  x.data = from->store ? from->store + (uintptr_t)x.data : NULL;
  return add_rec(b, &x);
}

static void finish(struct builder *b, capsa__fz_repro_t *r) {
  for (size_t i = 0; i < b->nrec; i++)
    b->rec[i].data = b->store ? b->store + (uintptr_t)b->rec[i].data : NULL;
  r->rec = b->rec;
  r->nrec = b->nrec;
  r->store = b->store;
  memset(b, 0, sizeof *b);
}

static void builder_free(struct builder *b) {
  free(b->rec);
  free(b->store);
  memset(b, 0, sizeof *b);
}

// Parses one channel in CAPSA_IPC_DUMP's layout (as fuzz_host does: a short
// tail ends the input) into b, channel `ch`; *flags gets its flags byte.
static int parse_channel(const uint8_t *p, size_t n, unsigned ch,
                         uint8_t *flags, struct builder *b, size_t *count) {
  if (n == 0 || p[0] > CAPSA__DUMP_AUTO_HELLO) return -EINVAL;
  *flags = p[0];
  p++;
  n--;
  *count = 0;
  while (n >= 1) {
    capsa__fz_rec_t r = {.channel = (uint8_t)ch};
    r.nh = p[0] & 3u;
    p++;
    n--;
    unsigned made = 0;
    for (unsigned i = 0; i < r.nh && n >= 2; i++, made++) {
      r.kind[i] = p[0] % CAPSA__DUMP_KINDS;
      r.size[i] = p[1];
      p += 2;
      n -= 2;
    }
    r.nh = (uint8_t)made;
    size_t len = 0;
    if (n >= 2) {
      len = (size_t)p[0] | ((size_t)p[1] << 8);
      p += 2;
      n -= 2;
    }
    if (len > n) len = n;
    r.len = (uint16_t)len;
    r.data = p;
    int err = add_rec(b, &r);
    if (err < 0) return err;
    (*count)++;
    p += len;
    n -= len;
  }
  return 0;
}

static int read_file(const char *path, uint8_t **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return -errno;
  size_t cap = 65536, n = 0;
  uint8_t *buf = malloc(cap);
  while (buf != NULL) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    if (cap >= (64u << 20)) {  // far beyond any reproducer
      free(buf);
      fclose(f);
      return -EFBIG;
    }
    uint8_t *p = realloc(buf, cap * 2);
    if (p == NULL) free(buf);
    buf = p;
    cap *= 2;
  }
  int err = ferror(f) ? -EIO : 0;
  fclose(f);
  if (buf == NULL) return -ENOMEM;
  if (err < 0) {
    free(buf);
    return err;
  }
  *out = buf;
  *len = n;
  return 0;
}

static const char kMagic[] = "capsa-fuzz-repro ";

// Version 1: "capsa-fuzz-repro 1\nseed S\nrenderer_seed A [B]\nwhy ...".
static int load_v1(const char *text, capsa__fz_repro_t *r) {
  unsigned long long seed, a, b;
  int n = sscanf(text, "capsa-fuzz-repro 1 seed %llu renderer_seed %llu", &seed,
                 &a);
  if (n != 2) return -EINVAL;
  r->version = 1;
  r->seed = seed;
  r->seeds[0] = a;
  r->nseeds = 1;
  const char *line = strstr(text, "renderer_seed ");
  const char *eol = line ? strchr(line, '\n') : NULL;
  char tail[64] = "";
  if (line) {
    size_t l = eol ? (size_t)(eol - line) : strlen(line);
    if (l >= sizeof tail) l = sizeof tail - 1;
    memcpy(tail, line, l);
    tail[l] = 0;
  }
  if (sscanf(tail, "renderer_seed %llu %llu", &a, &b) == 2) {
    r->seeds[1] = b;
    r->nseeds = 2;
  }
  return 0;
}

int capsa__fz_repro_load(const char *path, capsa__fz_repro_t *r, char *err,
                         size_t cap) {
  memset(r, 0, sizeof *r);
  if (cap > 0) err[0] = 0;
  uint8_t *buf = NULL;
  size_t len = 0;
  int e = read_file(path, &buf, &len);
  if (e < 0) {
    snprintf(err, cap, "%s", strerror(-e));
    return e;
  }
  struct builder b = {0};
  if (len < sizeof kMagic - 1 || memcmp(buf, kMagic, sizeof kMagic - 1) != 0) {
    // A lone channel: a CAPSA_IPC_DUMP file or a fuzz_host input.
    size_t count = 0;
    e = parse_channel(buf, len, 0, &r->flags[0], &b, &count);
    free(buf);
    if (e < 0 || count == 0) {
      builder_free(&b);
      snprintf(err, cap,
               "not a capsa fuzz reproducer (a manifest \"%s...\" "
               "or a CAPSA_IPC_DUMP .in file)",
               kMagic);
      return -EINVAL;
    }
    r->version = 2;
    r->nch = 1;
    finish(&b, r);
    return 0;
  }
  char *text = realloc(buf, len + 1);
  if (text == NULL) {
    free(buf);
    return -ENOMEM;
  }
  text[len] = 0;
  if (strncmp(text, "capsa-fuzz-repro 1", 18) == 0) {
    e = load_v1(text, r);
    free(text);
    if (e < 0) snprintf(err, cap, "not a capsa fuzz reproducer");
    return e;
  }
  if (strncmp(text, "capsa-fuzz-repro 2\n", 19) != 0) {
    free(text);
    snprintf(err, cap, "not a capsa fuzz reproducer (version 1 or 2)");
    return -EINVAL;
  }
  // The channels' files, relative to the manifest's directory.
  char dir[4096] = ".";
  const char *slash = strrchr(path, '/');
  if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (slash == path) snprintf(dir, sizeof dir, "/");
  struct builder per[CAPSA__FZ_MAX_CHANNELS];
  memset(per, 0, sizeof per);
  size_t count[CAPSA__FZ_MAX_CHANNELS] = {0};
  const char *order = NULL;
  e = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line && e == 0;
       line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, "why ", 4) == 0) {
      snprintf(r->why, sizeof r->why, "%s", line + 4);
    } else if (strncmp(line, "stack ", 6) == 0) {
      snprintf(r->stack, sizeof r->stack, "%s", line + 6);
    } else if (strncmp(line, "order", 5) == 0) {
      order = line + 5;
    } else if (strncmp(line, "channel ", 8) == 0) {
      if (r->nch >= CAPSA__FZ_MAX_CHANNELS) {
        snprintf(err, cap, "more than %d channels", CAPSA__FZ_MAX_CHANNELS);
        e = -E2BIG;
        break;
      }
      char p[8192];
      const char *name = line + 8;
      if (name[0] == '/')
        snprintf(p, sizeof p, "%s", name);
      else
        snprintf(p, sizeof p, "%s/%s", dir, name);
      uint8_t *cb = NULL;
      size_t cl = 0;
      e = read_file(p, &cb, &cl);
      if (e < 0) {
        snprintf(err, cap, "%s: %s", p, strerror(-e));
        break;
      }
      e = parse_channel(cb, cl, r->nch, &r->flags[r->nch], &per[r->nch],
                        &count[r->nch]);
      free(cb);
      if (e < 0) {
        snprintf(err, cap, "%s: not a CAPSA_IPC_DUMP file", p);
        break;
      }
      r->nch++;
    } else if (line[0] != 0 && line[0] != '#' &&
               strncmp(line, "capsa-fuzz-repro", 16) != 0) {
      snprintf(err, cap, "unknown line \"%.40s\"", line);
      e = -EINVAL;
    }
  }
  // Interleave the channels' records as `order` says (each channel in its
  // own order); without it, one channel after the other.
  size_t next[CAPSA__FZ_MAX_CHANNELS] = {0}, total = 0;
  for (unsigned c = 0; c < r->nch; c++) total += count[c];
  if (e == 0 && r->nch == 0) {
    snprintf(err, cap,
             "no channel line (the host failed before any renderer sent a "
             "record: run the campaign's seed again)");
    e = -EINVAL;
  }
  if (e == 0 && order) {
    const char *p = order;
    size_t k = 0;
    while (e == 0) {
      char *end;
      while (*p == ' ') p++;
      if (*p == 0) break;
      unsigned long c = strtoul(p, &end, 10);
      if (end == p || c >= r->nch || next[c] >= count[c]) {
        snprintf(err, cap,
                 "order: entry %zu is not a channel with a record "
                 "left",
                 k);
        e = -EINVAL;
        break;
      }
      p = end;
      e = add_from(&b, &per[c], next[c]);
      next[c]++;
      k++;
    }
    if (e == 0 && k != total) {
      snprintf(err, cap, "order names %zu records, the channels hold %zu", k,
               total);
      e = -EINVAL;
    }
  } else if (e == 0) {
    for (unsigned c = 0; c < r->nch && e == 0; c++)
      for (size_t i = 0; i < count[c] && e == 0; i++)
        e = add_from(&b, &per[c], i);
  }
  free(text);
  for (unsigned c = 0; c < CAPSA__FZ_MAX_CHANNELS; c++) builder_free(&per[c]);
  if (e < 0) {
    builder_free(&b);
    r->nch = 0;
    if (err[0] == 0) snprintf(err, cap, "%s", strerror(-e));
    return e;
  }
  r->version = 2;
  finish(&b, r);
  return 0;
}

static int write_all(FILE *f, const void *p, size_t n) {
  return fwrite(p, 1, n, f) == n ? 0 : -EIO;
}

int capsa__fz_repro_save(const capsa__fz_repro_t *r, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  FILE *m = fopen(path, "w");
  if (m == NULL) return -errno;
  int e = 0;
  fprintf(m, "capsa-fuzz-repro 2\nwhy %s\n", r->why[0] ? r->why : "-");
  if (r->stack[0]) fprintf(m, "stack %s\n", r->stack);
  for (unsigned c = 0; c < r->nch && e == 0; c++) {
    char p[8192];
    snprintf(p, sizeof p, "%s.c%u.in", path, c);
    fprintf(m, "channel %s.c%u.in\n", base, c);
    FILE *f = fopen(p, "wb");
    if (f == NULL) {
      e = -errno;
      break;
    }
    e = write_all(f, &r->flags[c], 1);
    for (size_t i = 0; i < r->nrec && e == 0; i++) {
      const capsa__fz_rec_t *x = &r->rec[i];
      if (x->channel != c) continue;
      uint8_t head[CAPSA__DUMP_HEAD_MAX];
      size_t h = 0;
      head[h++] = x->nh;
      for (unsigned k = 0; k < x->nh; k++) {
        head[h++] = x->kind[k];
        head[h++] = x->size[k];
      }
      head[h++] = (uint8_t)(x->len & 0xff);
      head[h++] = (uint8_t)(x->len >> 8);
      e = write_all(f, head, h);
      if (e == 0) e = write_all(f, x->data, x->len);
    }
    if (fclose(f) != 0 && e == 0) e = -EIO;
  }
  fprintf(m, "order");
  for (size_t i = 0; i < r->nrec; i++) fprintf(m, " %u", r->rec[i].channel);
  fprintf(m, "\n");
  if (fclose(m) != 0 && e == 0) e = -EIO;
  return e;
}

int capsa__fz_repro_subset(const capsa__fz_repro_t *src, const bool *keep,
                           capsa__fz_repro_t *dst) {
  memset(dst, 0, sizeof *dst);
  int map[CAPSA__FZ_MAX_CHANNELS];
  for (unsigned c = 0; c < CAPSA__FZ_MAX_CHANNELS; c++) map[c] = -1;
  struct builder b = {0};
  // Records dropped so far per (source) channel: the later ones' sequence
  // numbers move down by as many, so that a subset is still in order
  // where the original was (a record sent out of order stays out of order
  // by as much). Records that do not decode go as they are.
  uint32_t gone[CAPSA__FZ_MAX_CHANNELS] = {0};
  static uint8_t again[CAPSA_IPC_MAX_MESSAGE];
  for (size_t i = 0; i < src->nrec; i++) {
    if (keep && !keep[i]) {
      if (src->rec[i].channel < CAPSA__FZ_MAX_CHANNELS)
        gone[src->rec[i].channel]++;
      continue;
    }
    capsa__fz_rec_t x = src->rec[i];
    capsa_msg_t m;
    if (x.channel < CAPSA__FZ_MAX_CHANNELS && gone[x.channel] &&
        capsa_msg_decode(x.data, x.len, &m, NULL, 0) == 0 &&
        m.seq > gone[x.channel]) {
      m.seq -= gone[x.channel];
      int n = capsa_msg_encode(&m, again, sizeof again);
      if (n > 0 && n <= UINT16_MAX) {
        x.data = again;
        x.len = (uint16_t)n;
      }
    }
    if (map[x.channel] < 0) {
      map[x.channel] = (int)dst->nch;
      dst->flags[dst->nch++] = src->flags[x.channel];
    }
    x.channel = (uint8_t)map[x.channel];
    int e = add_rec(&b, &x);
    if (e < 0) {
      builder_free(&b);
      return e;
    }
  }
  dst->version = 2;
  snprintf(dst->why, sizeof dst->why, "%s", src->why);
  snprintf(dst->stack, sizeof dst->stack, "%s", src->stack);
  finish(&b, dst);
  return 0;
}

// --- recording

typedef struct slot {
  _Atomic uint64_t serial;  // channel (0: free)
  _Atomic uint64_t last;    // arrival number of its last record
  _Atomic uint32_t used;    // bytes of complete entries
  _Atomic uint32_t dropped;
  uint8_t data[CAPSA__FZ_SLOT_BYTES];
} slot_t;

bool capsa__fz_first_sight(capsa__fz_seen_t *s, uint64_t serial) {
  for (unsigned i = 0; i < CAPSA__FZ_SEEN; i++)
    if (s->serial[i] == serial) return false;
  s->serial[s->next++ % CAPSA__FZ_SEEN] = serial;
  return true;
}

struct capsa__fz_recorder {
  _Atomic uint64_t arrivals;
  capsa__fz_seen_t seen;
  capsa__fz_crash_t crash;
  slot_t slot[CAPSA__FZ_SLOTS];
};

capsa__fz_recorder_t *capsa__fz_recorder_new(void) {
  void *m = mmap(NULL, sizeof(capsa__fz_recorder_t), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? NULL : m;
}

void capsa__fz_recorder_reset(capsa__fz_recorder_t *rec) {
  rec->arrivals = 0;
  memset(&rec->seen, 0, sizeof rec->seen);
  memset(&rec->crash, 0, sizeof rec->crash);
  for (int i = 0; i < CAPSA__FZ_SLOTS; i++) {
    rec->slot[i].serial = 0;
    rec->slot[i].last = 0;
    rec->slot[i].used = 0;
    rec->slot[i].dropped = 0;
  }
}

const capsa__fz_crash_t *capsa__fz_recorder_crash(
    const capsa__fz_recorder_t *rec) {
  return &rec->crash;
}

// The worker's host calls this for every record (ipc/ipc_dump.h). Entry
// layout in a slot: u32 arrival number, the record header, its bytes.
static void record_sink(void *arg, uint64_t serial, const uint8_t *head,
                        size_t hl, const uint8_t *buf, size_t len) {
  capsa__fz_recorder_t *rec = arg;
  uint64_t now = ++rec->arrivals;
  slot_t *s = NULL;
  if (capsa__fz_first_sight(&rec->seen, serial)) {
    // A new channel; this record is its HELLO, which a replay makes anew.
    s = &rec->slot[0];
    for (int i = 1; i < CAPSA__FZ_SLOTS; i++)
      if (rec->slot[i].last < s->last) s = &rec->slot[i];
    s->serial = 0;
    s->used = 0;
    s->dropped = 0;
    s->serial = serial;
    s->last = now;
    return;
  }
  for (int i = 0; i < CAPSA__FZ_SLOTS && s == NULL; i++)
    if (rec->slot[i].serial == serial) s = &rec->slot[i];
  if (s == NULL) return;  // its slot went to a newer channel
  uint32_t used = s->used;
  size_t need = 4 + hl + len;
  if (used + need > CAPSA__FZ_SLOT_BYTES) {
    s->dropped++;
    return;
  }
  uint32_t a = (uint32_t)now;
  memcpy(s->data + used, &a, 4);
  memcpy(s->data + used + 4, head, hl);
  memcpy(s->data + used + 4 + hl, buf, len);
  atomic_store_explicit(&s->used, used + (uint32_t)need, memory_order_release);
  s->last = now;
}

uint64_t capsa__fz_recorder_arrivals(const capsa__fz_recorder_t *rec) {
  return atomic_load(&rec->arrivals);
}

void capsa__fz_recorder_attach(capsa__fz_recorder_t *rec) {
  capsa__dump_set_sink(record_sink, rec);
  capsa__fz_crash_handler_install(&rec->crash);
}

struct found {
  uint32_t arrival;
  int slot;
  const uint8_t *p;
};

static int by_arrival(const void *a, const void *b) {
  uint32_t x = ((const struct found *)a)->arrival;
  uint32_t y = ((const struct found *)b)->arrival;
  return x < y ? -1 : x > y;
}

int capsa__fz_recorder_collect(capsa__fz_recorder_t *rec,
                               capsa__fz_repro_t *r) {
  memset(r, 0, sizeof *r);
  size_t cap = CAPSA__FZ_MAX_RECORDS, n = 0;
  struct found *f = malloc(cap * sizeof *f);
  if (f == NULL) return -ENOMEM;
  for (int s = 0; s < CAPSA__FZ_SLOTS; s++) {
    slot_t *sl = &rec->slot[s];
    uint32_t used = atomic_load_explicit(&sl->used, memory_order_acquire);
    if (sl->serial == 0 || used > CAPSA__FZ_SLOT_BYTES) continue;
    for (uint32_t o = 0; o + 7 <= used && n < cap;) {
      const uint8_t *p = sl->data + o;
      unsigned nh = p[4] & 3u;
      uint32_t hl = 1 + 2 * nh + 2;
      if (o + 4 + hl > used) break;
      uint32_t len = p[4 + hl - 2] | ((uint32_t)p[4 + hl - 1] << 8);
      if (o + 4 + hl + len > used) break;
      memcpy(&f[n].arrival, p, 4);
      f[n].slot = s;
      f[n].p = p + 4;
      n++;
      o += 4 + hl + len;
    }
  }
  qsort(f, n, sizeof *f, by_arrival);
  int map[CAPSA__FZ_SLOTS];
  for (int s = 0; s < CAPSA__FZ_SLOTS; s++) map[s] = -1;
  struct builder b = {0};
  int e = 0;
  for (size_t i = 0; i < n && e == 0; i++) {
    if (map[f[i].slot] < 0) {
      map[f[i].slot] = (int)r->nch;
      r->flags[r->nch++] = CAPSA__DUMP_AUTO_HELLO;
    }
    const uint8_t *p = f[i].p;
    capsa__fz_rec_t x = {.channel = (uint8_t)map[f[i].slot]};
    x.nh = p[0] & 3u;
    for (unsigned k = 0; k < x.nh; k++) {
      x.kind[k] = p[1 + 2 * k];
      x.size[k] = p[2 + 2 * k];
    }
    size_t hl = 1 + 2 * (size_t)x.nh + 2;
    x.len = (uint16_t)(p[hl - 2] | (p[hl - 1] << 8));
    x.data = p + hl;
    e = add_rec(&b, &x);
  }
  free(f);
  if (e < 0) {
    builder_free(&b);
    return e;
  }
  r->version = 2;
  finish(&b, r);
  return 0;
}
