// Escape attempts the hostile renderer's list (demos/hostile/hostile.h)
// does not cover, in the same form (struct capsa_attack rows run by
// capsa_attack_run): the rest of the namespace calls, a sibling renderer as a
// target, binds, the remaining SysV/POSIX IPC, a setuid execve, widening
// rights and re-opening a read-only file handle.
//
//   capsa_escape_ctx.sibling_pid = pid;  // another renderer (host's pid ns)
//   capsa_escape_ctx.file_fd = fd;       // a read-only file handle, or -1
//   struct capsa_attack_result r;
//   capsa_attack_run(&capsa_escape_attacks[i], &env, &r);
#ifndef CAPSA_TESTS_ESCAPE_ESCAPE_ATTACKS_H_
#define CAPSA_TESTS_ESCAPE_ESCAPE_ATTACKS_H_

#include <stddef.h>
#include <sys/types.h>

#include "demos/hostile/hostile.h"

#ifdef __cplusplus
extern "C" {
#endif

// What these attempts target beyond struct capsa_attack_env. Set before
// running (the attempts run in forked children and only read it).
struct capsa_escape_ctx {
  pid_t sibling_pid;  // another renderer, as the host numbers it; 0: none
  int file_fd;        // a read-only regular-file handle (borrowed), or -1
};
extern struct capsa_escape_ctx capsa_escape_ctx;

extern const struct capsa_attack capsa_escape_attacks[];
extern const size_t capsa_escape_attacks_count;

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_TESTS_ESCAPE_ESCAPE_ATTACKS_H_
