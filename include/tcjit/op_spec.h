// OpSpec: the plain value that describes one GEMM or convolution.
//
// Data flow: DSL text --(compiler/dsl)--> OpSpec --(tuner)--> TileConfig --> kernel --> PTX ...
// An OpSpec says *what* to compute (shapes, dtypes, layouts, epilogue), never *how*.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcjit {

// Element types. s4/u4 are 4-bit integers (two per byte), b1 single bits (32 per 32-bit word),
// e4m3/e5m2 the 8-bit floats of sm_89+. compiler/target/dtype_info.cpp says which are supported.
enum class DType { f16, bf16, tf32, f32, f64, s8, u8, s32, s4, u4, e4m3, e5m2, b1 };

enum class OpKind { gemm, conv2d, conv3d };

enum class MatrixLayout { row, col };

// Activation layouts (nhwc, nchw, ndhwc, ncdhw) and filter layouts (krsc, kcrs, ktrsc, kctrs).
enum class TensorLayout { nhwc, nchw, ndhwc, ncdhw, krsc, kcrs, ktrsc, kctrs };

// How f32 inputs are multiplied. `automatic` (DSL: `auto`) is tf32 unless the environment sets
// NVIDIA_TF32_OVERRIDE=0, as cuBLAS and cuDNN do; see resolve_math().
enum class MathMode { automatic, tf32, f32 };

enum class BiasKind { none, row, col };

// `custom` (DSL: act=custom:FILE) is the user's own CUDA C++ function (CustomActivation below).
enum class Activation { none, relu, tanh, sigmoid, elu, gelu, gelu_tanh, softplus, swish, custom };

enum class ConvPass { fprop, dgrad, wgrad };

// Structured sparsity of a GEMM's A (DSL: `sparse=2:4`): at most 2 nonzeros in every 4
// consecutive values along K, passed compressed with its metadata (mma.sp).
enum class Sparsity { dense, two_four };

// How b1 (single-bit) inputs are multiplied (DSL: `bop=and|xor`): the popcount of A AND B, or
// of A XOR B, over K (mma ... .b1.b1.s32.and.popc / .xor.popc). Only b1 specs use it.
enum class BitOp { and_popc, xor_popc };

// A problem dimension: a fixed size, any size at run time (`?`), or a range (`lo..hi`).
struct Dim {
  enum class Kind { fixed, any, range };
  Kind kind = Kind::fixed;
  int64_t value = 0; // Kind::fixed
  int64_t lo = 0;    // Kind::range
  int64_t hi = 0;    // Kind::range

  static Dim fixed_size(int64_t v) { return Dim{Kind::fixed, v, 0, 0}; }
  static Dim any_size() { return Dim{Kind::any, 0, 0, 0}; }
  static Dim range_of(int64_t lo, int64_t hi) { return Dim{Kind::range, 0, lo, hi}; }
  bool is_fixed() const { return kind == Kind::fixed; }
  bool operator==(const Dim &) const = default;
};

// A matrix operand of a GEMM: element type, layout, optional leading dimension.
struct MatrixOperand {
  DType dtype = DType::f16;
  MatrixLayout layout = MatrixLayout::row;
  std::optional<int64_t> ld; // elements between consecutive rows (row) or columns (col)
  bool operator==(const MatrixOperand &) const = default;
};

// A tensor operand of a convolution.
struct TensorOperand {
  DType dtype = DType::f16;
  TensorLayout layout = TensorLayout::nhwc;
  bool operator==(const TensorOperand &) const = default;
};

// A user-defined activation (`act=custom:FILE`): a small CUDA C++ file defining
//   __device__ float act(float x)     (double act(double x) for f64 GEMMs may be added beside it)
// that the CUDA C++ backend (NVRTC) compiles into the kernel; the LLVM backend cannot compile it.
// The DSL records the path; load_custom_activation (include/tcjit/tools.hpp) reads the file into
// `source`, which is what the kernel and its cache keys depend on. docs/dsl.md has the rules.
struct CustomActivation {
  std::string path;   // as written after `custom:`; the name compile errors are reported under
  std::string source; // the file's text; empty until loaded
  bool operator==(const CustomActivation &) const = default;
};

