// Readers of one process's /proc files and a cgroup's memory.current, for
// the task manager (host/task_manager.c). Each returns 0 or -errno and
// writes its outputs only on success; none allocates.
#ifndef CAPSA_HOST_PROC_INFO_H_
#define CAPSA_HOST_PROC_INFO_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct capsa__proc_stat {
  char state;            // R, S, D, Z, ...
  pid_t ppid;            // in the reader's pid namespace
  uint64_t cpu_ticks;    // utime + stime, clock ticks
  uint64_t start_ticks;  // start time, clock ticks after boot
};

// Parses the text of /proc/PID/stat (NUL-terminated). The command name
// (field 2) may hold spaces and ')' of its own: the fields are counted from
// the last ')' in the line. -EPROTO when the line is not such a line.
int capsa__proc_stat_parse(const char *line, struct capsa__proc_stat *out);
// Reads and parses /proc/PID/stat. -ESRCH when the process is gone.
int capsa__proc_stat_read(pid_t pid, struct capsa__proc_stat *out);

// The process's age in milliseconds from a parsed start time.
uint64_t capsa__proc_age_ms(const struct capsa__proc_stat *st);
// Clock ticks to microseconds.
uint64_t capsa__proc_ticks_usec(uint64_t ticks);

// /proc/PID/smaps_rollup: *uss = Private_Clean + Private_Dirty, *pss = Pss,
// in bytes. -EACCES / -EPERM without ptrace-read access to the process.
int capsa__proc_smaps_rollup(pid_t pid, uint64_t *uss, uint64_t *pss);
// /proc/PID/statm: (resident - shared) pages, in bytes.
int capsa__proc_statm_private(pid_t pid, uint64_t *bytes);
// DIR/memory.current (a cgroup v2 directory), in bytes.
int capsa__cgroup_memory_current(const char *dir, uint64_t *bytes);
// Whether /proc/PID/status says Seccomp: 2 and NoNewPrivs: 1.
int capsa__proc_in_capmode(pid_t pid, bool *yes);

// Test builds only: from now on the task manager (host/task_manager.c)
// reads no smaps_rollup, as a host without ptrace-read access to its
// renderers, and takes the fallbacks. Process-wide.
void capsa__task_hide_smaps_for_test(bool hide);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_PROC_INFO_H_
