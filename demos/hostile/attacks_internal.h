// The attempt functions (attacks.c), listed by the table in hostile.c.
#ifndef CAPSA_RENDERER_HOSTILE_ATTACKS_INTERNAL_H_
#define CAPSA_RENDERER_HOSTILE_ATTACKS_INTERNAL_H_

#include <stdio.h>

#include "demos/hostile/hostile.h"

int capsa__atk_open_passwd(const struct capsa_attack_env *env);
int capsa__atk_openat_cwd(const struct capsa_attack_env *env);
int capsa__atk_openat_dotdot(const struct capsa_attack_env *env);
int capsa__atk_openat_absolute(const struct capsa_attack_env *env);
int capsa__atk_symlink_escape(const struct capsa_attack_env *env);
int capsa__atk_proc_fd_reopen(const struct capsa_attack_env *env);
int capsa__atk_stat_path(const struct capsa_attack_env *env);
int capsa__atk_open_by_handle(const struct capsa_attack_env *env);
int capsa__atk_tcp_connect(const struct capsa_attack_env *env);
int capsa__atk_udp_sendto(const struct capsa_attack_env *env);
int capsa__atk_netlink(const struct capsa_attack_env *env);
int capsa__atk_unix_abstract_connect(const struct capsa_attack_env *env);
int capsa__atk_unix_abstract_bind(const struct capsa_attack_env *env);
int capsa__atk_unix_path_connect(const struct capsa_attack_env *env);
int capsa__atk_ptrace_host(const struct capsa_attack_env *env);
int capsa__atk_ptrace_sibling(const struct capsa_attack_env *env);
int capsa__atk_process_vm_sibling(const struct capsa_attack_env *env);
int capsa__atk_kill_sibling(const struct capsa_attack_env *env);
int capsa__atk_process_vm_read(const struct capsa_attack_env *env);
int capsa__atk_kill_init(const struct capsa_attack_env *env);
int capsa__atk_kill_host(const struct capsa_attack_env *env);
int capsa__atk_tgkill_host(const struct capsa_attack_env *env);
int capsa__atk_mount(const struct capsa_attack_env *env);
int capsa__atk_chroot(const struct capsa_attack_env *env);
int capsa__atk_unshare_user(const struct capsa_attack_env *env);
int capsa__atk_unshare_net(const struct capsa_attack_env *env);
int capsa__atk_setns(const struct capsa_attack_env *env);
int capsa__atk_clone_newns(const struct capsa_attack_env *env);
int capsa__atk_execve_sh(const struct capsa_attack_env *env);
int capsa__atk_execveat_fd(const struct capsa_attack_env *env);
int capsa__atk_execve_setuid(const struct capsa_attack_env *env);
int capsa__atk_rights_widen(const struct capsa_attack_env *env);
int capsa__atk_rights_write(const struct capsa_attack_env *env);
int capsa__atk_rights_dup(const struct capsa_attack_env *env);
int capsa__atk_setuid_root(const struct capsa_attack_env *env);
int capsa__atk_io_uring(const struct capsa_attack_env *env);
int capsa__atk_bpf(const struct capsa_attack_env *env);
int capsa__atk_perf_event_open(const struct capsa_attack_env *env);
int capsa__atk_userfaultfd(const struct capsa_attack_env *env);
int capsa__atk_keyctl(const struct capsa_attack_env *env);
int capsa__atk_sysv_shm(const struct capsa_attack_env *env);
int capsa__atk_mmap_exec(const struct capsa_attack_env *env);
int capsa__atk_mprotect_exec(const struct capsa_attack_env *env);
int capsa__atk_tiocsti(const struct capsa_attack_env *env);
int capsa__atk_tiocsti_high_bits(const struct capsa_attack_env *env);
int capsa__atk_int80_getpid(const struct capsa_attack_env *env);
int capsa__atk_x32_getpid(const struct capsa_attack_env *env);
int capsa__atk_shm_write(const struct capsa_attack_env *env);
int capsa__atk_shm_grow(const struct capsa_attack_env *env);
int capsa__atk_shm_shrink(const struct capsa_attack_env *env);
int capsa__atk_shm_mmap_writable(const struct capsa_attack_env *env);
int capsa__atk_shm_mprotect_writable(const struct capsa_attack_env *env);

#endif  // CAPSA_RENDERER_HOSTILE_ATTACKS_INTERNAL_H_
