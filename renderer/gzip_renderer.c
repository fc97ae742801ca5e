// The gzip renderer: zlib on untrusted data, holding only a read-only input
// and a write-only output region. See renderer/kinds.h.
#include <errno.h>
#include <unistd.h>

#include "renderer/gzip/gzip.h"
#include "renderer/kinds.h"
#include "sandbox/rights.h"

static int on_message(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_GZIP_JOB) return -EPROTO;
  const capsa_msg_gzip_job_t *j = &m->u.gzip_job;
  capsa_msg_t res;
  capsa_msg_init(&res, CAPSA_MSG_GZIP_RESULT);
  res.u.gzip_result.job_id = j->job_id;
  if (m->handle_count != 2) {
    res.u.gzip_result.status = -EINVAL;  // inline jobs: not offered
  } else {
    int in = capsa_msg_take_handle(m, 0);
    int out = capsa_msg_take_handle(m, 1);
    // Say so when the output can be read back: it must not.
    char probe;
    if (out >= 0 && pread(out, &probe, 1, 0) >= 0)
      capsa_rctx_log(r, CAPSA_LOG_WARN, "gzip: output region is readable");
    // Only in_size bytes of the input region are input (the message table
    // checked in_size <= the region's size); an empty input still travels
    // in a region of at least one byte.
    struct capsa_gzip_options o = {j->level, m->handles[1].size, true,
                                   j->in_size};
    struct capsa_gzip_stats st = {0};
    int err = j->op == CAPSA_GZIP_COMPRESS
                  ? capsa_gzip_compress(in, out, &o, &st)
              : j->op == CAPSA_GZIP_DECOMPRESS ? capsa_gunzip(in, out, &o, &st)
                                               : -EINVAL;
    res.u.gzip_result.status = err;
    res.u.gzip_result.out_size = st.bytes_out;
    // Limited numbers are parked, not freed (sandbox/rights.h): the next
    // job's handles must not land on a number keyed to these rights.
    if (in >= 0) capsa_rights_close(in);
    if (out >= 0) capsa_rights_close(out);
  }
  int err = capsa_rctx_reply(r, m, &res);
  return err < 0 ? err : 0;
}

// Run with capsa_renderer_main_limited: the output is then write-only (no
// read, no mmap) in here, as the Capsicum paper's gzip. Rights are keyed to
// descriptor numbers, so each job parks its two numbers (a placeholder
// descriptor and a filter each): a limited gzip renderer serves a bounded
// number of jobs (RLIMIT_NOFILE and the filter cap, ~25 at the default 64
// descriptors) and then fails with EMFILE / ENOMEM — recycle it before
// (capsa_pool_options_t recycle_after_jobs). With capsa_renderer_main its
// handles are not re-limited and it serves any number of jobs.
const capsa_renderer_handlers_t capsa_gzip_renderer = {
    .kind = "gzip", .on_message = on_message};
