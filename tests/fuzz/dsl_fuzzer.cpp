// Fuzz target: the DSL (compiler/dsl). Any bytes are parsed as a workload and as one spec; the
// parser must not crash or throw, every diagnostic must point inside the text, and every entry it
// accepts must validate, print canonically, parse back to the same entry and print the same
// again. Accepted specs also go through the problem key and `tcjit explain`'s analysis.
#include "fuzz_check.h"

#include "compiler/dsl/parser.h"
#include "compiler/spec/explain.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/validate.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using tcjit::fuzz::require;

void check_diagnostics(const tcjit::ParseResult &result, std::string_view text) {
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const tcjit::Diagnostic &d : result.errors) {
    // Rendered only when an invariant fails (and the first one always, to fuzz render()): a
    // line can be 4 KiB and a text can hold 100 diagnostics.
    if (d.message.empty() || d.line < 1 || d.line > lines || d.col < 1 || d.length < 1)
      require(false, "a diagnostic without a message, or outside the text", d.render());
  }
  if (!result.errors.empty())
    require(!result.errors.front().render().empty(), "an empty rendered diagnostic");
  require(result.errors.size() <= tcjit::max_errors + 1, "more diagnostics than max_errors");
}

void check_round_trip(const tcjit::WorkloadEntry &entry) {
  require(tcjit::validate_spec(entry.spec).empty(), "the parser accepted an invalid spec",
          tcjit::print_entry(entry));
  const std::string printed = tcjit::print_entry(entry);
  const tcjit::ParseResult again = tcjit::parse_workload(printed, "printed");
  std::string errors;
  for (const tcjit::Diagnostic &d : again.errors)
    errors += d.render();
  require(again.ok(), "the canonical text of an accepted entry does not parse",
          printed + "\n" + errors);
  require(again.entries.size() == 1, "the canonical text parsed into other than one entry",
          printed);
  const tcjit::WorkloadEntry &back = again.entries[0];
  require(back.name == entry.name && back.spec == entry.spec && back.weight == entry.weight,
          "parse(print(entry)) differs from the entry", printed);
  require(tcjit::print_entry(again.entries[0]) == printed, "printing is not idempotent", printed);

  for (const bool tf32_off : {false, true}) {
    const tcjit::ProblemKey key = tcjit::make_problem_key(entry.spec, "sm_80", tf32_off);
    const tcjit::Explanation explanation = tcjit::explain_spec(entry.spec, "sm_90", tf32_off);
    (void)key;
    require(!tcjit::render_explanation(explanation).empty(), "an empty explanation", printed);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);

  const tcjit::ParseResult workload = tcjit::parse_workload(text, "fuzz.tcjit");
  check_diagnostics(workload, text);
  for (const tcjit::WorkloadEntry &entry : workload.entries)
    check_round_trip(entry);

  const tcjit::ParseResult one = tcjit::parse_spec(text, "fuzz.tcjit");
  check_diagnostics(one, text);
  require(!one.ok() || one.entries.size() == 1, "parse_spec accepted other than one entry");
  for (const tcjit::WorkloadEntry &entry : one.entries)
    check_round_trip(entry);
  return 0;
}
