// capsa bench ipc's data-pipe row (ipc/data_pipe.h): `chunks` MiB from
// this process to a forked consumer through a 4 MiB pipe, 1 MiB at a time.
// The producer fills the room in place (a memcpy from its 1 MiB source);
// the consumer takes the bytes in place and copies them out to a 1 MiB
// buffer of its own (what a consumer that must verify does): one copy per
// side, the two sides on two CPUs at once. Compared with one process's
// memcpy of the same chunks (bench_ipc.c memcpy_gbps).
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/cli/bench_util.h"
#include "host/cli/commands.h"
#include "ipc/data_pipe.h"

enum { kChunk = 1 << 20, kPipe = 4 << 20, kWaitMs = 10000 };

static int consume(int fd, int chunks) {
  capsa_data_pipe_t *rx;
  if (capsa_data_pipe_open(fd, &rx) != 0) return 1;
  uint8_t *dst = malloc(kChunk);
  if (!dst) return 1;
  memset(dst, 0, kChunk);
  uint64_t got = 0;
  size_t at = 0;
  const void *in;
  size_t len;
  int err;
  while ((err = capsa_data_pipe_begin_read(rx, &in, &len, kWaitMs)) == 0) {
    if (len > kChunk - at) len = kChunk - at;
    memcpy(dst + at, in, len);
    __asm__ volatile("" : : "r"(dst) : "memory");
    at = (at + len) % kChunk;
    got += len;
    if (capsa_data_pipe_end_read(rx, len) != 0) return 1;
  }
  capsa_data_pipe_close(rx);
  free(dst);
  return err == -EPIPE && got == (uint64_t)chunks * kChunk ? 0 : 1;
}

double capsa__bench_data_pipe_gbps(int chunks, int cpu_a, int cpu_b) {
  capsa_data_pipe_t *tx;
  int fd;
  if (capsa_data_pipe_create(kPipe, &tx, &fd) != 0) return 0;
  uint8_t *src = malloc(kChunk);
  if (!src) return 0;
  memset(src, 0xab, kChunk);
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    capsa_bench_pin(cpu_b);
    _exit(consume(fd, chunks));
  }
  close(fd);
  capsa_bench_pin(cpu_a);
  double t0 = capsa_bench_now_us();
  bool ok = true;
  for (int c = 0; ok && c < chunks; c++) {
    size_t done = 0;
    while (ok && done < kChunk) {
      void *room;
      size_t len;
      if (capsa_data_pipe_begin_write(tx, &room, &len, kWaitMs) != 0) {
        ok = false;
        break;
      }
      if (len > kChunk - done) len = kChunk - done;
      memcpy(room, src + done, len);
      done += len;
      ok = capsa_data_pipe_end_write(tx, len) == 0;
    }
  }
  capsa_data_pipe_close(tx);
  int status = -1;
  if (!ok) kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  double secs = (capsa_bench_now_us() - t0) / 1e6;
  free(src);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || secs <= 0)
    return 0;
  return (double)chunks * kChunk / secs / 1e9;
}
