// The tools of tcjit as an API: what the `tcjit` command line does, an application can do too (the
// command line is a client of exactly these functions; docs/cli.md).
//
//   parse_ops          DSL text (one operation or a workload) -> the operations
//   compile            spec -> PTX -> cubin, with the cubin's resources; needs no device
//   explain_op         the spec's implicit GEMM, roofline, alignment, the tensor-core rules it
//                      breaks and the config the runtime would compile
//   Runtime::verify    the kernel the runtime would use, run on random inputs and checked against
//                      the CPU reference; the verified result is recorded in the database
//   tune_ops           offline tuning of operations into the kernel database, resumable
//
// Each report carries its figures as fields, the text report the command line prints (`text`) and
// the JSON object of the command's --json output (`json`, the schema in docs/cli.md). Every
// failure throws tcjit::Error (tcjit.hpp).
#pragma once

#include "tcjit/tcjit.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit {

// Text that came from a file (a database's spec text or device name, a quoted source line) made
// safe to print on a terminal: control characters as \xNN (C1 controls as \u00NN, bytes that are
// not UTF-8 as \xNN), so an escape sequence in a file (OSC 52 writes the clipboard) is shown, not
// obeyed. The _keep_lines form keeps newlines and tabs (messages of several lines).
std::string escape_controls(std::string_view text);
std::string escape_controls_keep_lines(std::string_view text);

// The name a report gives a workload entry (op_spec.h): its name, else "line N".
std::string entry_label(const WorkloadEntry &entry);

// Parses one spec or a workload. Throws Error(bad_spec) whose problem() holds the rendered
// diagnostics (source:line:column, the line, a caret, what to write instead), and when the text
// holds no operation.
std::vector<WorkloadEntry> parse_ops(std::string_view text,
                                     std::string_view source_name = "<text>");

// act=custom:FILE (op_spec.h, CustomActivation): reads FILE into spec.epilogue.custom.source when
// that is empty; a relative path is taken from `base_dir` ("" = the current directory). Throws
// Error(bad_spec) naming the file when it is missing, cannot be read, is over 64 KiB, or is not
// text, and Error(invalid_argument) "... is not a regular file" for a FIFO, device, socket or
// directory (refused by stat() before it is opened: it would block or never end). parse_ops calls
// it for every entry (base_dir: the folder of `source_name` when that is a file). Specs without
// act=custom are left as they are.
void load_custom_activation(OpSpec &spec, std::string_view base_dir = "");

// The canonical DSL text of a spec (every default written out).
std::string canonical_text(const OpSpec &spec);

// 2:4-sparse A (DSL `sparse=2:4`): a sparse GEMM takes A pruned and compressed, in one buffer per
// batch (docs/dsl.md, "2:4-sparse A"):
//   values    m rows of k/2 elements, row-major, row stride lda (compressed elements; 0 = k/2):
//             the 2 kept values of every group of 4 along K, in K order;
//   metadata  at byte sparse_2_4_metadata_offset() (16-byte aligned): row r's k/8 bytes at
//             offset + r * k/8; group g's 4 bits in byte g/2 (the low nibble for even g), bits
//             0-1 the index (0..3) in the group of the first kept value, bits 2-3 the second's.
// Batch b's block starts at b * sparse_2_4_bytes(); the kernel's batch stride is that many bytes.
// Pruning keeps the 2 largest magnitudes of every 4 along K (ties to the lower index; NaN is never
// pruned), like cuSPARSELt's prune; for f32 and tf32, whose mma.sp is 1:2, the larger magnitude
// of each pair (columns 4g, 4g+1 and 4g+2, 4g+3), so the first index is 0 or 1 and the second 2
// or 3. dtype: f16, bf16, f32, tf32, s8, u8, s4 or u4 (tcjit's sparse kernels take all of them,
// f32 with math=tf32); element bits as in op_spec.h. s4/u4 (two values per byte, value 2i in the
// low nibble of byte i) are 4:8 sparse by pairs, the mma.sp rule for 4-bit types: everything
// above holds for their bytes (a byte = a pair of adjacent values; of every 4 pairs the 2 of
// largest |v0| + |v1| are kept, ties to the lower index; metadata indices count pairs, k/16
// bytes per row); lda counts compressed values and must be even, as must ld_dense. `dense` is a
// row-major m x k matrix with row stride ld_dense. Throws Error(invalid_argument) for k not a
// positive multiple of 4 (s4/u4: 8), m < 1, lda < k/2, an odd lda or ld_dense of s4/u4, ld_dense
// < k, a null pointer, or another dtype without whole-byte elements.
size_t sparse_2_4_bytes(DType dtype, int64_t m, int64_t k, int64_t lda = 0);
size_t sparse_2_4_metadata_offset(DType dtype, int64_t m, int64_t k, int64_t lda = 0);
// Prunes `dense` and writes the compressed block (sparse_2_4_bytes() bytes) to `out`.
void prune_2_4_and_compress(DType dtype, const void *dense, int64_t m, int64_t k, int64_t ld_dense,
                            void *out, int64_t lda = 0);
