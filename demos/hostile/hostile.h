// The hostile renderer's attack list: named escape attempts, each run from
// inside a sandboxed renderer, with the outcome capability mode must give.
// Data + code: `capsa demo` prints the table; the escape-matrix tests assert
// every row.
//
//   struct capsa_attack_env env;
//   capsa_attack_env_init(&env);          // host pid = getppid(), no handles
//   env.ro_shm_fd = fd;                   // a read-only shm handle it holds
//   env.ro_shm_size = size;
//   ... enter capability mode ...
//   struct capsa_attack_result res[CAPSA_ATTACKS_MAX];
//   int n = capsa_attacks_run_all(&env, res, CAPSA_ATTACKS_MAX);
//   char table[8192];
//   capsa_attacks_format(res, n, table, sizeof table);
//   fputs(table, stdout);
//   // every res[i].verdict is CAPSA_VERDICT_REFUSED or _KILLED, else escape
//
// Each attempt runs in a forked child of the caller (fork is allowed in
// capability mode), so an attack the sandbox answers with a kill (SIGSYS)
// is observed and the caller survives; the child reports through a shared
// anonymous page, not a descriptor; a child that ends without reporting
// and without a signal was replaced by an exec: an escape. Attempts are
// written so that if one succeeded it would do no harm: signal 0,
// PTRACE_SEIZE (no stop), mount on a path that does not exist, execve of
// `sh -c 'exit 42'` or `mount --version`.
#ifndef CAPSA_RENDERER_HOSTILE_HOSTILE_H_
#define CAPSA_RENDERER_HOSTILE_HOSTILE_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// What the attacker holds. Every descriptor is borrowed (owned by the
// caller, never closed by an attack; attacks run in children anyway).
//
// In a PID namespace the host is outside it and getppid() is 0: pass the
// host's pid as the renderer's namespace sees it, if any; attempts on pid 0
// then aim at the caller's own process group, which capability mode refuses
// as well (signals only to the caller's own pid).
struct capsa_attack_env {
  pid_t host_pid;     // the broker to attack (ptrace, signals, process_vm)
  pid_t sibling_pid;  // another renderer to attack, or 0
  int ro_shm_fd;      // read-only sealed shared memory received, or -1
  size_t ro_shm_size;
  int dir_fd;      // a directory handle to escape from with "..", or -1
  int limited_fd;  // a descriptor limited (capsa_rights_limit) to rights
                   // without CAP_WRITE, or -1
  int tty_fd;      // a descriptor to try TIOCSTI on (default 0)
  // Whether the kernel has the i386 entry (int 0x80), as probed OUTSIDE the
  // sandbox (capsa_features_cached(): the zygote probed before entering):
  // 1 present, 0 absent, -1 unknown (the attempt then runs).
  int i386_entry;
  const char *i386_detail;  // static: why absent, or NULL
  // The attacking renderer's own pid (the parent of each forked attempt).
  // Where host_pid equals it, the host's pid names this renderer itself in
  // its own pid namespace (a host that is pid 1 of a container, seen from a
  // renderer that is pid 1 of its own): the host cannot be named from in
  // there, and the signal attempts at it report CAPSA_ATTACK_NOT_APPLICABLE
  // (capsa_attack_aims_at_self) rather than signalling the renderer.
  pid_t self_pid;
};

// Defaults: host_pid = getppid(), self_pid = getpid(), no sibling, no shm, no
// directory, no limited descriptor, tty_fd = 0, i386_entry from the features
// cache.
void capsa_attack_env_init(struct capsa_attack_env *env);

// Whether `target` (a pid an attempt aims at as "another process") names the
// attacking renderer itself: see self_pid.
bool capsa_attack_aims_at_self(const struct capsa_attack_env *env,
                               pid_t target);

