#include "kernels_db/where_expr.h"

#include "kernels_db/error.h"

#include <cctype>
#include <charconv>

namespace tcjit::kernels_db {
namespace {

constexpr size_t kMaxFieldLength = 32;

class WhereParser {
public:
  explicit WhereParser(std::string_view text) : text_(text) {}

  WhereExpr parse() {
    WhereExpr expr;
    skip_blanks();
    if (at_end())
      return expr;
    expr.terms.push_back(comparison());
    for (;;) {
      skip_blanks();
      if (at_end())
        return expr;
      const size_t start = position_;
      if (!is_identifier_start(text_[position_]) || !is_and(identifier()))
        fail(start, "expected 'and' or the end of the expression");
      if (!at_end() && !is_blank(text_[position_]))
        fail(position_, "expected a blank after 'and'");
      skip_blanks();
      expr.terms.push_back(comparison());
    }
  }

private:
  static bool is_blank(char c) { return c == ' ' || c == '\t'; }
  static bool is_identifier_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
  }
  static bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  }

  static bool is_and(std::string_view word) {
    return word.size() == 3 && std::tolower(static_cast<unsigned char>(word[0])) == 'a' &&
           std::tolower(static_cast<unsigned char>(word[1])) == 'n' &&
           std::tolower(static_cast<unsigned char>(word[2])) == 'd';
  }

  bool at_end() const { return position_ >= text_.size(); }
  void skip_blanks() {
    while (!at_end() && is_blank(text_[position_]))
      ++position_;
  }

  [[noreturn]] void fail(size_t column, const std::string &message) const {
    const std::string shown =
        text_.size() > 200 ? std::string(text_.substr(0, 200)) + "..." : std::string(text_);
    throw DbError(DbErrorKind::invalid_argument,
                  "invalid --where expression: " + message + " at column " +
                      std::to_string(column + 1) + " in '" + shown + "'",
                  "--where",
                  "write comparisons of a shape field with an integer joined by 'and', e.g. "
                  "'m>=1024 and k<=4096' (operators < <= > >= = == !=; no quotes, "
                  "parentheses, 'or' or SQL)");
  }

  std::string_view identifier() {
    const size_t start = position_;
    if (at_end() || !is_identifier_start(text_[position_]))
      fail(start, "expected a field name");
    while (!at_end() && is_identifier_char(text_[position_]))
      ++position_;
    return text_.substr(start, position_ - start);
  }

  WhereTerm comparison() {
    WhereTerm term;
    const size_t field_start = position_;
    term.field = std::string(identifier());
    if (term.field.size() > kMaxFieldLength)
      fail(field_start, "field name longer than 32 characters");
    if (is_and(term.field))
      fail(field_start, "expected a field name, found 'and'");
    skip_blanks();
    term.comparison = comparison_operator();
    skip_blanks();
    term.value = integer();
    return term;
  }

  Comparison comparison_operator() {
    const size_t start = position_;
    auto next = [&](char c) {
      if (!at_end() && text_[position_] == c) {
        ++position_;
        return true;
      }
      return false;
    };
    if (next('<'))
      return next('=') ? Comparison::less_equal : Comparison::less;
    if (next('>'))
      return next('=') ? Comparison::greater_equal : Comparison::greater;
    if (next('=')) {
      next('=');
      return Comparison::equal;
    }
    if (next('!') && next('='))
      return Comparison::not_equal;
    fail(start, "expected a comparison operator (< <= > >= = == !=)");
  }

  int64_t integer() {
    const size_t start = position_;
    size_t end = position_;
    if (end < text_.size() && text_[end] == '-')
      ++end;
    const size_t digits = end;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end])) != 0)
      ++end;
    if (end == digits)
      fail(start, "expected an integer");
    if (end < text_.size() && !is_blank(text_[end]))
      fail(end, "unexpected character after the integer");
    int64_t value = 0;
    const auto [last, ec] = std::from_chars(text_.data() + start, text_.data() + end, value);
    if (ec != std::errc() || last != text_.data() + end)
      fail(start, "integer out of range");
    position_ = end;
    return value;
  }

  std::string_view text_;
  size_t position_ = 0;
};

} // namespace

WhereExpr parse_where(std::string_view text) {
  return WhereParser(text).parse();
}

std::string_view sql_operator(Comparison comparison) {
  switch (comparison) {
  case Comparison::less: return "<";
  case Comparison::less_equal: return "<=";
  case Comparison::greater: return ">";
  case Comparison::greater_equal: return ">=";
  case Comparison::equal: return "=";
  case Comparison::not_equal: return "<>";
  }
  return "=";
}

} // namespace tcjit::kernels_db
