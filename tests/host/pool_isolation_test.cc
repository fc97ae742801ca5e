// Issue 32's first attack, replayed against the documented region pattern
// (docs/pools.md): a pool serves several users' jobs with one reused pair
// of regions; a malicious user's input makes its (fresh) worker leave the
// output region as it found it, so whatever it still held reaches her as
// her result. With the pattern (a region is reused only once the job's
// done() came — its worker gone — and after capsa_shm_clear), nothing of
// the previous user's output reaches her, under one job per process and
// under shared workers recycled after every job. Without the clear, the
// same run leaks: the attack is real. Root and uid 65534.
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/capsa_host.h"
#include "host/capsa_pool.h"
#include "host/examples/convert.capsa.h"
#include "host/kind_registry.h"
#include "ipc/shm.h"
#include "renderer/runtime.h"

namespace {

const capsa_interface_t *const kConvert[] = {&capsa_example_convert_interface};

// Honest for every input but one starting "EVIL": then it writes nothing
// and claims the whole output, handing back what the region held.
int Convert(capsa_rctx_t *r, capsa_msg_t *m) {
  if (m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.id != CAPSA_EXAMPLE_CONVERT_CONVERT)
    return -EPROTO;
  const auto *q =
      static_cast<const capsa_example_convert_convert_t *>(m->u.iface.value);
  capsa_example_convert_converted_t res;
  capsa_example_convert_converted_init(&res);
  capsa_shm_region_t in, out;
  uint64_t in_size = m->handles[q->input].size;
  uint64_t out_size = m->handles[q->output].size;
  int in_fd = capsa_msg_take_handle(m, (uint32_t)q->input);
  int out_fd = capsa_msg_take_handle(m, (uint32_t)q->output);
  const void *src = nullptr;
  void *dst = nullptr;
  if (capsa_shm_map_fd(in_fd, in_size, CAPSA_SHM_PEER_READS, &in) < 0 ||
      capsa_shm_map_fd(out_fd, out_size, CAPSA_SHM_PEER_READWRITE, &out) < 0 ||
      capsa_shm_view(&in, 0, q->in_size, &src) < 0 ||
      capsa_shm_view_mut(&out, 0, q->in_size, &dst) < 0) {
    res.status = -EBADF;
  } else if (q->in_size >= 4 && memcmp(src, "EVIL", 4) == 0) {
    res.out_size = out_size;  // what the region still holds
  } else {
    for (uint64_t i = 0; i < q->in_size; i++) {
      char c = static_cast<const char *>(src)[i];
      static_cast<char *>(dst)[i] = c >= 'a' && c <= 'z' ? c - 32 : c;
    }
    res.out_size = q->in_size;
  }
  capsa_shm_close(&in);
  capsa_shm_close(&out);
  capsa_msg_t reply;
  capsa_msg_init_iface(&reply, &capsa_example_convert_interface,
                       CAPSA_EXAMPLE_CONVERT_CONVERTED, &res);
  return capsa_rctx_reply(r, m, &reply);
}

const capsa_renderer_handlers_t kLeaky = {"leaky", nullptr,  Convert,
                                          nullptr, kConvert, 1};
CAPSA_RENDERER_KIND(k_leaky, "pool-leaky", capsa_renderer_main, &kLeaky)

constexpr size_t kRegion = 4096;

struct Job {
  std::string text;
  capsa_example_convert_convert_t q;
  std::string output;  // what the host read back
  int status = 1;
  pid_t worker = -1;
  bool done = false;
};

class PoolIsolation : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_EQ(0, uv_loop_init(&loop_));
    ASSERT_EQ(0, capsa_host_init(&loop_, &host_, nullptr, nullptr));
    host_.data = this;
    capsa_kind_options_t k;
    capsa_kind_options_init(&k, "pool-leaky", capsa_renderer_main,
                            (void *)&kLeaky);
    k.interfaces = kConvert;
    k.ninterfaces = 1;
    kind_ = capsa_host_define_kind(&host_, &k);
    ASSERT_GE(kind_, 0);
    ASSERT_EQ(0, capsa_host_start(&host_));
    ASSERT_EQ(0,
              capsa_shm_create(kRegion, "in", CAPSA_SHM_CREATOR_WRITES, &in_));
    ASSERT_EQ(0,
              capsa_shm_create(kRegion, "out", CAPSA_SHM_PEER_WRITES, &out_));
  }
  void TearDown() override {
    if (pool_.impl) {
      capsa_pool_close(&pool_, nullptr);
      Run([&] { return pool_.impl == nullptr; }, 10000);
    }
    bool closed = false;
    host_.data = &closed;
    capsa_host_close(
        &host_, [](capsa_host_t *h) { *static_cast<bool *>(h->data) = true; });
    Run([&] { return closed; }, 10000);
    EXPECT_EQ(0, uv_loop_close(&loop_));
    capsa_shm_close(&in_);
    capsa_shm_close(&out_);
  }
  template <typename Pred>
  bool Run(Pred done, int timeout_ms) {
    uint64_t end = uv_now(&loop_) + (uint64_t)timeout_ms;
    while (!done()) {
      uv_update_time(&loop_);
      if (uv_now(&loop_) > end) return false;
      uv_run(&loop_, UV_RUN_NOWAIT);
      usleep(1000);
    }
    return true;
  }

  // The one pair of regions every job reuses; the whole input is written
  // each time (no tail of an earlier input stays).
  static int Fill(capsa_pool_t *pool, capsa_renderer_t *worker, capsa_msg_t *m,
                  void *arg) {
    auto *t = static_cast<PoolIsolation *>(pool->data);
    auto *j = static_cast<Job *>(arg);
    (void)worker;
    std::string padded = j->text;
    padded.resize(kRegion, '\0');
    int err = capsa_shm_write(&t->in_, 0, padded.data(), kRegion);
    if (err < 0) return err;
    capsa_example_convert_convert_init(&j->q);
    j->q.in_size = j->text.size();
    capsa_msg_init_iface(m, &capsa_example_convert_interface,
                         CAPSA_EXAMPLE_CONVERT_CONVERT, &j->q);
    capsa_rights_t ro, rw;
    capsa_rights_init(&ro, CAPSA_CAP_READ, CAPSA_CAP_MMAP_R, CAPSA_CAP_FSTAT);
    capsa_rights_init(&rw, CAPSA_CAP_READ, CAPSA_CAP_WRITE, CAPSA_CAP_MMAP_RW,
                      CAPSA_CAP_FSTAT);
    j->q.input = capsa_msg_add_handle(m, dup(t->in_.fd), CAPSA_HANDLE_SHM, &ro,
                                      kRegion, false);
    j->q.output = capsa_msg_add_handle(m, dup(t->out_.fd), CAPSA_HANDLE_SHM,
                                       &rw, kRegion, true);
    return j->q.input < 0 ? j->q.input : j->q.output < 0 ? j->q.output : 0;
  }
  static void Done(capsa_pool_t *pool, const capsa_pool_result_t *res,
                   void *arg) {
    auto *t = static_cast<PoolIsolation *>(pool->data);
    auto *j = static_cast<Job *>(arg);
    j->status = res->status;
    j->worker = res->worker ? capsa_renderer_pid(res->worker) : -1;
    if (res->status == 0) {
      const auto *c = static_cast<const capsa_example_convert_converted_t *>(
          res->reply->u.iface.value);
      std::string got(c->out_size <= kRegion ? c->out_size : 0, '\0');
      capsa_shm_read(&t->out_, 0, got.data(), got.size());
      got.erase(got.find_last_not_of('\0') + 1);
      j->output = got;
    }
    // The documented pattern: the worker that held the regions is gone
    // (done() comes after that); clear what it wrote before another sees it.
    if (t->clear_) {
      EXPECT_EQ(0, capsa_shm_clear(&t->out_));
    }
    j->done = true;
  }

  // Alice's, then Mallory's, then Bob's, then Mallory's again, one at a time.
  std::vector<Job> Serve(capsa_pool_isolation_t isolation,
                         unsigned recycle_after_jobs) {
    capsa_pool_options_t po;
    capsa_pool_options_init(&po);
    po.isolation = isolation;
    po.workers = 1;
    po.recycle_after_jobs = recycle_after_jobs;
    EXPECT_EQ(0, capsa_pool_init(&host_, &pool_, kind_, &po));
    pool_.data = this;
    EXPECT_EQ(0, capsa_pool_start(&pool_));
    std::vector<Job> jobs(4);
    const char *texts[] = {"alice's secret", "EVIL", "bob's secret", "EVIL"};
    for (unsigned i = 0; i < jobs.size(); i++) {
      jobs[i].text = texts[i];
      EXPECT_EQ(0, capsa_pool_submit(&pool_, 5000, Fill, Done, &jobs[i]));
      EXPECT_TRUE(Run([&] { return jobs[i].done; }, 15000)) << i;
    }
    return jobs;
  }

  uv_loop_t loop_;
  capsa_host_t host_;
  capsa_pool_t pool_ = {nullptr, nullptr};
  int kind_ = -1;
  capsa_shm_region_t in_, out_;
  bool clear_ = true;
};

