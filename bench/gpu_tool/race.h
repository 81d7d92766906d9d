// The race: for each problem, tcjit's heuristic config, tcjit's config tuned on the device
// (tcjit::tune_ops with device cuda into the run's database), and each anchor plan's first
// candidate and the best of its first `anchor_top` measured, all timed the same way (timing.h)
// on the same operands; tcjit's output and each anchor's first candidate's output are copied
// back once and checked against the CPU reference under tcjit's tolerance model
// (compiler/reference/tolerance.h). Everything reported is measured on the device: a column that
// could not run says why instead of giving a time. An error of one problem, one column or one
// anchor is recorded and the run goes on. The anchors come in through AnchorPlanners, so the real
// ones (cublaslt_anchor.h, cudnn_anchor.h) and tests' fakes plug in alike.
#pragma once

#include "bench/gpu_tool/anchor.h"
#include "bench/gpu_tool/problems.h"
#include "bench/gpu_tool/timing.h"
#include "runtime/cuda/cuda_device.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tcjit::bench {

// The anchors' plans of one problem on operands allocated by the race (one plan per library and
// heuristic variant; none when no anchor applies). Either may be empty: no anchor of that kind.
// May throw: the error is recorded as the problem's and the run goes on.
struct AnchorPlanners {
  std::function<std::vector<AnchorPlan>(const GemmProblem &, const GemmOperands &)> gemm;
  std::function<std::vector<AnchorPlan>(const ConvProblem &, const ConvOperands &)> conv;
};

struct RaceOptions {
  TimingOptions timing;
  std::string db_path;            // the database tcjit tunes into (and reads tuned configs from)
  bool tune = true;               // false: no "tcjit tuned" column
  std::string tune_budget = "16"; // candidates per problem (tcjit::TuneRequest::budget)
  int anchor_top = 8;             // the best of an anchor's first `anchor_top` candidates
  // The CPU reference checks at most about this many multiply-adds per output: larger GEMMs are
  // checked on their first and last rows, convolutions (fprop, dgrad) on their first image; a
  // wgrad over it is not checked (and says so).
  double verify_max_macs = 8e9;
  std::function<void(const std::string &)> log; // one line per column as the run goes; may be empty
};

// The check of one output against the CPU reference.
struct Verification {
  bool checked = false; // false: not checked (why_unchecked says why)
  bool ok = false;      // every element checked lies within the tolerance
  std::string part;     // what was compared: "all 1048576 elements", "rows 0..127 and ..."
  std::string why_unchecked;
  int64_t elements = 0, mismatches = 0;
  double max_abs_error = 0, max_error_over_tolerance = 0;
  std::string worst; // the worst element (CompareReport::summary) when !ok
};

struct CandidateTime {
  int rank = 0;
  std::string description;
  std::optional<TimingResult> timing;
  std::string error; // when it could not be timed
};

// One column of a problem's row: a tcjit config or an anchor's choice.
struct ColumnResult {
  std::string column;  // "tcjit heuristic", "tcjit tuned", "cuBLASLt heuristic first", ...
  std::string source;  // "tcjit", or the anchor's name ("cuBLASLt", "cuDNN")
  std::string variant; // "heuristic", "tuned", or the anchor plan's variant ("mode A")
  std::string pick;    // "first", "best of N" (anchors); "" for tcjit
  bool ok = false;     // timed (whatever the verification found)
  std::string error;   // why there is no time
  std::string config;  // tcjit's config, or the anchor candidate's description
  std::string origin;  // tcjit: where the kernel came from ("compiled now", "database"); an
                       // anchor: its library and what its plan skipped (AnchorPlan::note)
  std::optional<TimingResult> timing;
  double tflops = 0;                     // 2*m*n*k*batch / median (TOP/s for s8)
  std::optional<double> percent_of_peak; // of the arch table's peak of the math unit
  std::optional<Verification> verification;
  std::vector<CandidateTime> candidates; // "best of N": each candidate timed
};

struct ProblemResult {
  std::string kind; // "gemm" or "conv"
  std::string name, dtype, pass;
  bool bias_gelu = false;
  std::string spec;      // tcjit's DSL text of the problem
  double flops = 0;      // 2*m*n*k*batch (a convolution's implicit GEMM)
  std::string math_unit; // whose peak percent_of_peak is of
  std::vector<ColumnResult> columns;
  std::vector<std::string> errors; // what failed for the whole problem (operands, anchors' plans)
};

// The DSL text tcjit runs for a problem: A row, B col, D row; bias=col (one value per output
// column) act=gelu; s8: c=s32 acc=s32; tf32: a=tf32 b=tf32 c=f32. Convolutions: f16 NHWC/KRSC,
// f32 accumulate, no epilogue.
std::string gemm_spec_text(const GemmProblem &problem);
std::string conv_spec_text(const ConvProblem &problem);

// Races every problem on `dev` (the device the timing, the operands and the anchors use; tcjit's
// runtimes open the same GPU themselves, device "cuda"). Throws only for what stops the whole
// run (tcjit's runtime cannot be opened on the device); everything else is in the results.
std::vector<ProblemResult> run_race(cuda::CudaDevice &dev, const std::vector<GemmProblem> &gemms,
                                    const std::vector<ConvProblem> &convs,
                                    const AnchorPlanners &anchors, const RaceOptions &options);

} // namespace tcjit::bench
