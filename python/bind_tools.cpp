// The tools of include/tcjit/tools.hpp and db.hpp for the package, each returning the JSON text the
// command line prints with --json (one schema: docs/cli.md, docs/schemas/), which the package
// parses. The database's documents are made by the command line's own cli/db_json.cpp.
#include "python/bindings.h"

#include "cli/db_json.h"
#include "cli/json_text.h"
#include "tcjit/db.hpp"
#include "tcjit/tools.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace tcjit::python {
namespace {

using Release = nb::call_guard<nb::gil_scoped_release>;

std::vector<WorkloadEntry> parse(const std::string &text) {
  return parse_ops(text, "<spec>");
}

std::string explain_json(const std::string &text, const std::string &arch,
                         const std::string &db_path) {
  ExplainRequest request;
  request.arch = arch;
  request.db_path = db_path;
  nlohmann::json all = nlohmann::json::array();
  for (const WorkloadEntry &entry : parse(text))
    all.push_back(nlohmann::json::parse(explain_op(entry, request).json));
  return cli::json_text(all);
}

std::string resolve_json(const std::string &text, const std::string &db_path,
                         const std::string &arch, const std::string &backend) {
  ResolveRequest request;
  request.db_path = db_path;
  request.arch = arch;
  request.backend = backend;
  nlohmann::json all = nlohmann::json::array();
  for (const WorkloadEntry &entry : parse(text)) {
    nlohmann::json j = nlohmann::json::parse(resolve_op(entry.spec, request).json);
    if (!entry.name.empty())
      j["name"] = entry.name;
    all.push_back(std::move(j));
  }
  return cli::json_text(all);
}

// What the package's progress display gets of a TuneEvent: (kind, index, count, name, text, done,
// planned, failed, best_config, best_us, elapsed_seconds).
using TuneCallback = std::function<void(const std::string &, size_t, size_t, const std::string &,
                                        const std::string &, size_t, size_t, size_t,
                                        const std::string &, double, double)>;

const char *kind_name(TuneEvent::Kind kind) {
  switch (kind) {
  case TuneEvent::Kind::setup: return "setup";
  case TuneEvent::Kind::started: return "started";
  case TuneEvent::Kind::progress: return "progress";
  case TuneEvent::Kind::finished: return "finished";
  }
  return "progress";
}

// Tunes with the GIL released; `on_event` (may be None) is called with the GIL held. Ctrl-C (a
// pending KeyboardInterrupt) stops the tune after the candidate being measured; what is done is
// stored and the interrupt is raised when tune_ops returns.
std::string tune_json(const std::string &text, const std::string &db_path,
                      const std::string &budget, const std::string &device, const std::string &arch,
                      const std::string &strategy, const std::string &backend, bool retune,
                      int jobs, uint64_t seed, const TuneCallback &on_event) {
  std::vector<WorkloadEntry> entries = parse(text);
  TuneRequest request;
  request.db_path = db_path;
  request.budget = budget;
  request.device = device;
  request.arch = arch;
  request.strategy = strategy;
  request.backend = backend;
  request.retune = retune;
  request.jobs = jobs;
  request.seed = seed;
  std::atomic<bool> stop = false;
  request.stop = &stop;
  request.on_event = [&](const TuneEvent &e) {
    nb::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) {
      stop = true;
      PyErr_Clear();
      return;
    }
    if (!on_event)
      return;
    try {
      on_event(kind_name(e.kind), e.index, e.count, e.name, e.text, e.done, e.planned, e.failed,
               e.best_config, e.best_us, e.elapsed_seconds);
    } catch (const nb::python_error &) {
      // A display that fails does not stop the tune.
    }
  };
  TuneReport report;
  {
    nb::gil_scoped_release release;
    report = tune_ops(entries, request);
  }
  if (report.interrupted) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw nb::python_error();
  }
  return report.json;
}

std::string db_ls_json(const std::string &db_path) {
  DbListRequest request;
  request.db_path = db_path;
  return cli::json_text(cli::ls_json(db_list(request)));
}

std::string db_show_json(const std::string &db_path, const std::string &key,
                         const std::string &arch) {
  DbShowRequest request;
  request.db_path = db_path;
  request.key = key;
  request.arch = arch;
  return cli::json_text(cli::show_json(db_show(request)));
}

std::string db_export_lines(const std::string &db_path) {
  std::ostringstream out;
  db_export({db_path, ""}, out);
  return out.str();
}

std::vector<std::string> canonical_texts(const std::string &text) {
  std::vector<std::string> texts;
  for (const WorkloadEntry &entry : parse(text))
    texts.push_back(canonical_text(entry.spec));
  return texts;
}

} // namespace

void bind_tools(nb::module_ &m) {
  m.def("canonical_texts", &canonical_texts, "text"_a, Release(),
        "The canonical DSL text of each operation of a spec or workload.");
  m.def("explain", &explain_json, "text"_a, "arch"_a = "sm_80", "db_path"_a = "", Release(),
        "`tcjit explain --json`: a JSON array, one object per operation.");
  m.def("resolve", &resolve_json, "text"_a, "db_path"_a = "", "arch"_a = "sm_80",
        "backend"_a = "llvm", Release(), "`tcjit resolve --json`: a JSON array.");
  m.def("tune", &tune_json, "text"_a, "db_path"_a = "", "budget"_a = "24", "device"_a = "auto",
        "arch"_a = "auto", "strategy"_a = "model-topk", "backend"_a = "llvm", "retune"_a = false,
        "jobs"_a = 0, "seed"_a = 1, "on_event"_a.none() = nb::none(),
        "`tcjit tune --json`: a JSON array, one object per problem.");
  m.def("db_ls", &db_ls_json, "db_path"_a = "", Release(), "`tcjit db ls --json`.");
  m.def("db_show", &db_show_json, "db_path"_a, "key"_a, "arch"_a = "", Release(),
        "`tcjit db show KEY --json`.");
  m.def("db_export", &db_export_lines, "db_path"_a = "", Release(),
        "`tcjit db export`: JSON Lines, one record a line.");
  m.def("default_db_path", &default_db_path, "The database a db_path of \"\" opens.");
}

} // namespace tcjit::python