void ExpectNothingLeaked(const std::vector<Job> &jobs) {
  ASSERT_EQ(4u, jobs.size());
  for (const Job &j : jobs) EXPECT_EQ(0, j.status) << j.text;
  EXPECT_EQ("ALICE'S SECRET", jobs[0].output);
  EXPECT_EQ("BOB'S SECRET", jobs[2].output);
  EXPECT_EQ("", jobs[1].output) << "alice's output reached mallory";
  EXPECT_EQ("", jobs[3].output) << "bob's output reached mallory";
  for (unsigned i = 1; i < jobs.size(); i++)
    EXPECT_NE(jobs[i - 1].worker, jobs[i].worker) << "a process per job";
}

TEST_F(PoolIsolation, OneJobPerProcessWithClearedRegionsLeaksNothing) {
  ExpectNothingLeaked(Serve(CAPSA_POOL_ONE_JOB_PER_PROCESS, 0));
}

TEST_F(PoolIsolation, SharedWorkersRecycledAfterEachJobLeakNothing) {
  ExpectNothingLeaked(Serve(CAPSA_POOL_SHARED_WORKERS, 1));
}

// The control: the same run without the clear hands Mallory Alice's output.
TEST_F(PoolIsolation, WithoutTheClearTheReusedRegionLeaks) {
  clear_ = false;
  std::vector<Job> jobs = Serve(CAPSA_POOL_ONE_JOB_PER_PROCESS, 0);
  ASSERT_EQ(4u, jobs.size());
  EXPECT_EQ("ALICE'S SECRET", jobs[1].output);
  // Bob's output over the tail of Alice's: both reach her.
  EXPECT_EQ("BOB'S SECRETET", jobs[3].output);
}

}  // namespace
