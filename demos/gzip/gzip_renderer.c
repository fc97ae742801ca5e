// The gzip renderer: zlib on untrusted data, holding only a read-only input
// and a write-only output region. See demos/gzip/gzip_renderer.h.
#include <errno.h>
#include <unistd.h>

#include "demos/gzip/gzip.capsa.h"
#include "demos/gzip/gzip.h"
#include "demos/gzip/gzip_renderer.h"
#include "sandbox/rights/rights.h"

static const capsa_interface_t *const kGzip[] = {&capsa_demo_gzip_interface};

static int on_message(capsa_rctx_t *r, capsa_msg_t *m) {
  // Verified against gzip.fbs before we see it: both regions present, of
  // the kinds and no wider than the rights it allows, op and level in range.
  if (m->type != CAPSA_MSG_INTERFACE || m->u.iface.id != CAPSA_DEMO_GZIP_JOB)
    return -EPROTO;
  const capsa_demo_gzip_job_t *j = m->u.iface.value;
  capsa_demo_gzip_result_t res;
  capsa_demo_gzip_result_init(&res);
  res.job_id = j->job_id;
  uint64_t in_region = m->handles[j->input].size;
  uint64_t out_region = m->handles[j->output].size;
  int in = capsa_msg_take_handle(m, (uint32_t)j->input);
  int out = capsa_msg_take_handle(m, (uint32_t)j->output);
  if (j->in_size > in_region) {
    // The schema bounds in_size, not against the region: that is ours.
    res.status = -EINVAL;
  } else {
    // Say so when the output can be read back: it must not.
    char probe;
    if (out >= 0 && pread(out, &probe, 1, 0) >= 0)
      capsa_rctx_log(r, CAPSA_LOG_WARN, "gzip: output region is readable");
    // Only in_size bytes of the input region are input; an empty input
    // still travels in a region of at least one byte.
    struct capsa_gzip_options o = {j->level, out_region, true, j->in_size};
    struct capsa_gzip_stats st = {0};
    int err = j->op == CAPSA_GZIP_OP_COMPRESS
                  ? capsa_gzip_compress(in, out, &o, &st)
                  : capsa_gunzip(in, out, &o, &st);
    res.status = err;
    res.out_size = st.bytes_out;
  }
  // Limited numbers are parked, not freed (sandbox/rights/rights.h): the next
  // job's handles must not land on a number keyed to these rights.
  if (in >= 0) capsa_rights_close(in);
  if (out >= 0) capsa_rights_close(out);
  capsa_msg_t reply;
  capsa_msg_init_iface(&reply, &capsa_demo_gzip_interface,
                       CAPSA_DEMO_GZIP_RESULT, &res);
  int err = capsa_rctx_reply(r, m, &reply);
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
const capsa_renderer_handlers_t capsa_gzip_renderer = {.kind = "gzip",
                                                       .on_message = on_message,
                                                       .interfaces = kGzip,
                                                       .ninterfaces = 1};