// An attempt returns 0 when the operation SUCCEEDED (an escape), -errno when
// refused, or CAPSA_ATTACK_NOT_APPLICABLE when the env lacks what it needs.
#define CAPSA_ATTACK_NOT_APPLICABLE 1
typedef int (*capsa_attack_fn)(const struct capsa_attack_env *env);

#define CAPSA_ATTACK_MAX_ERRNOS 4

// The kernel entry an attack targets, when not every kernel has it: an
// attack whose target is absent is reported ABSENT, not refused.
enum capsa_attack_need {
  CAPSA_ATTACK_NEEDS_NOTHING = 0,
  CAPSA_ATTACK_NEEDS_I386,  // the i386 entry (int 0x80)
};
struct capsa_attack {
  const char *name;  // short id, e.g. "open-etc-passwd"
  const char *what;  // what it tries, one line
  capsa_attack_fn attempt;
  // Refusals that count as correct (positive errno values, 0-terminated).
  // The first is capsa's documented answer; others are alternatives the
  // differences table documents (e.g. Landlock's EACCES).
  int expect_errno[CAPSA_ATTACK_MAX_ERRNOS];
  int expect_signal;  // a signal that also counts as refused (SIGSYS), or 0
  const char *layer;  // which layer is expected to refuse it
  // The kernel entry the attack targets, when not every kernel has it: an
  // attack whose target is absent is reported ABSENT, not refused.
  enum capsa_attack_need need;
};

// The list, in a fixed order.
extern const struct capsa_attack capsa_attacks[];
extern const size_t capsa_attacks_count;
#define CAPSA_ATTACKS_MAX 64

enum capsa_attack_verdict {
  CAPSA_VERDICT_REFUSED = 0,  // failed with an expected errno
  CAPSA_VERDICT_KILLED,       // the attempt was killed by expect_signal
  CAPSA_VERDICT_ESCAPED,      // the operation succeeded
  CAPSA_VERDICT_UNEXPECTED,   // failed, but with an errno/signal not listed
  CAPSA_VERDICT_SKIPPED,      // not applicable in this env
  CAPSA_VERDICT_ERROR,        // could not be run (fork failed, timeout)
  CAPSA_VERDICT_ABSENT,       // the kernel lacks what it attacks (checked
                              // outside the sandbox); not tried
};

struct capsa_attack_result {
  const struct capsa_attack *attack;  // points into capsa_attacks
  enum capsa_attack_verdict verdict;
  int observed_errno;   // positive errno, 0 when it succeeded or was killed
  int observed_signal;  // signal that ended the attempt, 0 if none
};

// Finds an attack by name, NULL when unknown.
const struct capsa_attack *capsa_attack_find(const char *name);

// Runs one attack in a forked child (timeout 5 s) and fills *res (owned by
// the caller). Returns 0 (the verdict says what happened) or -EINVAL.
int capsa_attack_run(const struct capsa_attack *a,
                     const struct capsa_attack_env *env,
                     struct capsa_attack_result *res);

// Runs every attack; stores min(n, capsa_attacks_count) results and returns
// that count, or -EINVAL.
int capsa_attacks_run_all(const struct capsa_attack_env *env,
                          struct capsa_attack_result *res, size_t n);

// Classifies an observed outcome against an attack's expectation.
enum capsa_attack_verdict capsa_attack_classify(const struct capsa_attack *a,
                                                int rc, int signal);

// "refused", "killed", "ESCAPED", "unexpected", "skipped", "error",
// "absent".
const char *capsa_attack_verdict_name(enum capsa_attack_verdict v);

// True when no result is ESCAPED, UNEXPECTED or ERROR.
bool capsa_attacks_all_refused(const struct capsa_attack_result *res, size_t n);

// Formats results as a text table (one row per attack: name, expected,
// observed, verdict, layer) into buf (owned by the caller; NUL-terminated
// when len > 0). Returns the length needed, as snprintf, or -EINVAL.
int capsa_attacks_format(const struct capsa_attack_result *res, size_t n,
                         char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_RENDERER_HOSTILE_HOSTILE_H_
