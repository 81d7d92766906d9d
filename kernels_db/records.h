// The plain values kernels_db stores. Problems are identified by the caller's canonical key text
// (and its 64-bit hash); configs are canonical JSON text; nothing here knows the compiler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

struct ProblemRecord {
  std::string key_text;   // canonical problem key (unique)
  uint64_t key_hash = 0;  // the caller's 64-bit hash of key_text
  std::string op;         // "gemm", "conv2d", "conv3d"
  std::string dtype;      // "f16", ...
  std::string arch;       // "sm_80", ...
  std::string spec_text;  // the DSL text of the problem
  std::string shape_json; // small JSON object of integer shape fields: {"m":..,"n":..,"k":..}
  int64_t created_ms = 0; // set by put_problem when 0
};

// What links a problem and config to its binary. A lookup only returns a binary whose every field
// matches. The binary itself is stored once per kernel identity (BinaryRecord::kernel_identity)
// and shared by every problem and config linked to it.
struct BinaryKey {
  std::string problem_key;
  std::string config_json;
  std::string arch;
  std::string toolkit_version;
  std::string compiler_version;
};

struct BinaryRecord {
  BinaryKey key;
  // What the PTX is a function of (the caller's codegen kernel identity: the same for every size of
  // a kernel); with arch, toolkit and compiler version the key of the stored binary, which every
  // problem of that identity shares. Empty when stored: the binary of key's problem and config
  // alone ("unshared:<problem key> <config>"). Read back: the stored identity.
  std::string kernel_identity;
  std::string ptx;
  std::vector<uint8_t> cubin;
  std::string cubin_sha256;    // computed by put_binary
  std::string resources_json;  // ptxas use: {"registers":..,"spill_bytes":..,"shared_bytes":..}
  std::string compile_options; // e.g. "-O3 --gpu-name sm_80"
  double compile_ms = 0;
  int64_t created_ms = 0; // set by put_binary when 0
  // Set by find_binary: the row carries a valid MAC under this user's key (kernels_db/trust_key.h),
  // so this user's tcjit stored it exactly as it is. false: a foreign binary (imported, merged,
  // copied from elsewhere or edited), which the runtime rebuilds before it launches anything.
  bool trusted = false;
  // Set by find_binary: false when the binary was found by BinaryQuery::kernel_identity alone, not
  // (yet) linked to the query's problem and config (KernelsDb::link_binary links it).
  bool linked = true;
};

enum class ResultStatus { ok, failed, illegal };
enum class ProvenanceKind { measured, predicted, emulated };

std::string_view to_string(ResultStatus status);
std::string_view to_string(ProvenanceKind kind);
// Throw DbError(invalid_argument) for an unknown name.
ResultStatus parse_result_status(std::string_view text);
ProvenanceKind parse_provenance_kind(std::string_view text);

// Where a result comes from: measured on a named device/driver/clock, predicted by a model, or
// verified on the emulator.
struct Provenance {
  ProvenanceKind kind = ProvenanceKind::measured;
  std::string device; // measured: e.g. "NVIDIA A100-SXM4-80GB"
  std::string driver; // measured: e.g. "550.54.15"
  std::optional<int64_t> clock_mhz;
  std::string model; // predicted: the model's name and version
};

// Kernel time in microseconds over the repetitions of one measurement.
struct Timing {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  double stddev_us = 0;
};

struct ResultRecord {
  std::string problem_key;
  std::string config_json;
  std::string arch;
  ResultStatus status = ResultStatus::ok;
  std::optional<Timing> timing; // absent for failed/illegal configs
  std::optional<double> tflops;
  Provenance provenance;
  std::string tuner_version;
  int64_t measured_ms = 0; // set by put_result when 0
  std::string message;     // why a config failed or is illegal
};

// One bucket of a dispatch table: the sizes it holds and the config to launch for them.
// `dims_json` is a JSON object of closed integer intervals per dimension ("m", "n", "k",
// "batch"), e.g. {"m":[1,16],"n":[4096,4096]} holds 1 <= m <= 16 and n = 4096; a dimension it
// does not name is unconstrained. See kernels_db/dispatch.h for the rules and the lookup.
struct DispatchEntry {
  std::string dims_json;   // canonical JSON, as above
  std::string config_json; // canonical JSON object: the config to use in this bucket
  double time_us = 0;      // the bucket's representative time, measured or predicted
  ProvenanceKind provenance = ProvenanceKind::measured; // where time_us comes from
};

// What the tuner chose for a problem tuned over a size range: size buckets -> config. One table
// per (problem_key, arch, tuner_version); storing one again replaces it.
struct DispatchTable {
  std::string problem_key; // the ranged problem's canonical key (the problem must be stored)
  std::string arch;
  std::string tuner_version;
  std::vector<DispatchEntry> entries; // pairwise disjoint buckets, in the tuner's order
  int64_t created_ms = 0;             // set by put_dispatch_table when 0
};

// The cost model's calibration to one GPU (`tcjit calibrate`; the tuner's Calibration as plain
// data): one per (gpu, arch). kernels_db knows no cost model: the constants are a canonical JSON
// object of numbers ({"dram_bytes_per_s":1.9e12,"mma_efficiency.f16":0.8,...}) whose names and
// ranges the tuner judges (DecisionRules::calibration_check).
struct CalibrationRecord {
  std::string gpu;            // the measured device's name, e.g. "NVIDIA H100 80GB HBM3"
  std::string arch;           // the arch whose model it calibrates, e.g. "sm_90"
  std::string constants_json; // canonical JSON object: constant name -> finite number
  int64_t results = 0;        // measurements fitted
  double residual_before = 0; // rms log error with the model's own constants
  double residual = 0;        // the same with the calibrated ones
  int64_t created_ms = 0;     // when it was fitted (Unix ms)
  std::string tcjit_version;  // the tcjit that fitted it
  std::string model_version;  // the cost model version it was fitted for
};

// The binary's metadata without PTX and cubin, for listings.
struct BinaryInfo {
  BinaryKey key;
  std::string kernel_identity; // the stored binary's (BinaryRecord::kernel_identity)
  int64_t problems = 0;        // how many problem/config links share the binary (this one included)
  std::string cubin_sha256;
  int64_t cubin_bytes = 0;
  int64_t ptx_bytes = 0;
  std::string resources_json;
  std::string compile_options;
  double compile_ms = 0;
  int64_t created_ms = 0;
};

} // namespace tcjit::kernels_db
