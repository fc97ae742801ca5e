// Helpers for the ipc tests: sample messages, sealed regions, raw sends that
// a hostile peer would make.
#ifndef CAPSA_TESTS_IPC_IPC_TEST_UTIL_H_
#define CAPSA_TESTS_IPC_IPC_TEST_UTIL_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "ipc/message.h"
#include "tests/ipc/interfaces/carrier.capsa.h"

namespace ipc_test {

// A valid message of `type` with every field set to something recognisable
// and no handles, except OPEN_CHANNEL, which declares its one channel
// handle with fd -1.
capsa_msg_t Sample(capsa_msg_type_t type);

// Every message type of the core protocol, in wire order (the numbers the
// demos' messages had are retired, never reused: ipc/message.h).
std::vector<capsa_msg_type_t> CoreTypes();

// A valid HELLO with seq 1.
capsa_msg_t Hello();

// Rights helpers.
capsa_rights_t ReadRights();     // READ | SEEK | FSTAT | MMAP_R
capsa_rights_t WriteRights();    // + WRITE | MMAP_W
capsa_rights_t ChannelRights();  // READ | WRITE | FSTAT | EVENT

// A sealed memfd of `size` bytes, read-only (future-write sealed) or
// writable; -errno on failure. Caller owns the fd.
int SealedRegion(size_t size, bool writable);

// Encodes `msg` (sets nothing) into a byte vector; aborts the test on error.
std::vector<uint8_t> Encode(const capsa_msg_t &msg);

// sendmsg of raw bytes and descriptors on `fd`; returns sendmsg's result.
ssize_t RawSend(int fd, const void *buf, size_t len, const int *fds,
                size_t nfds);

// Number of open descriptors of this process.
int OpenFdCount();

// tests/ipc/interfaces/carrier.fbs, for tests of handle passing: the core
// protocol has no host message that hands over a file or region unasked.
// Channels and renderer loops that receive it speak kCarrier.
extern const capsa_interface_t *const kCarrier[1];

// A host -> renderer Deliver (seq 1) whose value is `*v` (borrowed: it must
// outlive every send or Encode of the message), no handles yet.
capsa_msg_t Carry(capsa_test_carrier_deliver_t *v);

// Declares `fd` on `m` and points the field of `*v` that carries that kind
// (file, read-only region, writable frame) at it. Returns the handle index
// or capsa_msg_add_handle's error.
int CarryHandle(capsa_msg_t *m, capsa_test_carrier_deliver_t *v, int fd,
                capsa_handle_kind_t kind, const capsa_rights_t *rights,
                uint64_t size, bool writable);

// The wire record of a Carry() message as a hostile sender would write it:
// the value encoded by the generated encoder, then the envelope.
std::vector<uint8_t> EncodeCarried(const capsa_msg_t &msg);

}  // namespace ipc_test

#endif  // CAPSA_TESTS_IPC_IPC_TEST_UTIL_H_
