#include "tuner/measure_model.h"

#include "support/string_printf.h"
#include "tuner/cost_model.h"
#include "tuner/cta_probe.h"

namespace tcjit::tuner {

namespace {

class ModelMeasurer final : public Measurer {
public:
  ModelMeasurer(const GpuModel &gpu, device::Device *emulator) : gpu_(gpu), emulator_(emulator) {}

  std::string name() const override { return "model"; }
  bool needs_build() const override { return true; }

  Measurement measure(const TuneTask &task, const codegen::TileConfig &config,
                      const BuiltCandidate *built) override {
    Measurement m;
    m.provenance.kind = kernels_db::ProvenanceKind::predicted;
    m.provenance.model = cost_model_version() + " " + gpu_.name +
                         (emulator_ ? " + emulator CTA probe" : " + ptxas resources");
    CandidateFacts facts;
    if (built)
      facts = built->facts;
    std::string notes;
    if (emulator_ && built) {
      const CtaProbe probe = probe_one_cta(*emulator_, task.spec, *built);
      if (!probe.verified) {
        m.status = kernels_db::ResultStatus::failed;
        m.message = "verification on the emulator failed: " + probe.error;
        return m;
      }
      if (probe.instructions_per_mma > 0) {
        facts.instructions_per_mma = probe.instructions_per_mma;
        facts.shared_wavefronts_per_mma = probe.shared_wavefronts_per_mma;
        facts.bank_conflicts_per_mma = probe.bank_conflicts_per_mma;
        facts.global_load_efficiency = probe.global_load_efficiency;
      }
      notes = "verified on the emulator; " +
              support::string_printf("%.2f", probe.instructions_per_mma) + " instructions, " +
              support::string_printf("%.2f", probe.shared_wavefronts_per_mma) +
              " shared wavefronts per mma, " +
              support::string_printf("%.0f%%", 100 * probe.global_load_efficiency) +
              " load efficiency; ";
    }
    const Prediction p = predict_config(gpu_, task.spec, config, task.tf32_off, facts);
    if (!p.launchable) {
      m.status = kernels_db::ResultStatus::illegal;
      m.message = "does not fit on " + gpu_.name + ": " + p.why_not;
      return m;
    }
    const double us = p.seconds * 1e6;
    m.timing = kernels_db::Timing{us, us, us, 0};
    m.tflops = p.tflops;
    m.message = notes + "predicted " + p.bound + "-bound, " + std::to_string(p.ctas_per_sm) +
                " CTA/SM, " + std::to_string(p.waves) + " wave(s)";
    return m;
  }

private:
  GpuModel gpu_;
  device::Device *emulator_;
};

} // namespace

std::unique_ptr<Measurer> make_model_measurer(const GpuModel &gpu, device::Device *emulator) {
  return std::make_unique<ModelMeasurer>(gpu, emulator);
}

} // namespace tcjit::tuner
