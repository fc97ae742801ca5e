// Token bucket of a channel's loop time (ipc/busy_share.h).
#include "ipc/busy_share.h"

static int64_t cap_ns(const capsa__busy_share_t *b) {
  return (int64_t)(CAPSA__BUSY_WINDOW_NS * b->percent / 100);
}

void capsa__busy_share_init(capsa__busy_share_t *b, unsigned percent,
                            uint64_t now_ns) {
  b->percent = percent;
  b->stamp = now_ns;
  b->rests = 0;
  b->free_msgs = 0;
  b->free_until = 0;
  b->tokens = capsa__busy_share_capped(b) ? cap_ns(b) : 0;
}

bool capsa__busy_share_may_run(capsa__busy_share_t *b, uint64_t now_ns) {
  if (!capsa__busy_share_capped(b)) return true;
  if (now_ns > b->stamp) {
    uint64_t dt = now_ns - b->stamp;
    // Beyond one window the bucket is full anyway; also keeps the product
    // below from overflowing after a long idle time.
    if (dt > CAPSA__BUSY_WINDOW_NS * 100) dt = CAPSA__BUSY_WINDOW_NS * 100;
    b->tokens += (int64_t)(dt * b->percent / 100);
    if (b->tokens > cap_ns(b)) b->tokens = cap_ns(b);
  }
  b->stamp = now_ns;
  return b->tokens > 0;
}

bool capsa__busy_share_charge(capsa__busy_share_t *b, uint64_t spent_ns) {
  if (!capsa__busy_share_capped(b)) return true;
  int64_t floor = -cap_ns(b);
  int64_t spent =
      spent_ns > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)spent_ns;
  b->tokens = b->tokens - floor < spent ? floor : b->tokens - spent;
  return b->tokens > 0;
}

void capsa__busy_share_allow(capsa__busy_share_t *b, uint32_t msgs,
                             uint64_t until_ns) {
  b->free_msgs = msgs;
  b->free_until = until_ns;
}

bool capsa__busy_share_charge_at(capsa__busy_share_t *b, uint64_t spent_ns,
                                 uint64_t now_ns) {
  if (b->free_msgs > 0 && now_ns < b->free_until) {
    b->free_msgs--;
    return b->tokens > 0 || !capsa__busy_share_capped(b);
  }
  b->free_msgs = 0;  // spent or expired: never again
  return capsa__busy_share_charge(b, spent_ns);
}

uint64_t capsa__busy_share_rest_ms(const capsa__busy_share_t *b) {
  if (!capsa__busy_share_capped(b) || b->tokens > 0) return 1;
  uint64_t ns = (uint64_t)(-b->tokens) * 100 / b->percent + 1;
  uint64_t ms = (ns + 999999) / 1000000;
  return ms > 0 ? ms : 1;
}