// Prunes `dense` in place (zeroes the 2 dropped values of every 4): the matrix a sparse GEMM
// multiplies.
void prune_2_4(DType dtype, void *dense, int64_t m, int64_t k, int64_t ld_dense);
// The pruned dense matrix a compressed block stands for.
void decompress_2_4(DType dtype, const void *compressed, int64_t m, int64_t k, void *dense,
                    int64_t ld_dense, int64_t lda = 0);

// The architectures tcjit compiles for ("sm_80, sm_86, sm_89, sm_90"), and whether `arch` is one.
std::string target_arch_names();
bool is_target_arch(std::string_view arch);

// ---- compile ------------------------------------------------------------------------------------

// How compile() turns the PTX into a cubin. ptxas is what the runtime ships (a whole program);
// nvJitLink is its fallback when ptxas cannot run (relocatable code); automatic takes ptxas, else
// nvJitLink, as the runtime does.
enum class CubinCompiler { automatic, ptxas, nvjitlink, none };

struct CompileRequest {
  std::string arch = "sm_80";
  std::string config; // tile config words over the defaults ("128x128x32 w64x64 s3"); "" = default
  CubinCompiler cubin = CubinCompiler::ptxas;
  // "llvm" (LLVM's NVPTX backend) or "nvrtc" (CUDA C++ source compiled by NVRTC; the one that
  // compiles act=custom:FILE). Both follow the same kernel plan and ABI.
  std::string backend = "llvm";
};

// What the cubin's compile reported for one kernel of the module.
struct KernelUsage {
  std::string kernel;
  int registers = 0;
  int spill_store_bytes = 0, spill_load_bytes = 0;
  int stack_bytes = 0;
  int shared_bytes = 0; // dynamic (the plan's, for the main kernel) + static
};

struct StageTime {
  std::string stage; // "parse", code generator stages, "ptxas" or "nvjitlink"
  double ms = 0;
};

struct CompiledModule {
  std::string spec_text, arch;
  std::string config;         // the resolved tile config
  bool default_config = true; // CompileRequest::config was empty
  std::string kernel_name;    // the main kernel's entry
  std::string identity;       // the kernel's identity (the same PTX whatever the sizes)
  std::string plan_text;      // the kernel plan, described
  int threads = 0;            // per CTA
  int dynamic_shared_bytes = 0;
  std::string backend;     // "llvm" or "nvrtc"
  std::string cuda_source; // the nvrtc backend's CUDA C++ ("" for llvm)
  std::string ptx;
  std::vector<std::string> kernels; // the module's entries, in order (split-K adds a reduction)
  std::vector<uint8_t> cubin;       // empty with CubinCompiler::none
  std::string cubin_compiler;       // "ptxas", "nvJitLink", or "" without a cubin
  std::string cubin_options;        // "ptxas -arch=sm_80 -O3 ..." / "nvJitLink 13.0 ..."
  std::vector<KernelUsage> usage;   // per kernel of the cubin
  std::vector<StageTime> times;     // the code generator's stages, then the cubin's compile
  std::string text;                 // the report of `tcjit compile`
  std::string json;                 // the object of `tcjit compile --json`
};

