// Helpers for the test renderers' interface (tests/harness/command.fbs,
// generated into tests/harness/command.capsa.h): the host, fault, escape and
// supervision suites drive their renderer kinds with Run events and Job
// requests.
//
//   const capsa_renderer_handlers_t kMine = {
//       "mine", nullptr, OnMine, nullptr, capsa_test::kCommand, 1};
//   ...
//   capsa_kind_options_init(&k, "mine", capsa_renderer_main, (void *)&kMine);
//   capsa_test::SpeakCommand(&k);  // the same list as the handlers'
//   ...
//   capsa_test::SendRun(r, "crash");                // host side
//   std::string cmd = capsa_test::RunData(m);       // renderer side
//
// A kind whose handlers list kCommand must name it in its kind options too,
// or the host refuses its renderers at HELLO.
#ifndef CAPSA_TESTS_HARNESS_COMMAND_H_
#define CAPSA_TESTS_HARNESS_COMMAND_H_

#include <string>

#include "host/capsa_host.h"
#include "ipc/message.h"
#include "tests/harness/command.capsa.h"

namespace capsa_test {

// The interface list of every kind that speaks the command interface (for
// capsa_renderer_handlers_t.interfaces, with ninterfaces 1).
inline const capsa_interface_t *const kCommand[] = {
    &capsa_test_command_interface};

// Sets `k`'s interfaces to kCommand.
void SpeakCommand(capsa_kind_options_t *k);

// `s` as bytes (borrowed: valid while `s` is) and back.
capsa_bytes_t Bytes(const std::string &s);
std::string String(const capsa_bytes_t &b);

// *m becomes a Run event (*run, borrowed until the send) whose data is
// `data` (borrowed too). Fill other fields of *run, or add handles, before
// sending.
void InitRun(capsa_msg_t *m, capsa_test_command_run_t *run,
             const std::string &data);
// Sends a Run event with `data` to `r`: capsa_renderer_send's result.
int SendRun(capsa_renderer_t *r, const std::string &data);

// *m becomes a Job request (*job, borrowed until the send) with `job_id`
// and `data` (borrowed).
void InitJob(capsa_msg_t *m, capsa_test_command_job_t *job,
             const std::string &data, uint64_t job_id = 0);

// The decoded message in `m` (received: verified against the schema by the
// channel), or nullptr when `m` is not that message of the interface.
const capsa_test_command_run_t *AsRun(const capsa_msg_t *m);
const capsa_test_command_job_t *AsJob(const capsa_msg_t *m);
const capsa_test_command_job_done_t *AsJobDone(const capsa_msg_t *m);

// Their data as a string; "" when `m` is no such message.
std::string RunData(const capsa_msg_t *m);
std::string JobData(const capsa_msg_t *m);
std::string JobDoneData(const capsa_msg_t *m);

}  // namespace capsa_test

#endif  // CAPSA_TESTS_HARNESS_COMMAND_H_
