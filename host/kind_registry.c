// The kind registry: what a binary registered, looked up by name (data
// only; the early hook capsa_main is host/zygote/capsa_main.c). See
// host/kind_registry.h.
#include "host/kind_registry.h"

#include <stdio.h>
#include <string.h>

#include "host/host_internal.h"

// Filled by constructors before main, read afterwards only: no lock. Fixed
// size, since constructors run before anything may allocate safely.
static const capsa_kind_registration_t *g_reg[CAPSA_KIND_REGISTRY_MAX];
static bool g_ambiguous[CAPSA_KIND_REGISTRY_MAX];
static unsigned g_nreg;
static bool g_overflow;

void capsa_kind_register(const capsa_kind_registration_t *r) {
  if (!r || !r->name || !r->main) return;
  for (unsigned i = 0; i < g_nreg; i++) {
    if (strcmp(g_reg[i]->name, r->name) == 0) {
      // Two kinds of one name: which one the zygote image would run is not
      // for us to guess.
      if (g_reg[i] != r) g_ambiguous[i] = true;
      return;
    }
  }
  if (g_nreg == CAPSA_KIND_REGISTRY_MAX) {
    g_overflow = true;
    return;
  }
  g_reg[g_nreg++] = r;
}

const capsa_kind_registration_t *capsa_kind_lookup(const char *name) {
  if (!name) return NULL;
  for (unsigned i = 0; i < g_nreg; i++)
    if (strcmp(g_reg[i]->name, name) == 0)
      return g_ambiguous[i] ? NULL : g_reg[i];
  return NULL;
}

bool capsa_kind_registry_overflowed(void) {
  return g_overflow;
}

static const capsa_warm_up_registration_t *g_warm[CAPSA_KIND_REGISTRY_MAX];
static bool g_warm_ambiguous[CAPSA_KIND_REGISTRY_MAX];
static unsigned g_nwarm;

void capsa_kind_register_warm_up(const capsa_warm_up_registration_t *r) {
  if (!r || !r->name || !r->fn) return;
  for (unsigned i = 0; i < g_nwarm; i++) {
    if (strcmp(g_warm[i]->name, r->name) == 0) {
      if (g_warm[i] != r) g_warm_ambiguous[i] = true;  // which one? not ours
      return;
    }
  }
  if (g_nwarm == CAPSA_KIND_REGISTRY_MAX) {
    g_overflow = true;
    return;
  }
  g_warm[g_nwarm++] = r;
}

capsa_warm_up_fn capsa__kind_warm_up(const char *name, bool *ambiguous) {
  *ambiguous = false;
  for (unsigned i = 0; name && i < g_nwarm; i++) {
    if (strcmp(g_warm[i]->name, name) == 0) {
      *ambiguous = g_warm_ambiguous[i];
      return g_warm_ambiguous[i] ? NULL : g_warm[i]->fn;
    }
  }
  return NULL;
}

bool capsa__kind_ambiguous(const char *name) {
  for (unsigned i = 0; name && i < g_nreg; i++)
    if (strcmp(g_reg[i]->name, name) == 0) return g_ambiguous[i];
  return false;
}

void capsa__kind_names(char *buf, size_t len) {
  if (!buf || len == 0) return;
  buf[0] = 0;
  size_t n = 0;
  for (unsigned i = 0; i < g_nreg && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
                          g_reg[i]->name);
  if (g_overflow && n < len) snprintf(buf + n, len - n, ", ... (full)");
  // Cut short: say so rather than show a name that is not one.
  if (n >= len && len > 4) memcpy(buf + len - 4, "...", 4);
}
