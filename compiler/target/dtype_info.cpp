#include "compiler/target/dtype_info.h"

#include <array>

namespace tcjit {

namespace {

constexpr std::array<DType, 2> kF32OrF16{DType::f32, DType::f16};
constexpr std::array<DType, 1> kF32{DType::f32};
constexpr std::array<DType, 1> kF64{DType::f64};
constexpr std::array<DType, 1> kS32{DType::s32};
constexpr std::array<DType, 2> kF16OrF32{DType::f16, DType::f32};
constexpr std::array<DType, 2> kBf16OrF32{DType::bf16, DType::f32};
constexpr std::array<DType, 2> kS32OrS8{DType::s32, DType::s8};
// fp8 (e4m3, e5m2): f32 accumulators; outputs f16 first (the common inference output).
constexpr std::array<DType, 3> kF16OrBf16OrF32{DType::f16, DType::bf16, DType::f32};
constexpr std::span<const DType> kNone;

// clang-format off
constexpr std::array<DTypeInfo, 13> kDTypes{{
    // dtype       name    bits float  signed reserved accumulators outputs
    {DType::f16,   "f16",  16,  true,  true,  false,   kF32OrF16,   kF16OrF32},
    {DType::bf16,  "bf16", 16,  true,  true,  false,   kF32,        kBf16OrF32},
    {DType::tf32,  "tf32", 32,  true,  true,  false,   kF32,        kF32},
    {DType::f32,   "f32",  32,  true,  true,  false,   kF32,        kF32},
    {DType::f64,   "f64",  64,  true,  true,  false,   kF64,        kF64},
    {DType::s8,    "s8",   8,   false, true,  false,   kS32,        kS32OrS8},
    {DType::u8,    "u8",   8,   false, false, false,   kS32,        kS32OrS8},
    {DType::s32,   "s32",  32,  false, true,  false,   kNone,       kNone},
    {DType::s4,    "s4",   4,   false, true,  false,   kS32,        kS32OrS8},
    {DType::u4,    "u4",   4,   false, false, false,   kS32,        kS32OrS8},
    {DType::e4m3,  "e4m3", 8,   true,  true,  false,   kF32,        kF16OrBf16OrF32},
    {DType::e5m2,  "e5m2", 8,   true,  true,  false,   kF32,        kF16OrBf16OrF32},
    {DType::b1,    "b1",   1,   false, false, false,   kS32,        kS32OrS8},
}};
// clang-format on

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kDTypes.size(); ++i)
    if (static_cast<size_t>(kDTypes[i].dtype) != i)
      return false;
  return true;
}
static_assert(rows_in_enum_order() && static_cast<size_t>(DType::b1) + 1 == kDTypes.size(),
              "kDTypes is indexed by DType: one row per enumerator, in order");

} // namespace

std::span<const DTypeInfo> dtype_infos() {
  return kDTypes;
}

const DTypeInfo &dtype_info(DType t) {
  // A value outside the enum (a corrupt cast) reads as "?" of no bits, as the switches it
  // replaced did.
  static constexpr DTypeInfo kUnknown{DType::f16, "?", 0, false, false, false, kNone, kNone};
  const auto i = static_cast<size_t>(t);
  return i < kDTypes.size() ? kDTypes[i] : kUnknown;
}

} // namespace tcjit

namespace tcjit {

int values_per_byte(DType t) {
  const int bits = dtype_info(t).bits;
  return bits > 0 && bits < 8 ? 8 / bits : 1;
}

int64_t packed_bytes(DType t, int64_t count) {
  return (count * dtype_info(t).bits + 7) / 8;
}

} // namespace tcjit
