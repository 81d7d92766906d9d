#include "compiler/codegen/plan/tile_config.h"

#include "compiler/codegen/plan/custom_activation.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/spec/alignment.h"
#include "compiler/spec/tensor_core_rules.h"
#include "compiler/target/arch.h"
#include "compiler/target/dtype_info.h"
#include "compiler/target/mma_table.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace tcjit::codegen {

namespace {

bool is_pow2(int v) {
  return v > 0 && (v & (v - 1)) == 0;
}

// The A dtype of the (implicit) GEMM: x for fprop, dy for dgrad and wgrad.
DType input_dtype(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    return spec.gemm.a.dtype;
  return spec.conv.pass == ConvPass::fprop ? spec.conv.x.dtype : spec.conv.y.dtype;
}

// Bytes per element of the multiplied inputs, at least 1: packed sub-byte types (s4, u4, b1)
// are sized with element_bits (shared memory, vectors).
int element_bytes(const OpSpec &spec) {
  return std::max(1, dtype_bits(input_dtype(spec)) / 8);
}

int element_bits(const OpSpec &spec) {
  return dtype_bits(input_dtype(spec));
}

std::string num(int64_t v) {
  return std::to_string(v);
}

// The math form of a spec whose GEMM view is `view`: a depthwise kernel does multiply-adds per
// output (conv_lowering.h); a spec without an mma form runs SIMT FFMA.
MmaForm math_form_of(const OpSpec &view, bool depthwise, bool tf32_off) {
  if (depthwise)
    return simt_f32_form();
  const auto form = find_mma_form(math_request(view, tf32_off));
  return form ? *form : simt_f32_form();
}

} // namespace

MmaForm math_form(const OpSpec &spec, bool tf32_off) {
  return math_form_of(gemm_view(spec), is_depthwise_path(spec), tf32_off);
}

std::string to_string(const TileConfig &c) {
  std::ostringstream o;
  o << c.bm << "x" << c.bn << "x" << c.bk << " w" << c.wm << "x" << c.wn << " s" << c.stages << " k"
    << c.split_k << " g" << c.raster_group << " va" << c.vec_a << " vb" << c.vec_b;
  if (c.pad_c != 0)
    o << " pc" << c.pad_c;
  return o.str();
}

int warps_per_cta(const TileConfig &c) {
  if (c.wm <= 0 || c.wn <= 0)
    return 0;
  return (c.bm / c.wm) * (c.bn / c.wn);
}

int threads_per_cta(const TileConfig &c) {
  return 32 * warps_per_cta(c);
}

int shared_bytes(const OpSpec &spec, const TileConfig &c) {
  // A 2:4-sparse A's tile holds the compressed K-tile: bk / 2 values per row, and its metadata's
  // stage slot 4 bits per 4 values: bm * bk / 8 bytes (sparse_metadata.h); packed s4/u4, sparse
  // by pairs, 4 bits per 8 values: bm * bk / 16.
  if (spec.sparsity == Sparsity::dense)
    return c.stages * (c.bm + c.bn) * c.bk * element_bits(spec) / 8;
  const int metadata = c.bm * c.bk * std::min(8, element_bits(spec)) / 64;
  return c.stages * ((c.bm * (c.bk / 2) + c.bn * c.bk) * element_bits(spec) / 8 + metadata);
}

std::vector<ConfigError> check_codegen_support(const OpSpec &spec, std::string_view arch,
                                               bool tf32_off) {
  std::vector<ConfigError> e;
  const std::optional<ArchInfo> info = find_arch(arch);
  if (!info)
    e.push_back({"arch", "unknown arch '" + std::string(arch) + "' (tcjit targets " +
                             std::string(known_arch_list()) + ")"});
  if (spec.kind != OpKind::gemm) {
    for (std::string problem : {channels_first_problem(spec), coordinate_range_problem(spec)})
      if (!problem.empty()) {
        e.push_back({"spec", std::move(problem)});
        return e;
      }
  }
  const OpSpec view = gemm_view(spec);
  // The reason `tcjit explain` gives too (choose_mma).
  if (info)
    if (std::string problem = math_problem(math_request(view, tf32_off), *info); !problem.empty())
      e.push_back({"spec", std::move(problem)});
  if (spec.epilogue.act == Activation::custom)
    if (std::string problem = custom_activation_problem(spec.epilogue.custom); !problem.empty())
      e.push_back({"act", std::move(problem)});
  return e;
}

OpSpec effective_spec(const OpSpec &spec, const TileConfig &config) {
  return config.pad_c == 0 ? spec : padded_conv(spec, config.pad_c);
}

