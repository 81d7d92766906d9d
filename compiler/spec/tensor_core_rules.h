// What the tensor cores need, and where a spec falls short of it.
//
// The rules users of cuDNN/cuBLAS live by on Ampere/Hopper (see ../shared/seeds and docs/dsl.md):
// f16/bf16/tf32/s8/f64 go to tensor cores; f32 with TF32 disabled does not; channel and K
// dimensions should be multiples of 8 (16-byte vectors) and >= 32; NHWC is the fast convolution
// layout; grouped convolutions are fastest with equal per-group in/out channels in
// {1,4,8,...,256}.
#pragma once

#include "tcjit/op_spec.h"

#include <string>
#include <vector>

namespace tcjit {

// The tensor-core instruction a spec lowers to, or why it has none.
struct MmaChoice {
  bool tensor_cores = false;
  std::string instruction; // e.g. "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"; "" if none
  std::string shape;       // "m16n8k16", or "" if none
  std::string note;        // e.g. "SIMT FFMA: exact fp32, no tensor cores"
};
MmaChoice choose_mma(const OpSpec &, bool tf32_override_off);

// A performance rule the spec breaks: which rule, what is wrong, how to fix it.
struct RuleFinding {
  std::string rule;    // short id: "tf32-disabled", "vector-16B", "min-32", "layout-nhwc", ...
  std::string problem; // what is wrong, with the numbers
  std::string fix;     // what to change
};
std::vector<RuleFinding> check_tensor_core_rules(const OpSpec &, std::string_view arch,
                                                 bool tf32_override_off);

// Peak math throughput of an A100 (sm_80) for the spec's input type and math mode, in FLOP/s
// (OP/s for s8): 312e12 f16/bf16, 156e12 tf32, 19.5e12 f32 SIMT and f64 DMMA, 624e12 s8.
double a100_peak_ops(const OpSpec &, bool tf32_override_off);
// A100 (80 GB) HBM bandwidth used for the roofline: 2.0e12 bytes/s.
inline constexpr double kA100Bandwidth = 2.0e12;

} // namespace tcjit
