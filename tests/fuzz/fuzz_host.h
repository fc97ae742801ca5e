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
// Harness-only flag bits (CAPSA_IPC_DUMP writes kFuzzHostAutoHello only, so
// a recorded channel replays as it was):
//   kFuzzHostListen    the renderer reads what the host sends between its
//                      records (answers of the broker: files, fonts, names;
//                      the host's own messages), keeps up to three received
//                      descriptors for kFuzzHostReceived handles, and stays
//                      after its last record until the host ends it or
//                      kFuzzHostLingerMs pass (heartbeats judge it then)
//   kFuzzHostCrash     after its last record the renderer faults (SIGSEGV)
//   kFuzzHostAbort     ... or aborts (both: SIGSEGV): crash reports
//   kFuzzHostLoop      a well-behaved renderer: the records go through the
//                      renderer loop (ipc/loop.h) instead of the raw socket:
//                      its HELLO, then each record decoded and sent again
//                      with its descriptors (requests as capsa_rloop_call,
//                      20 ms), answering PING and leaving at SHUTDOWN;
//                      records that do not decode or send are skipped.
//                      The host sees long valid sequences.
//   kFuzzHostFork      before its records the renderer forks a child that
//                      leaves its process group (setsid) and exits 2 ms
//                      later: an orphan the host (a child subreaper, as a
//                      container's entrypoint is) reaps
//   kFuzzHostForkStay  ... a child that stays in the group, 50 ms: the
//                      host kills the group with the renderer
//   kFuzzHostEmbedder  the byte after the flags is kFuzzHostAct* bits: what
//                      the harness, as an embedder, does to the renderer
//                      (at READY, or at its first message)
// The renderer creates each handle itself (in capability mode, as a hostile
// renderer would) and attaches it as SCM_RIGHTS.
#ifndef CAPSA_TESTS_FUZZ_FUZZ_HOST_H_
#define CAPSA_TESTS_FUZZ_FUZZ_HOST_H_

#include "ipc/ipc_dump.h"

// The layout is CAPSA_IPC_DUMP's (ipc/ipc_dump.h): a recorded channel
// replays here as it is.
#define kFuzzHostAutoHello CAPSA__DUMP_AUTO_HELLO
#define kFuzzHostMaxRecords 1024
#define kFuzzHostListen 0x02u
#define kFuzzHostCrash 0x04u
#define kFuzzHostAbort 0x08u
#define kFuzzHostEmbedder 0x10u
#define kFuzzHostLoop 0x20u
#define kFuzzHostFork 0x40u
#define kFuzzHostForkStay 0x80u
#define kFuzzHostLingerMs 40

enum FuzzHostAct {
  kFuzzHostActRequest = 0x01,     // READY: a thumbnail Decode request (with
                                  // a sealed region), 50 ms deadline
  kFuzzHostActSend = 0x02,        // READY: a carrier Deliver with a file,
                                  // a region and a frame
  kFuzzHostActShutdown = 0x04,    // READY: capsa_renderer_shutdown(10 ms)
  kFuzzHostActKill = 0x08,        // first message: capsa_renderer_kill
  kFuzzHostActBadMessage = 0x10,  // first message: report_bad_message
  kFuzzHostActReply = 0x20,       // each request: capsa_renderer_reply
  kFuzzHostActNavigate = 0x40,    // first message: navigate (the next
                                  // incarnation sends the input again)
  kFuzzHostActInfo = 0x80,        // each event: the renderer's info,
                                  // summaries (an embedder's task manager)
};

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
  // Harness-only kinds (after the recorded ones):
  kFuzzHostReceived = CAPSA__DUMP_KINDS,  // a descriptor the host sent
                                          // (kFuzzHostListen), size picks
                                          // which; none yet: omitted
  kFuzzHostMemfdRaw,         // memfd_create(MFD_ALLOW_SEALING) sealed as a
                             // read-only region, but executable (0777)
  kFuzzHostMemfdUnsealable,  // memfd_create without MFD_ALLOW_SEALING
  kFuzzHostUnixSocket,       // an unconnected AF_UNIX SEQPACKET socket
  kFuzzHostStdio,            // a dup of descriptor size % 3 (/dev/null,
                             // the stderr pipe)
  kFuzzHostHandleKinds,
};

#endif  // CAPSA_TESTS_FUZZ_FUZZ_HOST_H_
