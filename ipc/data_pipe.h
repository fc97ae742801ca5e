// Data pipes: bulk bytes from one process to another through a sealed
// shared ring, written and read in place (in the spirit of Mojo's data
// pipes): the producer asks for room and fills it where it lies, the
// consumer asks for data and uses it where it lies. No copy by the pipe,
// no system call while data flows; a futex wake-up only when a side sleeps.
//
//   // Producer (say the host): make a pipe, send `fd` to the consumer.
//   int produce(const char *data, size_t len, int *fd_out) {
//     capsa_data_pipe_t *p;
//     int err = capsa_data_pipe_create(1 << 20, &p, fd_out);
//     if (err < 0) return err;  // *fd_out is caller-owned: send, then close
//     while (err == 0 && len > 0) {
//       void *room;
//       size_t n;
//       err = capsa_data_pipe_begin_write(p, &room, &n, 1000);
//       if (err < 0) break;     // -EPIPE: the consumer closed its end
//       if (n > len) n = len;
//       memcpy(room, data, n);  // or produce the bytes in place
//       err = capsa_data_pipe_end_write(p, n);
//       data += n;
//       len -= n;
//     }
//     capsa_data_pipe_close(p);  // the consumer reads to the end, then EOF
//     return err;
//   }
//
//   // Consumer, on receiving the descriptor:
//   int consume(int fd) {
//     capsa_data_pipe_t *c;
//     int err = capsa_data_pipe_open(fd, &c);  // c owns fd now
//     if (err < 0) return err;                 // the caller still owns fd
//     const void *in;
//     size_t n;
//     while ((err = capsa_data_pipe_begin_read(c, &in, &n, 1000)) == 0) {
//       fwrite(in, 1, n, stdout);  // in place; copy first to validate
//       capsa_data_pipe_end_read(c, n);
//     }
//     capsa_data_pipe_close(c);
//     return err == -EPIPE ? 0 : err;  // -EPIPE: the producer's end of data
//   }
//
// The creator is the producer, whoever opens the descriptor the consumer.
// The region is a capsa shm region (ipc/shm.h: a memfd, size sealed, seal
// set closed, never executable) of one 4096-byte header page and
// `capacity` bytes of data mapped twice, back to back, so that the room
// or data a call returns is always one contiguous span, also across the
// ring's end.
//
// The other side is hostile. Both processes can write the whole region:
// each side keeps its own position privately and only publishes it; the
// peer's position is read once per call and checked against the capacity
// this side derived from the size it verified (never from the header), so a
// lying peer is a sticky -EBADMSG (a bad message: end the peer), never an
// access outside the mapping, a crash or an endless wait. Every wait takes
// a timeout. What a consumer reads in place the producer may still change
// while it reads: a consumer that must verify bytes (a host reading a
// renderer's output) copies them out first and verifies the copy. Waiting
// is a bounded spin, then a shared futex on the peer's position (capability
// mode allows both); a libuv loop must not wait: call with timeout 0 and
// try again when the peer says so by other means (a channel message).
#ifndef CAPSA_IPC_DATA_PIPE_H_
#define CAPSA_IPC_DATA_PIPE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// libcapsa.so exports what is declared here (SDK header; build/sdk.py).
#pragma GCC visibility push(default)

// Capacity bounds: a power of two in [MIN, MAX].
#define CAPSA_DATA_PIPE_MIN ((size_t)4096)
#define CAPSA_DATA_PIPE_MAX ((size_t)64 << 20)

typedef struct capsa_data_pipe capsa_data_pipe_t;

// Creates a pipe of `capacity` bytes (a power of two within the bounds
// above): *out is its producer end (owned by the caller: close it with
// capsa_data_pipe_close), *peer_fd the descriptor the consumer opens
// (caller-owned: send it, then close it). 0, or -EINVAL (arguments), or
// the -errno of memfd_create, fcntl, mmap; on failure nothing is left open.
int capsa_data_pipe_create(size_t capacity, capsa_data_pipe_t **out,
                           int *peer_fd);
// Opens the consumer end of a pipe from `fd` (as received). Verifies that
// it is a sealed capsa region of a valid size made for a data pipe. On
// success *out owns `fd` (closed once mapped); on failure the caller still
// owns it. 0, or -EBADF, -ENODEV (not a sealed memfd), -EMSGSIZE (its size
// is no header page plus a capacity within the bounds), -ENOTCAPABLE (a
// seal is missing), -EBADMSG (not a data pipe's header), -ENOMEM.
int capsa_data_pipe_open(int fd, capsa_data_pipe_t **out);

// Producer: *room (into the mapping, owned by the pipe) and *len (>= 1) of
// contiguous free space, valid until end_write. Waits up to timeout_ms (0:
// not at all) while the pipe is full. 0; -ETIMEDOUT (still full, also
// with timeout 0); -EPIPE (the consumer closed its end); -EBADMSG (the
// consumer corrupted the pipe; sticky); -EINVAL (not the producer, or a
// write already begun).
int capsa_data_pipe_begin_write(capsa_data_pipe_t *p, void **room, size_t *len,
                                int timeout_ms);
// Publishes the first `n` bytes of the room begin_write gave (n <= its
// len; 0 publishes nothing) and ends the write. 0 or -EINVAL.
int capsa_data_pipe_end_write(capsa_data_pipe_t *p, size_t n);

// Consumer: *data and *len (>= 1) of contiguous bytes, valid until
// end_read. Waits up to timeout_ms while the pipe is empty. 0; -ETIMEDOUT;
// -EPIPE (empty and the producer closed its end: the end of the data);
// -EBADMSG (the producer corrupted the pipe; sticky); -EINVAL.
int capsa_data_pipe_begin_read(capsa_data_pipe_t *p, const void **data,
                               size_t *len, int timeout_ms);
// Consumes the first `n` bytes begin_read gave (n <= its len) and ends
// the read. 0 or -EINVAL.
int capsa_data_pipe_end_read(capsa_data_pipe_t *p, size_t n);

// Waiting in poll/epoll instead (a libuv loop must not block in a futex):
// the waiting side makes an eventfd (its doorbell), polls it, and gives it
// to the other side, which calls capsa_data_pipe_set_peer_doorbell (fd
// borrowed, -1: none) and then writes it whenever it publishes to a waiter
// that armed. Before polling, the waiter arms: capsa_data_pipe_arm returns
// 1 when there is no need to wait (data or room, or the peer closed), 0
// when it may poll its doorbell now, or -EBADMSG; after waking it reads the
// eventfd to reset it and disarms. A hostile peer can only ring it for
// nothing (a spurious wake-up) or not at all (the waiter's own timeout).
void capsa_data_pipe_set_peer_doorbell(capsa_data_pipe_t *p, int fd);
int capsa_data_pipe_arm(capsa_data_pipe_t *p);
void capsa_data_pipe_disarm(capsa_data_pipe_t *p);

// Bytes the pipe holds (0 .. capacity) as this side sees them now, or
// -EBADMSG.
int64_t capsa_data_pipe_available(capsa_data_pipe_t *p);
size_t capsa_data_pipe_capacity(const capsa_data_pipe_t *p);

// Closes this end: the peer learns it (EOF after the data for a consumer,
// -EPIPE for a producer) and is woken. Unmaps and frees `p`. NULL is a
// no-op.
void capsa_data_pipe_close(capsa_data_pipe_t *p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_IPC_DATA_PIPE_H_
