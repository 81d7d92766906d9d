#include "compiler/spec/problem_key.h"

#include "compiler/spec/alignment.h"
#include "compiler/spec/printer.h"
#include "support/fnv1a.h"
#include "support/hex16.h"

namespace tcjit {

std::string ProblemKey::hash_hex() const {
  return support::hex16(hash);
}

std::string custom_activation_digest(const CustomActivation &custom) {
  return support::hex16(support::fnv1a64(custom.source));
}

OpSpec with_resolved_math(const OpSpec &spec, bool tf32_override_off) {
  OpSpec resolved = spec;
  resolved.math = resolve_math(spec.math, tf32_override_off);
  return resolved;
}

ProblemKey make_problem_key(const OpSpec &spec, std::string_view arch, bool tf32_override_off) {
  OpSpec resolved = with_resolved_math(spec, tf32_override_off);
  // act=custom: the text decides, not where it was read from ('#' cannot start a DSL path).
  if (resolved.epilogue.act == Activation::custom)
    resolved.epilogue.custom.path = "#" + custom_activation_digest(resolved.epilogue.custom);
  ProblemKey key;
  key.text = print_spec(resolved) + " align=" + alignment_signature(analyze_alignment(resolved)) +
             " arch=" + std::string(arch);
  key.hash = support::fnv1a64(key.text);
  return key;
}

} // namespace tcjit