SpecFacts spec_facts(const OpSpec &spec_in, bool tf32_off, int pad_c) {
  SpecFacts f;
  f.spec = pad_c != 0 && channel_padding_target(spec_in) == pad_c ? padded_conv(spec_in, pad_c)
                                                                  : spec_in;
  if (f.spec.kind != OpKind::gemm)
    f.lowering = lower_conv(f.spec);
  f.view = f.lowering ? f.lowering->view : f.spec;
  f.vectors = f.lowering ? ViewVectorLimits{f.lowering->max_vec_a, f.lowering->max_vec_b,
                                            f.lowering->max_vec_c}
                         : view_vector_limits(f.spec);
  f.depthwise = is_depthwise_path(f.spec);
  f.mma = math_form_of(f.view, f.depthwise, tf32_off);
  f.element_bits = element_bits(f.spec);
  f.dgrad_phases = takes_dgrad_phases(f.spec);
  return f;
}

std::vector<ConfigError> channel_padding_errors(const OpSpec &spec, int pad_c) {
  if (pad_c == 0)
    return {};
  const std::optional<int64_t> target = channel_padding_target(spec);
  if (!target)
    return {{"pad_c", "pad_c=" + num(pad_c) +
                          ": channel padding applies to a convolution fprop with one group "
                          "whose c does not fill 16-byte vectors; this spec has none"}};
  if (pad_c != *target)
    return {{"pad_c", "pad_c=" + num(pad_c) + " must be " + num(*target) + " (c=" +
                          num(spec.conv.c) + " rounded up to a 16-byte vector of channels)"}};
  return {};
}

std::vector<ConfigError> validate_tile_config(const OpSpec &spec, const TileConfig &c,
                                              std::string_view arch, bool tf32_off) {
  std::vector<ConfigError> e = check_codegen_support(spec, arch, tf32_off);
  if (e.empty())
    e = channel_padding_errors(spec, c.pad_c);
  if (!e.empty())
    return e;
  return tile_rule_errors(spec_facts(spec, tf32_off, c.pad_c), c, arch);
}

std::vector<ConfigError> tile_rule_errors(const SpecFacts &f, const TileConfig &c,
                                          std::string_view arch) {
  std::vector<ConfigError> e;
  const OpSpec &spec = f.spec;
  const MmaForm &mma = f.mma;
  auto pow2_in = [&](const char *field, int v, int lo, int hi) {
    if (!is_pow2(v) || v < lo || v > hi)
      e.push_back({field, std::string(field) + "=" + num(v) + " must be a power of two in [" +
                              num(lo) + ", " + num(hi) + "]"});
  };
  pow2_in("bm", c.bm, 16, 256);
  pow2_in("bn", c.bn, 16, 256);
  // bk up to 128 elements, or 128 bytes of packed sub-byte values (s4: 256, b1: 1024).
  const int per_byte = values_per_byte(input_dtype(spec));
  pow2_in("bk", c.bk, mma.kind == MmaKind::simt_f32 ? 4 : mma.k, 128 * per_byte);
  pow2_in("wm", c.wm, 16, 128);
  pow2_in("wn", c.wn, 16, 128);
  if (!e.empty())
    return e;
  if (c.wm > c.bm)
    e.push_back(
        {"wm", "warp tile wm=" + num(c.wm) + " is larger than the CTA tile bm=" + num(c.bm)});
  if (c.wn > c.bn)
    e.push_back(
        {"wn", "warp tile wn=" + num(c.wn) + " is larger than the CTA tile bn=" + num(c.bn)});
  if (!e.empty())
    return e;
  const int warps = warps_per_cta(c);
  if (warps > 16)
    e.push_back({"wm", num(warps) + " warps per CTA ((bm/wm)*(bn/wn)); at most 16 (512 threads)"});
  const int acc_regs = (c.wm / mma.m) * (c.wn / mma.n) * mma.c_regs * (mma.elem_bits == 64 ? 2 : 1);
  if (acc_regs > 128)
    e.push_back({"wm", "warp tile " + num(c.wm) + "x" + num(c.wn) + " needs " + num(acc_regs) +
                           " accumulator registers per thread; at most 128 (255 in all)"});
  if (c.stages < 2 || c.stages > 6)
    e.push_back({"stages", "stages=" + num(c.stages) + " must be in [2, 6]"});
  if (c.split_k < 1 || c.split_k > 16)
    e.push_back({"split_k", "split_k=" + num(c.split_k) + " must be in [1, 16]"});
  if (c.raster_group < 1 || c.raster_group > 64)
    e.push_back({"raster_group", "raster_group=" + num(c.raster_group) + " must be in [1, 64]"});
  if (f.depthwise && c.split_k != 1)
    e.push_back({"split_k", "split_k=" + num(c.split_k) +
                                ": the depthwise kernel sums each output's taps in one thread; it "
                                "has no split-K (use split_k=1)"});
  if (c.split_k != 1 && f.dgrad_phases)
    e.push_back({"split_k", "split_k=" + num(c.split_k) +
                                ": a strided dgrad runs one dense implicit GEMM per stride phase, "
                                "each with its own K; it has no split-K (use split_k=1)"});
  const int esize = element_bytes(spec), ebits = f.element_bits;
  auto check_vec = [&](const char *field, int v, const std::string &operand) {
    const int allowed = operand == "a" ? f.vectors.a : f.vectors.b;
    if (v == 0)
      return;
    if (!is_pow2(v) || v * ebits > 128)
      e.push_back({field, std::string(field) + "=" + num(v) +
                              " must be a power of two of at most 16 bytes (" + num(128 / ebits) +
                              " elements)"});
    else if (v < per_byte)
      e.push_back({field, std::string(field) + "=" + num(v) + " is less than a byte of packed " +
                              std::string(to_string(input_dtype(spec))) + " values (at least " +
                              num(per_byte) + " elements)"});
    else if (v > allowed)
      e.push_back({field, std::string(field) + "=" + num(v) + " exceeds the alignment of " +
                              operand + " (" + num(allowed) + " elements)"});
  };
  check_vec("vec_a", c.vec_a, "a");
  check_vec("vec_b", c.vec_b, "b");
  const auto info = find_arch(arch);
  const int smem = shared_bytes(spec, c);
  if (info && smem > info->max_smem_per_block)
    e.push_back({"stages", "shared memory " + num(smem) + " bytes (stages*(bm+bn)*bk*" +
                               (per_byte > 1 ? "1/" + num(per_byte) : num(esize)) + ") exceeds " +
                               std::string(arch) + "'s " + num(info->max_smem_per_block) +
                               " bytes per block"});
  return e;
}

