#include "engine/kernel_cache.h"
#include "runtime/jit/cuda_toolkit.h"

#include "compiler/spec/shape.h"
#include "compiler/target/arch.h"
#include "engine/cubin_build.h"
#include "engine/kernel_compile.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "runtime/device/device.h"
#include "support/string_printf.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace tcjit::engine {

namespace {

// The resources recorded by binary_record(); unknown fields stay -1.
MainKernelResources recorded_resources(const std::string &resources_json, int dynamic_shared) {
  MainKernelResources r;
  r.shared_bytes = dynamic_shared;
  const nlohmann::json res = nlohmann::json::parse(resources_json, nullptr, false);
  if (!res.is_object())
    return r;
  auto get = [&](const char *name, int &field) {
    if (res.contains(name) && res[name].is_number_integer())
      field = res[name].get<int>();
  };
  get("registers", r.registers);
  get("stack_bytes", r.stack_bytes);
  get("spill_bytes", r.spill_bytes);
  int stores = -1, loads = -1; // older records: the two counts only
  get("spill_stores", stores);
  get("spill_loads", loads);
  if (r.spill_bytes < 0 && stores >= 0 && loads >= 0)
    r.spill_bytes = stores + loads;
  if (res.contains("static_shared_bytes"))
    get("shared_bytes", r.shared_bytes); // the total
  else if (res.contains("shared_bytes") && res["shared_bytes"].is_number_integer())
    r.shared_bytes += res["shared_bytes"].get<int>(); // older records: the static part only
  return r;
}

} // namespace

std::string target_arch(std::string_view requested, const device::DeviceInfo &device,
                        std::string &error) {
  if (!requested.empty()) {
    if (find_arch(requested))
      return std::string(requested);
    error = "unknown arch '" + std::string(requested) + "' (tcjit targets " +
            std::string(known_arch_list()) + ")";
    return "";
  }
  const std::string arch = "sm_" + std::to_string(device.sm_arch);
  if (find_arch(arch))
    return arch;
  error = "the device is " + arch + ", which tcjit does not target (" +
          std::string(known_arch_list()) + ")";
  return "";
}

