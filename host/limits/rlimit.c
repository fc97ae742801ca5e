// Renderer limits as rlimits the zygote sets at fork, and the defaults of
// every limit option: the one list of them.
#include "host/host_internal.h"

// Every limit option of capsa_kind_options_t (host/capsa_host.h), once,
// with its default: the rlimits in the zygote's list (host/zygote/zygote.h
// CAPSA__ZYGOTE_KIND_RLIMITS: option, default, the field that carries it
// to the fork and its setrlimit there), the budgets the host keeps itself
// here (host/limits/budget.c, host/broker/dns.c). A new rlimit-style limit
// is its public field plus one row there; a new budget, its field, a row
// here and its check.
#define CAPSA__KIND_BUDGETS(X)                           \
  X(limit_broker_requests, CAPSA__DNS_PER_RENDERER)      \
  X(limit_queued_fds, CAPSA__QUEUE_FDS_PER_RENDERER)     \
  X(limit_queued_bytes, CAPSA__QUEUE_BYTES_PER_RENDERER) \
  X(limit_log_bytes_per_second, CAPSA__DEFAULT_LOG_BYTES_PER_SECOND)

void capsa__limits_zygote_kind(const capsa_kind_options_t *k,
                               struct capsa__zygote_kind *z) {
  capsa__zygote_kind_set_limits(z, k);
}

void capsa__limits_defaults(capsa_kind_options_t *k) {
// The rlimits' defaults come with their rows (host/zygote/zygote.h
// CAPSA__ZYGOTE_KIND_RLIMITS), the budgets' with theirs (above).
#define CAPSA__RLIMIT_DEFAULT(X, zfield, resource, field, def) \
  if (k->field == 0) k->field = (def);
#define CAPSA__BUDGET_DEFAULT(field, def) \
  if (k->field == 0) k->field = (def);
  CAPSA__ZYGOTE_KIND_RLIMITS(CAPSA__RLIMIT_DEFAULT, )
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