std::vector<TileConfig> default_tile_configs(const OpSpec &spec, std::string_view arch,
                                             bool tf32_off) {
  const TileConfig first = default_tile_config(spec, arch, tf32_off);
  std::vector<TileConfig> out = {first};
  auto add = [&](TileConfig c) {
    c = resolve_vectors(spec, c);
    if (std::find(out.begin(), out.end(), c) == out.end() &&
        validate_tile_config(spec, c, arch, tf32_off).empty())
      out.push_back(c);
  };
  TileConfig c = first;
  // Halve the warp tile's larger side (accumulators: the registers that grow with it), keeping
  // the CTA tile: twice the warps.
  while (c.wm * c.wn > 32 * 32) {
    if (c.wm >= c.wn)
      c.wm /= 2;
    else
      c.wn /= 2;
    add(c);
  }
  // Then a smaller CTA tile with 32x32 warps, and fewer stages.
  add({64, 64, first.bk, 32, 32, first.stages, first.split_k, first.raster_group, first.vec_a,
       first.vec_b});
  add({64, 64, first.bk, 32, 32, 2, first.split_k, first.raster_group, first.vec_a, first.vec_b});
  add({32, 32, first.bk, 16, 16, 2, first.split_k, first.raster_group, first.vec_a, first.vec_b});
  return out;
}

TileConfig resolve_vectors(const OpSpec &spec, const TileConfig &config) {
  return resolve_vectors(spec_facts(spec, false, config.pad_c), config); // tf32_off: no matter
}

TileConfig resolve_vectors(const SpecFacts &f, const TileConfig &config) {
  TileConfig c = config;
  const int widest = 128 / f.element_bits;
  if (c.vec_a == 0)
    c.vec_a = std::min(widest, f.vectors.a);
  if (c.vec_b == 0)
    c.vec_b = std::min(widest, f.vectors.b);
  return c;
}

