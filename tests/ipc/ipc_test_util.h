// Helpers for the ipc tests: sample messages, sealed regions, raw sends that
// a hostile peer would make.
#ifndef CAPSA_TESTS_IPC_IPC_TEST_UTIL_H_
#define CAPSA_TESTS_IPC_IPC_TEST_UTIL_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "ipc/message.h"

namespace ipc_test {

// A valid message of `type` with every field set to something recognisable
// and no handles (gzip_job and friends use inline data), except
// OPEN_CHANNEL, which declares its one channel handle with fd -1.
capsa_msg_t Sample(capsa_msg_type_t type);

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

}  // namespace ipc_test

#endif  // CAPSA_TESTS_IPC_IPC_TEST_UTIL_H_
