// Renderer limits as rlimits the zygote sets at fork, and the defaults of
// every limit option: the one list of them.
#include "host/host_internal.h"

// Every limit option of capsa_kind_options_t (host/capsa_host.h), once,
// with its default: the rlimits (option, default, the zygote's field that
// carries it to the fork: host/zygote.h CAPSA__ZYGOTE_KIND_SCALARS), then
// the budgets the host keeps itself (host/limits/budget.c,
// host/broker/dns.c). A new rlimit-style limit is its public field plus a
// row here (and the zygote's row and its setrlimit).
#define CAPSA__KIND_RLIMITS(X)           \
  X(limit_memory, 1ull << 30, limit_as)  \
  X(limit_cpu_seconds, 300u, limit_cpu)  \
  X(limit_open_files, 64u, limit_nofile) \
  X(limit_processes, 128u, limit_nproc)
#define CAPSA__KIND_BUDGETS(X)                           \
  X(limit_broker_requests, CAPSA__DNS_PER_RENDERER)      \
  X(limit_queued_fds, CAPSA__QUEUE_FDS_PER_RENDERER)     \
  X(limit_queued_bytes, CAPSA__QUEUE_BYTES_PER_RENDERER) \
  X(limit_log_bytes_per_second, CAPSA__DEFAULT_LOG_BYTES_PER_SECOND)

// A limit as the zygote takes it: 0 leaves the inherited one.
static rlim_t zygote_limit(uint64_t v) {
  return v == CAPSA_LIMIT_NONE ? 0 : (rlim_t)v;
}

void capsa__limits_zygote_kind(const capsa_kind_options_t *k,
                               struct capsa__zygote_kind *z) {
#define CAPSA__RLIMIT_TO_ZYGOTE(field, def, zfield) \
  z->zfield = zygote_limit(k->field);
  CAPSA__KIND_RLIMITS(CAPSA__RLIMIT_TO_ZYGOTE)
#undef CAPSA__RLIMIT_TO_ZYGOTE
}

void capsa__limits_defaults(capsa_kind_options_t *k) {
#define CAPSA__RLIMIT_DEFAULT(field, def, zfield) \
  if (k->field == 0) k->field = (def);
#define CAPSA__BUDGET_DEFAULT(field, def) \
  if (k->field == 0) k->field = (def);
  CAPSA__KIND_RLIMITS(CAPSA__RLIMIT_DEFAULT)
  CAPSA__KIND_BUDGETS(CAPSA__BUDGET_DEFAULT)
#undef CAPSA__RLIMIT_DEFAULT
#undef CAPSA__BUDGET_DEFAULT
  if (k->host_share_percent == 0)
    k->host_share_percent = CAPSA__DEFAULT_HOST_SHARE_PERCENT;
}

rlim_t capsa__limits_nproc_total(const struct capsa__host_impl *h) {
  uint64_t n = h->opts.limit_renderer_processes;
  if (n == 0) return CAPSA__DEFAULT_RENDERER_PROCESSES;
  return n == CAPSA_LIMIT_NONE ? RLIM_INFINITY : (rlim_t)n;
}
