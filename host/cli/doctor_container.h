// capsa doctor's "this process's surroundings" section: what a container
// runtime changed under a sandbox host (pid 1, a /proc of another pid
// namespace, a seccomp filter and no_new_privs installed before capsa,
// missing capabilities) and, per namespace a launcher could not make,
// whether it was refused here or the kernel lacks it.
#ifndef CAPSA_HOST_CLI_DOCTOR_CONTAINER_H_
#define CAPSA_HOST_CLI_DOCTOR_CONTAINER_H_

#include <stdbool.h>
#include <sys/types.h>

#include "sandbox/launcher/namespaces.h"

struct capsa_doctor_container {
  pid_t pid;              // getpid(): in this pid namespace
  int pidns_depth;        // entries of NSpid: 1 = the initial namespace
  bool inherits_orphans;  // pid 1 or a child subreaper
  int proc_err;           // capsa_proc_view_check(): 0, -ESRCH, -ENOENT
  char proc_why[320];     // why, when proc_err < 0
  int seccomp_mode;       // /proc/self/status Seccomp: 0, 1, 2 (filter)
  int seccomp_filters;    // Seccomp_filters (Linux 5.9), -1 unknown
  bool nnp_preset;        // NoNewPrivs was already 1 when capsa started
  bool cap_sys_admin;     // CAP_SYS_ADMIN in the effective set
  bool cap_sys_ptrace;    // CAP_SYS_PTRACE in the effective set
  unsigned long long cap_eff;
  // Per namespace bit index: a word for what its errno means here.
  const char *ns_cause[CAPSA_NAMESPACE_COUNT];
};

void capsa_doctor_container_get(const struct capsa_ns_report *ns,
                                struct capsa_doctor_container *c);
// Whether a host can start here at all (capsa_host_start would refuse).
bool capsa_doctor_container_host_can_start(
    const struct capsa_doctor_container *c);
void capsa_doctor_container_print(const struct capsa_ns_report *ns,
                                  const struct capsa_doctor_container *c);
void capsa_doctor_container_json(const struct capsa_ns_report *ns,
                                 const struct capsa_doctor_container *c,
                                 void (*json_string)(const char *));

#endif  // CAPSA_HOST_CLI_DOCTOR_CONTAINER_H_
