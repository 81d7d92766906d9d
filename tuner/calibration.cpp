#include "tuner/calibration.h"

#include "tuner/cost_model.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <set>
#include <utility>

namespace tcjit::tuner {

namespace {

// What predict() needs of a sample, computed once.
struct Prepared {
  KernelFeatures features;
  Problem problem;
  const CalibrationSample *sample = nullptr;
};

Prepared prepare(const CalibrationSample &s) {
  const OpSpec computed =
      s.spec.kind == OpKind::gemm ? s.spec : codegen::effective_spec(s.spec, s.config);
  return {kernel_features(computed, s.config, s.tf32_off), model_problem(computed), &s};
}

// predict_config's time (the computed view's kernel plus channel padding's copies).
double seconds_of(const GpuModel &gpu, const Prepared &p) {
  const Prediction k = predict(gpu, p.features, p.problem);
  if (!k.launchable)
    return 0;
  return k.seconds + channel_padding_seconds(gpu, p.sample->spec, p.sample->config);
}

double squared_log_error(const GpuModel &gpu, const std::vector<Prepared> &prepared) {
  double sum = 0;
  for (const Prepared &p : prepared) {
    const double t = seconds_of(gpu, p);
    if (!(t > 0) || !std::isfinite(t))
      return HUGE_VAL;
    const double e = std::log(t / p.sample->seconds);
    sum += e * e;
  }
  return sum;
}

double rms(double squared_sum, size_t n) {
  return std::sqrt(squared_sum / double(std::max<size_t>(n, 1)));
}

// One fitted constant: where it lives in the model and the range searched (absolute values).
struct Parameter {
  std::string name;
  std::function<double &(GpuModel &)> value;
  double lo = 0, hi = 0;
};

std::vector<Parameter> parameters(const GpuModel &base, const std::set<int> &math_units) {
  std::vector<Parameter> out;
  out.push_back({"dram_bytes_per_s", [](GpuModel &g) -> double & { return g.dram_bytes_per_s; },
                 0.1 * base.dram_bytes_per_s, 1.5 * base.dram_bytes_per_s});
  out.push_back(
      {"prologue_cycles", [](GpuModel &g) -> double & { return g.prologue_cycles; }, 10, 100000});
  out.push_back(
      {"launch_seconds", [](GpuModel &g) -> double & { return g.launch_seconds; }, 1e-7, 1e-4});
  for (int u : math_units)
    out.push_back({"mma_efficiency." + std::string(to_string(static_cast<MathKind>(u))),
                   [u](GpuModel &g) -> double & { return g.mma_efficiency_of[u]; }, 0.05, 1.0});
  return out;
}

// Minimizes the error over one parameter in log space: a grid, then golden-section search around
// the grid's best point. Leaves the best value in `gpu`.
void search(GpuModel &gpu, const Parameter &param, const std::vector<Prepared> &prepared) {
  double &v = param.value(gpu);
  const double lo = std::log(param.lo), hi = std::log(param.hi);
  auto error_at = [&](double x) {
    v = std::exp(x);
    return squared_log_error(gpu, prepared);
  };
  constexpr int grid = 24;
  double best_x = std::log(std::clamp(v, param.lo, param.hi));
  double best = error_at(best_x);
  int best_i = -1;
  for (int i = 0; i <= grid; ++i) {
    const double x = lo + (hi - lo) * i / grid;
    const double e = error_at(x);
    if (e < best) {
      best = e, best_x = x, best_i = i;
    }
  }
  if (best_i >= 0) {
    double a = lo + (hi - lo) * std::max(0, best_i - 1) / grid;
    double b = lo + (hi - lo) * std::min(grid, best_i + 1) / grid;
    const double r = (std::sqrt(5.0) - 1) / 2;
    double c = b - r * (b - a), d = a + r * (b - a);
    double ec = error_at(c), ed = error_at(d);
    for (int i = 0; i < 60 && b - a > 1e-10; ++i) {
      if (ec < ed) {
        b = d, d = c, ed = ec, c = b - r * (b - a), ec = error_at(c);
      } else {
        a = c, c = d, ec = ed, d = a + r * (b - a), ed = error_at(d);
      }
    }
    if (std::min(ec, ed) < best) {
      best = std::min(ec, ed);
      best_x = ec < ed ? c : d;
    }
  }
  v = std::exp(best_x);
}

// Nelder-Mead over every parameter at once in log space (clamped to the ranges), from `gpu`:
// coordinate descent stops on the ridges the model's max() terms make, where two constants must
// move together. Leaves the best point in `gpu`.
void simplex(GpuModel &gpu, const std::vector<Parameter> &params,
             const std::vector<Prepared> &prepared) {
  const size_t n = params.size();
  auto error_at = [&](const std::vector<double> &x) {
    GpuModel g = gpu;
    for (size_t i = 0; i < n; ++i)
      params[i].value(g) =
          std::exp(std::clamp(x[i], std::log(params[i].lo), std::log(params[i].hi)));
    return squared_log_error(g, prepared);
  };
  std::vector<std::vector<double>> x(n + 1, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i)
    x[0][i] = std::log(params[i].value(gpu));
  for (size_t j = 1; j <= n; ++j) {
    x[j] = x[0];
    x[j][j - 1] += 0.1;
  }
  std::vector<double> e(n + 1);
  for (size_t j = 0; j <= n; ++j)
    e[j] = error_at(x[j]);
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::vector<size_t> order(n + 1);
    for (size_t j = 0; j <= n; ++j)
      order[j] = j;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return e[a] < e[b]; });
    const size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (e[worst] - e[best] <= 1e-14 * std::max(1.0, e[best]))
      break;
    std::vector<double> centroid(n, 0);
    for (size_t j = 0; j <= n; ++j)
      if (j != worst)
        for (size_t i = 0; i < n; ++i)
          centroid[i] += x[j][i] / double(n);
    auto along = [&](double t) {
      std::vector<double> p(n);
      for (size_t i = 0; i < n; ++i)
        p[i] = centroid[i] + t * (x[worst][i] - centroid[i]);
      return p;
    };
    const std::vector<double> reflected = along(-1);
    const double er = error_at(reflected);
    if (er < e[best]) {
      const std::vector<double> expanded = along(-2);
      const double ee = error_at(expanded);
      x[worst] = ee < er ? expanded : reflected;
      e[worst] = std::min(ee, er);
    } else if (er < e[second]) {
      x[worst] = reflected, e[worst] = er;
    } else {
      const std::vector<double> contracted = along(er < e[worst] ? -0.5 : 0.5);
      const double ec = error_at(contracted);
      if (ec < std::min(er, e[worst])) {
        x[worst] = contracted, e[worst] = ec;
      } else {
        for (size_t j = 0; j <= n; ++j) {
          if (j == best)
            continue;
          for (size_t i = 0; i < n; ++i)
            x[j][i] = x[best][i] + 0.5 * (x[j][i] - x[best][i]);
          e[j] = error_at(x[j]);
        }
      }
    }
  }
  const size_t best = size_t(std::min_element(e.begin(), e.end()) - e.begin());
  for (size_t i = 0; i < n; ++i)
    params[i].value(gpu) =
        std::exp(std::clamp(x[best][i], std::log(params[i].lo), std::log(params[i].hi)));
}

