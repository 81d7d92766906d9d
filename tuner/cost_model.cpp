#include "tuner/cost_model.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/spec/shape.h"
#include "compiler/target/mma_table.h"
#include "tuner/search_space.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace tcjit::tuner {

namespace {

// Bytes per element: fractions for packed sub-byte types (s4 0.5, b1 0.125).
double bytes_of(DType t) {
  return dtype_bits(t) / 8.0;
}

// Warp-level counts of one K-tile of the main loop, as the generator emits it.
struct KtileCounts {
  double mma = 0;           // math instructions per warp
  double shared_loads = 0;  // ldmatrix.x4 or ld.shared per warp
  double converts = 0;      // cvt.rna.tf32 per warp (and a sparse form's metadata arithmetic)
  double global_copies = 0; // cp.async per warp
  double load_wavefronts = 0, copy_wavefronts = 0;
};

KtileCounts ktile_counts(const codegen::SpecFacts &facts, const codegen::TileConfig &c) {
  const codegen::MmaForm &f = facts.mma;
  const codegen::TileConfig r = codegen::resolve_vectors(facts, c);
  const double esize = bytes_of(facts.view.gemm.a.dtype);
  const int warps = std::max(1, codegen::warps_per_cta(c));
  KtileCounts k;
  if (f.kind == codegen::MmaKind::simt_f32) {
    // One warp-FFMA per accumulator and k; lanes 4 x 8: wm/4 + wn/8 shared loads per k (vec4).
    k.mma = double(c.wm) * c.wn / 32 * c.bk;
    k.shared_loads = (c.wm / 4.0 + c.wn / 8.0) / 4 * c.bk;
    k.load_wavefronts = k.shared_loads * 4;
  } else {
    const double tiles_m = double(c.wm) / f.m, tiles_n = double(c.wn) / f.n;
    const double ksteps = double(c.bk) / f.k;
    // 2:4-sparse A: its tile is the compressed K-tile (bk / 2 values per row)
    const double a_k = f.sparse ? c.bk / 2.0 : c.bk;
    k.mma = tiles_m * tiles_n * ksteps;
    if (esize <= 2) { // ldmatrix.x4: 16 rows x 16 bytes of A, or of B (packed types as bytes)
      k.shared_loads = c.wm / 16.0 * (a_k * esize / 32.0) + c.wn / 16.0 * (c.bk * esize / 32.0);
      k.load_wavefronts = 4 * k.shared_loads;
    } else { // 32/64-bit elements: one 32-bit (64-bit for f64) ld.shared per register
      k.shared_loads = (tiles_m * f.a_regs + tiles_n * f.b_regs) * ksteps;
      k.load_wavefronts = k.shared_loads * (esize == 8 ? 2 : 1);
      if (f.kind == codegen::MmaKind::tf32_f32 || f.kind == codegen::MmaKind::sp_tf32_f32)
        k.converts = k.shared_loads;
    }
    if (f.sparse) { // the metadata: one ld.shared (one wavefront) per m-tile and k-step, then a
      // prmt (f16/bf16) or the pair-nibble spread (tf32, 8 operations); s8/u8 use it as loaded
      const double registers = tiles_m * ksteps;
      k.shared_loads += registers;
      k.load_wavefronts += registers;
      k.converts += registers * (f.elem_bits == 16 ? 1 : f.elem_bits == 32 ? 8 : 0);
    }
  }
  // A's and B's K-tiles; a sparse A's compressed tile and metadata (bm * bk / 8 bytes, s4/u4 / 16)
  const double bytes = f.sparse ? c.bm * (c.bk / 2.0) * esize + double(c.bn) * c.bk * esize
                                : double(c.bm + c.bn) * c.bk * esize;
  const double vec_bytes = std::max(1.0, std::min(r.vec_a, r.vec_b) * esize);
  k.global_copies = bytes / vec_bytes / 32 / warps;
  k.copy_wavefronts = bytes / 128 / warps;
  if (f.sparse) { // the metadata's copy units: mma.k / 8 bytes (plan/sparse_metadata.h); packed
    // s4/u4 count bytes (pairs of values): half of that
    const double per_value = std::min(1.0, esize);
    const double meta = double(c.bm) * c.bk * per_value / 8;
    k.global_copies += meta / (f.k * per_value / 8.0) / 32 / warps;
    k.copy_wavefronts += meta / 128 / warps;
  }
  return k;
}

} // namespace

