// ELF symbol lookup (host/elf_symbols.h). A 64-bit ELF file of the host's
// own byte order only: the image the host execs is built for this machine.
#include "host/elf_symbols.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Symbols read per pread: the table is scanned in pieces, never held whole.
#define CHUNK 512

static int read_at(int fd, void *buf, size_t len, uint64_t off, uint64_t size) {
  if (off > size || len > size - off) return -EINVAL;
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? -errno : -EIO;
    got += (size_t)n;
  }
  return 0;
}

// The section of type `type`, and its linked string table, checked to lie
// inside the file.
static int find_table(int fd, const Elf64_Ehdr *eh, uint64_t size,
                      uint32_t type, Elf64_Shdr *tab, Elf64_Shdr *str) {
  if (eh->e_shentsize != sizeof(Elf64_Shdr)) return -ENOEXEC;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (read_at(fd, tab, sizeof *tab, eh->e_shoff + (uint64_t)i * sizeof *tab,
                size) < 0)
      return -ENOEXEC;
    if (tab->sh_type != type) continue;
    if (tab->sh_link == 0 || tab->sh_link >= eh->e_shnum) return -ENOEXEC;
    if (read_at(fd, str, sizeof *str,
                eh->e_shoff + (uint64_t)tab->sh_link * sizeof *str, size) < 0)
      return -ENOEXEC;
    if (tab->sh_offset > size || tab->sh_size > size - tab->sh_offset ||
        str->sh_offset > size || str->sh_size > size - str->sh_offset)
      return -ENOEXEC;
    return 0;
  }
  return -ENOENT;
}

int capsa__elf_symbolize(int fd, const uint64_t *addrs, unsigned n,
                         struct capsa__elf_sym *out) {
  if (n > CAPSA__ELF_MAX_ADDRS) return -E2BIG;
  for (unsigned i = 0; i < n; i++) out[i].name[0] = '\0';
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  uint64_t size = (uint64_t)st.st_size;
  Elf64_Ehdr eh;
  if (read_at(fd, &eh, sizeof eh, 0, size) < 0) return -ENOEXEC;
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return -ENOEXEC;
  Elf64_Shdr tab, str;
  int err = find_table(fd, &eh, size, SHT_SYMTAB, &tab, &str);
  if (err == -ENOENT) err = find_table(fd, &eh, size, SHT_DYNSYM, &tab, &str);
  if (err < 0) return err;
  // Best candidate per address: its symbol's value and name offset.
  uint64_t best_val[CAPSA__ELF_MAX_ADDRS];
  uint32_t best_name[CAPSA__ELF_MAX_ADDRS];
  for (unsigned i = 0; i < n; i++) best_name[i] = 0;
  uint64_t count = tab.sh_size / sizeof(Elf64_Sym);
  Elf64_Sym syms[CHUNK];
  for (uint64_t at = 0; at < count; at += CHUNK) {
    size_t m = count - at < CHUNK ? (size_t)(count - at) : CHUNK;
    if (read_at(fd, syms, m * sizeof *syms, tab.sh_offset + at * sizeof *syms,
                size) < 0)
      return -EIO;
    for (size_t j = 0; j < m; j++) {
      const Elf64_Sym *s = &syms[j];
      unsigned t = ELF64_ST_TYPE(s->st_info);
      if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
          s->st_name == 0 || s->st_name >= str.sh_size)
        continue;
      for (unsigned i = 0; i < n; i++) {
        uint64_t a = addrs[i];
        if (a < s->st_value) continue;
        // Held by it, or (a symbol without size) the nearest below.
        if (s->st_size != 0 && a - s->st_value >= s->st_size) continue;
        if (best_name[i] != 0 && s->st_value <= best_val[i]) continue;
        best_val[i] = s->st_value;
        best_name[i] = s->st_name;
      }
    }
  }
  for (unsigned i = 0; i < n; i++) {
    if (best_name[i] == 0) continue;
    uint64_t off = str.sh_offset + best_name[i];
    uint64_t left = str.sh_offset + str.sh_size - off;
    size_t len = sizeof out[i].name - 1;
    if (left < len) len = (size_t)left;
    if (read_at(fd, out[i].name, len, off, size) < 0) {
      out[i].name[0] = '\0';
      continue;
    }
    out[i].name[len] = '\0';  // a name cut at the buffer, or at the table
    out[i].start = best_val[i];
  }
  return 0;
}
