// Internal (host/pool.c): a worker's reply kept past its callback, so that
// the job's done() can wait until the worker process is gone.
#ifndef CAPSA_HOST_POOL_REPLY_H_
#define CAPSA_HOST_POOL_REPLY_H_

#include "ipc/message.h"

typedef struct capsa__kept_reply {
  capsa_msg_t msg;  // what done() is given; handles owned here
  void *mem;        // its decoded struct and payload, or an error's text
  int kept;         // msg is valid
} capsa__kept_reply_t;

// Copies `reply` (borrowed, valid during a reply callback) into *k: its
// descriptors are taken (the channel no longer closes them), an interface
// message is decoded again from a copy of its verified payload, an ERROR
// keeps a copy of its text. Returns 0 or -ENOMEM (*k then empty).
int capsa__kept_reply_take(capsa_msg_t *reply, capsa__kept_reply_t *k);

// Closes what done() left of the descriptors and frees the copy.
void capsa__kept_reply_release(capsa__kept_reply_t *k);

#endif  // CAPSA_HOST_POOL_REPLY_H_
