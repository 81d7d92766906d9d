#include "bench/gpu_tool/race.h"

#include "bench/gpu_tool/race_check.h"
#include "compiler/target/arch.h"
#include "engine/device_buffer.h"
#include "tcjit/db.hpp"
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace tcjit::bench {

namespace {

constexpr uint64_t kInputSeed = 1;

// What a column launches: the prepared operation once on `stream`, on the race's operands.
using TcjitLaunch = std::function<void(const Operation &, void *stream)>;

struct RaceContext {
  cuda::CudaDevice &dev;
  const RaceOptions &options;
  Timer timer;
  Runtime heuristic;            // no database: the default chooser's config, compiled now
  std::optional<Runtime> tuned; // the run's database, nothing compiled on a miss (tune only)
  std::optional<ArchInfo> arch;
};

RuntimeOptions runtime_options(bool use_database, const RaceOptions &options) {
  RuntimeOptions r;
  r.device = "cuda";
  r.use_database = use_database;
  if (use_database) {
    r.db_path = options.db_path;
    r.on_miss = MissPolicy::fail;
  }
  return r;
}

void log_line(const RaceOptions &options, const std::string &line) {
  if (options.log)
    options.log(line);
}

std::string us_text(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f us", us);
  return text;
}

// TFLOP/s and the percent of the arch table's peak of `unit`.
void set_rates(ColumnResult &col, double flops, const std::optional<ArchInfo> &arch,
               MathUnit unit) {
  if (!col.timing || col.timing->median_us <= 0)
    return;
  col.tflops = flops / (col.timing->median_us * 1e-6) / 1e12;
  if (arch) {
    const double peak = peak_ops(*arch, unit);
    if (peak > 0)
      col.percent_of_peak = 100.0 * col.tflops * 1e12 / peak;
  }
}

std::vector<std::byte> copy_back(cuda::CudaDevice &dev, device::DevicePtr ptr, size_t bytes) {
  std::vector<std::byte> host(bytes);
  dev.copy_to_host(host.data(), ptr, bytes);
  return host;
}

// The output of one run, copied back and checked; a reference that fails says so as unchecked.
Verification check_output(RaceContext &ctx, OutputChecker &checker, device::DevicePtr out,
                          size_t bytes) {
  const std::vector<std::byte> host = copy_back(ctx.dev, out, bytes);
  try {
    return checker.check(host);
  } catch (const std::exception &e) {
    Verification v;
    v.why_unchecked = std::string("the CPU reference failed: ") + e.what();
    return v;
  }
}

std::string verification_text(const std::optional<Verification> &v) {
  if (!v)
    return "";
  if (!v->checked)
    return ", not checked";
  return v->ok ? ", output correct"
               : ", WRONG OUTPUT (" + std::to_string(v->mismatches) + " of " +
                     std::to_string(v->elements) + " elements)";
}

void log_column(RaceContext &ctx, const std::string &label, const ColumnResult &col) {
  if (col.ok)
    log_line(ctx.options, label + ": " + col.column + " " + us_text(col.timing->median_us) +
                              verification_text(col.verification));
  else
    log_line(ctx.options, label + ": " + col.column + " failed: " + col.error);
}

// Runs `op` once (output zeroed first, so that a kernel that writes nothing is not taken for a
// correct one), checks the output, then times it.
void run_tcjit(RaceContext &ctx, ColumnResult &col, const Operation &op, const TcjitLaunch &launch,
               OutputChecker &checker, device::DevicePtr out, size_t out_bytes) {
  col.config = op.config();
  ctx.dev.memset(out, 0, out_bytes);
  launch(op, ctx.dev.stream());
  ctx.dev.synchronize();
  col.verification = check_output(ctx, checker, out, out_bytes);
  col.timing = ctx.timer.time([&](void *stream) { launch(op, stream); });
  col.ok = true;
}

ColumnResult tcjit_heuristic(RaceContext &ctx, const OpSpec &spec, const TcjitLaunch &launch,
                             OutputChecker &checker, device::DevicePtr out, size_t out_bytes) {
  ColumnResult col;
  col.column = "tcjit heuristic";
  col.source = "tcjit";
  col.variant = "heuristic";
  try {
    const Operation op = ctx.heuristic.prepare(spec);
    col.origin = to_string(op.origin());
    run_tcjit(ctx, col, op, launch, checker, out, out_bytes);
  } catch (const std::exception &e) {
    col.ok = false;
    col.error = e.what();
  }
  return col;
}

// Why a tune found nothing: the report's error or summary of the problem, and the message of
// the first candidate that failed (from the database), e.g. a wrong result against the reference.
std::string tune_failure(const TuneReport &report, const std::string &db_path) {
  if (!report.skipped.empty())
    return report.skipped.front();
  std::string why = "no result";
  try {
    const nlohmann::json j = nlohmann::json::parse(report.json);
    if (j.empty())
      return why;
    if (j[0].contains("error"))
      return j[0]["error"].get<std::string>();
    const nlohmann::json &size = j[0]["sizes"][0];
    why = size.value("how", why);
    DbShowRequest show;
    show.db_path = db_path;
    show.key = size.value("key", "");
    for (const DbResult &r : db_show(show).results)
      if (r.status != "ok" && !r.message.empty())
        return why + "; the first failure: " + r.config + ": " + r.message;
  } catch (const std::exception &e) {
    why += " (its details could not be read: " + std::string(e.what()) + ")";
  }
  return why;
}

// Tunes the problem on the device into the run's database (measured candidates), then times the
// operation the database now serves.
ColumnResult tcjit_tuned(RaceContext &ctx, const std::string &name, const OpSpec &spec,
                         const TcjitLaunch &launch, OutputChecker &checker, device::DevicePtr out,
                         size_t out_bytes) {
  ColumnResult col;
  col.column = "tcjit tuned";
  col.source = "tcjit";
  col.variant = "tuned";
  try {
    TuneRequest request;
    request.db_path = ctx.options.db_path;
    request.device = "cuda";
    request.arch = ctx.tuned->arch();
    request.budget = ctx.options.tune_budget;
    request.on_event = [&ctx, &name](const TuneEvent &e) {
      if (e.kind == TuneEvent::Kind::finished)
        log_line(ctx.options, "tune " + name + ": " + e.text);
    };
    WorkloadEntry entry;
    entry.name = name;
    entry.spec = spec;
    const TuneReport report = tune_ops({entry}, request);
    if (report.failed > 0 || report.problems == 0) {
      col.error = "tcjit tune --device cuda found no usable config: " +
                  tune_failure(report, ctx.options.db_path);
      return col;
    }
    const Operation op = ctx.tuned->prepare(spec);
    ResolveRequest resolve;
    resolve.db_path = ctx.options.db_path;
    resolve.arch = ctx.tuned->arch();
    const Resolution r = resolve_op(spec, resolve);
    col.origin = r.kernels.empty() ? to_string(op.origin()) : r.kernels.front().origin;
    run_tcjit(ctx, col, op, launch, checker, out, out_bytes);
  } catch (const std::exception &e) {
    col.ok = false;
    col.error = e.what();
  }
  return col;
}

// The anchor plan's first candidate (checked, timed) and the best of its first anchor_top.
void anchor_columns(RaceContext &ctx, const AnchorPlan &plan, OutputChecker &checker,
                    device::DevicePtr out, size_t out_bytes, std::vector<ColumnResult> &columns) {
  const int top = std::max(1, ctx.options.anchor_top);
  ColumnResult first, best;
  for (ColumnResult *c : {&first, &best}) {
    c->source = plan.anchor;
    c->variant = plan.variant;
    c->origin = plan.note;
  }
  first.pick = "first";
  best.pick = "best of " + std::to_string(top);
  first.column = plan.anchor + " " + plan.variant + " first";
  best.column = plan.anchor + " " + plan.variant + " best of " + std::to_string(top);
  if (!plan.ok || plan.candidates.empty()) {
    first.error = best.error =
        !plan.ok ? plan.why_not : plan.anchor + "'s " + plan.variant + " offered no candidate";
    columns.push_back(first);
    columns.push_back(best);
    return;
  }
  const size_t count = std::min(plan.candidates.size(), static_cast<size_t>(top));
  for (size_t i = 0; i < count; ++i) {
    const AnchorCandidate &candidate = plan.candidates[i];
    CandidateTime t;
    t.rank = candidate.rank;
    t.description = candidate.description;
    try {
      if (i == 0) {
        first.config = candidate.description;
        ctx.dev.memset(out, 0, out_bytes);
        candidate.enqueue(ctx.dev.stream());
        ctx.dev.synchronize();
        first.verification = check_output(ctx, checker, out, out_bytes);
      }
      t.timing = ctx.timer.time(candidate.enqueue);
    } catch (const std::exception &e) {
      t.error = e.what();
    }
    if (i == 0) {
      first.ok = t.timing.has_value();
      first.timing = t.timing;
      first.error = t.error;
    }
    best.candidates.push_back(t);
  }
  const CandidateTime *winner = nullptr;
  for (const CandidateTime &t : best.candidates)
    if (t.timing && (!winner || t.timing->median_us < winner->timing->median_us))
      winner = &t;
  if (winner) {
    best.ok = true;
    best.timing = winner->timing;
    best.config = winner->description;
  } else {
    best.error = "none of the first " + std::to_string(count) + " candidates ran";
  }
  columns.push_back(first);
  columns.push_back(best);
}

MathUnit gemm_math_unit(const std::string &dtype) {
  if (dtype == "bf16")
    return MathUnit::bf16;
  if (dtype == "tf32")
    return MathUnit::tf32;
  if (dtype == "s8")
    return MathUnit::s8;
  return MathUnit::f16;
}

OpSpec parse_spec_text(const std::string &text) {
  const std::vector<WorkloadEntry> entries = parse_ops(text, "<race>");
  return entries.front().spec;
}

std::unique_ptr<engine::DeviceBuffer> upload(cuda::CudaDevice &dev,
                                             const std::vector<std::byte> &host) {
  return std::make_unique<engine::DeviceBuffer>(dev, host.size(), host);
}

// Every column of a problem; `launch` runs tcjit's operation on the race's operands.
void race_columns(RaceContext &ctx, ProblemResult &r, const OpSpec &spec, const TcjitLaunch &launch,
                  OutputChecker &checker, device::DevicePtr tcjit_out, device::DevicePtr anchor_out,
                  size_t out_bytes, const std::function<std::vector<AnchorPlan>()> &plan,
                  MathUnit unit) {
  const std::string label = r.kind + " " + r.name + " " + (r.kind == "gemm" ? r.dtype : r.pass) +
                            (r.bias_gelu ? " bias+gelu" : "");
  r.columns.push_back(tcjit_heuristic(ctx, spec, launch, checker, tcjit_out, out_bytes));
  log_column(ctx, label, r.columns.back());
  if (ctx.options.tune) {
    r.columns.push_back(tcjit_tuned(ctx, r.name, spec, launch, checker, tcjit_out, out_bytes));
    log_column(ctx, label, r.columns.back());
  }
  std::vector<AnchorPlan> plans;
  try {
    plans = plan ? plan() : std::vector<AnchorPlan>{};
  } catch (const std::exception &e) {
    r.errors.push_back(std::string("planning the anchors failed: ") + e.what());
  }
  for (const AnchorPlan &p : plans) {
    anchor_columns(ctx, p, checker, anchor_out, out_bytes, r.columns);
    log_column(ctx, label, r.columns[r.columns.size() - 2]);
    log_column(ctx, label, r.columns.back());
  }
  for (ColumnResult &col : r.columns)
    set_rates(col, r.flops, ctx.arch, unit);
}

ProblemResult race_gemm(RaceContext &ctx, const GemmProblem &problem,
                        const AnchorPlanners &anchors) {
  ProblemResult r;
  r.kind = "gemm";
  r.name = problem.name;
  r.dtype = problem.dtype;
  r.bias_gelu = problem.bias_gelu;
  r.spec = gemm_spec_text(problem);
  r.flops = 2.0 * problem.m * problem.n * problem.k * problem.batch;
  const MathUnit unit = gemm_math_unit(problem.dtype);
  r.math_unit = std::string(to_string(unit));
  try {
    const OpSpec spec = parse_spec_text(r.spec);
    const ProblemInputs inputs = random_inputs(spec, kInputSeed);
    OutputChecker checker(inputs, ctx.options.verify_max_macs);
    const auto a = upload(ctx.dev, inputs.a), b = upload(ctx.dev, inputs.b);
    const auto bias = inputs.bias.empty() ? nullptr : upload(ctx.dev, inputs.bias);
    const size_t out_bytes = output_bytes(spec);
    const engine::DeviceBuffer tcjit_out(ctx.dev, out_bytes), anchor_out(ctx.dev, out_bytes);
    const DeviceAddress bias_ptr = bias ? bias->ptr() : 0;
    const TcjitLaunch launch = [&](const Operation &op, void *stream) {
      op.launch(GemmArgs{a->ptr(), b->ptr(), 0, tcjit_out.ptr(), bias_ptr}, stream);
    };
    const GemmOperands operands{a->ptr(), b->ptr(), bias_ptr, anchor_out.ptr()};
    const auto plan = [&] {
      return anchors.gemm ? anchors.gemm(problem, operands) : std::vector<AnchorPlan>{};
    };
    race_columns(ctx, r, spec, launch, checker, tcjit_out.ptr(), anchor_out.ptr(), out_bytes, plan,
                 unit);
  } catch (const std::exception &e) {
    r.errors.push_back(e.what());
    log_line(ctx.options, "gemm " + r.name + " " + r.dtype + " failed: " + e.what());
  }
  return r;
}

ProblemResult race_conv(RaceContext &ctx, const ConvProblem &problem,
                        const AnchorPlanners &anchors) {
  ProblemResult r;
  r.kind = "conv";
  r.name = problem.name;
  r.dtype = "f16";
  r.pass = problem.pass;
  r.spec = conv_spec_text(problem);
  r.math_unit = std::string(to_string(MathUnit::f16));
  try {
    const OpSpec spec = parse_spec_text(r.spec);
    r.flops = 2.0 * multiply_adds(spec);
    const ProblemInputs inputs = random_inputs(spec, kInputSeed);
    OutputChecker checker(inputs, ctx.options.verify_max_macs);
    const auto x = upload(ctx.dev, inputs.x), w = upload(ctx.dev, inputs.filter),
               y = upload(ctx.dev, inputs.y);
    const size_t out_bytes = output_bytes(spec);
    const engine::DeviceBuffer tcjit_out(ctx.dev, out_bytes), anchor_out(ctx.dev, out_bytes);
    // The pass's output tensor is each column's own buffer; the others are the shared inputs.
    const auto operands = [&](device::DevicePtr out) {
      ConvOperands o{x->ptr(), w->ptr(), y->ptr()};
      (spec.conv.pass == ConvPass::fprop   ? o.y
       : spec.conv.pass == ConvPass::dgrad ? o.x
                                           : o.w) = out;
      return o;
    };
    const ConvOperands mine = operands(tcjit_out.ptr());
    const TcjitLaunch launch = [&](const Operation &op, void *stream) {
      op.launch_conv(ConvArgs{mine.x, mine.w, mine.y, 0, 0}, stream);
    };
    const ConvOperands theirs = operands(anchor_out.ptr());
    const auto plan = [&] {
      return anchors.conv ? anchors.conv(problem, theirs) : std::vector<AnchorPlan>{};
    };
    race_columns(ctx, r, spec, launch, checker, tcjit_out.ptr(), anchor_out.ptr(), out_bytes, plan,
                 MathUnit::f16);
  } catch (const std::exception &e) {
    r.errors.push_back(e.what());
    log_line(ctx.options, "conv " + r.name + " " + r.pass + " failed: " + e.what());
  }
  return r;
}

} // namespace

std::string gemm_spec_text(const GemmProblem &p) {
  std::ostringstream s;
  s << "gemm m=" << p.m << " n=" << p.n << " k=" << p.k << " batch=" << p.batch;
  if (p.dtype == "s8")
    s << " a=s8 b=s8:col c=s32 acc=s32";
  else if (p.dtype == "tf32")
    s << " a=tf32 b=tf32:col c=f32 acc=f32";
  else
    s << " a=" << p.dtype << " b=" << p.dtype << ":col c=" << p.dtype << " acc=f32";
  if (p.bias_gelu)
    s << " bias=col act=gelu";
  return s.str();
}

std::string conv_spec_text(const ConvProblem &p) {
  std::ostringstream s;
  s << "conv2d n=" << p.n << " h=" << p.h << " w=" << p.w << " c=" << p.c << " k=" << p.k
    << " r=" << p.r << " s=" << p.s << " pad=" << p.pad_h << "," << p.pad_w
    << " stride=" << p.stride_h << "," << p.stride_w << " dilation=" << p.dilation_h << ","
    << p.dilation_w << " groups=" << p.groups << " pass=" << p.pass
    << " x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32";
  return s.str();
}

std::vector<ProblemResult> run_race(cuda::CudaDevice &dev, const std::vector<GemmProblem> &gemms,
                                    const std::vector<ConvProblem> &convs,
                                    const AnchorPlanners &anchors, const RaceOptions &options) {
  RaceContext ctx{dev,
                  options,
                  Timer(dev, options.timing),
                  Runtime(runtime_options(false, options)),
                  std::nullopt,
                  std::nullopt};
  if (options.tune)
    ctx.tuned.emplace(runtime_options(true, options));
  const cuda::CudaDeviceProperties &p = dev.properties();
  ctx.arch = find_arch(
      "sm_" + std::to_string(p.compute_capability_major * 10 + p.compute_capability_minor));
  std::vector<ProblemResult> results;
  for (const GemmProblem &g : gemms)
    results.push_back(race_gemm(ctx, g, anchors));
  for (const ConvProblem &c : convs)
    results.push_back(race_conv(ctx, c, anchors));
  return results;
}

} // namespace tcjit::bench
