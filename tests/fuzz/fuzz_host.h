// Input format of the fuzz_host harness, shared with the corpus generator.
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

#define kFuzzHostAutoHello 1u
#define kFuzzHostMaxRecords 64

enum FuzzHostHandle {
  kFuzzHostShmReadOnly = 0,  // memfd, sealed read-only (future write)
  kFuzzHostShmShared = 1,    // memfd, size sealed, writable
  kFuzzHostShmUnsealed = 2,  // memfd, no seals at all
  kFuzzHostPipeRead = 3,     // read end of a pipe
  kFuzzHostPipeWrite = 4,    // write end of a pipe
  kFuzzHostChannel = 5,      // SEQPACKET socketpair end (a channel)
  kFuzzHostStream = 6,       // STREAM socketpair end
  kFuzzHostShmFrozen = 7,    // memfd, F_SEAL_WRITE: what a renderer's
                             // read-only region must be
  kFuzzHostHandleKinds = 8,
};

#endif  // CAPSA_TESTS_FUZZ_FUZZ_HOST_H_
