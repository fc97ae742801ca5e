// Small helpers the capsa bench commands share (host/cli/bench_*.c).
#ifndef CAPSA_HOST_CLI_BENCH_UTIL_H_
#define CAPSA_HOST_CLI_BENCH_UTIL_H_

#include <sched.h>
#include <time.h>

// CLOCK_MONOTONIC in microseconds.
static inline double capsa_bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

// qsort comparator for doubles (medians, percentiles).
static inline int capsa_bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

// Pins the calling thread to `cpu` (< 0: leaves it where it is).
static inline void capsa_bench_pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

#endif  // CAPSA_HOST_CLI_BENCH_UTIL_H_
