// Events to the embedder: their names, and the one path every event of a
// renderer takes (its observer, then the embedder's callback).
#include <string.h>

#include "host/host_internal.h"

const char *capsa_host_event_name(capsa_host_event_type_t t) {
  switch (t) {
    case CAPSA_EV_READY:
      return "ready";
    case CAPSA_EV_MESSAGE:
      return "message";
    case CAPSA_EV_LOG:
      return "log";
    case CAPSA_EV_EXITED:
      return "exited";
    case CAPSA_EV_CRASHED:
      return "crashed";
    case CAPSA_EV_HUNG:
      return "hung";
    case CAPSA_EV_BAD_MESSAGE:
      return "bad-message";
    case CAPSA_EV_SANDBOX_REFUSED:
      return "sandbox-refused";
    case CAPSA_EV_LIMIT:
      return "limit";
    case CAPSA_EV_RESTARTED:
      return "restarted";
    case CAPSA_EV_SPAWN_FAILED:
      return "spawn-failed";
    case CAPSA_EV_CLOSED:
      return "closed";
    case CAPSA_EV_KILLED:
      return "killed";
    case CAPSA_EV_SHUTDOWN:
      return "shutdown";
    case CAPSA_EV_ABORTED:
      return "aborted";
  }
  return "?";
}

void capsa__emit(struct capsa_host_renderer *r, capsa_host_event_t *ev) {
  ev->renderer = r;
  if (r->observer) r->observer(r, ev, r->observer_ctx);
  if (r->h->cb) r->h->cb(r->h->pub, ev);
}

void capsa__emit_report(struct capsa_host_renderer *r,
                        capsa_host_event_type_t type, int status, int sig,
                        const char *text,
                        const capsa_crash_report_t *crash_report) {
  capsa_host_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.status = status;
  ev.signal = sig;
  ev.text = text;
  ev.crash_report = crash_report;
  capsa__emit(r, &ev);
}

void capsa__emit_simple(struct capsa_host_renderer *r,
                        capsa_host_event_type_t type, int status, int sig,
                        const char *text) {
  capsa__emit_report(r, type, status, sig, text, NULL);
}
