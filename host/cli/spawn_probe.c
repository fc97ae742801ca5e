// The baseline of `capsa bench spawn`: the tiniest program there is. Static,
// no libc, no dynamic linking: it writes one byte to stdout and exits, so a
// fork+exec or posix_spawn of it measures process creation and exec alone.
static long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(n), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return r;
}

void _start(void) __attribute__((noreturn, used));
void _start(void) {
  static const char byte = 'r';
  sys3(1 /* write */, 1, (long)&byte, 1);
  for (;;) sys3(60 /* exit */, 0, 0, 0);
}
