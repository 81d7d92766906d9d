// What this installation finds where it runs, as `tcjit doctor` reports it (docs/cli.md): the CUDA
// toolkit's pieces and their versions, cuBLASLt and cuDNN (optional: the GPU bench compares with
// them), the CUDA driver and its GPUs (or why there is none), and the kernel database with its
// schema. Read-only: the database is opened read-only and only when
// it exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit {

// One piece of the CUDA toolkit (ptxas, libdevice, nvJitLink, NVRTC), or one of the optional
// libraries (cuBLASLt, cuDNN).
struct DoctorToolkitPiece {
  std::string path;               // "" when not found
  std::string source;             // where it was found: "TCJIT_CUDA_HOME", "CUDA_HOME", ...
  std::vector<std::string> tried; // every path looked at, in order
  std::string version;            // "13.0"; "" when unknown (or for libdevice)
  std::string missing;            // when not found: what was tried and how to fix it
  bool found() const { return !path.empty(); }
};

struct DoctorGpu {
  int ordinal = 0;
  std::string name;
  std::string arch; // "sm_80"
  int sms = 0;
  uint64_t memory_bytes = 0;
};

struct DoctorDatabase {
  std::string path; // "" when no location can be determined
  bool exists = false;
  std::string error; // when it cannot be read (or located)
  int schema_version = 0;
  int64_t problems = 0, binaries = 0, results = 0; // when it exists and was read
};

struct DoctorReport {
  std::string compiler_version; // the code generator's, which keys stored binaries
  DoctorToolkitPiece ptxas, libdevice, nvjitlink, nvrtc;
  // Optional (only the GPU bench uses them): not found is no failure. source: "LD_LIBRARY_PATH",
  // "CUDA toolkit (ROOT)", "Python wheel ($VIRTUAL_ENV)", ..., "the loader's search path"; tried:
  // every folder looked in, then each candidate that did not open and why.
  DoctorToolkitPiece cublaslt, cudnn;
  bool driver_found = false;
  std::string driver_problem; // when !driver_found (kernels then run on the emulator)
  int driver_version = 0;     // cuDriverGetVersion: 12040 for CUDA 12.4
  std::vector<DoctorGpu> gpus;
  DoctorDatabase database;
};

// Looks at the environment now; db_path "" = the default database ($TCJIT_DB, else the cache).
// Finds problems, never throws for them.
DoctorReport doctor(const std::string &db_path);

} // namespace tcjit
