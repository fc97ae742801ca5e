// Renderer kinds registered by name, and the early hook every embedding
// binary calls first in main().
//
//   #include <capsa/renderer.h>
//
//   static int on_start(capsa_rctx_t *r) {
//     return capsa_rctx_log(r, CAPSA_LOG_INFO, "page renderer up");
//   }
//   static const capsa_renderer_handlers_t kPage = {.kind = "page",
//                                                   .on_start = on_start};
//   CAPSA_RENDERER_KIND(page, "page", capsa_renderer_main, &kPage)
//
//   int main(int argc, char **argv) {
//     int rc = capsa_main(argc, argv);  // first line: before any thread,
//     if (rc < 0) return 1;             // allocation or open descriptor
//     capsa_kind_options_t k;
//     capsa_kind_options_init(&k, "page", capsa_renderer_main, (void *)&kPage);
//     // capsa_host_define_kind(&host, &k) checks it against the registry;
//     /* ... then capsa_host_start, capsa_host_spawn, uv_run: <capsa/host.h> */
//     return 0;
//   }
//
// Why a registry: renderers are to descend from a zygote that is a fresh
// exec of this very binary (issue 12: a clean image, no copy of the host's
// heap, env, argv or mappings). Function and argument pointers do not
// survive an exec (PIE + ASLR relocate the image), so the new image finds a
// kind by its name in a table its own static constructors filled. Only
// static, const data can be a kind's argument for that reason.
//
// Why capsa_main: it opens the running binary once (/proc/self/exe,
// O_RDONLY | O_CLOEXEC) so that a zygote started later (or a replacement
// after a crash) execs the same file even if the one on disk was replaced;
// and in the zygote image (argv[0] "capsa-zygote" and fd 3 a connected unix
// socket: both, so no user triggers it by accident) it is where the zygote
// runs, never returning to the embedder's main.
//
// What capsa_host_start does with it (host/capsa_host.h): when
// capsa_main ran and every defined kind's name is registered here, the
// zygote is a fresh exec of the binary (host/zygote/zygote.h,
// capsa__zygote_exec_start) that runs each kind's registered entry.
// Otherwise the start fails with -ENOEXEC, unless the host option
// allow_forked_zygote accepts a zygote forked from the host (then
// capsa_host_image() is "fork: <why>"). A kind whose
// entry or argument is not static (a pointer into the host's heap or
// stack) cannot be registered: it only runs in a forked zygote.
//
// A renderer executable of its own (capsa_host_options_t.renderer_exe):
// when the renderers' code links libraries the host should not map (a PNG
// or JPEG parser), it goes into a second program, and the zygote is a
// fresh exec of that one instead of the host:
//
//   // renderer.c: cc renderer.c $(pkg-config --cflags --libs capsa libpng)
//   CAPSA_RENDERER_KIND(png, "png", capsa_renderer_main, &kPng);
//   int main(int argc, char **argv) {
//     if (capsa_main(argc, argv) < 0) return 1;  // the zygote stays here
//     fprintf(stderr, "run by a capsa host, not by hand\n");
//     return 2;                                  // what a user's run does
//   }
//
//   // host.c: cc host.c $(pkg-config --cflags --libs capsa): no libpng
//   o.renderer_exe = "/usr/libexec/app/renderer";
//   capsa_kind_options_init(&k, "png", NULL, NULL);  // by name alone
//
// What capsa_main means then: in the renderer executable the same as
// above (first line of main; in the zygote image it never returns; run by
// hand it returns 0 and main goes on as the executable decides). The host
// program needs neither capsa_main nor any registration: its own image is
// never exec'd, and its registry is not consulted (a host may still call
// capsa_main; it then only holds /proc/self/exe, unused). Which names the
// executable registers is only known inside its image, so the zygote
// reports them back at capsa_host_start: a defined kind it lacks (or has
// twice) fails the start, -ENOENT (-ENOTUNIQ), with
// capsa_host_start_error() naming the kind, the executable and what it
// registers; an executable that never answers as a zygote (no capsa_main
// first, another capsa's protocol) fails with -EPROTO saying so.
#ifndef CAPSA_HOST_KIND_REGISTRY_H_
#define CAPSA_HOST_KIND_REGISTRY_H_