namespace {

// A kernel compiled now: the first candidate whose cubin neither spills nor needs a stack frame,
// else the one with the fewest such bytes.
struct FreshKernel {
  codegen::CompiledKernel kernel;
  CubinBuild build;
  double compile_ms = 0;
  std::string fallbacks; // the spilling candidates passed over, "" when the first was taken
};

// Compiles `candidates` in order until one's cubin neither spills nor needs a stack frame; when
// every one does, the one with the fewest such bytes. nullopt with errors (and the error's kind) in
// `out` when the first cannot be compiled.
std::optional<FreshKernel> compile_candidates(const OpSpec &spec,
                                              const std::vector<codegen::TileConfig> &candidates,
                                              const KernelRequest &request, ServedKernel &out) {
  std::optional<FreshKernel> best;
  double compile_ms = 0;
  std::string fallbacks;
  for (const codegen::TileConfig &candidate : candidates) {
    codegen::CompileOptions copt;
    copt.arch = request.arch;
    copt.tf32_off = request.tf32_off;
    copt.config = candidate;
    copt.libdevice = jit::current_cuda_toolkit().libdevice.path;
    copt.backend = request.backend;
    codegen::CompiledKernel kernel;
    try {
      kernel = compile_kernel(spec, copt);
    } catch (const std::logic_error &e) { // the generated CUDA C++ does not compile: a bug
      out.internal_error = true;
      out.errors.push_back(std::string("internal error: ") + e.what());
      return std::nullopt;
    } catch (const std::runtime_error &e) { // NVRTC cannot be loaded
      out.errors.push_back(e.what());
      return std::nullopt;
    }
    if (!kernel.ok()) {
      if (best) { // a fallback that cannot be compiled: keep the best one so far
        out.warnings.push_back("fallback config " + codegen::to_string(candidate) +
                               " not compiled: " + kernel.errors.front().message);
        break;
      }
      for (const codegen::ConfigError &e : kernel.errors) {
        out.errors.push_back(e.field + ": " + e.message);
        out.user_code_error |= e.field == "act" || e.field == "backend";
      }
      return std::nullopt;
    }
    CubinBuild build = build_cubin(kernel);
    if (!build.error.empty()) {
      if (best) {
        out.warnings.push_back("fallback config " + codegen::to_string(candidate) +
                               " not compiled: " + build.error);
        break;
      }
      out.internal_error = true;
      out.errors.push_back("internal error: the generated PTX does not compile for " +
                           request.arch + ": " + build.error);
      return std::nullopt;
    }
    if (!build.stage.empty())
      kernel.times.push_back({build.stage, build.ms});
    compile_ms += kernel.total_ms();
    const int bad = spill_and_stack_bytes(build);
    if (!best || bad < spill_and_stack_bytes(best->build)) {
      best.emplace();
      best->build = std::move(build);
      best->kernel = std::move(kernel);
    }
    if (bad == 0)
      break;
    fallbacks += (fallbacks.empty() ? "" : "; ") + codegen::to_string(candidate) + " needs " +
                 std::to_string(bad) + " B of spills and stack";
  }
  if (!best) {
    out.errors.push_back("no config to compile");
    return std::nullopt;
  }
  best->compile_ms = compile_ms;
  best->fallbacks = std::move(fallbacks);
  return best;
}

// Serves `fresh` from `out` (how: "<what>, compiled in ..."), and stores it in the database when it
// can be written; a read-only database keeps nothing (the kernel lives in this process only).
void serve_fresh(FreshKernel &&fresh, const std::string &what, const OpSpec &spec,
                 const ProblemKey &key, const KernelRequest &request, kernels_db::KernelsDb *db,
                 ServedKernel &out) {
  out.kernel = std::move(fresh.kernel);
  CubinBuild &build = fresh.build;
  out.cubin = std::move(build.cubin);
  out.origin = KernelOrigin::compiled_now;
  out.resources = {};
  out.resources.shared_bytes = out.kernel.plan.smem_bytes;
  out.how = what + ", compiled in " + support::string_printf("%.1f ms", fresh.compile_ms);
  if (const jit::EntryResources *r =
          jit::find_entry_resources(build.resources, out.kernel.plan.kernel_name)) {
    out.resources.registers = r->registers;
    out.resources.spill_bytes = r->spill_bytes();
    out.resources.stack_bytes = r->stack_frame;
    out.resources.shared_bytes += r->static_shared_bytes;
    out.how += " (" + std::to_string(r->registers) + " registers, " +
               std::to_string(r->spill_bytes()) + " spill bytes, " +
               std::to_string(r->stack_frame) + " B stack, " +
               std::to_string(out.resources.shared_bytes) + " B shared)";
  }
  if (!fresh.fallbacks.empty()) {
    out.how += ", config " + codegen::to_string(out.kernel.config) + " (" + fresh.fallbacks + ")";
    if (spill_and_stack_bytes(build) > 0)
      out.warnings.push_back("every config tried for this spec spills or needs a stack frame (" +
                             fresh.fallbacks + "); using " + codegen::to_string(out.kernel.config) +
                             ", the least");
  }
  out.how += ", " + build.note;
  if (!db)
    return;
  if (db->read_only()) {
    out.how += ", kept in memory (the database " + db->path() + " is read-only)";
    return;
  }
  kernels_db::BinaryRecord record = binary_record(key, out.kernel, request.arch, build.resources);
  if (!out.cubin.empty()) {
    record.cubin = out.cubin;
    record.compile_options +=
        " + " + (build.stage == "ptxas" ? std::string("ptxas") : std::string("nvJitLink")) +
        " -arch=" + request.arch;
  }
  db->put_problem(problem_record(spec, key, request.arch));
  db->put_binary(record); // replaces a foreign row of the same key
  out.how += ", stored in " + db->path();
}

// Serves a binary this user's tcjit stored (its MAC is valid): as it is.
void serve_trusted(const kernels_db::BinaryRecord &binary, const codegen::TileConfig &candidate,
                   const OpSpec &spec, const KernelRequest &request, const std::string &choice,
                   kernels_db::KernelsDb &db, ServedKernel &out) {
  out.kernel.config = candidate;
  out.kernel.plan = codegen::plan_kernel(spec, candidate, request.arch, request.tf32_off);
  out.kernel.ptx = binary.ptx;
  out.cubin = binary.cubin;
  out.origin = KernelOrigin::database;
  out.resources = recorded_resources(binary.resources_json, out.kernel.plan.smem_bytes);
  out.how = (choice.empty() ? "" : choice + ", ") + "hit (database " + db.path() + ", compiled " +
            support::string_printf("%.1f ms", binary.compile_ms) + " earlier, " +
            (out.cubin.empty() ? std::string("PTX only")
                               : "cubin " + std::to_string(out.cubin.size()) + " B") +
            ")";
}

// A foreign binary (no valid MAC: imported, merged, copied or edited) is never launched: the
// kernel of its config is compiled now. When the stored PTX is what this code generator writes,
// the kernel is "rebuilt" (the cubin is ours); else the row is discarded. Either way ours is
// stored in its place when the database can be written. false with errors in `out` when the
// config does not compile.
bool serve_foreign(const kernels_db::BinaryRecord &binary, const codegen::TileConfig &candidate,
                   const OpSpec &spec, const ProblemKey &key, const KernelRequest &request,
                   const std::string &choice, kernels_db::KernelsDb &db, ServedKernel &out) {
  std::optional<FreshKernel> fresh = compile_candidates(spec, {candidate}, request, out);
  if (!fresh)
    return false;
  const std::string prefix = choice.empty() ? "" : choice + ", ";
  if (fresh->kernel.ptx == binary.ptx) {
    serve_fresh(std::move(*fresh),
                prefix + "hit (database " + db.path() +
                    ", a kernel this user's tcjit did not store: rebuilt from its spec and config, "
                    "its PTX is this code generator's)",
                spec, key, request, &db, out);
    return true;
  }
  out.warnings.push_back(
      "discarded the stored kernel of " + key.hash_hex() + " config " +
      codegen::to_string(candidate) + " " + request.arch + " in " + db.path() +
      ": its PTX is not what this code generator writes for that spec and config (edited, "
      "damaged or built elsewhere); compiled it again" +
      (db.read_only() ? " (the database is read-only: the row stays)" : ""));
  serve_fresh(std::move(*fresh), prefix + "stored kernel discarded", spec, key, request, &db, out);
  return true;
}

} // namespace

