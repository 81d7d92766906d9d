// A stand-in for cuDNN (SONAME libcudnn.so.9) with its version call only: enough for the search of
// runtime/cuda/vendor_libraries.h and for `tcjit doctor` to report where it was found.
#include <stddef.h>

size_t cudnnGetVersion(void) {
  return 91901; // cuDNN 9.19.1
}
