// capsa's release: numbers to test at compile time, and as text.
//
//   #if CAPSA_VERSION_MAJOR == 0 && CAPSA_VERSION_MINOR < 1
//   #error "capsa 0.1 or later needed"
//   #endif
//   void print_version(void) {
//     printf("capsa %s\n", CAPSA_VERSION_STRING);
//   }
//
// The release, not the ABI: that is the soname's number (docs/sdk.md, "ABI
// policy").
#ifndef CAPSA_HOST_VERSION_H_
#define CAPSA_HOST_VERSION_H_

#define CAPSA_VERSION_MAJOR 0
#define CAPSA_VERSION_MINOR 1
#define CAPSA_VERSION_PATCH 0
#define CAPSA_VERSION_STRING "0.1.0"

#endif  // CAPSA_HOST_VERSION_H_