// Whether some prediction moves by more than 0.5% when the parameter changes by 20%.
bool determined(const GpuModel &gpu, const Parameter &param,
                const std::vector<Prepared> &prepared) {
  for (const double factor : {1.2, 1 / 1.2}) {
    GpuModel moved = gpu;
    param.value(moved) *= factor;
    for (const Prepared &p : prepared) {
      const double a = seconds_of(gpu, p), b = seconds_of(moved, p);
      if (a > 0 && b > 0 && std::abs(std::log(b / a)) > 0.005)
        return true;
    }
  }
  return false;
}

CalibrationFit refuse(std::string why) {
  CalibrationFit f;
  f.why_not = std::move(why);
  return f;
}

bool printable(const std::string &s, size_t max) {
  return !s.empty() && s.size() <= max &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

} // namespace

double predicted_seconds(const GpuModel &gpu, const CalibrationSample &sample) {
  return seconds_of(gpu, prepare(sample));
}

CalibrationFit fit_calibration(const GpuModel &base,
                               const std::vector<CalibrationSample> &samples) {
  const std::string fix =
      "; tune more problems on the GPU (tcjit tune --device cuda) and calibrate "
      "again";
  if (samples.size() < kMinCalibrationSamples)
    return refuse(std::to_string(samples.size()) + " measured result" +
                  (samples.size() == 1 ? "" : "s") + "; a calibration needs at least " +
                  std::to_string(kMinCalibrationSamples) + fix);
  std::vector<Prepared> prepared;
  std::set<std::string> distinct;
  std::set<int> math_units;
  for (size_t i = 0; i < samples.size(); ++i) {
    const CalibrationSample &s = samples[i];
    const std::string which =
        "measurement " + std::to_string(i + 1) + " (" + codegen::to_string(s.config) + ")";
    if (!std::isfinite(s.seconds) || s.seconds <= 0)
      return refuse(which + ": its time " + std::to_string(s.seconds) +
                    " s is not a positive finite number; drop it from the database "
                    "(tcjit db prune) or tune it again");
    prepared.push_back(prepare(s));
    const Prediction p = predict(base, prepared.back().features, prepared.back().problem);
    if (!p.launchable)
      return refuse(which + ": the model cannot launch it (" + p.why_not +
                    "); it was not measured on this GPU's arch");
    const Problem &pb = prepared.back().problem;
    distinct.insert(std::to_string(pb.m) + "x" + std::to_string(pb.n) + "x" + std::to_string(pb.k) +
                    "x" + std::to_string(pb.batch) + " " + codegen::to_string(s.config));
    math_units.insert(static_cast<int>(prepared.back().features.math));
  }
  if (distinct.size() < 2)
    return refuse("all " + std::to_string(samples.size()) +
                  " measurements are of one problem size and config: they cannot separate the "
                  "model's constants" +
                  fix);

  GpuModel gpu = base;
  for (int u : math_units)
    gpu.mma_efficiency_of[u] = base.efficiency(static_cast<MathKind>(u));
  const std::vector<Parameter> params = parameters(base, math_units);
  CalibrationFit fit;
  fit.residual_before = rms(squared_log_error(gpu, prepared), prepared.size());
  double error = squared_log_error(gpu, prepared);
  for (int sweep = 0; sweep < 40; ++sweep) {
    for (const Parameter &p : params)
      search(gpu, p, prepared);
    const double now = squared_log_error(gpu, prepared);
    const bool converged = error - now <= 1e-9 * std::max(1.0, error);
    error = now;
    if (converged)
      break;
  }
  // Then all constants together, restarted while it improves.
  for (int restart = 0; restart < 20; ++restart) {
    simplex(gpu, params, prepared);
    const double now = squared_log_error(gpu, prepared);
    const bool converged = error - now <= 1e-12 * std::max(1.0, error);
    error = std::min(error, now);
    if (converged)
      break;
  }
  // A constant nothing depends on keeps the model's value.
  GpuModel uncalibrated = base;
  bool any = false;
  for (const Parameter &p : params) {
    if (determined(gpu, p, prepared)) {
      any = true;
      continue;
    }
    fit.kept.push_back(p.name);
    p.value(gpu) = p.value(uncalibrated);
  }
  if (!any)
    return refuse("no constant of the cost model depends on these " +
                  std::to_string(samples.size()) + " measurements" + fix);
  fit.ok = true;
  fit.residual = rms(squared_log_error(gpu, prepared), prepared.size());
  auto kept = [&](const std::string &name) {
    return std::find(fit.kept.begin(), fit.kept.end(), name) != fit.kept.end();
  };
  if (!kept("dram_bytes_per_s"))
    fit.constants.dram_bytes_per_s = gpu.dram_bytes_per_s;
  if (!kept("prologue_cycles"))
    fit.constants.prologue_cycles = gpu.prologue_cycles;
  if (!kept("launch_seconds"))
    fit.constants.launch_seconds = gpu.launch_seconds;
  for (int u : math_units)
    if (!kept("mma_efficiency." + std::string(to_string(static_cast<MathKind>(u)))))
      fit.constants.mma_efficiency[u] = gpu.mma_efficiency_of[u];
  return fit;
}

