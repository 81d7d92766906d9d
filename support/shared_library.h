// dlopen/dlsym helpers for the libraries the device layer loads at run time (libcuda,
// nvJitLink): never linked, so every binary starts on a machine without them.
#pragma once

#include <string>
#include <vector>

namespace tcjit::support {

// A library opened for the rest of the process (never closed: its symbols may be held anywhere).
struct OpenedLibrary {
  void *handle = nullptr; // null when no candidate could be opened
  std::string path;       // the candidate that opened
  std::string error;      // when handle is null: every candidate tried and dlerror() for each
};

// Tries each candidate in order (a bare soname goes through the loader's search path, a path
// is opened as is) and returns the first that opens.
OpenedLibrary open_first_library(const std::vector<std::string> &candidates);

// The address of symbol `name` in `library`, or null when it does not export it.
void *find_library_symbol(void *library, const char *name);

} // namespace tcjit::support
