// Input format of the fuzz_host harness, shared with the corpus generator
// and CAPSA_IPC_DUMP (ipc/ipc_dump.h, which defines it).
//   u8 flags: kFuzzHostAutoHello -> the renderer first sends a HELLO that
//      passes (its real pid, sandbox report and interface list), so that
//      every input reaches past the handshake; without it the input's own
//      first record is all the host gets.
//   then records (at most kFuzzHostMaxRecords), each
//      u8  handle count in its low 2 bits (0-3)
//      per handle: u8 kind (FuzzHostHandle, modulo the count), u8 size
//                  (memfds: size * 256 bytes)
//      u16 length (little endian), then that many message bytes.
// The renderer creates each handle itself (in capability mode, as a hostile
// renderer would) and attaches it as SCM_RIGHTS.
#ifndef CAPSA_TESTS_FUZZ_FUZZ_HOST_H_
#define CAPSA_TESTS_FUZZ_FUZZ_HOST_H_

#include "ipc/ipc_dump.h"

// The layout is CAPSA_IPC_DUMP's (ipc/ipc_dump.h): a recorded channel
// replays here as it is.
#define kFuzzHostAutoHello CAPSA__DUMP_AUTO_HELLO
#define kFuzzHostMaxRecords 1024

enum FuzzHostHandle {
  kFuzzHostShmReadOnly = CAPSA__DUMP_SHM_READONLY,  // F_SEAL_FUTURE_WRITE
  kFuzzHostShmShared = CAPSA__DUMP_SHM_SHARED,      // size sealed, writable
  kFuzzHostShmUnsealed = CAPSA__DUMP_SHM_UNSEALED,  // no seals at all
  kFuzzHostPipeRead = CAPSA__DUMP_PIPE_READ,        // read end of a pipe
  kFuzzHostPipeWrite = CAPSA__DUMP_PIPE_WRITE,      // write end of a pipe
  kFuzzHostChannel = CAPSA__DUMP_CHANNEL,           // SEQPACKET socketpair end
  kFuzzHostStream = CAPSA__DUMP_STREAM,             // STREAM socketpair end
  kFuzzHostShmFrozen = CAPSA__DUMP_SHM_FROZEN,      // F_SEAL_WRITE: what a
                                                    // renderer's read-only
                                                    // region must be
  kFuzzHostHandleKinds = CAPSA__DUMP_KINDS,
};

#endif  // CAPSA_TESTS_FUZZ_FUZZ_HOST_H_
