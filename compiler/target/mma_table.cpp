#include "compiler/target/mma_table.h"

#include "compiler/target/dtype_info.h"

#include <algorithm>
#include <array>
#include <vector>

namespace tcjit::codegen {

namespace {

constexpr MatrixLayout row = MatrixLayout::row, col = MatrixLayout::col;

// ISA names; the intrinsics are those of IntrinsicsNVPTX.td of LLVM 19 (mma_emit.cpp looks them
// up by name and refuses a name LLVM does not know).
// clang-format off
constexpr std::array<MmaForm, 28> kForms{{
    {MmaKind::f16_f32, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
     "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", 16, 8, 16, DType::f16, DType::f16, DType::f16,
     DType::f32, row, col, 80, 70, 4, 2, 4, 16, FragmentMap::m16n8k16_16bit, MathUnit::f16, ""},
    {MmaKind::bf16_f32, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
     "llvm.nvvm.mma.m16n8k16.row.col.bf16", 16, 8, 16, DType::bf16, DType::bf16, DType::bf16,
     DType::f32, row, col, 80, 70, 4, 2, 4, 16, FragmentMap::m16n8k16_16bit, MathUnit::bf16, ""},
    {MmaKind::tf32_f32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
     "llvm.nvvm.mma.m16n8k8.row.col.tf32", 16, 8, 8, DType::tf32, DType::tf32, DType::f32,
     DType::f32, row, col, 80, 70, 4, 2, 4, 32, FragmentMap::m16n8k8_32bit, MathUnit::tf32, ""},
    {MmaKind::s8_s32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
     "llvm.nvvm.mma.m16n8k32.row.col.s8", 16, 8, 32, DType::s8, DType::s8, DType::s8,
     DType::s32, row, col, 80, 70, 4, 2, 4, 8, FragmentMap::m16n8k32_8bit, MathUnit::s8, ""},
    {MmaKind::u8_s32, "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32",
     "llvm.nvvm.mma.m16n8k32.row.col.u8", 16, 8, 32, DType::u8, DType::u8, DType::u8,
     DType::s32, row, col, 80, 70, 4, 2, 4, 8, FragmentMap::m16n8k32_8bit, MathUnit::s8, ""},
    {MmaKind::f64_f64, "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
     "llvm.nvvm.mma.m8n8k4.row.col.f64", 8, 8, 4, DType::f64, DType::f64, DType::f64,
     DType::f64, row, col, 80, 70, 1, 1, 2, 64, FragmentMap::m8n8k4_64bit, MathUnit::f64, ""},
    // C and D are two f16x2 registers (c0 c1, c2 c3 packed); the kernel widens them to f32
    // after the main loop (KernelPlan::acc), for the epilogue, split-K and the staged stores.
    {MmaKind::f16_f16, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
     "llvm.nvvm.mma.m16n8k16.row.col.f16.f16", 16, 8, 16, DType::f16, DType::f16, DType::f16,
     DType::f16, row, col, 80, 70, 4, 2, 2, 16, FragmentMap::m16n8k16_16bit, MathUnit::f16, ""},
    // Mixed 8-bit: A and B each decoded by its own type (signed x unsigned).
    {MmaKind::s8u8_s32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32",
     "llvm.nvvm.mma.m16n8k32.row.col.s8.u8", 16, 8, 32, DType::s8, DType::u8, DType::s8,
     DType::s32, row, col, 80, 70, 4, 2, 4, 8, FragmentMap::m16n8k32_8bit, MathUnit::s8, ""},
    {MmaKind::u8s8_s32, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32",
     "llvm.nvvm.mma.m16n8k32.row.col.u8.s8", 16, 8, 32, DType::u8, DType::s8, DType::u8,
     DType::s32, row, col, 80, 70, 4, 2, 4, 8, FragmentMap::m16n8k32_8bit, MathUnit::s8, ""},
    // fp8 (PTX ISA 8.4, sm_89+): the fragments of the s8 m16n8k32 form (four 8-bit elements per
    // register), f32 C/D. LLVM 19 has no intrinsic: both backends emit the PTX as inline asm.
    {MmaKind::e4m3_e4m3_f32, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "", 16, 8, 32,
     DType::e4m3, DType::e4m3, DType::e4m3, DType::f32, row, col, 89, 84, 4, 2, 4, 8,
     FragmentMap::m16n8k32_8bit, MathUnit::fp8, ""},
    {MmaKind::e4m3_e5m2_f32, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "", 16, 8, 32,
     DType::e4m3, DType::e5m2, DType::e4m3, DType::f32, row, col, 89, 84, 4, 2, 4, 8,
     FragmentMap::m16n8k32_8bit, MathUnit::fp8, ""},
    {MmaKind::e5m2_e4m3_f32, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", "", 16, 8, 32,
     DType::e5m2, DType::e4m3, DType::e5m2, DType::f32, row, col, 89, 84, 4, 2, 4, 8,
     FragmentMap::m16n8k32_8bit, MathUnit::fp8, ""},
    {MmaKind::e5m2_e5m2_f32, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", "", 16, 8, 32,
     DType::e5m2, DType::e5m2, DType::e5m2, DType::f32, row, col, 89, 84, 4, 2, 4, 8,
     FragmentMap::m16n8k32_8bit, MathUnit::fp8, ""},
    // Packed sub-byte inputs (the k32 / k128 halves of these shapes are not used).
    {MmaKind::s4_s32, "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32",
     "llvm.nvvm.mma.m16n8k64.row.col.s4", 16, 8, 64, DType::s4, DType::s4, DType::s4,
     DType::s32, row, col, 80, 70, 4, 2, 4, 4, FragmentMap::m16n8k64_4bit, MathUnit::s4, ""},
    {MmaKind::u4_s32, "mma.sync.aligned.m16n8k64.row.col.s32.u4.u4.s32",
     "llvm.nvvm.mma.m16n8k64.row.col.u4", 16, 8, 64, DType::u4, DType::u4, DType::u4,
     DType::s32, row, col, 80, 70, 4, 2, 4, 4, FragmentMap::m16n8k64_4bit, MathUnit::s4, ""},
    {MmaKind::s4u4_s32, "mma.sync.aligned.m16n8k64.row.col.s32.s4.u4.s32",
     "llvm.nvvm.mma.m16n8k64.row.col.s4.u4", 16, 8, 64, DType::s4, DType::u4, DType::s4,
     DType::s32, row, col, 80, 70, 4, 2, 4, 4, FragmentMap::m16n8k64_4bit, MathUnit::s4, ""},
    {MmaKind::u4s4_s32, "mma.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32",
     "llvm.nvvm.mma.m16n8k64.row.col.u4.s4", 16, 8, 64, DType::u4, DType::s4, DType::u4,
     DType::s32, row, col, 80, 70, 4, 2, 4, 4, FragmentMap::m16n8k64_4bit, MathUnit::s4, ""},
    {MmaKind::b1and_s32, "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc",
     "llvm.nvvm.mma.and.popc.m16n8k256.row.col.b1", 16, 8, 256, DType::b1, DType::b1, DType::b1,
     DType::s32, row, col, 80, 71, 4, 2, 4, 1, FragmentMap::m16n8k256_1bit, MathUnit::b1, "",
     false, BitOp::and_popc},
    {MmaKind::b1xor_s32, "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc",
     "llvm.nvvm.mma.xor.popc.m16n8k256.row.col.b1", 16, 8, 256, DType::b1, DType::b1, DType::b1,
     DType::s32, row, col, 80, 70, 4, 2, 4, 1, FragmentMap::m16n8k256_1bit, MathUnit::b1, "",
     false, BitOp::xor_popc},
    // 2:4-sparse A (mma.sp, PTX 7.1): k is the dense K; A holds the compressed 16 x 16 values, the
    // metadata register and the sparsity selector follow C (mma_table.h: sp_m16n8k32_16bit). No
    // LLVM 19 intrinsic: the LLVM backend emits it as inline PTX.
    {MmaKind::sp_f16_f32, "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", "", 16, 8, 32,
     DType::f16, DType::f16, DType::f16, DType::f32, row, col, 80, 71, 4, 4, 4, 16,
     FragmentMap::sp_m16n8k32_16bit, MathUnit::f16, "", true},
    {MmaKind::sp_bf16_f32, "mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", "", 16, 8, 32,
     DType::bf16, DType::bf16, DType::bf16, DType::f32, row, col, 80, 71, 4, 4, 4, 16,
     FragmentMap::sp_m16n8k32_16bit, MathUnit::bf16, "", true},
    {MmaKind::sp_s8_s32, "mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32", "", 16, 8, 64,
     DType::s8, DType::s8, DType::s8, DType::s32, row, col, 80, 71, 4, 4, 4, 8,
     FragmentMap::sp_m16n8k64_8bit, MathUnit::s8, "", true},
    {MmaKind::sp_u8_s32, "mma.sp.sync.aligned.m16n8k64.row.col.s32.u8.u8.s32", "", 16, 8, 64,
     DType::u8, DType::u8, DType::u8, DType::s32, row, col, 80, 71, 4, 4, 4, 8,
     FragmentMap::sp_m16n8k64_8bit, MathUnit::s8, "", true},
    // tf32's hardware sparsity is 1:2 (one kept value of every pair along K; compressed A in the
    // m16n8k8 map).
    {MmaKind::sp_tf32_f32, "mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", "", 16, 8,
     16, DType::tf32, DType::tf32, DType::f32, DType::f32, row, col, 80, 71, 4, 4, 4, 32,
     FragmentMap::sp_m16n8k16_32bit, MathUnit::tf32, "", true},
    // s4/u4 (PTX ISA "Sparse matrix storage": 4-bit A is 4:8 sparse by pairs of adjacent values;
    // the metadata's indices count pairs, selector 0 only: all four threads of a group hold it).
    {MmaKind::sp_s4_s32, "mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.s4.s32", "", 16, 8, 128,
     DType::s4, DType::s4, DType::s4, DType::s32, row, col, 80, 71, 4, 4, 4, 4,
     FragmentMap::sp_m16n8k128_4bit, MathUnit::s4, "", true},
    {MmaKind::sp_u4_s32, "mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32", "", 16, 8, 128,
     DType::u4, DType::u4, DType::u4, DType::s32, row, col, 80, 71, 4, 4, 4, 4,
     FragmentMap::sp_m16n8k128_4bit, MathUnit::s4, "", true},
    {MmaKind::sp_s4u4_s32, "mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.u4.s32", "", 16, 8, 128,
     DType::s4, DType::u4, DType::s4, DType::s32, row, col, 80, 71, 4, 4, 4, 4,
     FragmentMap::sp_m16n8k128_4bit, MathUnit::s4, "", true},
    {MmaKind::sp_u4s4_s32, "mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.s4.s32", "", 16, 8, 128,
     DType::u4, DType::s4, DType::u4, DType::s32, row, col, 80, 71, 4, 4, 4, 4,
     FragmentMap::sp_m16n8k128_4bit, MathUnit::s4, "", true},
}};
// clang-format on

constexpr MmaForm kSimtF32{MmaKind::simt_f32,
                           "fma.rn.f32",
                           "llvm.fma.f32",
                           4,
                           8,
                           1,
                           DType::f32,
                           DType::f32,
                           DType::f32,
                           DType::f32,
                           row,
                           col,
                           80,
                           70,
                           1,
                           1,
                           1,
                           32,
                           FragmentMap::simt,
                           MathUnit::f32_simt,
                           ""};

std::string version_text(int x10) {
  return std::to_string(x10 / 10) + "." + std::to_string(x10 % 10);
}

// "f16->f32, bf16->f32, ...": the generated forms, for messages.
std::string generated_list() {
  std::string out;
  for (const MmaForm &f : kForms)
    if (f.not_generated.empty() && !f.sparse)
      out += (out.empty() ? "" : ", ") + std::string(to_string(f.a)) + "->" +
             std::string(to_string(f.acc));
  std::string sparse;
  for (const MmaForm &f : kForms)
    if (f.not_generated.empty() && f.sparse)
      sparse += (sparse.empty() ? "" : ", ") + std::string(to_string(f.a)) + "->" +
                std::string(to_string(f.acc));
  return sparse.empty() ? out : out + "; 2:4-sparse " + sparse;
}

// "use --arch sm_89 or sm_90": the known archs of at least sm_<min_sm>.
std::string archs_with(int min_sm) {
  std::string list;
  std::vector<std::string_view> names;
  for (const ArchInfo &a : known_archs())
    if (a.sm_version >= min_sm)
      names.push_back(a.name);
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  return "use --arch " + list;
}

} // namespace

int kernel_ptx_version(const MmaForm &form, const ArchInfo &arch) {
  return std::max(arch.ptx_version, form.min_ptx);
}

std::span<const MmaForm> mma_forms() {
  return kForms;
}

const MmaForm &simt_f32_form() {
  return kSimtF32;
}

std::string_view to_string(MmaKind k) {
  switch (k) {
  case MmaKind::f16_f32: return "f16_f32";
  case MmaKind::bf16_f32: return "bf16_f32";
  case MmaKind::tf32_f32: return "tf32_f32";
  case MmaKind::s8_s32: return "s8_s32";
  case MmaKind::u8_s32: return "u8_s32";
  case MmaKind::f64_f64: return "f64_f64";
  case MmaKind::f16_f16: return "f16_f16";
  case MmaKind::s8u8_s32: return "s8u8_s32";
  case MmaKind::u8s8_s32: return "u8s8_s32";
  case MmaKind::simt_f32: return "simt_f32";
  case MmaKind::e4m3_e4m3_f32: return "e4m3_e4m3_f32";
  case MmaKind::e4m3_e5m2_f32: return "e4m3_e5m2_f32";
  case MmaKind::e5m2_e4m3_f32: return "e5m2_e4m3_f32";
  case MmaKind::e5m2_e5m2_f32: return "e5m2_e5m2_f32";
  case MmaKind::s4_s32: return "s4_s32";
  case MmaKind::u4_s32: return "u4_s32";
  case MmaKind::s4u4_s32: return "s4u4_s32";
  case MmaKind::u4s4_s32: return "u4s4_s32";
  case MmaKind::sp_s4_s32: return "sp_s4_s32";
  case MmaKind::sp_u4_s32: return "sp_u4_s32";
  case MmaKind::sp_s4u4_s32: return "sp_s4u4_s32";
  case MmaKind::sp_u4s4_s32: return "sp_u4s4_s32";
  case MmaKind::b1and_s32: return "b1and_s32";
  case MmaKind::b1xor_s32: return "b1xor_s32";
  case MmaKind::sp_f16_f32: return "sp_f16_f32";
  case MmaKind::sp_bf16_f32: return "sp_bf16_f32";
  case MmaKind::sp_s8_s32: return "sp_s8_s32";
  case MmaKind::sp_u8_s32: return "sp_u8_s32";
  case MmaKind::sp_tf32_f32: return "sp_tf32_f32";
  }
  return "?";
}

namespace {

// The PTX type an input stored as `t` is multiplied as.
DType ptx_type(DType t, MathMode resolved) {
  return t == DType::f32 && resolved == MathMode::tf32 ? DType::tf32 : t;
}

// The table's form for the request, generated or not.
const MmaForm *find_any_form(const MathRequest &r) {
  if ((r.a == DType::f32 || r.b == DType::f32) && r.resolved != MathMode::tf32)
    return nullptr;
  const DType a = ptx_type(r.a, r.resolved), b = ptx_type(r.b, r.resolved);
  const bool sparse = r.sparsity != Sparsity::dense;
  for (const MmaForm &f : kForms)
    if (f.a == a && f.b == b && f.acc == r.acc && f.sparse == sparse &&
        (a != DType::b1 || f.bop == r.bop))
      return &f;
  return nullptr;
}

// "f16" or "s8 x u8": the request's inputs, for messages.
std::string inputs_text(const MathRequest &r) {
  const std::string a(to_string(r.a)), b(to_string(r.b));
  return a == b ? a : a + " x " + b;
}

} // namespace

std::optional<MmaForm> find_mma_form(const MathRequest &r) {
  const MmaForm *f = find_any_form(r);
  if (!f || !f->not_generated.empty())
    return std::nullopt;
  return *f;
}

std::optional<MmaForm> find_mma_form(DType input, DType acc, MathMode resolved) {
  return find_mma_form(MathRequest{input, input, acc, resolved});
}

bool is_simt_math(const MathRequest &r) {
  return r.a == DType::f32 && r.b == DType::f32 && r.acc == DType::f32 &&
         r.resolved == MathMode::f32 && r.sparsity == Sparsity::dense;
}

bool is_simt_math(DType input, DType acc, MathMode resolved) {
  return is_simt_math(MathRequest{input, input, acc, resolved});
}

std::string math_problem(const MathRequest &r, const ArchInfo &arch) {
  if (is_simt_math(r))
    return "";
  const std::string in = inputs_text(r), ac(to_string(r.acc));
  const std::string sparse = r.sparsity == Sparsity::dense ? "" : " 2:4-sparse";
  const MmaForm *f = find_any_form(r);
  if (!f)
    return "no tensor-core mma multiplies" + sparse + " " + in + " inputs into acc=" + ac +
           "; tcjit compiles " + generated_list() + " (and f32 with math=f32 on SIMT FFMA)";
  if (!f->not_generated.empty()) {
    const std::span<const DType> accs = dtype_info(r.a).accumulators;
    const std::string instead =
        accs.empty() || accs[0] == r.acc ? "" : "; use acc=" + std::string(to_string(accs[0]));
    return in + sparse + " inputs with acc=" + ac + " are not compiled: PTX has " +
           std::string(f->ptx) + ", but " + std::string(f->not_generated) + instead;
  }
  // A kernel declares the newer of its arch's PTX version and its form's min_ptx
  // (kernel_ptx_version), so only the architecture can rule a form out.
  if (arch.sm_version < f->min_sm)
    return std::string(f->ptx) + " (PTX ISA " + version_text(f->min_ptx) + ") needs sm_" +
           std::to_string(f->min_sm) + " or newer; " + std::string(arch.name) + " (" +
           std::string(arch.example) + ") does not have it: " + archs_with(f->min_sm);
  return "";
}

std::string math_problem(DType input, DType acc, MathMode resolved, const ArchInfo &arch) {
  return math_problem(MathRequest{input, input, acc, resolved}, arch);
}

const MmaForm &dense_twin(const MmaForm &sparse) {
  for (const MmaForm &f : kForms)
    if (!f.sparse && f.a == sparse.a && f.b == sparse.b && f.acc == sparse.acc &&
        f.k * 2 == sparse.k)
      return f;
  return sparse; // a dense form is its own twin
}

DType b_input(const MmaForm &f) {
  return f.b == DType::tf32 ? DType::f32 : f.b;
}

int elements_per_reg(const MmaForm &f) {
  return f.elem_bits == 64 ? 1 : 32 / f.elem_bits;
}

int a_q_multiplier(const MmaForm &f) {
  return elements_per_reg(f);
}

FragOffset a_offset(const MmaForm &f, int i) {
  switch (f.fragments) {
  case FragmentMap::m16n8k16_16bit:
  case FragmentMap::sp_m16n8k32_16bit: // compressed columns
    return {((i >> 1) & 1) * 8, (i & 1) + (i >= 4 ? 8 : 0)};
  case FragmentMap::m16n8k8_32bit:
  case FragmentMap::sp_m16n8k16_32bit: // compressed columns
    return {(i & 1) * 8, i >= 2 ? 4 : 0};
  case FragmentMap::m16n8k32_8bit:
  case FragmentMap::sp_m16n8k64_8bit: // compressed columns
    return {((i >> 2) & 1) * 8, (i & 3) + (i >= 8 ? 16 : 0)};
  case FragmentMap::m16n8k64_4bit:
  case FragmentMap::sp_m16n8k128_4bit: // compressed columns
    return {((i >> 3) & 1) * 8, (i & 7) + (i >= 16 ? 32 : 0)};
  case FragmentMap::m16n8k256_1bit: return {((i >> 5) & 1) * 8, (i & 31) + (i >= 64 ? 128 : 0)};
  case FragmentMap::m8n8k4_64bit:
  case FragmentMap::simt: return {0, 0};
  }
  return {};
}

int b_k_offset(const MmaForm &f, int i) {
  switch (f.fragments) {
  case FragmentMap::m16n8k16_16bit: return (i & 1) + (i >= 2 ? 8 : 0);
  case FragmentMap::sp_m16n8k32_16bit: return (i & 1) + 8 * (i >> 1);
  case FragmentMap::m16n8k8_32bit:
  case FragmentMap::sp_m16n8k16_32bit: return i * 4;
  case FragmentMap::m16n8k32_8bit: return (i & 3) + (i >= 4 ? 16 : 0);
  case FragmentMap::m16n8k64_4bit: return (i & 7) + (i >= 8 ? 32 : 0);
  case FragmentMap::m16n8k256_1bit: return (i & 31) + (i >= 32 ? 128 : 0);
  case FragmentMap::sp_m16n8k64_8bit: return (i & 3) + 16 * (i >> 2);
  case FragmentMap::sp_m16n8k128_4bit: return (i & 7) + 32 * (i >> 3);
  case FragmentMap::m8n8k4_64bit:
  case FragmentMap::simt: return 0;
  }
  return 0;
}

FragOffset c_offset(const MmaForm &f, int i) {
  switch (f.fragments) {
  case FragmentMap::m8n8k4_64bit: return {0, i};
  case FragmentMap::simt: return {0, 0};
  case FragmentMap::m16n8k16_16bit:
  case FragmentMap::m16n8k8_32bit:
  case FragmentMap::m16n8k32_8bit:
  case FragmentMap::m16n8k64_4bit:
  case FragmentMap::m16n8k256_1bit:
  case FragmentMap::sp_m16n8k32_16bit:
  case FragmentMap::sp_m16n8k64_8bit:
  case FragmentMap::sp_m16n8k16_32bit:
  case FragmentMap::sp_m16n8k128_4bit: return {i >= 2 ? 8 : 0, i & 1};
  }
  return {};
}

} // namespace tcjit::codegen
