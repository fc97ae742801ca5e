// Internals shared by the rights files (not a public header).
#ifndef CAPSA_SANDBOX_RIGHTS_INTERNAL_H_
#define CAPSA_SANDBOX_RIGHTS_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/rights/rights.h"
#include "sandbox/seccomp.h"

// What the process table records for one limited descriptor number.
struct capsa__rights_entry {
  capsa_rights_t rights;
  bool ioctls_limited;
  unsigned long *ioctls;  // owned by the table; sorted, unique low 32 bits
  size_t nioctls;
  uint32_t fcntls;      // CAPSA_CAP_FCNTL_* mask
  unsigned mechanisms;  // CAPSA_RIGHTS_BY_* bits
  // Closed by capsa_rights_close(): the number holds the inert placeholder
  // so that nothing else is opened under its filter; EBADF to the API.
  bool parked;
};

// One comparison on a syscall argument: (word & mask) == value (or !=), where
// word is the low (high = 0) or high 32 bits of argument `arg`. Comparing 32
// bits at a time is how C `int` arguments must be checked (the upper half may
// be garbage) and lets 64-bit values be checked half by half.
enum { CAPSA__COND_EQ = 0, CAPSA__COND_NE = 1 };
struct capsa__rights_cond {
  uint8_t arg;
  uint8_t high;
  uint8_t op;
  uint32_t mask;
  uint32_t value;
};

// A row of the rights policy: syscall `nr` used on the limited number in
// argument `fd_arg` (and, when ncond > 0, only if every condition holds)
// needs all of `need` (a single CAPSA_CAP_* value or an OR of rights of one
// word); CAPSA__NEED_NEVER means it is always refused on a limited number.
#define CAPSA__NEED_NEVER 0ULL
struct capsa__rights_row {
  int nr;
  uint8_t fd_arg;
  uint64_t need;
  uint8_t ncond;
  struct capsa__rights_cond cond[2];
  const char *reason;
};

extern const struct capsa__rights_row capsa__rights_rows[];
extern const size_t capsa__rights_nrows;

// Descriptor arguments of syscalls capability mode allows that have no row
// above, each with why no right is checked there. Reviewed data, like the
// rows: tests/sandbox/rights_coverage_test.cc walks the capability-mode
// table against the rows and these, so a syscall allowed on descriptors
// cannot be added without either.
struct capsa__rights_exempt {
  int nr;
  uint8_t fd_arg;
  const char *reason;
};
extern const struct capsa__rights_exempt capsa__rights_exempt[];
extern const size_t capsa__rights_nexempt;

// Linux fcntl commands allowed on a limited number holding `e`'s rights and
// fcntl mask; writes up to `max` into `cmds`, returns how many.
size_t capsa__rights_fcntl_allowed(const struct capsa__rights_entry *e,
                                   uint32_t *cmds, size_t max);

// PIDFD_GET_INFO (Linux 6.13) with the 64-byte first version of struct
// pidfd_info, as sandbox/procdesc.c issues it; the size field (bits 16-29)
// varies with the struct version.
#define CAPSA__PIDFD_GET_INFO 0xC040FF0Bu
#define CAPSA__IOC_SIZE_MASK 0x3FFF0000u
static inline bool capsa__rights_is_pidfd_info(uint32_t cmd) {
  return (cmd & ~CAPSA__IOC_SIZE_MASK) ==
         (CAPSA__PIDFD_GET_INFO & ~CAPSA__IOC_SIZE_MASK);
}

// true when `rights` holds every bit of the single-word value `need`.
bool capsa__rights_has(const capsa_rights_t *rights, uint64_t need);

// Builds the seccomp filter that refuses, on number `fd`, every syscall the
// entry does not allow and `prev` (the entry whose filters are already on
// the number, NULL for none; `e` is never wider) does not refuse already.
// out->len is 0 when there is nothing left to refuse. *out is owned by the
// caller (capsa_bpf_free). 0 or -ENOMEM / -E2BIG.
int capsa__rights_bpf_build(int fd, const struct capsa__rights_entry *e,
                            const struct capsa__rights_entry *prev,
                            struct capsa_bpf *out);

// Narrows the open file description itself where Linux can (see rights.h).
// Returns CAPSA_RIGHTS_BY_* bits for what it achieved (0 when nothing could
// or needed to be done); never fails the caller's limit.
unsigned capsa__rights_narrow_object(int fd, const capsa_rights_t *rights);

#endif  // CAPSA_SANDBOX_RIGHTS_INTERNAL_H_
