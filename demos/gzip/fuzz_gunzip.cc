// libFuzzer: arbitrary bytes into capsa_gunzip. It must return 0 or one of
// its documented errors, never crash, hang or read/write out of bounds.
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "demos/gzip/gzip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) {
  static int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
  int in = memfd_create("fuzz-in", MFD_CLOEXEC);
  if (in < 0 || out < 0) __builtin_trap();
  if (len > 0 && write(in, data, len) != static_cast<ssize_t>(len))
    __builtin_trap();
  lseek(in, 0, SEEK_SET);
  capsa_gzip_options o = {0, 64u << 20, false, 0};  // bombs stop at 64 MiB
  capsa_gzip_stats st;
  int rc = capsa_gunzip(in, out, &o, &st);
  close(in);
  if (rc != 0 && rc != -EBADMSG && rc != -ENODATA && rc != -EFBIG)
    __builtin_trap();
  if (st.bytes_in != len) __builtin_trap();  // everything was read
  return 0;
}
