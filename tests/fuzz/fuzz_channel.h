// Input format of the fuzz_channel harness, shared with the corpus
// generator: a sequence of records, each
//   u8  descriptor mask: bit i attaches descriptor i of kFuzzFds
//   u16 length (little endian), then that many message bytes.
#ifndef CAPSA_TESTS_FUZZ_FUZZ_CHANNEL_H_
#define CAPSA_TESTS_FUZZ_FUZZ_CHANNEL_H_

// Which descriptors the harness can attach, by mask bit.
enum FuzzFd {
  kFuzzShmReadOnly = 0,    // sealed memfd, 4096 bytes, future-write sealed
  kFuzzShmWritable = 1,    // sealed memfd, 4096 bytes, writable
  kFuzzFileReadOnly = 2,   // regular file, 100 bytes, O_RDONLY
  kFuzzFileReadWrite = 3,  // same file, O_RDWR
  kFuzzFifo = 4,           // a FIFO nobody writes to
  kFuzzDirectory = 5,
  kFuzzSocketPair = 6,    // SEQPACKET socketpair end
  kFuzzStreamSocket = 7,  // STREAM socketpair end
  kFuzzFdCount = 8,
};

#endif  // CAPSA_TESTS_FUZZ_FUZZ_CHANNEL_H_