// Compiles a concrete or symbolic GEMM/convolution spec for request.arch, through the same code
// generator and the same PTX -> cubin step the runtime ships with. Throws Error: invalid_argument
// (unknown arch, a bad config), bad_spec (a spec the code generator does not compile),
// unsupported (ptxas or nvJitLink cannot be run), internal (the PTX is rejected: a tcjit bug).
CompiledModule compile(const OpSpec &spec, const CompileRequest &request);
// The same for DSL text holding one operation (its parse is timed as the stage "parse"); throws
// Error(bad_spec) with the rendered diagnostics for bad text, invalid_argument for a workload of
// several operations.
CompiledModule compile(std::string_view dsl_text, std::string_view source_name,
                       const CompileRequest &request);

// ---- explain ------------------------------------------------------------------------------------

struct ExplainRequest {
  std::string arch = "sm_80"; // the roofline is this arch's GPU (A100, RTX A6000, L40S, H100)
  // The database whose calibration (`tcjit calibrate`) the prediction uses for the arch's GPU:
  // "" = $TCJIT_DB, else the default database; none when it has no calibration.
  std::string db_path;
  // Tile config words ("128x256x64 w64x64 s3", as `tcjit compile --config`): predict this config
  // instead of the default chooser's. "" = the chooser's.
  std::string config;
};

struct OpExplanation {
  std::string text;   // the report of `tcjit explain`
  std::string json;   // one object of `tcjit explain --json`
  std::string config; // the config the runtime would compile on a miss; "" when none compiles
};

OpExplanation explain_op(const WorkloadEntry &entry, const ExplainRequest &request);

// ---- resolve ------------------------------------------------------------------------------------

// What an application preparing a spec gets from a kernel database, found by the runtime's own
// lookup (docs/tuner.md, "Which decision serves a spec") without compiling anything and without
// writing the database (opened read-only; a missing file is no database).
struct ResolveRequest {
  std::string db_path;        // "" = $TCJIT_DB, else the default database
  std::string arch = "sm_80"; // the arch the application's runtime compiles for
  std::string backend = "llvm";
};

// One kernel the operation may launch: the spec's kernel, or one size bucket's.
struct ResolvedKernel {
  std::string sizes;       // "all" (the spec's kernel), "other" (sizes in no bucket), or a bucket
                           // ("m=17..64")
  std::string config;      // the tile config
  std::string origin;      // "tuned measured", "tuned predicted", "stored" (the kernel built last
                           // for the problem) or "heuristic" (the default chooser's)
  std::string decided_for; // the problem key whose tune decided it ("" when not tuned)
  std::optional<double> time_us; // measured or predicted time at the spec's (nominal) sizes
  bool time_predicted = true;    // the time is the cost model's, not a measurement
  std::string identity;          // codegen kernel identity (the same PTX whatever the sizes)
  bool stored = false;           // its binary is in the database (else compiled at first use)
  bool stored_foreign = false;   // stored, but not by this user's tcjit: rebuilt at first use
};

struct Resolution {
  std::string spec_text, key_text, key_hash, arch;
  std::string database; // its path; "" when there is none
  // The database's calibration of the cost model that predicted times use ("calibrated on <gpu>
  // (<n> results, <date>)", `tcjit calibrate`); "" for the model's own constants.
  std::string calibration;
  std::vector<ResolvedKernel> kernels;
  std::string text; // the report of `tcjit resolve`
  std::string json; // the object of `tcjit resolve --json` (docs/schemas/resolve.schema.json)
};

// Throws Error: invalid_argument (unknown arch or backend, not a tcjit database), bad_spec (an
// invalid spec), database (the database cannot be read).
Resolution resolve_op(const OpSpec &spec, const ResolveRequest &request);

// ---- Runtime::verify (tcjit.hpp) ----------------------------------------------------------------

// Progress of a long run: what is done of how much, for a display.
struct Progress {
  std::string what; // "blocks" (an emulator launch)
  uint64_t done = 0, total = 0;
  double elapsed_seconds = 0;
};

struct VerifyRequest {
  std::string config;      // tile config over the runtime's choice; "" = the runtime's choice
  uint64_t seed = 1;       // of the random inputs
  bool allow_long = false; // run on the emulator even when its estimate exceeds 10 minutes
  // Receives the text report line by line as the run goes (the emulator's time estimate before a
  // long run); may be null.
  std::ostream *log = nullptr;
  // Called now and then during a long emulator launch (from the launch's threads, one call at a
  // time); may be empty.
  std::function<void(const Progress &)> on_progress;
};

