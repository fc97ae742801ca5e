#include "tests/ipc/ipc_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ipc/codec.h"
#include "sandbox/memfd.h"

namespace ipc_test {

static const uint8_t kData[] = {1, 2, 3, 4, 5, 0, 255};

capsa_rights_t ChannelRights() {
  capsa_rights_t r;
  r.cr_rights[0] = CAPSA_CAP_READ | CAPSA_CAP_WRITE | CAPSA_CAP_FSTAT;
  r.cr_rights[1] = (1ULL << 58) | CAPSA_CAP_EVENT;
  return r;
}

capsa_msg_t Sample(capsa_msg_type_t type) {
  capsa_msg_t m;
  capsa_msg_init(&m, type);
  m.seq = 1;
  auto &u = m.u;
  switch (type) {
    case CAPSA_MSG_HELLO:
      u.hello.protocol_version = CAPSA_IPC_VERSION;
      u.hello.pid = 42;
      u.hello.renderer_kind = "html";
      u.hello.sandbox.capmode = true;
      u.hello.sandbox.no_new_privs = true;
      u.hello.sandbox.landlock_abi = 7;
      u.hello.sandbox.namespaces = CAPSA_NS_USER | CAPSA_NS_NET;
      u.hello.sandbox.detail = "seccomp+landlock";
      u.hello.interfaces = "demo.convert";
      u.hello.interfaces_hash = 0x0123456789abcdefULL;
      break;
    case CAPSA_MSG_RESOURCE_REQUEST:
      m.flags = CAPSA_MSG_F_REQUEST;
      m.request_id = 5;
      u.resource_request.url = "capsa://img.png";
      break;
    case CAPSA_MSG_RESOURCE_RESPONSE:
      m.flags = CAPSA_MSG_F_RESPONSE;
      m.request_id = 5;
      u.resource_response.status = -ENOENT;
      u.resource_response.mime = "image/png";
      u.resource_response.data = {kData, sizeof kData};
      break;
    case CAPSA_MSG_LOG:
      u.log.level = CAPSA_LOG_WARN;
      u.log.text = "hello log";
      break;
    case CAPSA_MSG_PING:
    case CAPSA_MSG_PONG:
      m.flags =
          type == CAPSA_MSG_PING ? CAPSA_MSG_F_REQUEST : CAPSA_MSG_F_RESPONSE;
      m.request_id = 9;
      u.ping.seq = 77;
      u.ping.payload = {kData, sizeof kData};
      break;
    case CAPSA_MSG_SHUTDOWN:
      u.shutdown.reason = "bye";
      break;
    case CAPSA_MSG_ERROR:
      u.error.code = -EPROTO;
      u.error.message = "nope";
      break;
    case CAPSA_MSG_OPEN_CHANNEL:
      // Needs its handle: declared here, descriptor -1 (the codec carries
      // declarations only; senders attach a real endpoint).
      u.open_channel.channel_id = 2;
      u.open_channel.purpose = "fonts";
      m.handle_count = 1;
      m.handles[0].kind = CAPSA_HANDLE_CHANNEL;
      m.handles[0].rights = ChannelRights();
      break;
    case CAPSA_MSG_INTERFACE: {
      // The wire form: the core codec carries the payload as bytes (the
      // channel checks it against the interface, ipc/channel_iface.c).
      static const uint8_t kPayload[] = {12, 0, 0, 0, 8, 0, 4, 0};
      u.iface.index = 0;
      u.iface.id = 3;
      u.iface.payload = {kPayload, sizeof kPayload};
      break;
    }
    default:
      break;
  }
  return m;
}

std::vector<capsa_msg_type_t> CoreTypes() {
  std::vector<capsa_msg_type_t> types;
  for (int t = 1; t < CAPSA_MSG_TYPE_COUNT; t++)
    if (strcmp(capsa_msg_type_name((uint32_t)t), "?") != 0)
      types.push_back(static_cast<capsa_msg_type_t>(t));
  return types;
}

capsa_msg_t Hello() {
  return Sample(CAPSA_MSG_HELLO);
}

capsa_rights_t ReadRights() {
  capsa_rights_t r;
  r.cr_rights[0] =
      CAPSA_CAP_READ | CAPSA_CAP_SEEK | CAPSA_CAP_FSTAT | CAPSA_CAP_MMAP_R;
  r.cr_rights[1] = 1ULL << 58;
  return r;
}

capsa_rights_t WriteRights() {
  capsa_rights_t r = ReadRights();
  r.cr_rights[0] |= CAPSA_CAP_WRITE | CAPSA_CAP_MMAP_W;
  return r;
}

int SealedRegion(size_t size, bool writable) {
  int fd = capsa_memfd_create("ipc-test", size);
  if (fd < 0) return fd;
  int err =
      writable ? capsa_memfd_seal_shared(fd) : capsa_memfd_seal_readonly(fd);
  if (err < 0) {
    close(fd);
    return err;
  }
  return fd;
}

std::vector<uint8_t> Encode(const capsa_msg_t &msg) {
  std::vector<uint8_t> buf(CAPSA_IPC_MAX_MESSAGE);
  int n = capsa_msg_encode(&msg, buf.data(), buf.size());
  EXPECT_GT(n, 0) << "encode " << capsa_msg_type_name(msg.type);
  buf.resize(n > 0 ? n : 0);
  return buf;
}

ssize_t RawSend(int fd, const void *buf, size_t len, const int *fds,
                size_t nfds) {
  struct iovec iov = {const_cast<void *>(buf), len};
  std::vector<char> ctl(CMSG_SPACE(sizeof(int) * (nfds ? nfds : 1)));
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (nfds > 0) {
    mh.msg_control = ctl.data();
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
  }
  return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

int OpenFdCount() {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (struct dirent *e = readdir(d))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1;  // the directory's own descriptor
}

const capsa_interface_t *const kCarrier[1] = {&capsa_test_carrier_interface};

capsa_msg_t Carry(capsa_test_carrier_deliver_t *v) {
  capsa_test_carrier_deliver_init(v);
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_test_carrier_interface,
                       CAPSA_TEST_CARRIER_DELIVER, v);
  m.seq = 1;
  return m;
}

int CarryHandle(capsa_msg_t *m, capsa_test_carrier_deliver_t *v, int fd,
                capsa_handle_kind_t kind, const capsa_rights_t *rights,
                uint64_t size, bool writable) {
  int i = capsa_msg_add_handle(m, fd, kind, rights, size, writable);
  if (i < 0) return i;
  if (kind == CAPSA_HANDLE_FILE)
    v->file = i;
  else if (writable)
    v->frame = i;
  else
    v->region = i;
  return i;
}

std::vector<uint8_t> EncodeCarried(const capsa_msg_t &msg) {
  alignas(8) static uint8_t payload[CAPSA_IPC_MAX_MESSAGE];
  char why[CAPSA_IPC_REASON_MAX] = "";
  int n = capsa_iface_encode(&capsa_test_carrier_interface, msg.u.iface.id,
                             msg.u.iface.value, msg.handles, msg.handle_count,
                             payload, sizeof payload, why, sizeof why);
  EXPECT_GT(n, 0) << why;
  capsa_msg_t wire = msg;
  wire.u.iface.index = 0;
  wire.u.iface.value = nullptr;
  wire.u.iface.payload = {payload, n > 0 ? (size_t)n : 0};
  return Encode(wire);
}

}  // namespace ipc_test
