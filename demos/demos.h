// The demo renderer kinds the capsa CLI knows: one row each (struct
// capsa_demo_kind, host/cli/cli_host.h), every kind in a folder of its own
// (demos/<kind>/: schema, workload, renderer handlers, the CLI's side with
// its row and commands, its tests). Adding a kind is a new folder plus its
// row in demos/demos.c (and its targets in demos/BUILD.gn).
//
//   struct capsa_cli_host h;   // a host with every demo kind
//   capsa_cli_host_open(&h, capsa__demo_kinds, capsa__ndemo_kinds, true);
//   for (unsigned i = 0; i < capsa__ndemo_kinds; i++)
//     printf("%s\n", capsa__demo_kinds[i]->name);
#ifndef CAPSA_DEMOS_DEMOS_H_
#define CAPSA_DEMOS_DEMOS_H_

#include "host/cli/cli_host.h"

// In `capsa demo`'s order; the first is the kind whose capability-mode
// report `capsa demo` prints.
extern const struct capsa_demo_kind *const capsa__demo_kinds[];
extern const unsigned capsa__ndemo_kinds;

#endif  // CAPSA_DEMOS_DEMOS_H_
