#include "tests/harness/command.h"

namespace capsa_test {

namespace {

const void *As(const capsa_msg_t *m, uint32_t id) {
  if (m == nullptr || m->type != CAPSA_MSG_INTERFACE ||
      m->u.iface.iface != &capsa_test_command_interface || m->u.iface.id != id)
    return nullptr;
  return m->u.iface.value;
}

}  // namespace

void SpeakCommand(capsa_kind_options_t *k) {
  k->interfaces = kCommand;
  k->ninterfaces = 1;
}

capsa_bytes_t Bytes(const std::string &s) {
  if (s.empty()) return {nullptr, 0};
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

std::string String(const capsa_bytes_t &b) {
  if (b.len == 0) return "";
  return std::string(reinterpret_cast<const char *>(b.data), b.len);
}

void InitRun(capsa_msg_t *m, capsa_test_command_run_t *run,
             const std::string &data) {
  capsa_test_command_run_init(run);
  run->data = Bytes(data);
  capsa_msg_init_iface(m, &capsa_test_command_interface, CAPSA_TEST_COMMAND_RUN,
                       run);
}

int SendRun(capsa_renderer_t *r, const std::string &data) {
  capsa_test_command_run_t run;
  capsa_msg_t m;
  InitRun(&m, &run, data);
  return capsa_renderer_send(r, &m);
}

void InitJob(capsa_msg_t *m, capsa_test_command_job_t *job,
             const std::string &data, uint64_t job_id) {
  capsa_test_command_job_init(job);
  job->job_id = job_id;
  job->data = Bytes(data);
  capsa_msg_init_iface(m, &capsa_test_command_interface, CAPSA_TEST_COMMAND_JOB,
                       job);
}

const capsa_test_command_run_t *AsRun(const capsa_msg_t *m) {
  return static_cast<const capsa_test_command_run_t *>(
      As(m, CAPSA_TEST_COMMAND_RUN));
}

const capsa_test_command_job_t *AsJob(const capsa_msg_t *m) {
  return static_cast<const capsa_test_command_job_t *>(
      As(m, CAPSA_TEST_COMMAND_JOB));
}

const capsa_test_command_job_done_t *AsJobDone(const capsa_msg_t *m) {
  return static_cast<const capsa_test_command_job_done_t *>(
      As(m, CAPSA_TEST_COMMAND_JOB_DONE));
}

std::string RunData(const capsa_msg_t *m) {
  const capsa_test_command_run_t *q = AsRun(m);
  return q ? String(q->data) : "";
}

std::string JobData(const capsa_msg_t *m) {
  const capsa_test_command_job_t *q = AsJob(m);
  return q ? String(q->data) : "";
}

std::string JobDoneData(const capsa_msg_t *m) {
  const capsa_test_command_job_done_t *q = AsJobDone(m);
  return q ? String(q->data) : "";
}

}  // namespace capsa_test