struct VerifyReport {
  std::string spec_text, key_hash;
  std::string config, kernel;
  std::string cache; // how the kernel was found: "hit (database ...)", "miss, compiled ..."
  std::string device;
  std::vector<std::string> warnings; // e.g. every config tried spills: the least is used
  std::optional<double> estimate_warp_instructions, estimate_seconds; // emulator only
  int64_t elements = 0, mismatches = 0;
  double max_abs_error = 0, worst_error_over_tolerance = 0; // error / tolerance, 1 = at the limit
  double device_ms = 0, reference_ms = 0;
  // On a GPU, the verified kernel's time (CUDA events, L2 flushed between repetitions, as `tcjit
  // tune` measures) and its rate (a convolution's forward multiply-adds); never on the emulator.
  std::optional<double> median_us, tflops;
  bool recorded = false; // the verified result was stored in the database
  bool ok = false;       // every element within the tolerance
  std::string failure;   // when !ok: what was outside
  std::string text;      // the report of `tcjit run`
  std::string json;      // one object of `tcjit run --json`
};

// ---- tune_ops ----------------------------------------------------------------------------------

// What tune_ops reports while it works (TuneRequest::on_event), in order: `setup` once, then for
// each problem `started`, `progress` now and then, `finished`.
struct TuneEvent {
  enum class Kind { setup, started, progress, finished };
  Kind kind = Kind::setup;
  size_t index = 0, count = 0; // this problem is index (1-based) of count
  std::string name;            // the problem's label
  std::string text;            // setup: the plan; finished: the outcome in one sentence
  size_t done = 0, planned = 0, failed = 0; // progress: candidates
  std::string best_config;                  // progress: the best so far ("" none yet)
  double best_us = 0, elapsed_seconds = 0;
};

struct TuneRequest {
  std::string db_path;                 // "" = $TCJIT_DB, else ~/.cache/tcjit/kernels.db
  std::string arch = "auto";           // or sm_80, sm_86, sm_89, sm_90
  std::string device = "auto";         // cuda (measure), emu (model + emulator), auto
  std::string strategy = "model-topk"; // exhaustive, random, anneal, model-topk
  std::string budget = "100";          // per problem: a count of configs, or a time (90s, 10m)
  std::string replay;           // answer measurements from a JSON Lines export instead of a device
  int jobs = 0;                 // threads building candidates; 0 = all cores
  std::string shard;            // "I/N": only the I-th of N slices of the problems ("" = all)
  uint64_t seed = 1;            // of the random and anneal strategies
  bool retune = false;          // go on past problems already tuned
  std::string backend = "llvm"; // which backend builds the candidates: llvm or nvrtc
  // Wall-clock seconds one emulator launch (a probe or a verification) may run before it fails;
  // 0: no limit. A GPU kernel is not interrupted.
  double timeout_seconds = 0;
  // Set (e.g. by a signal handler) to stop after the candidate being measured; may be null.
  const std::atomic<bool> *stop = nullptr;
  std::function<void(const TuneEvent &)> on_event; // may be empty
};

struct TuneReport {
  std::string db_path;
  std::string measurer;             // "model (A100 ...) + emulator", "measured on ...", ...
  std::vector<std::string> skipped; // operations not tuned, each with why (a sentence)
  size_t problems = 0;              // tuned in this shard
  size_t failed = 0;                // problems with no usable config or an error
  bool interrupted = false;         // TuneRequest::stop was set: what is done is stored
  std::string text;                 // the summary table of `tcjit tune`
  std::string json;                 // the array of `tcjit tune --json`
};

// Tunes each distinct problem of `ops` (heaviest weight first) into the database: searches the
// tile configs legal on the arch, measures them (a GPU; else predicts them with the cost model,
// each verified on the emulator; or replays an export), stores every result and the winner (a
// size range: its representative sizes and a dispatch table). Resumable: results stored are
// reused. Throws Error for a bad request (invalid_argument), a device or database that cannot be
// opened; problems that fail are reported in TuneReport.
TuneReport tune_ops(const std::vector<WorkloadEntry> &ops, const TuneRequest &request);

} // namespace tcjit
