// Live fuzzing of the README's convert host (docs/interfaces.md, "Fuzzing,
// live"): the host code below is the embedder's, as it runs in its real
// host, and the fuzzing renderers answer its requests with whatever the
// schema allows. Built from the install as an embedder builds it:
//
//   capsa-idl convert.fbs .
//   clang -g -fsanitize=address convert_fuzz.c convert.capsa.c
//       $(pkg-config --cflags --libs capsa) -o convert_fuzz   # one line
//   ./convert_fuzz --seconds 60 --out crashes   # a campaign
//   ./convert_fuzz --replay crashes/crash-....repro
//
// Built with -DCONVERT_CHECKED, the host checks what it trusts below and
// the campaign finds nothing. Built with -DCONVERT_FUZZ_GUIDED and
// capsa-fuzz's flags instead, the same host code is a libFuzzer target:
//
//   clang -DCONVERT_FUZZ_GUIDED convert_fuzz.c convert.capsa.c
//       $(pkg-config --cflags --libs capsa-fuzz) -o convert_fuzz_guided
//   ./convert_fuzz_guided -max_total_time=60 corpus
#include <capsa/capsa.h>
#include <capsa/fuzz_live.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/examples/convert.capsa.h"

static const capsa_interface_t *const kConvert[] = {
    &capsa_example_convert_interface};

// Failed conversions by errno. The schema lets status go down to -4095;
// this host assumed errno values stay below 256.
static unsigned g_failures_by_errno[256];

struct job {
  capsa_shm_region_t out;
};

static void ask(capsa_renderer_t *r);

// The host's reply handler: the code under test.
static void on_converted(capsa_renderer_t *r, int status, capsa_msg_t *reply,
                         void *arg) {
  struct job *j = arg;
  if (status == 0 && reply->type == CAPSA_MSG_INTERFACE) {
    const capsa_example_convert_converted_t *res = reply->u.iface.value;
    if (res->status < 0) {
      unsigned e = (unsigned)-res->status;
#ifdef CONVERT_CHECKED
      if (e < sizeof g_failures_by_errno / sizeof g_failures_by_errno[0])
#endif
        g_failures_by_errno[e]++;
    } else if (res->out_size <= j->out.size) {
      char text[64];
      size_t n = res->out_size < sizeof text ? res->out_size : sizeof text;
      capsa_shm_read(&j->out, 0, text, n);  // copied before any use
    }
  }
  capsa_shm_close(&j->out);
  free(j);
  if (status == 0) ask(r);  // the conversation goes on
}

// Sends renderer `r` a conversion, as the README's host does.
static void ask(capsa_renderer_t *r) {
  static const char text[] = "hello, capsa";
  struct job *j = calloc(1, sizeof *j);
  capsa_shm_region_t in;
  if (j == NULL) return;
  capsa_example_convert_convert_t q;
  capsa_example_convert_convert_init(&q);
  q.in_size = sizeof text - 1;
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_example_convert_interface,
                       CAPSA_EXAMPLE_CONVERT_CONVERT, &q);
  capsa_rights_t ro, rw;
  capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R, CAPSA_CAP_FSTAT);
  capsa_rights_init(&rw, CAPSA_CAP_READ, CAPSA_CAP_WRITE, CAPSA_CAP_MMAP_RW,
                    CAPSA_CAP_FSTAT);
  if (capsa_shm_create(sizeof text, "input", CAPSA_SHM_CREATOR_WRITES, &in) <
      0) {
    free(j);
    return;
  }
  if (capsa_shm_write(&in, 0, text, sizeof text) < 0 ||
      capsa_shm_unmap(&in) < 0 ||
      capsa_shm_create(sizeof text, "output", CAPSA_SHM_PEER_WRITES, &j->out) <
          0) {
    capsa_shm_close(&in);
    free(j);
    return;
  }
  q.input = capsa_msg_add_handle(&m, capsa_shm_release_fd(&in),
                                 CAPSA_HANDLE_SHM, &ro, in.size, false);
  q.output = capsa_msg_add_handle(&m, dup(j->out.fd), CAPSA_HANDLE_SHM, &rw,
                                  j->out.size, true);
  if (capsa_renderer_request(r, &m, 5000, on_converted, j) < 0) {
    capsa_msg_close_handles(&m);  // a failed send leaves them ours
    capsa_shm_close(&j->out);
    free(j);
  }
}

static void on_ready(capsa_renderer_t *r, void *arg) {
  (void)arg;
  ask(r);
}

static void setup(capsa_fuzz_live_options_t *o) {
  o->interfaces = kConvert;
  o->ninterfaces = 1;
  o->on_ready = on_ready;
}

#ifdef CONVERT_FUZZ_GUIDED
// Built with capsa-fuzz's flags: libFuzzer's process is this host, each
// input one renderer's answers (capsa_fuzz_live_one).
CAPSA_FUZZ_LIVE_TARGET(setup)
#else
int main(int argc, char **argv) {
  capsa_fuzz_live_options_t o;
  capsa_fuzz_live_options_init(&o);
  setup(&o);
  return capsa_fuzz_live_main(argc, argv, &o);
}
#endif
