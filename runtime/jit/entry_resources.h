// What one compiled kernel uses, as the compile that produced its cubin reported it (`ptxas -v`,
// or nvJitLink's `-Xptxas -v` info log): one record per kernel entry, so that a module with two
// kernels (a GEMM and its split-K reduction) reports each separately.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tcjit::jit {

struct EntryResources {
  std::string kernel;          // the .entry name
  int registers = -1;          // per thread; -1 when the log did not say
  int spill_stores = 0;        // bytes
  int spill_loads = 0;         // bytes
  int stack_frame = 0;         // bytes per thread
  int static_shared_bytes = 0; // .shared variables (dynamic shared memory is not counted)
  int constant_bytes = 0;      // cmem[0]: parameters and constants
  int barriers = 0;            // named barriers used
  int spill_bytes() const { return spill_stores + spill_loads; }
};

// Parses a ptxas -v log: the entries it compiled, in order. Lines it does not know are skipped;
// a .func's "Function properties" (stack of a callee) is not an entry and is not returned.
std::vector<EntryResources> parse_ptxas_resources(std::string_view log);

// The record of `kernel` in `all`, or nullptr.
const EntryResources *find_entry_resources(const std::vector<EntryResources> &all,
                                           std::string_view kernel);

} // namespace tcjit::jit
