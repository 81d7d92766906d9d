#include "tuner/measure_replay.h"

#include "engine/kernel_records.h"
#include "kernels_db/canonical_json.h"
#include "kernels_db/error.h"
#include "kernels_db/jsonl_io.h"
#include "kernels_db/record_json.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tcjit::tuner {

namespace {

namespace kdb = kernels_db;
using nlohmann::json;

constexpr const char *kFormatHint =
    "the file must be JSON Lines as written by `tcjit db export` (a header line, then one "
    "{\"type\":...} object a line)";

// (problem key text, canonical config JSON, arch)
using ReplayKey = std::tuple<std::string, std::string, std::string>;

// Which of a key's results answers: the ok result with the smallest median time; else a failed
// or illegal one (the latest); else an ok result without timing (a verification, not a
// measurement).
bool better(const kdb::ResultRecord &candidate, const kdb::ResultRecord &held) {
  const auto rank = [](const kdb::ResultRecord &r) {
    if (r.status == kdb::ResultStatus::ok)
      return r.timing ? 0 : 2;
    return 1;
  };
  if (rank(candidate) != rank(held))
    return rank(candidate) < rank(held);
  if (rank(candidate) == 0)
    return candidate.timing->median_us < held.timing->median_us;
  return candidate.measured_ms > held.measured_ms;
}

class ReplayMeasurer : public Measurer {
public:
  explicit ReplayMeasurer(std::filesystem::path file) : file_(std::move(file)) { load(); }

  std::string name() const override { return "replay"; }
  bool needs_build() const override { return false; }

  Measurement measure(const TuneTask &task, const codegen::TileConfig &config,
                      const BuiltCandidate *) override {
    Measurement m;
    const std::string config_text = kdb::canonical_json(engine::config_json(config), "config");
    const auto found = results_.find({task.key.text, config_text, task.arch});
    if (found == results_.end()) {
      m.status = kdb::ResultStatus::failed;
      m.message = "not in the replay data (" + file_.string() + ")";
      return m;
    }
    const kdb::ResultRecord &r = found->second;
    m.provenance = r.provenance;
    if (r.status == kdb::ResultStatus::ok && !r.timing) {
      m.status = kdb::ResultStatus::failed;
      m.message = "the replay data (" + file_.string() +
                  ") has a result without timing for this config (provenance " +
                  std::string(kdb::to_string(r.provenance.kind)) + "): not a measurement";
      return m;
    }
    m.status = r.status;
    m.timing = r.timing;
    m.tflops = r.tflops;
    if (r.status == kdb::ResultStatus::ok)
      m.message = "replayed from " + file_.string() + (r.message.empty() ? "" : ": " + r.message);
    else
      m.message = r.message;
    return m;
  }

private:
  [[noreturn]] void fail(const std::string &where, const std::string &what,
                         const std::string &how_to_fix) const {
    throw std::runtime_error("replay file " + file_.string() + where + ": " + what +
                             ". How to fix: " + how_to_fix);
  }

  void load() {
    std::ifstream in(file_);
    if (!in)
      fail("", "cannot be opened for reading",
           "check the path and its permissions; write one with `tcjit db export -o FILE`");
    kdb::JsonlRead read;
    try {
      read = kdb::read_jsonl(in, " line ", [&](const std::string &where, const std::string &line) {
        read_record(where, line);
      });
    } catch (const kdb::DbError &error) { // the header's (a record's are named in read_record)
      fail(error.where(), error.problem(), error.how_to_fix());
    }
    if (in.bad())
      fail("", "reading failed after line " + std::to_string(read.lines),
           "check that the file is readable");
    if (!read.header_seen)
      fail("", "is empty (no header line)", kFormatHint);
  }

  // One line after the header: results are kept, problems, binaries, dispatch tables and
  // calibrations skipped.
  void read_record(const std::string &where, const std::string &line) {
    try {
      const json object = kdb::parse_jsonl_record(line);
      const std::string type = object["type"].get<std::string>();
      if (type == kdb::kJsonlHeaderType)
        kdb::check_jsonl_header(line, where); // concatenated exports
      else if (type == "result")
        add(kdb::result_from_json(object));
      else if (type != "problem" && type != "binary" && type != "dispatch" && type != "calibration")
        fail(where, "unknown record type '" + type + "'",
             "use problem, binary, dispatch, calibration or result");
    } catch (const json::exception &error) {
      fail(where, std::string("not JSON: ") + error.what(), kFormatHint);
    } catch (const kdb::DbError &error) {
      fail(where, error.problem(), error.how_to_fix());
    }
  }

  void add(kdb::ResultRecord record) {
    ReplayKey key{record.problem_key, record.config_json, record.arch};
    auto [it, inserted] = results_.try_emplace(std::move(key), record);
    if (!inserted && better(record, it->second))
      it->second = std::move(record);
  }

  std::filesystem::path file_;
  std::map<ReplayKey, kdb::ResultRecord> results_;
};

} // namespace

std::unique_ptr<Measurer> make_replay_measurer(const std::filesystem::path &jsonl) {
  return std::make_unique<ReplayMeasurer>(jsonl);
}

} // namespace tcjit::tuner
