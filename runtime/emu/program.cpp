#include "runtime/emu/program.h"

namespace tcjit::emu {

uint32_t dtype_bytes(DType t) {
  switch (t) {
  case DType::B8:
  case DType::U8:
  case DType::S8:
  case DType::E4M3:
  case DType::E5M2:
  case DType::Pred: return 1;
  case DType::B16:
  case DType::U16:
  case DType::S16:
  case DType::F16:
  case DType::BF16: return 2;
  case DType::B32:
  case DType::U32:
  case DType::S32:
  case DType::F32:
  case DType::F16x2:
  case DType::BF16x2:
  case DType::TF32: return 4;
  case DType::B64:
  case DType::U64:
  case DType::S64:
  case DType::F64: return 8;
  case DType::B128: return 16;
  case DType::None:
  case DType::S4:
  case DType::U4:
  case DType::B1: return 0;
  }
  return 0;
}

bool dtype_is_float(DType t) {
  switch (t) {
  case DType::F16:
  case DType::F16x2:
  case DType::BF16:
  case DType::BF16x2:
  case DType::TF32:
  case DType::F32:
  case DType::F64: return true;
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B32:
  case DType::B64:
  case DType::B128:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S8:
  case DType::S16:
  case DType::S32:
  case DType::S64:
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: return false;
  }
  return false;
}

bool dtype_is_signed(DType t) {
  return t == DType::S8 || t == DType::S16 || t == DType::S32 || t == DType::S64 || t == DType::S4;
}

const char *dtype_name(DType t) {
  switch (t) {
  case DType::None: return "none";
  case DType::B8: return "b8";
  case DType::B16: return "b16";
  case DType::B32: return "b32";
  case DType::B64: return "b64";
  case DType::B128: return "b128";
  case DType::U8: return "u8";
  case DType::U16: return "u16";
  case DType::U32: return "u32";
  case DType::U64: return "u64";
  case DType::S8: return "s8";
  case DType::S16: return "s16";
  case DType::S32: return "s32";
  case DType::S64: return "s64";
  case DType::F16: return "f16";
  case DType::F16x2: return "f16x2";
  case DType::BF16: return "bf16";
  case DType::BF16x2: return "bf16x2";
  case DType::TF32: return "tf32";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::Pred: return "pred";
  case DType::S4: return "s4";
  case DType::U4: return "u4";
  case DType::E4M3: return "e4m3";
  case DType::E5M2: return "e5m2";
  case DType::B1: return "b1";
  }
  return "?";
}

const char *space_name(Space s) {
  switch (s) {
  case Space::Generic: return "generic";
  case Space::Global: return "global";
  case Space::Shared: return "shared";
  case Space::Local: return "local";
  case Space::Const: return "const";
  case Space::ParamKernel: return "param";
  case Space::ParamThread: return "param";
  }
  return "?";
}

const char *instr_class_name(InstrClass c) {
  switch (c) {
  case InstrClass::Integer: return "integer";
  case InstrClass::Float: return "float";
  case InstrClass::Convert: return "convert";
  case InstrClass::Memory: return "memory";
  case InstrClass::Mma: return "mma";
  case InstrClass::Control: return "control";
  case InstrClass::Sync: return "sync";
  case InstrClass::Warp: return "warp";
  }
  return "?";
}

uint32_t max_shared_bytes_for_target(std::string_view target) {
  constexpr uint32_t kKiB = 1024;
  if (target.substr(0, 3) != "sm_")
    return 227 * kKiB;
  uint32_t sm = 0;
  for (char c : target.substr(3)) {
    if (c < '0' || c > '9')
      break;
    sm = sm * 10 + static_cast<uint32_t>(c - '0');
    if (sm > 10000)
      break;
  }
  switch (sm) {
  case 70:
  case 72: return 96 * kKiB;
  case 75: return 64 * kKiB;
  case 80:
  case 87: return 163 * kKiB;
  case 86:
  case 89:
  case 120:
  case 121: return 99 * kKiB;
  default: return 227 * kKiB;
  }
}

} // namespace tcjit::emu
