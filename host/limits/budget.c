// Queue budgets: what the broker's answers may hold in the host for a
// renderer that does not read them. A queued answer pins its descriptor in
// the host's own table, so without a budget a few renderers that never read
// take the host to EMFILE and every later spawn fails (the channel's own cap,
// 256 descriptors, is per channel, not per host). An answer the kernel took
// but the renderer has not read is held too: by the kernel, charged to the
// host's user (RLIMIT_NOFILE of them in flight without CAP_SYS_RESOURCE),
// so those count as queued as well; without that, four renderers that never
// read left the host ETOOMANYREFS for every descriptor it sent, to any
// renderer (ipc/inflight.h). And the LOG budget (bytes per second). Both
// return verdicts; the state machine ends the renderer (limits.h).
#include <errno.h>
#include <stdio.h>

#include "host/host_internal.h"

// Queued in the host and in flight in the kernel: what the renderer has not
// read.
static size_t unread_fds(struct capsa_host_renderer *r) {
  return capsa_channel_queued_fds(&r->ch) + capsa_channel_inflight_fds(&r->ch);
}

static size_t host_unread_fds(const struct capsa__host_impl *h) {
  size_t n = 0;
  for (struct capsa_host_renderer *r = h->renderers; r; r = r->next)
    n += unread_fds(r);
  return n;
}

int capsa__budget_queue_admit(struct capsa_host_renderer *r, unsigned nfds) {
  // Nothing unread means the renderer reads: an honest renderer is served
  // even while siblings hold the host's total.
  if (unread_fds(r) == 0) return 0;
  if (host_unread_fds(r->h) + nfds > CAPSA__QUEUE_FDS_PER_HOST) return -EBUSY;
  return 0;
}

const char *capsa__budget_queue_verdict(struct capsa_host_renderer *r,
                                        char *why) {
  const capsa_kind_options_t *k = &r->h->kinds[r->kind];
  uint64_t fds = unread_fds(r);
  uint64_t bytes = capsa_channel_queued_bytes(&r->ch);
  // CAPSA_LIMIT_NONE is UINT64_MAX: never passed.
  if (fds > k->limit_queued_fds) {
    snprintf(why, CAPSA__VERDICT_MAX,
             "queue budget: more than %llu descriptors queued",
             (unsigned long long)k->limit_queued_fds);
  } else if (bytes > k->limit_queued_bytes) {
    snprintf(why, CAPSA__VERDICT_MAX,
             "queue budget: more than %llu bytes queued",
             (unsigned long long)k->limit_queued_bytes);
  } else {
    return NULL;
  }
  // Ending it closes the channel, which closes every queued descriptor.
  return why;
}

const char *capsa__budget_log_charge(struct capsa_host_renderer *r, size_t len,
                                     uint64_t now_ms, char *why) {
  struct capsa__renderer_limits *l = &r->limits;
  uint64_t rate = r->h->kinds[r->kind].limit_log_bytes_per_second;
  if (rate == CAPSA_LIMIT_NONE) return NULL;
  // A bucket of one second's worth, refilled at `rate`.
  uint64_t elapsed = now_ms - l->log_stamp_ms;
  l->log_stamp_ms = now_ms;
  uint64_t refill = elapsed >= 1000 ? rate : elapsed * rate / 1000;
  l->log_tokens = l->log_tokens + refill > rate ? rate : l->log_tokens + refill;
  uint64_t cost = (uint64_t)len + CAPSA__LOG_MESSAGE_COST;
  if (cost <= l->log_tokens) {
    l->log_tokens -= cost;
    return NULL;
  }
  snprintf(why, CAPSA__VERDICT_MAX,
           "log budget: more than %llu bytes per second",
           (unsigned long long)rate);
  return why;
}

void capsa__budget_log_reset(struct capsa_host_renderer *r, uint64_t now_ms) {
  uint64_t rate = r->h->kinds[r->kind].limit_log_bytes_per_second;
  r->limits.log_tokens = rate;
  r->limits.log_stamp_ms = now_ms;
}
