// See renderer/runtime.h.
#include "renderer/runtime.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ipc/interface.h"
#include "sandbox/capmode/capmode.h"

struct capsa_rctx {
  capsa_rloop_t loop;
  const capsa_renderer_handlers_t *h;
  capsa_sandbox_report_t sandbox;
  int handler_error;
};

static int dispatch(capsa_rloop_t *l, capsa_msg_t *m) {
  capsa_rctx_t *r = l->data;
  switch (m->type) {
    case CAPSA_MSG_PING: {
      capsa_msg_t pong;
      capsa_msg_init(&pong, CAPSA_MSG_PONG);
      pong.u.ping = m->u.ping;
      int err = capsa_rloop_reply(l, m, &pong);
      return err < 0 ? err : 0;
    }
    case CAPSA_MSG_SHUTDOWN:
      return 1;
    default:
      break;
  }
  if (!r->h->on_message) return 0;
  int rc = r->h->on_message(r, m);
  if (rc < 0) {
    r->handler_error = rc;
    char line[128];
    int n = snprintf(line, sizeof line, "capsa renderer %s: %s handler: %s\n",
                     r->h->kind ? r->h->kind : "?",
                     capsa_msg_type_name(m->type), strerror(-rc));
    if (n > 0 && write(2, line, (size_t)n) < 0) {
    }
  }
  return rc;
}

static int run(int channel_fd, const capsa_sandbox_report_t *sandbox,
               void *handlers, bool apply_rights) {
  const capsa_renderer_handlers_t *h = handlers;
  if (channel_fd < 0 || !h) return CAPSA_RENDERER_EXIT_CHANNEL;
  // Capability mode before the first byte of input: normally the zygote
  // entered it with the kind's policy; a renderer started any other way
  // enters the default one here.
  unsigned mode = 0;
  if (capsa_cap_getmode(&mode) < 0 || !mode) {
    if (capsa_cap_enter() < 0) return CAPSA_RENDERER_EXIT_CAPMODE;
  }
  // Violation lines (CAPSA_TRACE=1) say which kind wrote them.
  if (h->kind) {
    char label[CAPSA_TRACE_LABEL_MAX + 1];
    snprintf(label, sizeof label, "renderer %s", h->kind);
    capsa_capmode_set_trace_label(label);  // a kind name it refuses: none
  }
  static capsa_rctx_t r;
  memset(&r, 0, sizeof r);
  r.h = h;
  if (sandbox) {
    r.sandbox = *sandbox;
  } else {
    struct capsa_capmode_report cr;
    r.sandbox.capmode = true;
    r.sandbox.no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
    if (capsa_capmode_default_report(&cr) == 0 &&
        cr.landlock == CAPSA_LAYER_ENFORCED)
      r.sandbox.landlock_abi = cr.landlock_abi;
    r.sandbox.detail = "capmode entered by the renderer";
  }
  // Received handles are re-limited with capsa_rights_limit only when the
  // kind asks: number-keyed rights outlive the descriptor, so after a
  // read-only handle is closed, a writable one the kernel gives the same
  // number cannot get its rights (ENOTCAPABLE) and the renderer fails. What
  // holds regardless: read-only files are O_RDONLY, read-only shared memory
  // is sealed (F_SEAL_FUTURE_WRITE), both checked on receipt (ipc/handle.h).
  capsa_rloop_options_t lo = {.peer = CAPSA_PEER_HOST,
                              .apply_rights = apply_rights ? 1 : 0,
                              .send_timeout_ms = 5000,
                              .interfaces = h->interfaces,
                              .ninterfaces = h->ninterfaces};
  // The interfaces go in HELLO; the host refuses a list not its kind's.
  static char names[CAPSA_IFACE_MAX_PER_CHANNEL * (CAPSA_IFACE_MAX_NAME + 1)];
  if (capsa_iface_list_names(h->interfaces, h->ninterfaces, names,
                             sizeof names) < 0 ||
      capsa_rloop_init(&r.loop, channel_fd, dispatch, &lo) < 0) {
    close(channel_fd);
    return CAPSA_RENDERER_EXIT_CHANNEL;
  }
  r.loop.data = &r;
  capsa_msg_t hello;
  capsa_msg_init(&hello, CAPSA_MSG_HELLO);
  hello.u.hello.protocol_version = CAPSA_IPC_VERSION;
  hello.u.hello.pid = getpid();
  hello.u.hello.renderer_kind = h->kind;
  hello.u.hello.sandbox = r.sandbox;
  hello.u.hello.interfaces = h->ninterfaces ? names : NULL;
  hello.u.hello.interfaces_hash =
      capsa_iface_list_hash(h->interfaces, h->ninterfaces);
  int rc = capsa_rloop_send(&r.loop, &hello);
  if (rc == 0 && h->on_start) {
    rc = h->on_start(&r);
    if (rc < 0) {
      r.handler_error = rc;
      char line[128];
      int n = snprintf(line, sizeof line, "capsa renderer %s: on_start: %s\n",
                       h->kind ? h->kind : "?", strerror(-rc));
      if (n > 0 && write(2, line, (size_t)n) < 0) {
      }
    }
  }
  if (rc == 0) rc = capsa_rloop_run(&r.loop);
  if (rc < 0 && rc != -EPIPE && r.handler_error == 0) {
    // Goes to the host's stderr when delegated, /dev/null otherwise.
    char line[CAPSA_IPC_REASON_MAX + 64];
    int n = snprintf(line, sizeof line, "capsa renderer %s: channel: %s\n",
                     h->kind ? h->kind : "?",
                     r.loop.reason[0] ? r.loop.reason : strerror(-rc));
    if (n > 0 && write(2, line, (size_t)n) < 0) {
    }
  }
  capsa_rloop_close(&r.loop);
  if (r.handler_error == -ENOMEM) return CAPSA_RENDERER_EXIT_NOMEM;
  if (r.handler_error < 0) return CAPSA_RENDERER_EXIT_HANDLER;
  if (rc < 0 && rc != -EPIPE) return CAPSA_RENDERER_EXIT_CHANNEL;
  return CAPSA_RENDERER_EXIT_OK;
}

