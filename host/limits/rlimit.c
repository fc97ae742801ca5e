// Renderer limits as rlimits the zygote sets at fork, and the defaults of
// every limit option: the one list that maps a kind's limit options to the
// zygote's (host/zygote.h CAPSA__ZYGOTE_KIND_SCALARS) and gives each its
// default.
#include "host/host_internal.h"

// A limit as the zygote takes it: 0 leaves the inherited one.
static rlim_t zygote_limit(uint64_t v) {
  return v == CAPSA_LIMIT_NONE ? 0 : (rlim_t)v;
}

void capsa__limits_zygote_kind(const capsa_kind_options_t *k,
                               struct capsa__zygote_kind *z) {
  z->limit_as = zygote_limit(k->limit_memory);
  z->limit_cpu = zygote_limit(k->limit_cpu_seconds);
  z->limit_nofile = zygote_limit(k->limit_open_files);
  z->limit_nproc = zygote_limit(k->limit_processes);
}

// The limit options with their defaults (capsa_kind_options_init).
#define CAPSA__KIND_LIMITS(X)                            \
  X(limit_memory, CAPSA__DEFAULT_MEMORY)                 \
  X(limit_cpu_seconds, CAPSA__DEFAULT_CPU_SECONDS)       \
  X(limit_open_files, CAPSA__DEFAULT_OPEN_FILES)         \
  X(limit_processes, CAPSA__DEFAULT_PROCESSES)           \
  X(limit_broker_requests, CAPSA__DNS_PER_RENDERER)      \
  X(limit_queued_fds, CAPSA__QUEUE_FDS_PER_RENDERER)     \
  X(limit_queued_bytes, CAPSA__QUEUE_BYTES_PER_RENDERER) \
  X(limit_log_bytes_per_second, CAPSA__DEFAULT_LOG_BYTES_PER_SECOND)

void capsa__limits_defaults(capsa_kind_options_t *k) {
#define CAPSA__LIMIT_DEFAULT(field, def) \
  if (k->field == 0) k->field = (def);
  CAPSA__KIND_LIMITS(CAPSA__LIMIT_DEFAULT)
#undef CAPSA__LIMIT_DEFAULT
  if (k->host_share_percent == 0)
    k->host_share_percent = CAPSA__DEFAULT_HOST_SHARE_PERCENT;
}

rlim_t capsa__limits_nproc_total(const struct capsa__host_impl *h) {
  uint64_t n = h->opts.limit_renderer_processes;
  if (n == 0) return CAPSA__DEFAULT_RENDERER_PROCESSES;
  return n == CAPSA_LIMIT_NONE ? RLIM_INFINITY : (rlim_t)n;
}