// D = act(alpha * acc + beta * C + bias). `bias=row` adds one value per output row (M values),
// `bias=col` one per output column (N values; for a convolution: one per output channel).
struct Epilogue {
  double alpha = 1.0;
  double beta = 0.0;
  BiasKind bias = BiasKind::none;
  Activation act = Activation::none;
  CustomActivation custom; // act == custom only
  bool operator==(const Epilogue &) const = default;
};

// D[b] (m x n) = A[b] (m x k) * B[b] (k x n), batch strided.
struct GemmSpec {
  Dim m = Dim::fixed_size(1);
  Dim n = Dim::fixed_size(1);
  Dim k = Dim::fixed_size(1);
  Dim batch = Dim::fixed_size(1);
  MatrixOperand a, b, c; // c describes both the C input (beta) and the D output
  bool operator==(const GemmSpec &) const = default;
};

// A 2-D or 3-D convolution in cuDNN's terms. Tensors keep their names whatever the pass:
// x (activations, n x [d x] h x w x c), filter (k x [t x] r x s x c/groups),
// y (output activations, n x [o x] p x q x k). fprop computes y, dgrad computes x (from y),
// wgrad computes filter (from x and y). For conv2d, d = t = 1 and index 0 of pad/stride/dilation
// (the depth entry) is unused.
struct ConvSpec {
  Dim n = Dim::fixed_size(1);
  int64_t d = 1, h = 1, w = 1, c = 1;       // input depth, height, width, channels
  int64_t k = 1;                            // output channels
  int64_t t = 1, r = 1, s = 1;              // filter depth, height, width
  std::array<int64_t, 3> pad{0, 0, 0};      // depth, height, width
  std::array<int64_t, 3> stride{1, 1, 1};   // depth, height, width
  std::array<int64_t, 3> dilation{1, 1, 1}; // depth, height, width
  int64_t groups = 1;
  ConvPass pass = ConvPass::fprop;
  TensorOperand x, filter, y;
  bool operator==(const ConvSpec &) const = default;
};

struct OpSpec {
  OpKind kind = OpKind::gemm;
  GemmSpec gemm;          // valid when kind == gemm
  ConvSpec conv;          // valid when kind == conv2d or conv3d
  DType acc = DType::f32; // accumulator type
  MathMode math = MathMode::automatic;
  Epilogue epilogue;
  Sparsity sparsity = Sparsity::dense; // gemm only: A 2:4-sparse along K
  BitOp bop = BitOp::and_popc;         // b1 inputs only
  bool operator==(const OpSpec &) const = default;
};

// A workload line: an optional name (`qkv: gemm ...`), the spec, and how often it runs.
struct WorkloadEntry {
  std::string name; // empty when the line has none
  OpSpec spec;
  int64_t weight = 1; // `weight=N`: tuning priority
  int line = 0;       // 1-based source line
  bool operator==(const WorkloadEntry &) const = default;
};

// --- names, as the DSL spells them -------------------------------------------------------------
std::string_view to_string(DType);
std::string_view to_string(OpKind);
std::string_view to_string(MatrixLayout);
std::string_view to_string(TensorLayout);
std::string_view to_string(MathMode);
std::string_view to_string(BiasKind);
std::string_view to_string(Activation);
std::string_view to_string(ConvPass);
std::string_view to_string(Sparsity); // "dense", "2:4"
std::string_view to_string(BitOp);    // "and", "xor"

// --- dtype facts --------------------------------------------------------------------------------
int dtype_bits(DType);        // storage bits: f16 16, tf32 32, s4 4, ...
bool is_float_type(DType);    // f16 bf16 tf32 f32 f64 e4m3 e5m2
bool is_integer_type(DType);  // s8 u8 s32 s4 u4 b1
bool is_reserved_type(DType); // parsed, not supported yet (dtype_info.cpp's `reserved`)

// The math mode after `auto` is resolved: tf32 unless NVIDIA_TF32_OVERRIDE=0 is set. For specs
// whose inputs are not f32 the result is meaningless and `math` is ignored.
MathMode resolve_math(MathMode, bool tf32_override_off);
// Reads NVIDIA_TF32_OVERRIDE from the environment: true when it is set to "0".
bool tf32_disabled_by_environment();

} // namespace tcjit
