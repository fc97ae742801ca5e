// A renderer's stderr: a pipe of its own (host/zygote/server.c makes it at
// fork), never the host's terminal. The host reads it and forwards each line as
// a CAPSA_EV_LOG event with status CAPSA_HOST_LOG_STDERR: attributed to the
// renderer, escaped like every text from a renderer (host/text.h), cut at
// CAPSA__STDERR_LINE bytes, and charged to the kind's LOG budget, so a
// renderer that floods its stderr is ended with CAPSA_EV_LIMIT as one that
// floods LOG messages is (the budget's verdict goes to the state machine,
// through the function it gave capsa__stderr_start).
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "host/crash_record.h"
#include "host/crash_report.h"
#include "host/host_internal.h"
#include "host/text.h"

// Bytes read per readable event: a chatty renderer cannot hold the loop.
#define READ_PER_EVENT (16u << 10)
// Bytes read at its exit, whatever a descendant still writes.
#define READ_AT_EXIT (64u << 10)

// Charges `len` bytes to r's LOG budget; past it, its verdict goes to the
// state machine (which ends r) and true is returned.
static bool over_budget(struct capsa_host_renderer *r, size_t len) {
  char why[CAPSA__VERDICT_MAX];
  const char *v = capsa__budget_log_charge(r, len, uv_now(r->h->loop), why);
  if (v) r->err.verdict(r, v);
  return v != NULL;
}

static void emit_line(struct capsa_host_renderer *r) {
  if (r->err.len == 0 || r->kill_reason) {
    r->err.len = 0;
    return;
  }
  size_t len = r->err.len;
  r->err.len = 0;
  // Charged while it runs; once it has exited (its last words, bounded by
  // READ_AT_EXIT) there is nothing left to kill.
  if (!r->exited && over_budget(r, len)) return;
  char safe[CAPSA__TEXT_MAX];
  capsa__text_escape(r->err.line, len, safe, sizeof safe);
  capsa_host_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.type = CAPSA_EV_LOG;
  ev.status = CAPSA_HOST_LOG_STDERR;
  ev.text = safe;
  capsa__emit(r, &ev);
}

static void text_byte(struct capsa_host_renderer *r, char c) {
  if (c == '\n') {
    emit_line(r);
    return;
  }
  r->err.line[r->err.len++] = c;
  if (r->err.len == sizeof r->err.line) emit_line(r);
}

// Splits what was read into lines; a line longer than the buffer is passed
// on in pieces of CAPSA__STDERR_LINE bytes. A crash record (its magic at a
// line's start, host/crash_record.h) is taken out of the stream: its bytes
// are charged to the LOG budget as a line's are, so records cannot carry a
// flood past it.
static void take(struct capsa_host_renderer *r, const char *buf, size_t n) {
  for (size_t i = 0; i < n && !r->kill_reason; i++) {
    char c = buf[i];
    if (!capsa__crash_rx_busy(r->err.crash) &&
        !(r->err.len == 0 && c == CAPSA__CRASH_MAGIC[0])) {
      text_byte(r, c);
      continue;
    }
    const char *text;
    size_t len;
    switch (capsa__crash_rx_byte(&r->err.crash, c, &text, &len)) {
      case CAPSA__CRASH_RX_TEXT:
        for (size_t j = 0; j < len; j++) text_byte(r, text[j]);
        break;
      case CAPSA__CRASH_RX_COMPLETE:
        if (!r->exited) over_budget(r, sizeof(struct capsa__crash_record));
        break;
      case CAPSA__CRASH_RX_TAKEN:
        break;
    }
  }
}

// End of what it wrote: a magic cut short was text.
static void take_eof(struct capsa_host_renderer *r) {
  const char *text;
  size_t len;
  capsa__crash_rx_eof(r->err.crash, &text, &len);
  for (size_t j = 0; j < len && !r->kill_reason; j++) text_byte(r, text[j]);
}

// Reads at most `budget` bytes; returns false at end of file or an error.
static bool read_some(struct capsa_host_renderer *r, size_t budget) {
  char buf[4096];
  while (budget > 0 && !r->kill_reason) {
    ssize_t n = read(r->err.fd, buf, budget < sizeof buf ? budget : sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n <= 0) return false;
    take(r, buf, (size_t)n);
    budget -= (size_t)n;
  }
  return true;
}

static void stop_reading(struct capsa_host_renderer *r) {
  if (r->err.reading) uv_poll_stop(&r->err.poll);
  r->err.reading = false;
}

static void on_readable(uv_poll_t *p, int status, int events) {
  struct capsa_host_renderer *r = p->data;
  (void)events;
  if (status < 0 || !read_some(r, READ_PER_EVENT)) {
    take_eof(r);
    emit_line(r);  // what it wrote last, without a newline
    stop_reading(r);
  }
  if (r->kill_reason) stop_reading(r);
}

int capsa__stderr_start(struct capsa_host_renderer *r, int fd,
                        capsa__broker_verdict_fn verdict) {
  r->err.verdict = verdict;
  r->err.fd = fd;
  r->err.len = 0;
  r->err.reading = r->err.polled = false;
  // Never read blocking on the loop: without O_NONBLOCK it is not read.
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    close(fd);
    r->err.fd = -1;
    return 0;
  }
  if (uv_poll_init(r->h->loop, &r->err.poll, fd) < 0) return 0;  // at exit
  r->err.poll.data = r;
  r->err.polled = true;
  r->err.reading = uv_poll_start(&r->err.poll, UV_READABLE | UV_DISCONNECT,
                                 on_readable) == 0;
  return 1;
}

void capsa__stderr_drain(struct capsa_host_renderer *r) {
  if (r->err.fd < 0) return;
  read_some(r, READ_AT_EXIT);
  take_eof(r);
  emit_line(r);
  stop_reading(r);
}

void capsa__stderr_close(struct capsa_host_renderer *r, uv_close_cb cb) {
  stop_reading(r);
  if (r->err.polled) uv_close((uv_handle_t *)&r->err.poll, cb);
  r->err.polled = false;
  // uv_close has taken the descriptor out of the loop: it may go now.
  if (r->err.fd >= 0) close(r->err.fd);
  r->err.fd = -1;
  capsa__crash_rx_free(&r->err.crash);  // its report was this incarnation's
}
