// Test builds only (//host:testing is testonly): simulate a kernel that does
// not report what the host reads from /proc. Call in a forked child, before
// capsa_host_start. See also sandbox/testing.h (features).
#ifndef CAPSA_HOST_TESTING_H_
#define CAPSA_HOST_TESTING_H_

#include <stdbool.h>

#include "host/capsa_host.h"
#include "sandbox/testing.h"

#ifdef __cplusplus
extern "C" {
#endif

// From now on the host's outside check reads no Seccomp_filters: line from
// /proc/PID/status, as on Linux < 5.9 (seccomp_filters -1). The zygote then
// takes no baseline ("zygote=no-filter" in the sandbox summary) and
// renderers are checked on Seccomp 2 and NoNewPrivs 1 only, as documented.
// Defined in libcapsa's host (host/sandbox_check.c), declared only here.
void capsa__check_hide_seccomp_filters_for_test(bool hide);

// From now on the outside check takes each renderer's own namespaces for
// the zygote's, as if the zygote had left it in its user namespace: a host
// whose zygote reports a user namespace per renderer then refuses it.
// Defined in host/sandbox_check.c.
void capsa__check_zygote_ns_of_renderer_for_test(bool on);

// From now on each broker name lookup first sleeps `ms` in its thread (a
// slow resolver), process-wide. Defined in host/broker/dns.c.
void capsa__broker_dns_delay_for_test(unsigned ms);

// How often `r`'s current incarnation's channel rested under its kind's
// host_share_percent (ipc/busy_share.h). Defined in host/host.c (the
// facade).
uint64_t capsa__renderer_rests_for_test(const capsa_renderer_t *r);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_TESTING_H_
