// Streaming gzip compression and decompression (zlib) between two descriptors
// the caller owns: the Capsicum paper's gzip example. Needs no ambient
// authority (only read(2) on the input and write(2) on the output), so it
// runs in capability mode on a read-only input and a write-only output.
//
//   struct capsa_gzip_stats st;
//   int err = capsa_gzip_compress(in_fd, out_fd, NULL, &st);  // NULL: level 6
//   if (err < 0) fprintf(stderr, "gzip: %s\n", capsa_gzip_strerror(err));
//   err = capsa_gunzip(in_fd, out_fd, NULL, &st);
//   if (err == -EBADMSG) ...   // corrupt input
//   if (err == -ENODATA) ...   // truncated input
//
// Format: RFC 1952, interchangeable with the system gzip both ways: what we
// write `gzip -d` reads; what `gzip -c` writes (also several members
// concatenated, `cat a.gz b.gz`) we read. Memory is bounded (two 64 KiB
// buffers plus zlib's state, whatever the input size).
#ifndef CAPSA_DEMOS_GZIP_GZIP_H_
#define CAPSA_DEMOS_GZIP_GZIP_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct capsa_gzip_options {
  int level;            // 1..9; 0 means the default (6), as gzip
  uint64_t max_output;  // gunzip: stop with -EFBIG past this many bytes
                        // (decompression bombs); 0 = unlimited
  bool bounded_input;   // true: read no more than input_size bytes (a
  uint64_t input_size;  // region whose tail is not input); false: to EOF
};

// Counters (owned by the caller), filled also when an error is returned:
// everything counted was really read/written.
struct capsa_gzip_stats {
  uint64_t bytes_in;
  uint64_t bytes_out;
  uint32_t members;         // gunzip: complete gzip members decoded
  uint64_t trailing_bytes;  // gunzip: non-gzip bytes after the last member,
                            // ignored (gzip -d warns "trailing garbage
                            // ignored"); 0 normally
};

// Compresses everything readable from `in_fd` into one gzip member written
// to `out_fd`. Both descriptors stay owned by the caller and are not closed;
// they may be pipes, sockets or files, blocking or not (EAGAIN waits with
// poll). `opts` and `st` may be NULL. Returns 0; -EINVAL (bad fd number or
// level); the read or write error (-EBADF, -EPIPE, -ENOSPC, -ENOTCAPABLE, ...);
// -ENOMEM.
int capsa_gzip_compress(int in_fd, int out_fd,
                        const struct capsa_gzip_options *opts,
                        struct capsa_gzip_stats *st);

// Decompresses gzip data (one or more members) from `in_fd` to `out_fd`
// (both owned by the caller, not closed). Returns 0 when every member was
// complete and its CRC-32 and length matched; -EBADMSG for input that is not
// gzip or is corrupt (bad magic, header, deflate data, CRC or length);
// -ENODATA when the input ends inside a member (truncated, or empty input);
// -EFBIG past opts->max_output; read/write errors as capsa_gzip_compress.
// Output written before an error stays written (as gzip -d).
int capsa_gunzip(int in_fd, int out_fd, const struct capsa_gzip_options *opts,
                 struct capsa_gzip_stats *st);

// A short English description of a return value of the two functions above
// (gzip-specific wording for -EBADMSG, -ENODATA, -EFBIG; strerror otherwise).
// Static string, never NULL.
const char *capsa_gzip_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_DEMOS_GZIP_GZIP_H_
