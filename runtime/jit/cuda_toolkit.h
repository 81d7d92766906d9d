// Where the CUDA toolkit's pieces are, found when tcjit runs (not only where they were when tcjit
// was built), so that a binary built on one machine works on another with the toolkit elsewhere.
//
// Each piece is taken from the first root, in this order, that has it:
//   1. $TCJIT_CUDA_HOME   2. $CUDA_HOME   3. $CUDA_PATH
//   4. the toolkit of the `ptxas` on $PATH (the parent of its bin/)
//   5. /usr/local/cuda    6. the toolkit tcjit was configured with
// The pieces: bin/ptxas, nvvm/libdevice/libdevice.10.bc, lib64/libnvJitLink.so*,
// lib64/libnvrtc.so*. A piece no root has is reported with every path tried. Explicit overrides
// still come first: $TCJIT_PTXAS, $TCJIT_LIBDEVICE, $TCJIT_NVJITLINK_LIBRARY.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tcjit::jit {

struct ToolkitPiece {
  std::string path;               // "" when not found
  std::string root;               // the root it was found in ("" for an override)
  std::string source;             // "TCJIT_CUDA_HOME", "CUDA_HOME", ..., "TCJIT_PTXAS" (override)
  std::vector<std::string> tried; // every path looked at, in order
  bool found() const { return !path.empty(); }
  // "ptxas not found: tried A, B, ...; set TCJIT_CUDA_HOME to the CUDA toolkit's folder"
  std::string missing_message(const std::string &what) const;
};

struct CudaToolkit {
  ToolkitPiece ptxas, libdevice, nvjitlink, nvrtc;
};

// The environment the search reads (a parameter, so tests can give their own).
struct ToolkitEnvironment {
  std::optional<std::string> tcjit_cuda_home, cuda_home, cuda_path, path;
  std::optional<std::string> tcjit_ptxas, tcjit_libdevice, tcjit_nvjitlink_library;
  std::string configured_root; // the toolkit root tcjit was configured with
  static ToolkitEnvironment from_process();
};

CudaToolkit find_cuda_toolkit(const ToolkitEnvironment &);

// find_cuda_toolkit(ToolkitEnvironment::from_process()): looked up on every call (a few stat()s),
// so a changed environment is seen at once.
CudaToolkit current_cuda_toolkit();

// The roots of the search order that are set, in order (for libraries also tried by file name).
std::vector<std::string> toolkit_roots(const ToolkitEnvironment &);

} // namespace tcjit::jit