const GpuModel &gpu_model_for_arch(std::string_view arch) {
  static const std::vector<GpuModel> models = [] {
    std::vector<GpuModel> out;
    for (const ArchInfo &a : known_archs())
      out.push_back(gpu_model_of(a));
    return out;
  }();
  for (const GpuModel &g : models)
    if (g.arch == arch)
      return g;
  throw std::invalid_argument("no GPU model for arch '" + std::string(arch) + "' (tcjit targets " +
                              known_arch_list() + ")");
}

std::string cost_model_version() {
  return "tcjit-cost-model 2";
}

int estimated_registers(const OpSpec &spec, const codegen::TileConfig &c, bool tf32_off) {
  return estimated_registers(codegen::spec_facts(spec, tf32_off, c.pad_c), c);
}

int estimated_registers(const codegen::SpecFacts &facts, const codegen::TileConfig &c) {
  const codegen::MmaForm &f = facts.mma;
  if (f.kind == codegen::MmaKind::simt_f32)
    return c.wm * c.wn / 32 + (c.wm / 4 + c.wn / 8) + 40;
  const int wide = f.elem_bits == 64 ? 2 : 1; // f64 registers are pairs
  const int tiles_m = c.wm / f.m, tiles_n = c.wn / f.n;
  const int acc = tiles_m * tiles_n * f.c_regs * wide;
  const int fragments = 2 * (tiles_m * f.a_regs + tiles_n * f.b_regs) * wide; // double-buffered
  int extra = 48; // addresses, predicates, loop state
  if (f.kind == codegen::MmaKind::tf32_f32 || f.elem_bits == 8)
    extra += 32; // tf32: converted copies of the fragments; s8/u8: byte-wise fragment addressing
  const codegen::TileConfig r = codegen::resolve_vectors(facts, c);
  if (std::min(r.vec_a, r.vec_b) * bytes_of(facts.view.gemm.a.dtype) < 16)
    extra += 16; // an address and a predicate per narrower piece
  if (c.split_k > 1)
    extra += 16; // the slice's K bounds and the workspace addresses
  if (facts.lowering) {
    // A convolution's copies keep their loop-invariant parts live across the main loop: a gathered
    // copy its pixel or tap-row coordinates and padding bounds (about 5 registers), a linear one
    // its address (about 3). Narrow vectors multiply the copies: c = 3 in f16 makes 16 of each per
    // thread for a 16x16x32 tile (counted: 244 registers) and 32 for a 32x32x32 one (spills).
    const codegen::ConvLowering &l = *facts.lowering;
    const int threads = std::max(32, codegen::threads_per_cta(c));
    auto copies = [&](int rows, int vec) {
      return (rows * c.bk / std::max(1, vec) + threads - 1) / threads;
    };
    extra += (l.a != codegen::Gather::linear ? 5 : 3) * copies(c.bm, r.vec_a);
    extra += (l.b != codegen::Gather::linear ? 5 : 3) * copies(c.bn, r.vec_b);
  }
  return acc + fragments + extra;
}

double estimated_instructions_per_mma(const OpSpec &spec, const codegen::TileConfig &c,
                                      bool tf32_off) {
  return estimated_instructions_per_mma(codegen::spec_facts(spec, tf32_off, c.pad_c), c);
}