ServedKernel find_or_compile_kernel(const OpSpec &spec, const ProblemKey &key,
                                    const KernelRequest &request, kernels_db::KernelsDb *db) {
  ServedKernel out;
  std::string choice; // "tuned (...)" when the database had a tuned config
  // The configs to try, best first: the requested one alone, or the tuned one, or the default
  // chooser's (taken in order when a cubin spills: register use is known only after ptxas).
  if (!request.config && !request.chosen.empty())
    choice = request.chosen_note;
  const std::vector<codegen::TileConfig> candidates =
      request.config
          ? std::vector<codegen::TileConfig>{codegen::resolve_vectors(spec, *request.config)}
          : request.chosen;
  if (candidates.empty()) {
    for (const codegen::ConfigError &e :
         codegen::check_codegen_support(spec, request.arch, request.tf32_off))
      out.errors.push_back(e.field + ": " + e.message);
    if (out.errors.empty())
      out.errors.push_back("no legal config for " + key.hash_hex());
    return out;
  }
  const codegen::TileConfig &config = candidates.front();
  const auto config_errors =
      codegen::validate_tile_config(spec, config, request.arch, request.tf32_off);
  if (!config_errors.empty()) {
    for (const codegen::ConfigError &e : config_errors)
      out.errors.push_back("config " + codegen::to_string(config) + ": " + e.field + ": " +
                           e.message);
    return out;
  }
  if (db && request.use_stored) {
    // A decided config (`choice`: a tune's) is served by its own kernel or compiled now, never
    // replaced by a stored kernel of a fallback config: what `tcjit db show` calls the decision is
    // what runs. Else the stored kernel of the first candidate that has one (a fallback taken
    // earlier because the first spilled).
    // The first candidate is also looked up under request.stored_under (a family's problem).
    const size_t looked_up = choice.empty() ? candidates.size() : 1;
    std::vector<std::pair<std::string, codegen::TileConfig>> lookups;
    for (size_t i = 0; i < looked_up; ++i) {
      lookups.emplace_back(key.text, candidates[i]);
      if (i == 0)
        for (const std::string &other : request.stored_under)
          lookups.emplace_back(other, candidates[i]);
    }
    for (const auto &[problem_key, candidate] : lookups) {
      const auto found = db->find_binary({problem_key, config_json(candidate), request.arch,
                                          toolkit_version(), compiler_version(request.backend)});
      out.warnings.insert(out.warnings.end(), found.warnings.begin(), found.warnings.end());
      if (found.status != kernels_db::LookupStatus::hit)
        continue;
      if (problem_key != key.text && !db->read_only()) // recorded as a problem of its own
        db->put_problem(problem_record(spec, key, request.arch));
      if (found.binary->trusted) {
        serve_trusted(*found.binary, candidate, spec, request, choice, *db, out);
        return out;
      }
      // Rebuilt even when the miss policy is fail: the database has the kernel, and it is only
      // launched once this installation has built it.
      serve_foreign(*found.binary, candidate, spec, key, request, choice, *db, out);
      return out;
    }
  }
  if (!request.compile_on_miss) {
    out.missed = true;
    out.errors.push_back("no kernel for " + key.hash_hex() + " (config " +
                         codegen::to_string(config) + ", " + request.arch + ") in " +
                         (db ? "the database " + db->path() : "a runtime without a database") +
                         ", and the miss policy is fail");
    return out;
  }
  std::optional<FreshKernel> fresh = compile_candidates(spec, candidates, request, out);
  if (!fresh)
    return out;
  serve_fresh(std::move(*fresh), (choice.empty() ? "" : choice + ", ") + "miss", spec, key, request,
              db, out);
  return out;
}

std::string set_aside_stored_kernel(const ServedKernel &served, const ProblemKey &key,
                                    const KernelRequest &request, kernels_db::KernelsDb *db,
                                    const std::string &why) {
  std::string where = db ? " in " + db->path() : std::string();
  bool deleted = false;
  if (db && !db->read_only()) {
    try {
      deleted = db->delete_binary({key.text, config_json(served.kernel.config), request.arch,
                                   toolkit_version(), compiler_version(request.backend)});
    } catch (const kernels_db::DbError &) {
      deleted = false; // the warning says the row stays; the run goes on with a new compile
    }
  }
  return "the stored kernel of " + key.hash_hex() + " config " +
         codegen::to_string(served.kernel.config) + where + " does not load (" + why +
         "): set aside" + (deleted ? " (its row deleted)" : "") + ", compiled again";
}

} // namespace tcjit::engine
