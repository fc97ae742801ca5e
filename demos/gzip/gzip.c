// Streaming gzip (RFC 1952) over two descriptors with zlib. Only read(2),
// write(2) and poll(2) touch the kernel: nothing here needs a path, so the
// same code runs in capability mode.
#include "demos/gzip/gzip.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum { kChunk = 64 * 1024 };

// zlib's gzip wrapper: windowBits 15 plus 16 selects a gzip header/trailer
// instead of zlib's.
enum { kGzipWindowBits = 15 + 16, kMemLevel = 8 };

// Waits until `fd` is ready for `events`; used only when a non-blocking
// descriptor said EAGAIN, so a caller's O_NONBLOCK pipe does not spin.
static int wait_fd(int fd, short events) {
  struct pollfd p = {.fd = fd, .events = events};
  for (;;) {
    int r = poll(&p, 1, -1);
    if (r >= 0) return 0;
    if (errno != EINTR) return -errno;
  }
}

// Reads up to `len` bytes, never past opts->input_size when the input is
// bounded; returns the count (0 at end of input) or -errno.
static ssize_t read_some(int fd, unsigned char *buf, size_t len,
                         const struct capsa_gzip_options *opts,
                         const struct capsa_gzip_stats *st) {
  if (opts != NULL && opts->bounded_input) {
    uint64_t left = opts->input_size - st->bytes_in;
    if (left == 0) return 0;
    if (len > left) len = (size_t)left;
  }
  for (;;) {
    ssize_t n = read(fd, buf, len);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int err = wait_fd(fd, POLLIN);
      if (err < 0) return err;
      continue;
    }
    return -errno;
  }
}

// Writes all `len` bytes (partial writes and EINTR handled).
static int write_all(int fd, const unsigned char *buf, size_t len,
                     struct capsa_gzip_stats *st) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        int err = wait_fd(fd, POLLOUT);
        if (err < 0) return err;
        continue;
      }
      return -errno;
    }
    if (n == 0) return -EIO;  // write(2) of a non-zero length never does this
    buf += n;
    len -= (size_t)n;
    st->bytes_out += (uint64_t)n;
  }
  return 0;
}

static int check_fds(int in_fd, int out_fd) {
  if (in_fd < 0 || out_fd < 0) return -EINVAL;
  return 0;
}

int capsa_gzip_compress(int in_fd, int out_fd,
                        const struct capsa_gzip_options *opts,
                        struct capsa_gzip_stats *st) {
  struct capsa_gzip_stats local;
  if (st == NULL) st = &local;
  memset(st, 0, sizeof *st);
  int err = check_fds(in_fd, out_fd);
  if (err < 0) return err;
  int level = opts != NULL ? opts->level : 0;
  if (level < 0 || level > 9) return -EINVAL;
  if (level == 0) level = 6;  // gzip's default

  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, level, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return -ENOMEM;
  unsigned char in[kChunk], out[kChunk];
  int flush = Z_NO_FLUSH;
  err = 0;
  while (err == 0 && flush != Z_FINISH) {
    ssize_t n = read_some(in_fd, in, sizeof in, opts, st);
    if (n < 0) {
      err = (int)n;
      break;
    }
    st->bytes_in += (uint64_t)n;
    flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
    z.next_in = in;
    z.avail_in = (uInt)n;
    // Drain deflate until it has consumed the chunk (or, at the end, until it
    // has written the trailer).
    int zr;
    do {
      z.next_out = out;
      z.avail_out = sizeof out;
      zr = deflate(&z, flush);
      if (zr == Z_STREAM_ERROR) {
        err = -EIO;
        break;
      }
      err = write_all(out_fd, out, sizeof out - z.avail_out, st);
    } while (err == 0 && z.avail_out == 0);
    if (err == 0 && flush == Z_FINISH && zr != Z_STREAM_END) err = -EIO;
  }
  deflateEnd(&z);
  return err;
}

static bool is_gzip_magic(const unsigned char *p, size_t n) {
  // A partial magic (1 byte left) is judged on what is there.
  if (n >= 1 && p[0] != 0x1f) return false;
  if (n >= 2 && p[1] != 0x8b) return false;
  return n >= 1;
}

int capsa_gunzip(int in_fd, int out_fd, const struct capsa_gzip_options *opts,
                 struct capsa_gzip_stats *st) {
  struct capsa_gzip_stats local;
  if (st == NULL) st = &local;
  memset(st, 0, sizeof *st);
  int err = check_fds(in_fd, out_fd);
  if (err < 0) return err;
  uint64_t max_out = opts != NULL ? opts->max_output : 0;

  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, kGzipWindowBits) != Z_OK) return -ENOMEM;
  unsigned char in[kChunk], out[kChunk];
  bool in_member = false;  // inside a member: end of input is truncation
  bool eof = false;
  uint64_t produced = 0;
  err = 0;
  for (;;) {
    if (z.avail_in == 0 && !eof) {
      ssize_t n = read_some(in_fd, in, sizeof in, opts, st);
      if (n < 0) {
        err = (int)n;
        break;
      }
      st->bytes_in += (uint64_t)n;
      if (n == 0) eof = true;
      z.next_in = in;
      z.avail_in = (uInt)n;
    }
    if (!in_member) {
      if (z.avail_in == 0 && eof) {
        // Clean end between members; no member at all is an empty input,
        // which gzip -d also calls "unexpected end of file".
        if (st->members == 0) err = -ENODATA;
        break;
      }
      if (z.avail_in == 0) continue;
      if (!is_gzip_magic(z.next_in, z.avail_in)) {
        if (st->members == 0) {
          err = -EBADMSG;  // not gzip at all
          break;
        }
        // After a member: trailing data, ignored (as gzip -d). Count it.
        st->trailing_bytes += z.avail_in;
        z.avail_in = 0;
        while (!eof) {
          ssize_t n = read_some(in_fd, in, sizeof in, opts, st);
          if (n < 0) {
            err = (int)n;
            break;
          }
          st->bytes_in += (uint64_t)n;
          st->trailing_bytes += (uint64_t)n;
          if (n == 0) eof = true;
        }
        break;
      }
      in_member = true;
    }
    if (z.avail_in == 0 && eof) {
      err = -ENODATA;  // input ended inside a member
      break;
    }
    z.next_out = out;
    z.avail_out = sizeof out;
    int zr = inflate(&z, Z_NO_FLUSH);
    size_t have = sizeof out - z.avail_out;
    if (max_out != 0 && have > max_out - produced) {
      err = -EFBIG;
      break;
    }
    produced += have;
    err = write_all(out_fd, out, have, st);
    if (err < 0) break;
    if (zr == Z_STREAM_END) {
      st->members++;
      in_member = false;
      if (inflateReset(&z) != Z_OK) {
        err = -EIO;
        break;
      }
      continue;
    }
    if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT) {
      err = -EBADMSG;
      break;
    }
    if (zr == Z_MEM_ERROR) {
      err = -ENOMEM;
      break;
    }
    // Z_OK, or Z_BUF_ERROR (no progress possible without more input, which
    // the next iteration reads or reports as truncation).
  }
  inflateEnd(&z);
  return err;
}

const char *capsa_gzip_strerror(int err) {
  switch (err) {
    case 0:
      return "success";
    case -EBADMSG:
      return "not in gzip format or corrupt data";
    case -ENODATA:
      return "unexpected end of file (truncated input)";
    case -EFBIG:
      return "decompressed output exceeds the limit";
    default:
      return strerror(err < 0 ? -err : err);
  }
}
