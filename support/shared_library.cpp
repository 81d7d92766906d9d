#include "support/shared_library.h"

#include <dlfcn.h>

namespace tcjit::support {

OpenedLibrary open_first_library(const std::vector<std::string> &candidates) {
  OpenedLibrary result;
  for (const std::string &candidate : candidates) {
    if (void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      result.handle = handle;
      result.path = candidate;
      result.error.clear();
      return result;
    }
    const char *reason = dlerror();
    result.error += "\n  " + candidate + ": " + (reason ? reason : "cannot be opened");
  }
  return result;
}

void *find_library_symbol(void *library, const char *name) {
  if (!library) {
    return nullptr;
  }
  return dlsym(library, name);
}

} // namespace tcjit::support
