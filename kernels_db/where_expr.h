// The `--where` filter of `tcjit db ls`: a tiny, safe expression language over the integer shape
// fields of a problem.
//
//   expression := comparison ( "and" comparison )*     ("and" in any case)
//   comparison := FIELD OP INTEGER
//   FIELD      := [A-Za-z_][A-Za-z0-9_]*  (at most 32 characters; e.g. m, n, k, batch, c)
//   OP         := "<" | "<=" | ">" | ">=" | "=" | "==" | "!="
//   INTEGER    := -?[0-9]+ (fits int64)
//
// User text never reaches SQL: the parse gives comparisons whose field path and value are bound
// as statement parameters, and whose operator comes from a fixed list.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

enum class Comparison { less, less_equal, greater, greater_equal, equal, not_equal };

struct WhereTerm {
  std::string field;
  Comparison comparison = Comparison::equal;
  int64_t value = 0;
};

// Terms joined by `and`; empty for an empty (all-blank) expression.
struct WhereExpr {
  std::vector<WhereTerm> terms;
};

// Throws DbError(invalid_argument) that points at the offending column and shows the grammar.
WhereExpr parse_where(std::string_view text);

// The SQL operator of a comparison (from a fixed list, never user text).
std::string_view sql_operator(Comparison comparison);

} // namespace tcjit::kernels_db
