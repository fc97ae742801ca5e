// Keeps fork() inside a renderer from replacing the renderer's descriptors.
//
//   capsa__fork_guard_probe();                 // host, before the zygote
//   ...
//   int chan = capsa__fork_guard_reserve(3);   // renderer, before any input
//
// libuv registers a pthread_atfork child handler (at the first uv_loop_init)
// that closes the two descriptor numbers of its signal-lock pipe, as
// recorded in the host, and opens a new pipe. Renderers are forked from the
// host without exec, so they inherit the handler and the recorded numbers,
// but not the pipe: those numbers are free in a renderer, and its channel or
// received handles land on them. Every glibc fork() in the renderer would
// then swap two of its descriptors for a pipe in the child.
//
// The probe learns the numbers once (a fork whose child reports which
// inherited descriptors the handler replaced); the reservation, in each
// renderer, parks a harmless descriptor (an eventfd) on them, moving the
// channel off them first. A fork() in the renderer then replaces only the
// parked descriptors. Internal to the host library.
#ifndef CAPSA_HOST_FORK_GUARD_H_
#define CAPSA_HOST_FORK_GUARD_H_

#ifdef __cplusplus
extern "C" {
#endif

// In the host. Idempotent; returns the number of descriptor numbers found
// (0 when fork() replaces nothing), or -errno when the probe could not run
// (then nothing is reserved later, and renderers' fork() children may see
// two descriptors replaced).
int capsa__fork_guard_probe(void);

// In a renderer, after the launcher placed its descriptors and before any
// handle is received. `channel_fd` stays owned by the caller; returns the
// number it now has (moved when it sat on a reserved number), or -errno.
// Uses only eventfd2, fcntl(F_DUPFD_CLOEXEC) and dup3: fine in capability
// mode.
int capsa__fork_guard_reserve(int channel_fd);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_FORK_GUARD_H_
