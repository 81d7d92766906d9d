#include "compiler/spec/explain.h"

#include "compiler/spec/printer.h"
#include "compiler/spec/validate.h"
#include "compiler/target/arch.h"

#include <algorithm>
#include <cstdio>

namespace tcjit {

namespace {

std::string dim_text(const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::fixed: return std::to_string(d.value);
  case Dim::Kind::any: return "?";
  case Dim::Kind::range: return std::to_string(d.lo) + ".." + std::to_string(d.hi);
  }
  return "?";
}

// 1.23e+12 -> "1.23 T"
std::string si(double v, const char *unit) {
  const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[i], unit);
  return buf;
}

} // namespace

Explanation explain_spec(const OpSpec &spec, std::string_view arch, bool tf32_override_off) {
  Explanation e;
  e.canonical = print_spec(spec);
  e.key = make_problem_key(spec, arch, tf32_override_off);
  e.arch = std::string(arch);
  e.gemm = implicit_gemm(spec);
  if (spec.kind != OpKind::gemm)
    e.conv_output = conv_output_dims(spec.conv);
  e.flops = flop_count(spec);
  e.bytes = min_bytes(spec);
  if (e.flops && e.bytes && *e.bytes > 0)
    e.arithmetic_intensity = *e.flops / *e.bytes;
  e.integer_ops = is_integer_type(input_dtype(spec));
  e.alignment = analyze_alignment(with_resolved_math(spec, tf32_override_off));
  e.mma = choose_mma(spec, arch, tf32_override_off);
  // The roofline of the arch's GPU (compiler/target/arch.h); none for a spec that does not compile.
  const std::optional<ArchInfo> info = find_arch(arch);
  e.roofline_gpu = std::string(info->gpu);
  e.bandwidth = info->dram_bytes_per_s;
  if (e.mma.unit) {
    // mma.sp does twice a dense mma's work per clock (arch.h, sparse_speedup)
    e.peak_ops = peak_ops(*info, *e.mma.unit) * (e.mma.sparse ? sparse_speedup : 1.0);
    if (e.arithmetic_intensity)
      e.roofline_ops = std::min(e.peak_ops, *e.arithmetic_intensity * e.bandwidth);
  }
  e.findings = check_tensor_core_rules(spec, arch, tf32_override_off);
  return e;
}

std::string render_explanation(const Explanation &e) {
  std::string out;
  auto line = [&](const std::string &s) { out += s + "\n"; };
  line("spec:        " + e.canonical);
  line("key:         " + e.key.hash_hex() + "  (" + e.key.text + ")");
  if (e.conv_output)
    line("output:      o=" + std::to_string(e.conv_output->o) +
         " p=" + std::to_string(e.conv_output->p) + " q=" + std::to_string(e.conv_output->q));
  std::string g = "gemm view:   m=" + dim_text(e.gemm.m) + " n=" + dim_text(e.gemm.n) +
                  " k=" + dim_text(e.gemm.k);
  if (!(e.gemm.batch.is_fixed() && e.gemm.batch.value == 1))
    g += " batch=" + dim_text(e.gemm.batch);
  if (e.gemm.groups != 1)
    g += " x " + std::to_string(e.gemm.groups) + " groups";
  line(g);
  if (e.flops && e.bytes) {
    char buf[160];
    const char *op = e.integer_ops ? "OP" : "FLOP";
    std::snprintf(buf, sizeof buf, "work:        %s, %s moved at least, %.1f %s/byte",
                  si(*e.flops, op).c_str(), si(*e.bytes, "B").c_str(),
                  e.arithmetic_intensity.value_or(0.0), op);
    line(buf);
    if (e.roofline_ops && e.peak_ops > 0) {
      const bool memory_bound = *e.roofline_ops < e.peak_ops;
      const char *rate = e.integer_ops ? "OP/s" : "FLOP/s";
      line("roofline:    " + e.roofline_gpu + " bound " + si(*e.roofline_ops, rate) + " of " +
           si(e.peak_ops, rate) + " peak, " + si(e.bandwidth, "B/s") + " (" +
           (memory_bound ? "memory-bound" : "compute-bound") + ")");
    }
  } else {
    line("work:        depends on the symbolic dimensions");
  }
  std::string align = "alignment:  ";
  for (const OperandAlignment &a : e.alignment)
    align += " " + a.operand + "=" + std::to_string(a.elements) + " (" + std::to_string(a.bytes()) +
             " B)";
  line(align);
  if (e.mma.tensor_cores)
    line("tensor core: yes, " + e.mma.instruction + (e.mma.note.empty() ? "" : " — " + e.mma.note));
  else
    line("tensor core: no — " + e.mma.note);
  if (e.findings.empty()) {
    line("rules:       none broken");
    return out;
  }
  line("rules broken:");
  for (const RuleFinding &f : e.findings) {
    line("  [" + f.rule + "] " + f.problem);
    line("      fix: " + f.fix);
  }
  return out;
}

} // namespace tcjit
