// Runs a probe that may fault, kill or sandbox itself in a forked child and
// reads its answer back over a pipe (sandbox-internal).
//
//   static void probe(int wfd, void *arg) { ...; write(wfd, &r, sizeof r);
//                                           _exit(0); }
//   int status;
//   ssize_t got = capsa__child_run(probe, NULL, &r, sizeof r, 10000, &status);
//
// Why one helper: every probe of a kernel feature that can fault (int 0x80,
// x32) or that enters capability mode must never touch the calling process
// (docs: "probe, never crash"), and each copy of fork + pipe + EINTR loops +
// reaping was a chance to get one of them wrong.
#ifndef CAPSA_SANDBOX_CHILD_RUN_H_
#define CAPSA_SANDBOX_CHILD_RUN_H_

#include <stddef.h>
#include <sys/types.h>

// Forks; the child runs fn(wfd, arg) and must _exit (returning from fn exits
// 125). The parent reads what the child writes to wfd into `out` (at most
// `size` bytes) until EOF, `size` bytes, or `timeout_ms` (< 0: no timeout;
// on timeout the child is SIGKILLed), then reaps it. `out` is the caller's
// (may be NULL when size is 0); `arg` is passed through. *status (may be
// NULL) gets the wait status, or -1 when it could not be read (SIGCHLD
// ignored: the kernel reaped the child). Returns the number of bytes read,
// -ETIMEDOUT, or the negative errno of pipe2/fork (then fn never ran).
ssize_t capsa__child_run(void (*fn)(int wfd, void *arg), void *arg, void *out,
                         size_t size, int timeout_ms, int *status);

#endif  // CAPSA_SANDBOX_CHILD_RUN_H_
