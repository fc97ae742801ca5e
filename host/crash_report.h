// The host's side of crash reports: picks the renderer's crash record
// (host/crash_record.h) out of its stderr bytes, and turns the last one into
// the capsa_crash_report_t of its CRASHED / ABORTED event, symbolised with
// the image's and the host's libraries' symbol tables (host/elf_symbols.h).
#ifndef CAPSA_HOST_CRASH_REPORT_H_
#define CAPSA_HOST_CRASH_REPORT_H_

#include <stdbool.h>
#include <stddef.h>

#include "host/capsa_host.h"

// Per renderer incarnation; allocated when its stderr first starts a record
// at a line's start, so idle renderers pay one NULL pointer.
struct capsa__crash_rx;

enum capsa__crash_rx_result {
  CAPSA__CRASH_RX_TEXT,      // *text / *len: ordinary text after all
  CAPSA__CRASH_RX_TAKEN,     // held: part of a magic or a record
  CAPSA__CRASH_RX_COMPLETE,  // a whole record arrived (replaces the last)
};

// Whether a magic or a record is being collected: then every byte goes to
// capsa__crash_rx_byte.
bool capsa__crash_rx_busy(const struct capsa__crash_rx *rx);

// The next stderr byte, at a line's start or while busy. *rx is allocated
// on first use (out of memory: the byte is text).
enum capsa__crash_rx_result capsa__crash_rx_byte(struct capsa__crash_rx **rx,
                                                 char c, const char **text,
                                                 size_t *len);

// End of the stream: a partial magic is text (*len > 0), a partial record
// is dropped (it was cut: no report from it).
void capsa__crash_rx_eof(struct capsa__crash_rx *rx, const char **text,
                         size_t *len);

// The report of the last complete record, when its signal is `signo`;
// NULL otherwise. `image_fd` (borrowed): the image the zygote execs, or
// -1 for the host's own running image. Valid until capsa__crash_rx_free.
const capsa_crash_report_t *capsa__crash_report(struct capsa__crash_rx *rx,
                                                int signo, int image_fd);

void capsa__crash_rx_free(struct capsa__crash_rx **rx);

#endif  // CAPSA_HOST_CRASH_REPORT_H_
