// See sandbox/testing.h. Kept out of features.c and of libcapsa: the
// probed cache is written through the pointer capsa_features_get() returns
// (a static object that is not const; the const is the API's promise to
// production callers, which never link this file).
#include "sandbox/testing.h"

void capsa__features_override_for_test(const struct capsa_features *f) {
  if (!f) return;
  struct capsa_features *cache = (struct capsa_features *)capsa_features_get();
  *cache = *f;
}
