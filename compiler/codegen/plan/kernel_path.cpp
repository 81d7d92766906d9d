#include "compiler/codegen/plan/kernel_path.h"

#include "compiler/codegen/plan/dgrad_phases.h"

#include "compiler/spec/shape.h"

#include <sstream>

namespace tcjit::codegen {

namespace {

// max_elements and the counts printed are in bytes' worth of the plan (op.vec); `per_byte`
// packed values per byte (KernelPlan::k_pack) turns them into values.
std::string operand_loads(const OperandPlan &op, const std::string &name, int max_elements,
                          const std::string &limit, int per_byte = 1) {
  std::ostringstream o;
  o << name << " in " << op.copy_bytes << "-byte "
    << (op.copy_bytes >= 4 ? "cp.async" : "ld.global") << " pieces (" << op.vec * per_byte << " x "
    << to_string(op.dtype) << ")";
  if (op.vec < max_elements)
    o << ", narrower than 16 bytes: " << limit;
  return o.str();
}

} // namespace

std::vector<KernelPathLine> describe_kernel_path(const OpSpec &spec, const KernelPlan &p) {
  std::vector<KernelPathLine> out;
  const int widest = 16 / p.a.esize;
  if (!p.conv) {
    out.push_back({"kernel path",
                   "tiled GEMM, " +
                       std::string(p.mma.kind == MmaKind::simt_f32 ? "SIMT FFMA" : "mma.sync") +
                       ", " + std::to_string(p.config.stages) + "-stage cp.async pipeline"});
    out.push_back({"loads", operand_loads(p.a, "a", widest, "the alignment of a", p.k_pack)});
    out.push_back({"", operand_loads(p.b, "b", widest, "the alignment of b", p.k_pack)});
    return out;
  }
  const ConvConstants &k = *p.conv;
  if (p.depthwise) {
    std::ostringstream path;
    path << "direct depthwise kernel (groups = c = k, " << to_string(k.pass) << "): " << p.config.bm
         << " pixels x " << p.config.bn << " channels per CTA, one thread per output "
         << "in turn summing its " << k.taps() << " taps, consecutive threads on consecutive "
         << "channels; no tensor cores (as an implicit GEMM each group has N = 1: 1 of each "
            "mma's 8 columns would be useful)";
    out.push_back({"kernel path", path.str()});
    out.push_back({"loads", "element by element (" + std::to_string(p.a.esize) +
                                " B), a warp's 32 channels of one pixel together"});
    return out;
  }
  const ConvRoles roles = conv_roles(k.pass);
  auto tensor = [](ConvTensor t) -> std::string {
    return t == ConvTensor::x ? "x" : t == ConvTensor::filter ? "filter" : "y";
  };
  auto gather = [](Gather g) -> std::string {
    switch (g) {
    case Gather::im2col: return " through the im2col gather";
    case Gather::strided: return " through the strided (transposed) gather";
    case Gather::tap_rows: return " by filter-tap rows";
    case Gather::strided_phases: return " through its phase's taps";
    case Gather::tap_rows_phases: return " by the phase's filter-tap rows";
    case Gather::linear: break;
    }
    return "";
  };
  std::ostringstream path;
  path << "implicit GEMM (" << to_string(k.pass) << "): A = " << tensor(roles.a)
       << (k.pass == ConvPass::wgrad ? "^T" : "") << gather(p.a.gather)
       << ", B = " << tensor(roles.b) << gather(p.b.gather) << ", D = " << tensor(roles.c);
  if (k.groups > 1)
    path << "; " << k.groups << " groups, one per grid z";
  path << "; only n is a run-time size";
  if (p.a.gather == Gather::strided_phases) {
    const PhaseTotals t = phase_totals(k);
    path << "; strided dgrad by phases: the dx pixels split into " << t.phases
         << " phases (their position modulo the stride), each a dense implicit GEMM over only the "
            "filter taps that reach it (at most "
         << t.max_taps << " of " << k.taps()
         << "), all in one launch (grid z = phases x groups): 1/" << t.phases
         << " of the dense implicit GEMM's multiply-adds, none of the zeros between the strides";
    if (t.empty_phases > 0)
      path << "; " << t.empty_phases << " phases have no tap and only write their epilogue";
  }
  out.push_back({"kernel path", path.str()});
  const std::string channel_a = roles.a == ConvTensor::x ? "c" : "k";
  const bool can_pad = channel_padding_target(spec).has_value();
  auto limit = [&](const char *ch, int64_t per_group) {
    std::string text = std::string(ch) + " per group = " + std::to_string(per_group) +
                       " is not a multiple of " + std::to_string(widest);
    if (can_pad)
      text += "; the other strategy, copying x and the filter with c zero-padded to " +
              std::to_string((per_group + widest - 1) / widest * widest) +
              " channels first (pad_c), is predicted slower for this problem";
    else
      text += " (channel padding is offered for fprop with one group only)";
    return text;
  };
  const int64_t a_channels = roles.a == ConvTensor::x ? k.cg : k.kg;
  if (p.pad_from != 0)
    out.push_back(
        {"channels", "x and the filter are first copied with c = " + std::to_string(p.pad_from) +
                         " zero-padded to " + std::to_string(k.c) +
                         " channels (the copies are counted in the prediction), so that "
                         "the kernel reads 16-byte vectors"});
  out.push_back(
      {"loads", operand_loads(p.a, tensor(roles.a), widest, limit(channel_a.c_str(), a_channels))});
  out.push_back({"", operand_loads(p.b, tensor(roles.b), widest, limit("c", k.cg))});
  if (p.mma.kind != MmaKind::simt_f32) {
    // The mma's N side: view N per group. Depthwise (Cg = Kg = 1): N = 1 for fprop and dgrad.
    const int64_t view_n = implicit_gemm(spec).n.is_fixed() ? implicit_gemm(spec).n.value : 0;
    if (view_n > 0 && view_n < p.mma.n) {
      std::ostringstream e;
      e << "the implicit GEMM has N = " << view_n << " per group"
        << ": each m" << p.mma.m << "n" << p.mma.n << "k" << p.mma.k << " mma computes " << view_n
        << " of its " << p.mma.n << " columns, so at most " << 100 * view_n / p.mma.n
        << "% of the tensor cores' work is useful";
      out.push_back({"efficiency", e.str()});
    }
  }
  return out;
}

} // namespace tcjit::codegen
