// f32/f64 arithmetic: add sub mul fma/mad div rcp sqrt rsqrt (IEEE or approximate), ex2 lg2 sin
// cos tanh (approximate: the host libm), min max abs neg copysign testp; rounding modifiers
// (.rn .rz .rm .rp via the host FPU's rounding mode; this file builds with -frounding-math),
// .ftz and .sat.
#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

int fe_mode(Round r) {
  switch (r) {
  case Round::Rz:
  case Round::Rzi: return FE_TOWARDZERO;
  case Round::Rm:
  case Round::Rmi: return FE_DOWNWARD;
  case Round::Rp:
  case Round::Rpi: return FE_UPWARD;
  case Round::None:
  case Round::Rn:
  case Round::Rna:
  case Round::Rni: return FE_TONEAREST;
  }
  return FE_TONEAREST;
}

template <typename T> T canonical_nan() {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(0x7fffffffu);
  else
    return std::bit_cast<double>(0x7fffffffffffffffull);
}

template <typename T> T pmin(T a, T b, bool is_max, bool propagate_nan) {
  bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) {
    if (propagate_nan || (na && nb))
      return canonical_nan<T>();
    return na ? b : a;
  }
  if (a == 0 && b == 0) {
    bool neg = is_max ? (std::signbit(a) && std::signbit(b)) : (std::signbit(a) || std::signbit(b));
    return neg ? T(-0.0) : T(0.0);
  }
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

template <typename T> bool testp(uint8_t mode, T a) {
  switch (mode) {
  case 0: return std::isfinite(a);
  case 1: return std::isinf(a);
  case 2: return !std::isnan(a);
  case 3: return std::isnan(a);
  case 4: return std::isnormal(a);
  case 5: return std::fpclassify(a) == FP_SUBNORMAL;
  default: return false;
  }
}

template <typename T> T from(uint64_t v) {
  if constexpr (std::is_same_v<T, float>)
    return f32_of(v);
  else
    return f64_of(v);
}

// The NaN a two-NaN (or SNaN) operation returns is, on x86, the one of the instruction's first
// source operand, so it used to depend on how the compiler ordered the operands. The fast paths
// below make the choice explicit and keep what earlier builds returned: add and mul give the
// second operand's NaN (quieted), fma the first NaN of a, b, c. A NaN made from non-NaN inputs
// (inf - inf, 0 * inf) is the host's default NaN.
template <typename T> inline T quieted(T x) {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x00400000u);
  else
    return std::bit_cast<double>(std::bit_cast<uint64_t>(x) | 0x0008000000000000ull);
}
template <typename T> inline T nan_of_second(T a, T b, T r) {
  return std::isnan(b) ? quieted(b) : std::isnan(a) ? quieted(a) : r;
}
template <typename T> inline T nan_of_first(T a, T b, T c, T r) {
  return std::isnan(a) ? quieted(a) : std::isnan(b) ? quieted(b) : std::isnan(c) ? quieted(c) : r;
}
template <typename T> inline T add_lane(T a, T b) {
  const T r = a + b;
  return r == r ? r : nan_of_second(a, b, r);
}
template <typename T> inline T mul_lane(T a, T b) {
  const T r = a * b;
  return r == r ? r : nan_of_second(a, b, r);
}

