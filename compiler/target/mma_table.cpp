#include "compiler/target/mma_table.h"

#include <array>

namespace tcjit::codegen {

namespace {

// ISA names; the intrinsics are checked against IntrinsicsNVPTX.td of LLVM 19 (llvm_module.cpp uses
// the Intrinsic::ID enum, so a wrong name cannot compile).
constexpr std::array<MmaForm, 5> kForms{{
    {MmaKind::f16_f32, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
     "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", 16, 8, 16, DType::f16, DType::f32, 80, 70, 4, 2, 4,
     16},
    {MmaKind::bf16_f32, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
     "llvm.nvvm.mma.m16n8k16.row.col.bf16", 16, 8, 16, DType::bf16, DType::f32, 80, 70, 4, 2, 4,
     16},
    {MmaKind::tf32_f32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
     "llvm.nvvm.mma.m16n8k8.row.col.tf32", 16, 8, 8, DType::f32, DType::f32, 80, 70, 4, 2, 4, 32},
    {MmaKind::s8_s32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
     "llvm.nvvm.mma.m16n8k32.row.col.s8", 16, 8, 32, DType::s8, DType::s32, 80, 70, 4, 2, 4, 8},
    {MmaKind::f64_f64, "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
     "llvm.nvvm.mma.m8n8k4.row.col.f64", 8, 8, 4, DType::f64, DType::f64, 80, 70, 1, 1, 2, 64},
}};

constexpr MmaForm kSimtF32{MmaKind::simt_f32,
                           "fma.rn.f32",
                           "llvm.fma.f32",
                           4,
                           8,
                           1,
                           DType::f32,
                           DType::f32,
                           80,
                           70,
                           1,
                           1,
                           1,
                           32};

} // namespace

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
  case MmaKind::f64_f64: return "f64_f64";
  case MmaKind::simt_f32: return "simt_f32";
  }
  return "?";
}

std::optional<MmaForm> find_mma_form(DType input, DType acc, MathMode resolved) {
  DType stored = input == DType::tf32 ? DType::f32 : input;
  if (stored == DType::f32 && input != DType::tf32 && resolved != MathMode::tf32)
    return std::nullopt;
  for (const MmaForm &f : kForms)
    if (f.input == stored && f.acc == acc)
      return f;
  return std::nullopt;
}

int elements_per_reg(const MmaForm &f) {
  return f.elem_bits == 64 ? 1 : 32 / f.elem_bits;
}

int a_q_multiplier(const MmaForm &f) {
  return elements_per_reg(f);
}

FragOffset a_offset(const MmaForm &f, int i) {
  switch (f.kind) {
  case MmaKind::f16_f32:
  case MmaKind::bf16_f32: return {((i >> 1) & 1) * 8, (i & 1) + (i >= 4 ? 8 : 0)};
  case MmaKind::tf32_f32: return {(i & 1) * 8, i >= 2 ? 4 : 0};
  case MmaKind::s8_s32: return {((i >> 2) & 1) * 8, (i & 3) + (i >= 8 ? 16 : 0)};
  case MmaKind::f64_f64:
  case MmaKind::simt_f32: return {0, 0};
  }
  return {};
}

int b_k_offset(const MmaForm &f, int i) {
  switch (f.kind) {
  case MmaKind::f16_f32:
  case MmaKind::bf16_f32: return (i & 1) + (i >= 2 ? 8 : 0);
  case MmaKind::tf32_f32: return i * 4;
  case MmaKind::s8_s32: return (i & 3) + (i >= 4 ? 16 : 0);
  case MmaKind::f64_f64:
  case MmaKind::simt_f32: return 0;
  }
  return 0;
}

FragOffset c_offset(const MmaForm &f, int i) {
  if (f.kind == MmaKind::f64_f64)
    return {0, i};
  if (f.kind == MmaKind::simt_f32)
    return {0, 0};
  return {i >= 2 ? 8 : 0, i & 1};
}

} // namespace tcjit::codegen