double estimated_instructions_per_mma(const codegen::SpecFacts &facts,
                                      const codegen::TileConfig &c) {
  const KtileCounts k = ktile_counts(facts, c);
  // Each cp.async needs its address and predicate (~2 more); the K-tile's barrier, commit, wait,
  // pointer increments and loop branch about 20.
  double other = k.shared_loads + k.converts + 3 * k.global_copies + 20;
  // A convolution's gathered copies (codegen/plan/formulas.h, global_element) split the pixel and
  // tap indices (the row's are loop-invariant and hoisted) and test the padding: about 12 more per
  // copy, for about half of the copies (one of the two operands).
  if (facts.spec.kind != OpKind::gemm)
    other += 12 * k.global_copies / 2;
  return 1 + other / std::max(1.0, k.mma);
}

KernelFeatures kernel_features(const OpSpec &spec, const codegen::TileConfig &config, bool tf32_off,
                               const CandidateFacts &facts) {
  return kernel_features(codegen::spec_facts(spec, tf32_off, config.pad_c), config, facts);
}

KernelFeatures kernel_features(const codegen::SpecFacts &spec_facts,
                               const codegen::TileConfig &config, const CandidateFacts &facts) {
  const codegen::MmaForm &f = spec_facts.mma;
  KernelFeatures k;
  k.math = f.unit;
  k.sparse = f.sparse;
  k.bm = config.bm;
  k.bn = config.bn;
  k.bk = config.bk;
  if (f.kind == codegen::MmaKind::simt_f32) {
    k.mma_m = 32, k.mma_n = 1, k.mma_k = 1;
  } else {
    k.mma_m = f.m, k.mma_n = f.n, k.mma_k = f.k;
  }
  k.threads = codegen::threads_per_cta(config);
  k.registers = facts.registers > 0 ? facts.registers : estimated_registers(spec_facts, config);
  k.shared_bytes =
      codegen::shared_bytes(spec_facts.spec, config) + std::max(0, facts.static_shared_bytes);
  k.instructions_per_mma = facts.instructions_per_mma > 0
                               ? facts.instructions_per_mma
                               : estimated_instructions_per_mma(spec_facts, config);
  if (facts.shared_wavefronts_per_mma > 0) {
    k.shared_wavefronts_per_mma = facts.shared_wavefronts_per_mma;
  } else {
    const KtileCounts c = ktile_counts(spec_facts, config);
    k.shared_wavefronts_per_mma = (c.load_wavefronts + c.copy_wavefronts) / std::max(1.0, c.mma);
  }
  if (facts.global_load_efficiency > 0)
    k.global_load_efficiency = facts.global_load_efficiency;
  k.split_k = config.split_k;
  k.stages = config.stages;
  const GemmSpec &view = spec_facts.view.gemm;
  k.a_bytes = bytes_of(view.a.dtype);
  k.b_bytes = bytes_of(view.b.dtype);
  k.c_bytes = bytes_of(view.c.dtype);
  return k;
}

MathKind math_kind_of(const OpSpec &spec, bool tf32_off) {
  return codegen::math_form(spec, tf32_off).unit;
}

