// Semantic rules of the dispatch table and the per-peer state machine.
#include <errno.h>
#include <string.h>

#include <string>

#include <gtest/gtest.h>

#include "ipc/validate.h"
#include "tests/ipc/ipc_test_util.h"

using ipc_test::Sample;

namespace {

std::string Why(const capsa_msg_t &m) {
  char r[CAPSA_IPC_REASON_MAX] = "";
  int err = capsa_msg_validate(&m, r, sizeof r);
  return err == 0 ? "ok" : r;
}

#define EXPECT_BAD(m, needle)                                          \
  do {                                                                 \
    std::string w_ = Why(m);                                           \
    EXPECT_NE("ok", w_);                                               \
    EXPECT_NE(std::string::npos, w_.find(needle)) << "reason: " << w_; \
  } while (0)

TEST(Validate, SamplesAreValid) {
  for (capsa_msg_type_t t : ipc_test::CoreTypes())
    EXPECT_EQ("ok", Why(Sample(t))) << t;
}

// The numbers the demos' messages had (2-5, 13, 14) are retired: a peer
// that still sends one sends an unknown message.
TEST(Validate, RetiredTypesAreUnknown) {
  for (int t : {2, 3, 4, 5, 13, 14}) {
    capsa_msg_t m;
    capsa_msg_init(&m, static_cast<capsa_msg_type_t>(t));
    m.seq = 1;
    EXPECT_BAD(m, "type");
  }
  EXPECT_EQ(10u, ipc_test::CoreTypes().size());
}

TEST(Validate, FlagsAndRequestIds) {
  capsa_msg_t m = Sample(CAPSA_MSG_PING);
  m.flags = 0;
  m.request_id = 0;
  EXPECT_BAD(m, "flags");  // a ping is always a request
  m = Sample(CAPSA_MSG_PING);
  m.request_id = 0;
  EXPECT_BAD(m, "request id");
  m = Sample(CAPSA_MSG_LOG);
  m.request_id = 3;
  EXPECT_BAD(m, "request id");
  m = Sample(CAPSA_MSG_LOG);
  m.flags = 0x80;
  EXPECT_BAD(m, "unknown flags");
  m = Sample(CAPSA_MSG_PING);
  m.flags = CAPSA_MSG_F_REQUEST | CAPSA_MSG_F_RESPONSE;
  EXPECT_BAD(m, "flags");
  m = Sample(CAPSA_MSG_ERROR);  // plain, or the answer to a request
  m.flags = CAPSA_MSG_F_RESPONSE;
  m.request_id = 4;
  EXPECT_EQ("ok", Why(m));
}

TEST(Validate, Ranges) {
  capsa_msg_t m = Sample(CAPSA_MSG_HELLO);
  m.u.hello.protocol_version = CAPSA_IPC_VERSION + 1;
  EXPECT_BAD(m, "protocol version");
  m = Sample(CAPSA_MSG_HELLO);
  m.u.hello.pid = 0;
  EXPECT_BAD(m, "pid");
  m = Sample(CAPSA_MSG_RESOURCE_REQUEST);
  m.u.resource_request.url = "";
  EXPECT_BAD(m, "url");
  m = Sample(CAPSA_MSG_RESOURCE_RESPONSE);
  m.u.resource_response.status = 5;
  EXPECT_BAD(m, "status");
  m = Sample(CAPSA_MSG_ERROR);
  m.u.error.code = 0;
  EXPECT_BAD(m, "code");
  m = Sample(CAPSA_MSG_LOG);
  m.u.log.level = CAPSA_LOG_ERROR + 1;
  EXPECT_BAD(m, "level");
}

TEST(Validate, HandleCountsAndKinds) {
  capsa_rights_t rr = ipc_test::ReadRights(), rw = ipc_test::WriteRights();
  capsa_msg_t m = Sample(CAPSA_MSG_LOG);
  capsa_msg_add_handle(&m, 3, CAPSA_HANDLE_FILE, &rr, 10, false);
  EXPECT_BAD(m, "handles");  // log carries none
  m = Sample(CAPSA_MSG_RESOURCE_RESPONSE);
  m.u.resource_response.data = {nullptr, 0};
  capsa_msg_add_handle(&m, 3, CAPSA_HANDLE_SHM, &rw, 100, true);
  EXPECT_BAD(m, "read-only");
  m = Sample(CAPSA_MSG_RESOURCE_RESPONSE);
  capsa_msg_add_handle(&m, 3, CAPSA_HANDLE_FILE, &rr, 100, false);
  EXPECT_BAD(m, "both data and a handle");
  m.u.resource_response.data = {nullptr, 0};
  EXPECT_EQ("ok", Why(m));
  capsa_msg_add_handle(&m, 4, CAPSA_HANDLE_FILE, &rr, 100, false);
  EXPECT_BAD(m, "handles");  // at most one
  m = Sample(CAPSA_MSG_OPEN_CHANNEL);
  m.handle_count = 0;
  EXPECT_BAD(m, "0 handles, allowed 1..1");
  m = Sample(CAPSA_MSG_OPEN_CHANNEL);
  m.handles[0].kind = CAPSA_HANDLE_FILE;
  m.handles[0].rights = rr;
  EXPECT_BAD(m, "channel endpoint");
  m = Sample(CAPSA_MSG_OPEN_CHANNEL);
  m.u.open_channel.channel_id = 0;
  EXPECT_BAD(m, "channel id");
}

TEST(Validate, HandleDeclarations) {
  capsa_rights_t rr = ipc_test::ReadRights(), rw = ipc_test::WriteRights();
  capsa_msg_t m = Sample(CAPSA_MSG_RESOURCE_RESPONSE);
  m.u.resource_response.data = {nullptr, 0};
  capsa_msg_add_handle(&m, 3, CAPSA_HANDLE_FILE, &rw, 100, false);
  EXPECT_BAD(m, "wider");  // a file handle never carries WRITE
  m.handles[0].rights = rr;
  m.handles[0].rights.cr_rights[0] &= ~(1ULL << 57);  // malformed tag
  EXPECT_BAD(m, "malformed");
  m.handles[0].rights = rr;
  m.handles[0].kind = static_cast<capsa_handle_kind_t>(9);
  EXPECT_BAD(m, "kind");
  m.handles[0].kind = CAPSA_HANDLE_FILE;
  m.handles[0].size = CAPSA_IPC_MAX_REGION + 1;
  EXPECT_BAD(m, "too large");
  // PROT_EXEC mappings are never delegable.
  // An interface message may carry a writable region (its schema says
  // whether); the declaration check holds for every message.
  m = Sample(CAPSA_MSG_INTERFACE);
  capsa_rights_t rx = rw;
  rx.cr_rights[0] |= CAPSA_CAP_MMAP_X;
  capsa_msg_add_handle(&m, 3, CAPSA_HANDLE_SHM, &rx, 800 * 600 * 4, true);
  EXPECT_BAD(m, "wider");
}

TEST(PeerState, NothingBeforeHelloAndOnlyOneHello) {
  capsa_peer_state_t st;
  capsa_peer_state_init(&st, CAPSA_PEER_RENDERER);
  char r[CAPSA_IPC_REASON_MAX];
  capsa_msg_t log = Sample(CAPSA_MSG_LOG);
  EXPECT_EQ(-EBADMSG, capsa_peer_state_accept(&st, &log, r, sizeof r));
  EXPECT_NE(nullptr, strstr(r, "before hello")) << r;
  capsa_msg_t hello = Sample(CAPSA_MSG_HELLO);
  EXPECT_EQ(0, capsa_peer_state_accept(&st, &hello, r, sizeof r)) << r;
  log.seq = 2;
  EXPECT_EQ(0, capsa_peer_state_accept(&st, &log, r, sizeof r)) << r;
  hello.seq = 3;
  EXPECT_EQ(-EBADMSG, capsa_peer_state_accept(&st, &hello, r, sizeof r));
  EXPECT_NE(nullptr, strstr(r, "second hello")) << r;
}

TEST(PeerState, DirectionAndSequence) {
  capsa_peer_state_t st;
  capsa_peer_state_init(&st, CAPSA_PEER_RENDERER);
  char r[CAPSA_IPC_REASON_MAX];
  capsa_msg_t hello = Sample(CAPSA_MSG_HELLO);
  ASSERT_EQ(0, capsa_peer_state_accept(&st, &hello, r, sizeof r));
  capsa_msg_t sd = Sample(CAPSA_MSG_SHUTDOWN);  // host -> renderer only
  sd.seq = 2;
  EXPECT_EQ(-EBADMSG, capsa_peer_state_accept(&st, &sd, r, sizeof r));
  EXPECT_NE(nullptr, strstr(r, "may not be sent by the renderer")) << r;
  capsa_msg_t log = Sample(CAPSA_MSG_LOG);
  log.seq = 5;  // skipped 2..4
  EXPECT_EQ(-EBADMSG, capsa_peer_state_accept(&st, &log, r, sizeof r));
  EXPECT_NE(nullptr, strstr(r, "sequence")) << r;
  log.seq = 2;
  EXPECT_EQ(0, capsa_peer_state_accept(&st, &log, r, sizeof r)) << r;
  EXPECT_EQ(-EBADMSG,
            capsa_peer_state_accept(&st, &log, r, sizeof r));  // replay

  capsa_peer_state_t host;
  capsa_peer_state_init(&host, CAPSA_PEER_HOST);
  capsa_msg_t rq = Sample(CAPSA_MSG_RESOURCE_REQUEST);  // renderer -> host
  rq.seq = 1;
  EXPECT_EQ(-EBADMSG, capsa_peer_state_accept(&host, &rq, r, sizeof r));
  EXPECT_NE(nullptr, strstr(r, "may not be sent by the host")) << r;
}

TEST(PeerState, NothingAfterShutdown) {
  capsa_peer_state_t host;
  capsa_peer_state_init(&host, CAPSA_PEER_HOST);
  char r[CAPSA_IPC_REASON_MAX];
  capsa_msg_t sd = Sample(CAPSA_MSG_SHUTDOWN);
  ASSERT_EQ(0, capsa_peer_state_accept(&host, &sd, r, sizeof r)) << r;
  capsa_msg_t ping = Sample(CAPSA_MSG_PING);
  ping.seq = 2;
  EXPECT_EQ(-EBADMSG, capsa_peer_state_accept(&host, &ping, r, sizeof r));
  EXPECT_NE(nullptr, strstr(r, "after shutdown")) << r;
}

}  // namespace