// fma over the lanes of `mask`. std::fma is a libm call per lane on baseline x86-64; where the
// CPU has FMA the loop uses the instruction (the same single rounding, in the host FPU's current
// mode, as libm's fma).
template <typename T>
void fma_lanes_generic(uint64_t *d, LaneValues a, LaneValues b, LaneValues c, uint32_t mask) {
  for_each_lane(mask, [&](uint32_t l) {
    const T x = from<T>(a[l]), y = from<T>(b[l]), z = from<T>(c[l]);
    const T r = std::fma(x, y, z);
    d[l] = bits_of(r == r ? r : nan_of_first(x, y, z, r));
  });
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// One lane's fma with the FMA instruction (a function of the same target, so it inlines into
// the loops below, which a lambda would not: it does not inherit the target attribute).
template <typename T>
__attribute__((target("fma"))) inline void fma_lane_hw(uint64_t *d, LaneValues a, LaneValues b,
                                                       LaneValues c, uint32_t l) {
  T r;
  if constexpr (std::is_same_v<T, float>)
    r = __builtin_fmaf(f32_of(a[l]), f32_of(b[l]), f32_of(c[l]));
  else
    r = __builtin_fma(f64_of(a[l]), f64_of(b[l]), f64_of(c[l]));
  d[l] = bits_of(r == r ? r : nan_of_first(from<T>(a[l]), from<T>(b[l]), from<T>(c[l]), r));
}

template <typename T>
__attribute__((target("fma"))) void fma_lanes_hw(uint64_t *d, LaneValues a, LaneValues b,
                                                 LaneValues c, uint32_t mask) {
  if (mask == ~0u) { // a full warp: a plain counted loop
    for (uint32_t l = 0; l < 32; ++l)
      fma_lane_hw<T>(d, a, b, c, l);
    return;
  }
  while (mask) {
    const uint32_t l = static_cast<uint32_t>(std::countr_zero(mask));
    mask &= mask - 1;
    fma_lane_hw<T>(d, a, b, c, l);
  }
}

template <typename T>
void fma_lanes(uint64_t *d, LaneValues a, LaneValues b, LaneValues c, uint32_t mask) {
  static const bool has_fma = __builtin_cpu_supports("fma");
  if (has_fma)
    fma_lanes_hw<T>(d, a, b, c, mask);
  else
    fma_lanes_generic<T>(d, a, b, c, mask);
}
#else
template <typename T>
void fma_lanes(uint64_t *d, LaneValues a, LaneValues b, LaneValues c, uint32_t mask) {
  fma_lanes_generic<T>(d, a, b, c, mask);
}
#endif

template <typename T> void run(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  constexpr bool is_f32 = std::is_same_v<T, float>;
  const bool ftz = is_f32 && in.ftz;
  const Operand &s0 = in.src[0], &s1 = in.src[1], &s2 = in.src[2];
  uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
  const bool directed = fe_mode(in.rnd) != FE_TONEAREST;
  if (directed)
    std::fesetround(fe_mode(in.rnd));
  auto flush = [&](T x) -> T {
    if constexpr (is_f32)
      return ftz ? flush_subnormal(x) : x;
    else
      return x;
  };
  // common converged cases first
  if (!ftz && !in.sat &&
      (in.op == Op::Add || in.op == Op::Mul || in.op == Op::Fma || in.op == Op::Mad)) {
    LaneScratch k0, k1, k2;
    const LaneValues v0 = lane_values(ctx, w, s0, k0), v1 = lane_values(ctx, w, s1, k1),
                     v2 = lane_values(ctx, w, s2, k2);
    if (in.op == Op::Add) {
      for_each_lane(mask,
                    [&](uint32_t l) { d[l] = bits_of(add_lane(from<T>(v0[l]), from<T>(v1[l]))); });
    } else if (in.op == Op::Mul) {
      for_each_lane(mask,
                    [&](uint32_t l) { d[l] = bits_of(mul_lane(from<T>(v0[l]), from<T>(v1[l]))); });
    } else {
      fma_lanes<T>(d, v0, v1, v2, mask);
    }
    if (directed)
      std::fesetround(FE_TONEAREST);
    return;
  }
  for_each_lane(mask, [&](uint32_t l) {
    T a = flush(from<T>(read_operand(ctx, w, s0, l)));
    T b = s1.kind == OperandKind::None ? T(0) : flush(from<T>(read_operand(ctx, w, s1, l)));
    T c = s2.kind == OperandKind::None ? T(0) : flush(from<T>(read_operand(ctx, w, s2, l)));
    T r = 0;
    switch (in.op) {
    case Op::Add: r = a + b; break;
    case Op::Sub: r = a - b; break;
    case Op::Mul: r = a * b; break;
    case Op::Fma:
    case Op::Mad: r = std::fma(a, b, c); break;
    case Op::Div: r = a / b; break;
    case Op::Rcp: r = T(1) / a; break;
    case Op::Sqrt: r = std::sqrt(a); break;
    case Op::Rsqrt: r = T(1) / std::sqrt(a); break;
    case Op::Ex2: r = std::exp2(a); break;
    case Op::Lg2: r = std::log2(a); break;
    case Op::Sin: r = std::sin(a); break;
    case Op::Cos: r = std::cos(a); break;
    case Op::Tanh: r = std::tanh(a); break;
    case Op::Min: r = pmin(a, b, false, in.mode == 1); break;
    case Op::Max: r = pmin(a, b, true, in.mode == 1); break;
    case Op::Abs: r = std::fabs(a); break;
    case Op::Neg: r = -a; break;
    case Op::Copysign: r = std::copysign(b, a); break;
    case Op::Testp: write_reg(w, in.dst.reg, l, testp<T>(in.mode, a) ? 1 : 0); return;
    case Op::Mov:
    case Op::Setp:
    case Op::Selp:
    case Op::Slct:
    case Op::Mul24:
    case Op::Mad24:
    case Op::Rem:
    case Op::Shl:
    case Op::Shr:
    case Op::Shf:
    case Op::Bfe:
    case Op::Bfi:
    case Op::Prmt:
    case Op::Popc:
    case Op::Clz:
    case Op::Brev:
    case Op::Bfind:
    case Op::Lop3:
    case Op::And:
    case Op::Or:
    case Op::Xor:
    case Op::Not:
    case Op::Cnot:
    case Op::Sad:
    case Op::Cvt:
    case Op::Cvta:
    case Op::Cvtpack:
    case Op::Ld:
    case Op::St:
    case Op::Prefetch:
    case Op::Fence:
    case Op::Isspacep:
    case Op::Atom:
    case Op::Red:
    case Op::Bra:
    case Op::Call:
    case Op::Ret:
    case Op::Exit:
    case Op::Trap:
    case Op::BarSync:
    case Op::BarArrive:
    case Op::BarWarpSync:
    case Op::Nanosleep:
    case Op::Shfl:
    case Op::Vote:
    case Op::Activemask:
    case Op::Redux:
    case Op::MatchAny:
    case Op::MatchAll:
    case Op::Mma:
    case Op::Ldmatrix:
    case Op::CpAsync:
    case Op::CpAsyncCommit:
    case Op::CpAsyncWait:
    case Op::CpAsyncWaitAll:
      std::fesetround(FE_TONEAREST);
      fault(ctx, w, in, static_cast<int>(l), "internal error: not a float instruction");
    }
    if (in.sat)
      r = std::isnan(r) ? T(0) : std::min(std::max(r, T(0)), T(1));
    d[l] = bits_of(flush(r));
  });
  if (directed)
    std::fesetround(FE_TONEAREST);
}

} // namespace

void exec_float(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.type == DType::F64)
    run<double>(ctx, w, in, mask);
  else
    run<float>(ctx, w, in, mask);
}

void decode_testp(DecodeState &s) {
  Instr &in = s.in;
  static const char *const kModes[] = {"finite",     "infinite", "number",
                                       "notanumber", "normal",   "subnormal"};
  bool found = false;
  for (int i = 0; i < 6; ++i) {
    if (s.mods.take(kModes[i])) {
      in.mode = static_cast<uint8_t>(i);
      found = true;
    }
  }
  if (!found)
    decode_fail(s, "testp needs an operation (.finite, .normal, ...)");
  decode_arithmetic_modifiers(s);
  in.exec = exec_float;
  in.cls = InstrClass::Float;
  in.type2 = in.type;
  in.dst = dest_operand(s, s.ai.operands[0], DType::Pred);
  in.src[0] = source_operand(s, 1, in.type);
}

} // namespace tcjit::emu
