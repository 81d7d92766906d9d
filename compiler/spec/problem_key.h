// The canonical problem key: what the kernel cache is indexed by.
//
//   key text = canonical spec text (compiler/spec/printer, every default explicit, `math=auto`
//              resolved) + " align=" + per-operand alignment + " arch=" + target arch
//              (act=custom: `act=custom:#<digest>`, custom_activation_digest of the file's text,
//              in place of its path: the text decides, not where it was read from)
//   key hash = FNV-1a 64 (support/fnv1a.h) of the key text's UTF-8 bytes, printed as 16 lower-case
//   hex digits
//
// Both are stable across runs, machines and compilers (no std::hash, no pointer or locale
// dependence); tests/spec/problem_key_test.cpp pins golden values. The database stores the full
// text; the hash is a short handle for people and logs. Workload names and weights are not part
// of the key.
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tcjit {

struct ProblemKey {
  std::string text;
  uint64_t hash = 0;
  std::string hash_hex() const; // 16 hex digits
};

// 16 hex digits of support::fnv1a64 of a custom activation's text: it names the kernel
// (kernel_plan.h) and keys the cache, so that an edited file never reuses an old kernel or tuning
// result.
std::string custom_activation_digest(const CustomActivation &custom);

// `tf32_override_off` resolves `math=auto` (pass tf32_disabled_by_environment() in tools).
// The arch must be a known one (find_arch); the spec must be valid.
ProblemKey make_problem_key(const OpSpec &, std::string_view arch, bool tf32_override_off);

// The spec with `math=auto` replaced by what it means now.
OpSpec with_resolved_math(const OpSpec &, bool tf32_override_off);

} // namespace tcjit