#include <stdbool.h>

#include "host/capsa_host.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Room for every kind of a binary; a registration beyond it is dropped and
// remembered (capsa_kind_registry_overflowed).
#define CAPSA_KIND_REGISTRY_MAX 64

typedef struct capsa_kind_registration {
  const char *name;
  capsa_renderer_entry_fn main;
  void *arg;
} capsa_kind_registration_t;

// Called by CAPSA_RENDERER_KIND's constructor; `r` must be static. A second
// registration of the same name is ignored and marks the name ambiguous:
// capsa_kind_lookup then fails for it.
void capsa_kind_register(const capsa_kind_registration_t *r);

// The registration of `name`, or NULL (unknown, or registered twice).
const capsa_kind_registration_t *capsa_kind_lookup(const char *name);

bool capsa_kind_registry_overflowed(void);

// A kind's warm-up: work every renderer of the kind would otherwise repeat
// at start (a font rasterised, a dictionary parsed, tables built), done
// once in the zygote before it forks them, so each renderer starts with
// the result in its memory (copy-on-write: its writes stay its own and
// reach neither the zygote nor a sibling).
//
//   static int glyphs_ready;
//   static int warm(const int *fds, unsigned nfds) {  // in the zygote
//     (void)fds;  // the kind's warm_up_fds (capsa_kind_options_t), borrowed
//     glyphs_ready = nfds > 0;
//     return 0;  // or -errno: capsa_host_start fails and says why
//   }
//   CAPSA_RENDERER_WARM_UP(page, "page", warm)
//   // in the renderer: if (!glyphs_ready) build them here, as before
//
// When: in an exec'd zygote (capsa_main, or renderer_exe), after its
// configuration and before its sandbox stage or any fork; again in each
// zygote that replaces one (zygote_renew_after, after a zygote crash). A
// forked zygote (allow_forked_zygote) runs none: a renderer must cope with
// a warm-up that did not run (capsa_host_kind_warm_up says
// CAPSA_WARM_UP_NOT_RUN). What it may do: read its descriptors, allocate,
// compute; no threads (the zygote forks afterwards), nothing per user or per
// job (every renderer of the kind, each a compromised one in the threat model,
// sees all of it). Descriptors it opens are closed after it returns; so are
// `fds`. Registered by name, like the kind; at most one per name.
typedef int (*capsa_warm_up_fn)(const int *fds, unsigned nfds);

typedef struct capsa_warm_up_registration {
  const char *name;
  capsa_warm_up_fn fn;
} capsa_warm_up_registration_t;

// Called by CAPSA_RENDERER_WARM_UP's constructor; `r` must be static.
void capsa_kind_register_warm_up(const capsa_warm_up_registration_t *r);

#define CAPSA_RENDERER_WARM_UP(ident, kname, fn)                            \
  static const capsa_warm_up_registration_t capsa__warm_reg_##ident = {     \
      (kname), (fn)};                                                       \
  __attribute__((constructor)) static void capsa__warm_ctor_##ident(void) { \
    capsa_kind_register_warm_up(&capsa__warm_reg_##ident);                  \
  }

// Registers a kind at load time, before main. `ident` names the static
// descriptor (unique in the translation unit); `arg` must be a constant
// address (static data), never the address of a local.
#define CAPSA_RENDERER_KIND(ident, kname, entry, argp)                      \
  static const capsa_kind_registration_t capsa__kind_reg_##ident = {        \
      (kname), (entry), (void *)(argp)};                                    \
  __attribute__((constructor)) static void capsa__kind_ctor_##ident(void) { \
    capsa_kind_register(&capsa__kind_reg_##ident);                          \
  }

// The early hook: call as the first line of main() of a host that runs its
// own binary as the zygote, and of every renderer executable. Returns 0 in
// the embedder's process (the running binary is then open for the zygote),
// or -errno when /proc/self/exe cannot be opened. In the zygote image it
// does not return.
int capsa_main(int argc, char **argv);

// Whether capsa_main ran in this process (and opened the binary).
bool capsa_main_called(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_KIND_REGISTRY_H_
