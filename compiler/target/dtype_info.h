// The element types' facts, one row per DType: what the DSL calls it, its storage, its kind, and
// what it may be multiplied into. include/tcjit/op_spec.h's dtype functions (to_string,
// dtype_bits, is_float_type, ...) and the spec's validation read this table.
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace tcjit {

struct DTypeInfo {
  DType dtype;
  std::string_view name; // as the DSL spells it
  int bits;              // storage bits: f16 16, tf32 32 (stored as f32), s4 4, b1 1, ...
  bool is_float;         // otherwise an integer type
  bool is_signed;        // two's complement or a sign bit: every type but u8, u4 and b1
  bool reserved;         // parsed, not supported yet
  // As a multiplied input (A and B of a GEMM): the accumulators and the outputs it may have, the
  // default first; both empty for a type that cannot be multiplied.
  std::span<const DType> accumulators;
  std::span<const DType> outputs;
};

// Every DType, in declaration order.
std::span<const DTypeInfo> dtype_infos();
// The row of a DType (a value outside the enum gets a row named "?" of 0 bits).
const DTypeInfo &dtype_info(DType);

} // namespace tcjit

namespace tcjit {

// Packed sub-byte inputs (s4, u4: two values per byte; b1: eight): values per byte, 1 for the
// types of a byte or more. In memory, value i of a run lies in byte i / values_per_byte, in bits
// (i % values_per_byte) * bits upwards (docs/dsl.md "Packed types").
int values_per_byte(DType);
// Bytes holding `count` values of a dtype: ceil(count * bits / 8).
int64_t packed_bytes(DType, int64_t count);

} // namespace tcjit