Problem model_problem(const OpSpec &spec) {
  const NominalSizes s = nominal_sizes(spec);
  Problem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.batch = s.batch;
  p.reads_c = spec.epilogue.beta != 0;
  if (spec.kind != OpKind::gemm) {
    // Each operand's DRAM traffic is its tensor's size (per group), not the implicit matrix's.
    const ConvSpec &c = spec.conv;
    const bool three_d = spec.kind == OpKind::conv3d;
    const ConvOutputDims out = conv_output_dims(c);
    const double batch =
        double(c.n.is_fixed() ? c.n.value
                              : std::max<int64_t>(1, s.m / std::max<int64_t>(1, out.p * out.q)));
    const double groups = double(std::max<int64_t>(1, c.groups));
    const double x = batch * double(three_d ? c.d : 1) * double(c.h * c.w) * double(c.c) / groups;
    const double y =
        batch * double(three_d ? out.o : 1) * double(out.p * out.q) * double(c.k) / groups;
    const double w =
        double(c.k) * double(three_d ? c.t : 1) * double(c.r * c.s) * double(c.c) / groups / groups;
    const double a = c.pass == ConvPass::fprop ? x : y;
    double b = c.pass == ConvPass::wgrad ? x : w;
    if (codegen::takes_dgrad_phases(spec)) {
      // A strided dgrad by phases (codegen/plan/dgrad_phases.h): phases x groups GEMMs over the
      // phase grid, each with its phase's taps only (the model runs their mean K); each phase
      // reads dy and its share of the filter.
      const codegen::PhaseTotals t = codegen::phase_totals(codegen::lower_conv(spec).conv);
      const int64_t pixels = (three_d ? c.d : 1) * c.h * c.w;
      p.m = (p.m + pixels - 1) / pixels * t.rows_per_image;
      p.batch *= t.phases;
      p.k = std::max<int64_t>(1, (t.sum_taps * (c.k / c.groups) + t.phases - 1) / t.phases);
      b /= double(t.phases);
    }
    p.a_elements = std::min(a, double(p.m) * double(p.k));
    p.b_elements = std::min(b, double(p.k) * double(p.n));
  }
  return p;
}

double channel_padding_seconds(const GpuModel &gpu, const OpSpec &spec,
                               const codegen::TileConfig &config) {
  if (config.pad_c == 0)
    return 0;
  const ConvSpec &c = spec.conv;
  const bool three_d = spec.kind == OpKind::conv3d;
  // the batch as nominal_sizes() takes it: fprop's M over the output pixels per image
  const ConvOutputDims out = conv_output_dims(c);
  const double pixels = double(three_d ? out.o : 1) * double(out.p) * double(out.q);
  const double n = c.n.is_fixed()
                       ? double(c.n.value)
                       : std::max(1.0, double(nominal_sizes(spec).m) / std::max(1.0, pixels));
  const double rows = n * double(three_d ? c.d : 1) * double(c.h * c.w) +
                      double(c.k) * double(three_d ? c.t : 1) * double(c.r * c.s);
  const double bytes = rows * double(c.c + config.pad_c) * bytes_of(c.x.dtype);
  return 2 * gpu.launch_seconds + bytes / gpu.dram_bytes_per_s;
}

Prediction predict_config(const GpuModel &gpu, const OpSpec &spec,
                          const codegen::TileConfig &config, bool tf32_off,
                          const CandidateFacts &facts) {
  // A convolution's kernel computes its view (with channel padding: the padded problem, after
  // copying x and the filter).
  const OpSpec computed = spec.kind == OpKind::gemm ? spec : codegen::effective_spec(spec, config);
  return predict_config(gpu, spec, codegen::spec_facts(computed, tf32_off, config.pad_c),
                        model_problem(computed), config, facts);
}

Prediction predict_config(const GpuModel &gpu, const OpSpec &spec,
                          const codegen::SpecFacts &computed, const Problem &problem,
                          const codegen::TileConfig &config, const CandidateFacts &facts) {
  if (spec.kind == OpKind::gemm)
    return predict(gpu, kernel_features(computed, config, facts), problem);
  // TFLOP/s are those of the convolution as asked (flop_count), not of the zeros the view also
  // multiplies (padded channels, a strided dgrad's gaps).
  Prediction p = predict(gpu, kernel_features(computed, config, facts), problem);
  if (!p.launchable || p.seconds <= 0)
    return p;
  const double view_flops =
      2.0 * double(problem.m) * double(problem.n) * double(problem.k) * double(problem.batch);
  const double kernel_seconds = p.seconds;
  p.seconds += channel_padding_seconds(gpu, spec, config);
  const std::optional<double> useful = flop_count(spec);
  if (useful && view_flops > 0) {
    const double scale = *useful / view_flops * kernel_seconds / p.seconds;
    p.tflops *= scale;
    p.fraction_of_peak *= scale;
  }
  return p;
}

} // namespace tcjit::tuner
