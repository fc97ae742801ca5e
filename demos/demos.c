// The table of demo kinds. See demos/demos.h.
#include "demos/demos.h"

// demo_list.inc (demos/BUILD.gn demo_kinds): CAPSA_DEMO(kind) per kind,
// each defined by its folder as capsa__demo_<kind>.
#define CAPSA_DEMO(kind) extern const struct capsa_demo_kind capsa__demo_##kind;
#include "demos/demo_list.inc"
#undef CAPSA_DEMO

const struct capsa_demo_kind *const capsa__demo_kinds[] = {
#define CAPSA_DEMO(kind) &capsa__demo_##kind,
#include "demos/demo_list.inc"
#undef CAPSA_DEMO
};

const unsigned capsa__ndemo_kinds =
    sizeof capsa__demo_kinds / sizeof capsa__demo_kinds[0];