TileConfig default_tile_config(const OpSpec &spec_in, std::string_view arch, bool tf32_off) {
  if (is_depthwise_path(spec_in)) // 32 pixels x 64 channels, 4 warps: 16 outputs per thread
    return resolve_vectors(spec_in, TileConfig{32, 64, 8, 16, 32, 2, 1, 1, 0, 0});
  const OpSpec spec = gemm_view(spec_in);
  TileConfig c;
  const auto form = find_mma_form(math_request(spec, tf32_off));
  const bool small_m = spec.gemm.m.is_fixed() && spec.gemm.m.value <= 64;
  const bool small_n = spec.gemm.n.is_fixed() && spec.gemm.n.value <= 64;
  if (!form) { // SIMT FFMA: 8 warps of 32x64, 8x8 accumulators per thread
    c = TileConfig{128, 128, 8, 32, 64, 3, 1, 1, 0, 0};
  } else if (form->kind == MmaKind::f64_f64) {
    c = TileConfig{64, 64, 16, 32, 32, 3, 1, 1, 0, 0};
  } else if (form->sparse) { // mma.sp: 4 B registers per n-tile and the metadata; 64x64 warps
    c = TileConfig{128, 128, form->k, 64, 32, 3, 1, 1, 0, 0}; // take 255 registers (f16)
  } else if (form->kind == MmaKind::tf32_f32) {
    c = TileConfig{128, 128, 16, 64, 32, 3, 1, 1, 0, 0}; // 64x64 warps spill
  } else if (form->elem_bits == 8) {                     // s8, u8
    c = TileConfig{128, 128, 64, 64, 32, 3, 1, 1, 0, 0}; // 64x64 warps spill
  } else if (form->elem_bits < 8) { // packed s4, u4, b1: s8's tile of 64 bytes along K
    c = TileConfig{128, 128, 64 * values_per_byte(form->input), 64, 32, 3, 1, 1, 0, 0};
  }
  if (small_m) {
    c.bm = 64;
    c.wm = std::min(c.wm, 32);
  }
  if (small_n) {
    c.bn = 64;
    c.wn = std::min(c.wn, 32);
  }
  c = resolve_vectors(spec_in, c);
  // Operands loaded in pieces narrower than 16 bytes (a misaligned ld or K) need an address and
  // a predicate per piece: with 64x64 warp tiles of 16-bit types that spills (k=31: 20 KB).
  // Start from 32-wide warp rows there; the runtime still falls back further when a cubin spills
  // (default_tile_configs).
  const int esize = dtype_bits(spec.gemm.a.dtype) / 8;
  if (form && esize == 2 && std::min(c.vec_a, c.vec_b) * esize < 16 && c.wm * c.wn > 32 * 64)
    c.wm = 32;
  // A convolution's gathered copies in narrow pieces keep their coordinates live too (the C = 3
  // stem: 128x64x32 w64x32 va1 spills 120 B; w32x32 takes 197 registers, no spill).
  // With both operands narrow, a 32-byte K-tile halves the copies (a depthwise wgrad, 64x64x32
  // w32x32 va1 vb1, spills 8 B on sm_90; with bk = 16 it takes 158 registers).
  if (form && spec_in.kind != OpKind::gemm && std::min(c.vec_a, c.vec_b) * esize < 16) {
    c.wm = std::min(c.wm, 32);
    c.wn = std::min(c.wn, 32);
    if (std::max(c.vec_a, c.vec_b) * esize < 16)
      c.bk = std::max(form->k, std::min(c.bk, 32 / esize));
  }
  // Small machines (99 KiB) fit the defaults; keep them under 48 KiB anyway.
  (void)arch;
  return c;
}

bool parse_tile_config(std::string_view text, TileConfig &c, std::string &error) {
  std::istringstream in{std::string(text)};
  std::string w;
  auto to_int = [&](std::string_view s, int &out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  while (in >> w) {
    auto bad = [&]() {
      error = "bad config word '" + w +
              "' (expected BMxBNxBK, wWMxWN, sSTAGES, kSPLIT, gGROUP, vaN, vbN or pcN)";
      return false;
    };
    std::string_view s = w;
    if (std::isdigit(static_cast<unsigned char>(s[0]))) {
      const size_t x1 = s.find('x'), x2 = s.find('x', x1 + 1);
      if (x1 == s.npos || x2 == s.npos || !to_int(s.substr(0, x1), c.bm) ||
          !to_int(s.substr(x1 + 1, x2 - x1 - 1), c.bn) || !to_int(s.substr(x2 + 1), c.bk))
        return bad();
    } else if (s.starts_with("pc")) {
      if (!to_int(s.substr(2), c.pad_c))
        return bad();
    } else if (s.starts_with("va")) {
      if (!to_int(s.substr(2), c.vec_a))
        return bad();
    } else if (s.starts_with("vb")) {
      if (!to_int(s.substr(2), c.vec_b))
        return bad();
    } else if (s[0] == 'w') {
      const size_t x = s.find('x');
      if (x == s.npos || !to_int(s.substr(1, x - 1), c.wm) || !to_int(s.substr(x + 1), c.wn))
        return bad();
    } else if (s[0] == 's') {
      if (!to_int(s.substr(1), c.stages))
        return bad();
    } else if (s[0] == 'k') {
      if (!to_int(s.substr(1), c.split_k))
        return bad();
    } else if (s[0] == 'g') {
      if (!to_int(s.substr(1), c.raster_group))
        return bad();
    } else {
      return bad();
    }
  }
  return true;
}

} // namespace tcjit::codegen