GpuModel apply_calibration(const GpuModel &base, const Calibration &c) {
  GpuModel g = base;
  if (c.constants.dram_bytes_per_s > 0)
    g.dram_bytes_per_s = c.constants.dram_bytes_per_s;
  if (c.constants.prologue_cycles > 0)
    g.prologue_cycles = c.constants.prologue_cycles;
  if (c.constants.launch_seconds > 0)
    g.launch_seconds = c.constants.launch_seconds;
  for (size_t u = 0; u < math_unit_count; ++u)
    if (c.constants.mma_efficiency[u])
      g.mma_efficiency_of[u] = *c.constants.mma_efficiency[u];
  g.calibration = calibration_label(c);
  return g;
}

std::vector<std::string> calibration_problems(const Calibration &c) {
  std::vector<std::string> out;
  auto in_range = [&](const char *name, double v, double lo, double hi) {
    if (!std::isfinite(v) || v < lo || v > hi)
      out.push_back(std::string(name) + " " + std::to_string(v) + " is not in [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  if (!printable(c.gpu, 200))
    out.push_back("gpu: not a printable name of 1 to 200 characters");
  if (!find_arch(c.arch))
    out.push_back("arch '" + (printable(c.arch, 20) ? c.arch : std::string("?")) +
                  "' is not an arch tcjit targets (" + std::string(known_arch_list()) + ")");
  const CalibratedConstants &k = c.constants;
  if (k.dram_bytes_per_s != 0)
    in_range("dram_bytes_per_s", k.dram_bytes_per_s, 1e9, 1e14);
  if (k.prologue_cycles != 0)
    in_range("prologue_cycles", k.prologue_cycles, 1, 1e6);
  if (k.launch_seconds != 0)
    in_range("launch_seconds", k.launch_seconds, 1e-8, 1e-2);
  for (size_t u = 0; u < math_unit_count; ++u)
    if (k.mma_efficiency[u])
      in_range(("mma_efficiency." + std::string(to_string(static_cast<MathKind>(u)))).c_str(),
               *k.mma_efficiency[u], 0.01, 1.0);
  if (c.results < int64_t(kMinCalibrationSamples) || c.results > 1'000'000'000)
    out.push_back("results " + std::to_string(c.results) + " is not in [" +
                  std::to_string(kMinCalibrationSamples) + ", 1000000000]");
  in_range("residual", c.residual, 0, 100);
  in_range("residual_before", c.residual_before, 0, 100);
  if (c.created_ms < 0 || c.created_ms > 32503680000000) // year 3000
    out.push_back("created_ms " + std::to_string(c.created_ms) + " is not a date");
  if (!printable(c.tcjit_version, 100))
    out.push_back("tcjit_version: not a printable name of 1 to 100 characters");
  if (!printable(c.model_version, 100))
    out.push_back("model_version: not a printable name of 1 to 100 characters");
  return out;
}

std::string calibration_label(const Calibration &c) {
  const std::time_t t = static_cast<std::time_t>(c.created_ms / 1000);
  std::tm tm{};
  char date[32] = "?";
  if (gmtime_r(&t, &tm))
    std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
  return "calibrated on " + c.gpu + " (" + std::to_string(c.results) + " results, " + date + ")";
}

} // namespace tcjit::tuner