int capsa_renderer_main(int channel_fd, const capsa_sandbox_report_t *sandbox,
                        void *handlers) {
  return run(channel_fd, sandbox, handlers, false);
}

int capsa_renderer_main_limited(int channel_fd,
                                const capsa_sandbox_report_t *sandbox,
                                void *handlers) {
  return run(channel_fd, sandbox, handlers, true);
}

int capsa_rctx_send(capsa_rctx_t *r, capsa_msg_t *msg) {
  if (!r || !msg) return -EINVAL;
  return capsa_rloop_send(&r->loop, msg);
}

int capsa_rctx_reply(capsa_rctx_t *r, const capsa_msg_t *request,
                     capsa_msg_t *reply) {
  if (!r || !request || !reply) return -EINVAL;
  return capsa_rloop_reply(&r->loop, request, reply);
}

int capsa_rctx_call(capsa_rctx_t *r, capsa_msg_t *msg, int timeout_ms,
                    capsa_msg_t *reply) {
  if (!r || !msg || !reply) return -EINVAL;
  // From any handler: while it waits, the loop keeps what else arrives and
  // hands it over after the handler returns (ipc/loop.h), never inside it.
  return capsa_rloop_call(&r->loop, msg, timeout_ms, reply);
}

int capsa_rctx_log(capsa_rctx_t *r, unsigned level, const char *fmt, ...) {
  if (!r || !fmt || level > CAPSA_LOG_ERROR) return -EINVAL;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  capsa_msg_t m;
  capsa_msg_init(&m, CAPSA_MSG_LOG);
  m.u.log.level = level;
  m.u.log.text = text;
  return capsa_rloop_send(&r->loop, &m);
}

void *capsa_rctx_data(capsa_rctx_t *r) {
  return r && r->h ? r->h->data : NULL;
}

const capsa_sandbox_report_t *capsa_rctx_sandbox(capsa_rctx_t *r) {
  return r ? &r->sandbox : NULL;
}

const char *capsa_rctx_last_error(capsa_rctx_t *r) {
  return r ? r->loop.reason : "";
}
