// Structure-aware fuzzing of an embedder's interface (docs/interfaces.md,
// "Fuzzing"): a libFuzzer harness and custom mutator driven by the
// generated descriptors (ipc/interface.h), feeding each accepted, decoded
// message to the embedder's own handler.
//
//   // An embedder's harness (docs/interfaces.md, "Fuzzing"): its generated
//   // interface, its own handler, one macro.
//   #include "host/examples/convert.capsa.h"
//   static int handle(uint32_t id, const void *value,
//                     const capsa_handle_t *handles, uint32_t nhandles,
//                     void *arg) {
//     (void)arg;
//     if (id != CAPSA_EXAMPLE_CONVERT_CONVERT) return 0;
//     const capsa_example_convert_convert_t *c = value;
//     if ((uint32_t)c->input >= nhandles) return -EINVAL;
//     return c->in_size <= handles[c->input].size ? 0 : -EINVAL;
//   }
//   CAPSA_FUZZ_INTERFACE(capsa_example_convert_interface, handle, NULL)
//
// An input is one message as the receiving side would get it:
//   u8 id (1 + id % nmessages), u8 handle count (<= CAPSA_IPC_MAX_HANDLES),
//   u16 0, u32 0; per handle 32 bytes: u8 kind, u8 writable, u16 0, u32 0,
//   u64 size, u64 rights[2]; then the message's flatbuffers payload.
// The mutator decodes the current input with the schema, changes one to
// three fields to values within and at the edges of their declared ranges
// and lengths (handles: the field's kind, writability and rights, sizes up
// to capsa_max_size), re-encodes it with the generated encoder, and now and
// then leaves the schema on purpose (libFuzzer's byte mutations of the
// payload, a declaration of another kind or wider rights), so both the
// accepted path and the checks' refusals stay covered.
#ifndef CAPSA_IPC_FUZZ_H_
#define CAPSA_IPC_FUZZ_H_

#include <stddef.h>
#include <stdint.h>

#include "ipc/interface.h"

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Size of the header and of each handle declaration of an input.
#define CAPSA_FUZZ_HEADER 8
#define CAPSA_FUZZ_HANDLE 32

// The embedder's handler: called with each message the schema accepted,
// decoded (`value`: the generated struct of message `id`, borrowed for the
// call; `handles`: its declarations, each with a real descriptor of its
// kind made for the call and closed after it: shm and file, a memfd of the
// declared size, sealed against writes unless declared writable (a file
// reopened read-only); channel, one end of a SEQPACKET socketpair). Its
// return value is ignored; a bug is a crash or a sanitizer report, which
// libFuzzer saves as a reproducer.
typedef int (*capsa_fuzz_handler_fn)(uint32_t id, const void *value,
                                     const capsa_handle_t *handles,
                                     uint32_t nhandles, void *arg);

// One input (`data`, `size` borrowed): decoded as above; when the schema
// accepts it, it must encode again (else __builtin_trap: the runtime
// accepted what its encoder refuses) and goes to `handler` (may be NULL)
// with `arg`. Returns 0 (libFuzzer's convention), whatever the input.
int capsa_fuzz_one(const capsa_interface_t *iface, const uint8_t *data,
                   size_t size, capsa_fuzz_handler_fn handler, void *arg);

// libFuzzer's custom mutator for `iface`: rewrites `data` (`size` bytes in
// a buffer of `max_size`) in place as described above, from `seed`.
// Returns the new size (<= max_size). Calls LLVMFuzzerMutate when linked
// with libFuzzer (-fsanitize=fuzzer), never otherwise.
size_t capsa_fuzz_mutate(const capsa_interface_t *iface, uint8_t *data,
                         size_t size, size_t max_size, unsigned seed);

// Writes one input of message `id` (`value`: its generated struct, with
// `nhandles` declarations) to `out` (`cap` bytes). Returns its size, or
// capsa_iface_encode's error (-EINVAL: `value` breaks the schema).
int capsa_fuzz_write(const capsa_interface_t *iface, uint32_t id,
                     const void *value, const capsa_handle_t *handles,
                     uint32_t nhandles, uint8_t *out, size_t cap);

#pragma GCC visibility pop

// The two libFuzzer entry points for `iface` (an lvalue: the generated
// capsa_interface_t) and `handler`/`arg` (see capsa_fuzz_handler_fn).
#ifdef __cplusplus
#define CAPSA__FUZZ_EXTERN extern "C"
#else
#define CAPSA__FUZZ_EXTERN
#endif
#define CAPSA_FUZZ_INTERFACE(iface, handler, arg)                       \
  CAPSA__FUZZ_EXTERN int LLVMFuzzerTestOneInput(const uint8_t *data,    \
                                                size_t size);           \
  CAPSA__FUZZ_EXTERN size_t LLVMFuzzerCustomMutator(                    \
      uint8_t *data, size_t size, size_t max_size, unsigned int seed);  \
  CAPSA__FUZZ_EXTERN int LLVMFuzzerTestOneInput(const uint8_t *data,    \
                                                size_t size) {          \
    return capsa_fuzz_one(&(iface), data, size, (handler), (arg));      \
  }                                                                     \
  CAPSA__FUZZ_EXTERN size_t LLVMFuzzerCustomMutator(                    \
      uint8_t *data, size_t size, size_t max_size, unsigned int seed) { \
    return capsa_fuzz_mutate(&(iface), data, size, max_size, seed);     \
  }

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_FUZZ_H_
