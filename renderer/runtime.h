// The renderer runtime: what runs inside a renderer process. Capability mode
// first, then the IPC loop, dispatching to the renderer's handlers.
//
//   #include <capsa/kind_registry.h>
//   #include "thumb.capsa.h"  // generated from thumb.fbs (<capsa/interface.h>)
//
//   static int on_message(capsa_rctx_t *r, capsa_msg_t *m) {
//     if (m->type != CAPSA_MSG_INTERFACE || m->u.iface.id != THUMB_DECODE)
//       return -EPROTO;  // unexpected: the loop fails
//     const thumb_decode_t *q = m->u.iface.value;            // verified, typed
//     int png = capsa_msg_take_handle(m, (uint32_t)q->png);  // ours now
//     thumb_done_t done;
//     thumb_done_init(&done);
//     /* ... decode png (<capsa/shm.h>) into at most q->max_width pixels ... */
//     close(png);
//     capsa_msg_t reply;
//     capsa_msg_init_iface(&reply, &thumb_interface, THUMB_DONE, &done);
//     return capsa_rctx_reply(r, m, &reply);
//   }
//   static const capsa_interface_t *const kSpeaks[] = {&thumb_interface};
//   static const capsa_renderer_handlers_t kThumb = {.kind = "thumb",
//                                                    .on_message = on_message,
//                                                    .interfaces = kSpeaks,
//                                                    .ninterfaces = 1};
//   // The host's kind "thumb" (<capsa/host.h>) runs capsa_renderer_main with
//   // &kThumb and lists the same interfaces.
//   CAPSA_RENDERER_KIND(thumb, "thumb", capsa_renderer_main, &kThumb)
//
// capsa_renderer_main() is the process's whole life: it makes sure the
// process is in capability mode (a host's zygote has already entered it with
// the kind's compiled policy; otherwise it calls capsa_cap_enter() itself,
// before reading anything), sends HELLO with the sandbox report, answers
// PING, returns on SHUTDOWN or when the host goes away, and hands every
// other message to on_message. Nothing in here opens a file or needs any
// authority beyond the channel.
#ifndef CAPSA_RENDERER_RUNTIME_H_
#define CAPSA_RENDERER_RUNTIME_H_

#include <stdarg.h>

#include "ipc/loop.h"
#include "ipc/message.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

typedef struct capsa_rctx capsa_rctx_t;

typedef struct capsa_renderer_handlers {
  const char *kind;  // sent in HELLO
  // After HELLO, before the first message; may be NULL. Return < 0 to exit.
  // It may call the host (capsa_rctx_call): what the host sends meanwhile
  // reaches on_message after on_start returns, in order. In a spare (the
  // kind's keep_spare) it runs before the host claims the process, so a
  // call waits for the claim: shared set-up belongs in a warm-up
  // (CAPSA_RENDERER_WARM_UP), which runs once in the zygote.
  int (*on_start)(capsa_rctx_t *r);
  // Every host message but PING and SHUTDOWN. `msg` as in ipc/loop.h (valid
  // during the call; untaken descriptors closed after). 0: go on; > 0: leave
  // the loop (exit code 0); < 0: leave with that error.
  int (*on_message)(capsa_rctx_t *r, capsa_msg_t *msg);
  void *data;  // for the handlers
  // The embedder interfaces this kind speaks (ipc/interface.h), the same
  // list, in the same order, as the host's kind options say: HELLO carries
  // their hash and the host refuses a renderer whose list differs. Their
  // messages reach on_message as CAPSA_MSG_INTERFACE, verified and decoded
  // (msg->u.iface.value is the generated struct); send them with
  // capsa_msg_init_iface() and capsa_rctx_send / _reply / _call.
  const struct capsa_interface *const *interfaces;  // borrowed, static
  unsigned ninterfaces;  // <= CAPSA_IFACE_MAX_PER_CHANNEL
} capsa_renderer_handlers_t;

// Exit codes of capsa_renderer_main.
#define CAPSA_RENDERER_EXIT_OK 0
#define CAPSA_RENDERER_EXIT_CAPMODE 3  // could not enter capability mode
#define CAPSA_RENDERER_EXIT_CHANNEL 4  // channel broken / bad message
#define CAPSA_RENDERER_EXIT_HANDLER 5  // a handler returned an error
// A handler (on_start or on_message) returned -ENOMEM. For a kind with a
// memory limit the host reports it as CAPSA_EV_LIMIT, "memory (RLIMIT_AS;
// reported by the renderer)": under rlimits the kernel gives the host no
// outside evidence (a refused allocation is just a failed mmap inside the
// renderer), so this is the renderer's own word, and it only classifies its
// own exit. Under cgroup v2 the host reads the kernel's memory.events.
#define CAPSA_RENDERER_EXIT_NOMEM 6

// The renderer process's main. `channel_fd` (owned from now on), `sandbox`
// (borrowed; may be NULL: then the report is built here), `handlers` (a
// const capsa_renderer_handlers_t *, borrowed). Returns an exit code.
// Matches the host's renderer entry signature (capsa_renderer_entry_fn).
int capsa_renderer_main(int channel_fd, const capsa_sandbox_report_t *sandbox,
                        void *handlers);

// The same, and every received handle is limited to the rights its message
// declares (capsa_rights_limit), e.g. gzip's output to write-only. Only for
// kinds whose handles never take a descriptor number that an earlier handle
// had with narrower rights: number-keyed rights outlive the descriptor, and
// the wider limit would fail (ENOTCAPABLE, the renderer exits).
int capsa_renderer_main_limited(int channel_fd,
                                const capsa_sandbox_report_t *sandbox,
                                void *handlers);

// For handlers. Ownership of handle descriptors as ipc/loop.h.
int capsa_rctx_send(capsa_rctx_t *r, capsa_msg_t *msg);
int capsa_rctx_reply(capsa_rctx_t *r, const capsa_msg_t *request,
                     capsa_msg_t *reply);
// A request to the host (e.g. RESOURCE_REQUEST to the broker); *reply valid
// until the next call on r. Usable from any handler, on_message included:
// no handler runs inside another, so what arrives while the call waits is
// delivered after the calling handler returns, in order (PING is answered
// at once). Earlier versions refused a call from inside on_message with
// -EDEADLK, and a handler had to send the request with capsa_rctx_send and
// take the response in a later on_message instead; that still works, but
// a call from on_message now simply returns the reply (never -EDEADLK).
int capsa_rctx_call(capsa_rctx_t *r, capsa_msg_t *msg, int timeout_ms,
                    capsa_msg_t *reply);
// One LOG message (renderers have no stderr of their own). 0 or -errno.
int capsa_rctx_log(capsa_rctx_t *r, unsigned level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void *capsa_rctx_data(capsa_rctx_t *r);
// Why the last call failed with -EBADMSG (the loop's reason), "" otherwise.
const char *capsa_rctx_last_error(capsa_rctx_t *r);
const capsa_sandbox_report_t *capsa_rctx_sandbox(capsa_rctx_t *r);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_RENDERER_RUNTIME_H_
