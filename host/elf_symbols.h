// Function names for addresses, from an ELF file's symbol table (.symtab,
// else .dynsym): the host's own trusted files, still read with every
// offset and size checked against the file, so that a damaged file gives
// no name rather than a fault.
#ifndef CAPSA_HOST_ELF_SYMBOLS_H_
#define CAPSA_HOST_ELF_SYMBOLS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSA__ELF_NAME_MAX 96
#define CAPSA__ELF_MAX_ADDRS 64

struct capsa__elf_sym {
  uint64_t start;  // the function's link-time address; valid when name[0]
  char name[CAPSA__ELF_NAME_MAX];  // "" when no function holds the address
};

// For each of the n link-time addresses addrs[i], the function symbol that
// holds it (or the nearest one below it without a size) into out[i], in
// one pass over the table. `fd` is borrowed and read with pread only.
// n <= CAPSA__ELF_MAX_ADDRS (else -E2BIG). Returns 0, or -errno when the file
// is no ELF file of this machine's class (-ENOEXEC) or cannot be read (out[]
// then all "").
int capsa__elf_symbolize(int fd, const uint64_t *addrs, unsigned n,
                         struct capsa__elf_sym *out);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_ELF_SYMBOLS_H_
