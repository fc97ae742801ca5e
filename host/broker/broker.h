// The broker (host/broker/): what a renderer in capability mode cannot do
// itself and its kind's policy lets the host do for it (Chromium's
// BrokerProcess, FreeBSD's Casper). One dispatcher (broker.c) and one file
// per service: files.c ("file:"), fonts.c ("font:"), dns.c ("dns:"), and
// reply.c, the services' answer with a descriptor. Every answer is a
// read-only handle or inline data.
//
// The broker never ends a renderer: it returns a verdict (NULL, or why the
// renderer must end) to its caller, the state machine; a verdict reached
// off the caller's stack (a lookup finished on the broker's threads) goes
// to the `verdict` function the state machine gave capsa__broker_start.
#ifndef CAPSA_HOST_BROKER_BROKER_H_
#define CAPSA_HOST_BROKER_BROKER_H_

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "host/capsa_host.h"
#include "ipc/handle.h"
#include "ipc/shm.h"

struct capsa_host_renderer;
struct capsa__host_impl;
struct capsa__dns_req;

#define CAPSA__FONTS 3  // regular, bold, mono

// Budgets for the broker's name lookups (thread-pool jobs the host holds
// for renderers): a renderer with more in flight than its budget is ended
// with CAPSA_EV_LIMIT; past the host's, a request is answered -EBUSY at
// once, so one renderer's flood is never another one's timeout.
#define CAPSA__DNS_PER_RENDERER 4  // default limit_broker_requests
#define CAPSA__DNS_PER_HOST 16

// How a verdict reached on the broker's own event reaches the state
// machine: r must end, for `why` (CAPSA_EV_LIMIT's text).
typedef void (*capsa__broker_verdict_fn)(struct capsa_host_renderer *r,
                                         const char *why);

// The host's broker state.
struct capsa__host_broker {
  capsa__broker_verdict_fn verdict;
  unsigned dns_inflight;  // name lookups not yet answered, all renderers
  uv_async_t dns_async;   // the broker's threads' finished lookups
  bool dns_async_inited;
  struct capsa__dns_req *dns_done;  // under the lookups' lock
  capsa_shm_region_t fonts[CAPSA__FONTS];
  size_t font_len[CAPSA__FONTS];
};

// One renderer's: its name lookups in flight.
struct capsa__renderer_broker {
  struct capsa__dns_req *dns;
  unsigned dns_inflight;
};

// --- broker.c: the dispatcher ---------------------------------------------

// Answers a RESOURCE_REQUEST from r (an error answer when no service could
// serve it). NULL, or (in why, CAPSA__VERDICT_MAX bytes) why r must end.
const char *capsa__broker_serve(struct capsa_host_renderer *r,
                                const capsa_msg_t *req, char *why);
// At capsa_host_start: the lookup threads (once per process, and only when
// one of h's kinds has allow_dns), libuv's thread pool (so that its
// creation can never fail later, on a renderer's request), h's uv_async_t.
// `verdict` receives the verdicts of finished lookups. 0 or -errno.
int capsa__broker_start(struct capsa__host_impl *h,
                        capsa__broker_verdict_fn verdict);
// Drops all of r's broker work at once (its incarnation ended, or the host
// closes): queued lookups are removed, running ones are left to their
// thread, which frees them unanswered. Nothing of it stays on the loop.
void capsa__broker_cancel(struct capsa_host_renderer *r);
// Cancels every renderer's work and closes h's async handle (`cb` then).
void capsa__broker_close(struct capsa__host_impl *h, uv_close_cb cb);

// --- reply.c --------------------------------------------------------------

// For the services: answers `req` with `fd` (owned from here on) as a
// handle of `kind`. 0 or -errno (the dispatcher then answers the error);
// *why set when r is past its queue budget.
int capsa__broker_reply_fd(struct capsa_host_renderer *r,
                           const capsa_msg_t *req, int fd,
                           capsa_handle_kind_t kind, uint64_t size,
                           const char *mime, char *why);

// --- files.c --------------------------------------------------------------

// "file:REL/PATH": opened by the host, beneath the kind's directory only.
int capsa__broker_file(struct capsa_host_renderer *r, const capsa_msg_t *req,
                       const char *path, char *why);

// --- fonts.c --------------------------------------------------------------

// "font:regular|bold|mono": read-only sealed shared memory.
int capsa__broker_font(struct capsa_host_renderer *r, const capsa_msg_t *req,
                       const char *name, char *why);
int capsa__broker_load_fonts(struct capsa__host_impl *h);
void capsa__broker_free_fonts(struct capsa__host_impl *h);

// --- dns.c ----------------------------------------------------------------

// "dns:NAME": looked up on the broker's threads, answered when done.
int capsa__broker_dns(struct capsa_host_renderer *r, const capsa_msg_t *req,
                      const char *name, char *why);
int capsa__broker_dns_start(struct capsa__host_impl *h);
void capsa__broker_dns_cancel(struct capsa_host_renderer *r);
// Test builds only (host/testing.h): each lookup first sleeps `ms`.
void capsa__broker_dns_delay_for_test(unsigned ms);

#endif  // CAPSA_HOST_BROKER_BROKER_H_
