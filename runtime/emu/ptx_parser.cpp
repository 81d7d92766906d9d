#include "runtime/emu/ptx_parser.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/emu/ptx_error.h"
#include "runtime/emu/ptx_header.h"
#include "runtime/emu/ptx_lexer.h"

namespace tcjit::emu {

namespace {

bool is_type_name(const std::string &w) {
  static const char *const kTypes[] = {
      ".b8",     ".b16",  ".b32",  ".b64",  ".b128", ".u8",     ".u16",   ".u32", ".u64",
      ".s8",     ".s16",  ".s32",  ".s64",  ".f16",  ".f16x2",  ".f32",   ".f64", ".bf16",
      ".bf16x2", ".tf32", ".pred", ".e4m3", ".e5m2", ".e4m3x2", ".e5m2x2"};
  for (const char *t : kTypes) {
    if (w == t)
      return true;
  }
  return false;
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class Parser {
public:
  Parser(std::vector<Token> tokens, std::string_view source)
      : tokens_(std::move(tokens)), source_(source) {}

  AstModule parse_module() {
    AstModule module;
    module.source_name = std::string(source_);
    parse_header(module);
    while (!at_end()) {
      const Token &t = peek();
      if (t.kind != TokenKind::Word) {
        fail(t.line, "expected a directive at module scope, found '" + t.text + "'");
      }
      if (t.text == ".version" || t.text == ".target" || t.text == ".address_size")
        fail(t.line, "Parsing error near '" + t.text + "': syntax error: " + t.text +
                         misplaced_header_advice(t.text));
      if (t.text == ".file" || t.text == ".loc") {
        skip_line(t.line);
        continue;
      }
      if (t.text == ".section") {
        next();
        has_debug_section_ |= peek().text.rfind(".debug_", 0) == 0;
        skip_section();
        continue;
      }
      if (t.text == ".pragma") {
        next();
        while (!accept_punct(";"))
          next_or_fail();
        continue;
      }
      parse_module_declaration(module);
    }
    if (debug_target_line_ != 0 && !has_debug_section_)
      fail(debug_target_line_,
           "Debug information not found in presence of .target debug: the module has no "
           ".section .debug_...; remove 'debug' from the .target or keep the debug sections");
    return module;
  }

private:
  std::vector<Token> tokens_;
  std::string_view source_;
  size_t pos_ = 0;
  int debug_target_line_ = 0; // the .target that names `debug` (ptxas then wants debug sections)
  bool has_debug_section_ = false;

  [[noreturn]] void fail(int line, const std::string &what) {
    throw_load_error(source_, line, what);
  }
  bool at_end() const { return tokens_[pos_].kind == TokenKind::End; }
  const Token &peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token &next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  const Token &next_or_fail() {
    if (at_end())
      fail(peek().line, "unexpected end of file");
    return next();
  }
  bool is_punct(const char *p, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Punct && peek(ahead).text == p;
  }
  bool accept_punct(const char *p) {
    if (is_punct(p)) {
      next();
      return true;
    }
    return false;
  }
  void expect_punct(const char *p) {
    if (!accept_punct(p))
      fail(peek().line, std::string("expected '") + p + "', found '" + describe(peek()) + "'");
  }
  static std::string describe(const Token &t) {
    return t.kind == TokenKind::End ? std::string("end of file") : t.text;
  }
  const Token &expect_word(const char *what) {
    if (peek().kind != TokenKind::Word)
      fail(peek().line, std::string("expected ") + what + ", found '" + describe(peek()) + "'");
    return next();
  }
  bool accept_word(const char *w) {
    if (peek().kind == TokenKind::Word && peek().text == w) {
      next();
      return true;
    }
    return false;
  }
  void skip_line(int line) {
    while (!at_end() && peek().line == line)
      next();
  }
  void skip_section() {
    while (!at_end() && !is_punct("{"))
      next();
    int depth = 0;
    do {
      if (is_punct("{"))
        ++depth;
      if (is_punct("}"))
        --depth;
      next_or_fail();
    } while (depth > 0);
  }

  bool is_word(const char *w) const { return peek().kind == TokenKind::Word && peek().text == w; }

  static std::string misplaced_header_advice(const std::string &directive) {
    if (directive == ".version")
      return " may appear once, as the first directive of the file; remove this one";
    if (directive == ".target")
      return " directives stand right after .version, before .address_size and any "
             "declaration; move this one there or remove it";
    return " may appear once, right after the .target directives; move this one there or "
           "remove it";
  }

  static bool is_version_syntax(const std::string &v) {
    const size_t dot = v.find('.');
    auto digits = [](std::string_view s) {
      return !s.empty() &&
             std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    return dot != std::string::npos && digits(std::string_view(v).substr(0, dot)) &&
           digits(std::string_view(v).substr(dot + 1));
  }

  // The header, as ptxas takes it: `.version MAJOR.MINOR` first, then one or more `.target`
  // directives, then at most one `.address_size`. The values are judged by check_ptx_header().
  void parse_header(AstModule &module) {
    PtxHeader h;
    const Token &v = peek();
    if (!is_word(".version"))
      fail(v.line, "Missing .version directive at start of file: found '" + describe(v) +
                       "'; a PTX module begins with '.version MAJOR.MINOR', e.g. '.version 8.0'");
    next();
    if (peek().kind != TokenKind::Word || !is_version_syntax(peek().text))
      fail(v.line, "Missing .version directive at start of file: '.version " + describe(peek()) +
                       "' is not MAJOR.MINOR; write e.g. '.version 8.0'");
    h.version = next().text;
    h.version_line = v.line;
    if (!is_word(".target"))
      fail(peek().line, "Missing .target directive at start of file: found '" + describe(peek()) +
                            "' after '.version " + h.version +
                            "'; name the architecture next, e.g. '.target sm_80'");
    while (is_word(".target")) {
      const int line = next().line;
      bool first = true;
      do {
        const Token &t = peek();
        if (t.kind != TokenKind::Word || t.text[0] == '.')
          fail(line, "Parsing error near '" + describe(t) +
                         "': syntax error: '.target' takes a comma-separated list of names, "
                         "e.g. '.target sm_80' or '.target sm_80, texmode_unified'");
        if (t.text == "debug" && !first)
          debug_target_line_ = t.line;
        h.targets.push_back({next().text, t.line, first});
        first = false;
      } while (accept_punct(","));
      if (peek().kind == TokenKind::Word && peek().text[0] != '.')
        fail(peek().line, "Parsing error near '" + peek().text +
                              "': syntax error: separate the names of a .target with ','");
    }
    if (is_word(".address_size")) {
      const int line = next().line;
      module.address_size = static_cast<uint32_t>(parse_uint(expect_word("an address size")));
      if (module.address_size == 32)
        fail(line, "32-Bit compilation is no longer supported: .address_size 32; write "
                   ".address_size 64 (or leave the directive out)");
      if (module.address_size != 64)
        fail(line, "Illegal value for .address_size directive (must be 32 or 64): " +
                       std::to_string(module.address_size) + "; write .address_size 64");
    }
    module.version = h.version;
    module.target = check_ptx_header(h, source_);
  }

  uint64_t parse_uint(const Token &t) {
    AstOperand op = parse_number(t.text, t.line);
    if (op.kind != AstOperand::Kind::Integer)
      fail(t.line, "expected an integer, found '" + t.text + "'");
    return op.int_value;
  }

  AstOperand parse_number(const std::string &text, int line) {
    AstOperand op;
    const char *s = text.c_str();
    size_t len = text.size();
    if (len >= 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) {
      if (len != 10 || !std::all_of(s + 2, s + len, is_hex))
        fail(line, "malformed f32 literal '" + text + "' (expected 0f and 8 hex digits)");
      op.kind = AstOperand::Kind::Float;
      op.float_is_f32_bits = true;
      op.float_bits = std::strtoull(s + 2, nullptr, 16);
      return op;
    }
    if (len >= 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) {
      if (len != 18 || !std::all_of(s + 2, s + len, is_hex))
        fail(line, "malformed f64 literal '" + text + "' (expected 0d and 16 hex digits)");
      op.kind = AstOperand::Kind::Float;
      op.float_is_f64_bits = true;
      op.float_bits = std::strtoull(s + 2, nullptr, 16);
      return op;
    }
    std::string body = text;
    if (!body.empty() && (body.back() == 'U' || body.back() == 'u'))
      body.pop_back();
    std::string_view digits = body;
    int base = 10;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
      base = 16;
      digits.remove_prefix(2);
    } else if (body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) {
      base = 2;
      digits.remove_prefix(2);
    } else if (body.find_first_of(".eE") != std::string::npos) {
      char *end = nullptr;
      op.kind = AstOperand::Kind::Float;
      op.float_value = std::strtod(body.c_str(), &end);
      if (*end != '\0')
        fail(line, "malformed number '" + text + "'");
      return op;
    } else if (body.size() > 1 && body[0] == '0') {
      base = 8;
      digits.remove_prefix(1);
    }
    op.kind = AstOperand::Kind::Integer;
    op.int_value = parse_integer_digits(digits, base, text, line);
    return op;
  }

  // The value of `digits` in `base`, as ptxas reads an integer literal: modulo 2^64, except that
  // a digit that follows a prefix of 2^63 or more is "Constant overflow" (so 2^64 reads as 0 and
  // 99999999999999999999 is refused, as with ptxas).
  uint64_t parse_integer_digits(std::string_view digits, int base, const std::string &text,
                                int line) {
    if (digits.empty())
      fail(line, "malformed number '" + text + "'");
    uint64_t v = 0;
    for (char c : digits) {
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : base;
      if (d >= base)
        fail(line, "malformed number '" + text + "'");
      if (v >> 63)
        fail(line, "Constant overflow: the integer '" + text +
                       "' does not fit in 64 bits; write a value below 2^64");
      v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    return v;
  }

  static bool starts_number(const std::string &w) {
    return !w.empty() && w[0] >= '0' && w[0] <= '9';
  }

  AstOperand parse_signed_number() {
    bool negative = accept_punct("-");
    const Token &t = expect_word("a number");
    if (!starts_number(t.text))
      fail(t.line, "expected a number, found '" + t.text + "'");
    AstOperand op = parse_number(t.text, t.line);
    if (negative) {
      if (op.kind == AstOperand::Kind::Integer) {
        op.int_value = ~op.int_value + 1;
      } else if (op.float_is_f32_bits) {
        op.float_bits ^= 0x80000000u;
      } else if (op.float_is_f64_bits) {
        op.float_bits ^= 0x8000000000000000ull;
      } else {
        op.float_value = -op.float_value;
      }
    }
    return op;
  }

  // An address offset: signed integers joined by '+' or '-' ("4", "-8", "4 - -8", "+4"), summed
  // modulo 2^64.
  uint64_t parse_offset_sum() {
    uint64_t sum = 0;
    bool subtract = false;
    for (;;) {
      bool negative = subtract;
      for (;;) {
        if (accept_punct("-"))
          negative = !negative;
        else if (!accept_punct("+"))
          break;
      }
      const Token &t = peek();
      if (is_punct("("))
        fail(t.line, "parenthesised constant expressions in an address offset are not supported "
                     "by the emulator; write the offset as a sum of integers");
      if (t.kind != TokenKind::Word || !starts_number(t.text))
        fail(t.line, "Parsing error near '" + describe(t) +
                         "': syntax error: an address offset is an integer constant (e.g. "
                         "[%rd1+8] or [%rd1+-8]); add registers with add.u64 first");
      next();
      const AstOperand n = parse_number(t.text, t.line);
      if (n.kind != AstOperand::Kind::Integer)
        fail(t.line, "Integer constant expression expected: '" + t.text +
                         "' in an address offset; write an integer");
      sum += negative ? ~n.int_value + 1 : n.int_value;
      if (is_punct("-"))
        subtract = true;
      else if (is_punct("+"))
        subtract = false;
      else
        return sum;
      next();
    }
  }

  AstOperand parse_operand() {
    const Token &t = peek();
    AstOperand op;
    if (is_punct("[")) {
      next();
      op.kind = AstOperand::Kind::Address;
      // [name], [name+offset], [offset]; the offset a sum of signed integers ([%rd1+-8],
      // [%rd1+4-8]), as ptxas takes them; a '-' right after the name is a syntax error there
      if (peek().kind == TokenKind::Word && !starts_number(peek().text)) {
        op.name = next().text;
        if (is_punct("-")) {
          const std::string n = peek(1).kind == TokenKind::Word ? peek(1).text : "N";
          fail(t.line, "Parsing error near '-': syntax error: an address adds its offset with "
                       "'+'; write [" +
                           op.name + "+-" + n + "] for a negative offset");
        }
        if (accept_punct("+"))
          op.int_value = parse_offset_sum();
      } else {
        op.int_value = parse_offset_sum();
      }
      if (!is_punct("]"))
        fail(t.line, "Parsing error near '" + describe(peek()) +
                         "': syntax error: an address is [reg], [reg+imm], [var], [var+imm] or "
                         "[imm], with imm an integer constant; add registers with add.u64 first");
      next();
      return op;
    }
    if (is_punct("{") || is_punct("(")) {
      bool brace = is_punct("{");
      next();
      op.kind = brace ? AstOperand::Kind::Vector : AstOperand::Kind::List;
      const char *close = brace ? "}" : ")";
      if (!accept_punct(close)) {
        do {
          op.elements.push_back(parse_operand());
        } while (accept_punct(","));
        expect_punct(close);
      }
      return op;
    }
    if (is_punct("!")) {
      next();
      op = parse_operand();
      if (op.kind != AstOperand::Kind::Name)
        fail(t.line, "'!' applies to a predicate register only");
      op.negated = true;
      return op;
    }
    if (is_punct("-")) {
      return parse_signed_number();
    }
    if (t.kind != TokenKind::Word)
      fail(t.line, "expected an operand, found '" + describe(t) + "'");
    if (starts_number(t.text)) {
      next();
      return parse_number(t.text, t.line);
    }
    next();
    if (t.text == "_") {
      op.kind = AstOperand::Kind::Sink;
    } else {
      op.kind = AstOperand::Kind::Name;
      op.name = t.text;
      if (accept_punct("+")) // symbol+offset (mov %rd, sym+8)
        op.int_value = parse_offset_sum();
    }
    if (is_punct("|")) {
      next();
      AstOperand pair;
      pair.kind = AstOperand::Kind::Pair;
      pair.elements.push_back(op);
      pair.elements.push_back(parse_operand());
      return pair;
    }
    return op;
  }

  void parse_initializer(std::vector<AstOperand> &out) {
    if (accept_punct("{")) {
      if (!accept_punct("}")) {
        do {
          parse_initializer(out);
        } while (accept_punct(","));
        expect_punct("}");
      }
      return;
    }
    if (peek().kind == TokenKind::Word && !starts_number(peek().text))
      fail(peek().line, "initializers that take an address ('" + peek().text +
                            "') are not supported by the emulator");
    out.push_back(parse_signed_number());
  }

  // Parses "[.align N] [.v2|.v4] [.ptr ...] .type name[<N>|[N]] [= init]" after the state space.
  // For .reg, a comma-separated list of names may follow; each becomes one AstVariable.
  std::vector<AstVariable> parse_variable(AstSpace space, int line, bool is_extern,
                                          bool allow_init) {
    AstVariable v;
    v.line = line;
    v.space = space;
    v.is_extern = is_extern;
    while (peek().kind == TokenKind::Word && peek().text[0] == '.') {
      std::string w = next().text;
      if (w == ".align") {
        v.align = static_cast<uint32_t>(parse_uint(expect_word("an alignment")));
      } else if (w == ".v2" || w == ".v4" || w == ".v8") {
        v.vector = static_cast<uint32_t>(std::atoi(w.c_str() + 2));
      } else if (w == ".ptr" || w == ".global" || w == ".shared" || w == ".const" ||
                 w == ".local") {
        // pointer attributes of kernel parameters: informational only
      } else if (is_type_name(w)) {
        v.type = w;
      } else {
        fail(line, "unsupported variable attribute '" + w + "'");
      }
    }
    if (v.type.empty())
      fail(line, "variable declaration without a type");
    std::vector<AstVariable> out;
    for (;;) {
      AstVariable item = v;
      item.name = expect_word("a variable name").text;
      if (accept_punct("<")) {
        item.has_range = true;
        item.range = parse_uint(expect_word("a register count"));
        expect_punct(">");
      }
      while (accept_punct("[")) {
        uint64_t count = 0;
        if (!is_punct("]"))
          count = parse_uint(expect_word("an array size"));
        expect_punct("]");
        // saturates: the decoder rejects sizes beyond the arch's limits with the declared size
        uint64_t product = count;
        if (item.is_array && __builtin_mul_overflow(item.array_count, count, &product))
          product = UINT64_MAX;
        item.array_count = product;
        item.is_array = true;
      }
      if (accept_punct("=")) {
        if (!allow_init)
          fail(line, "this variable cannot have an initializer");
        parse_initializer(item.init);
      }
      out.push_back(std::move(item));
      if (space != AstSpace::Reg || !accept_punct(","))
        break;
    }
    return out;
  }

  void parse_param_list(std::vector<AstVariable> &params) {
    expect_punct("(");
    if (accept_punct(")"))
      return;
    do {
      const Token &t = expect_word("'.param'");
      if (t.text != ".param" && t.text != ".reg")
        fail(t.line, "expected '.param', found '" + t.text + "'");
      for (AstVariable &v : parse_variable(AstSpace::Param, t.line, false, false))
        params.push_back(std::move(v));
    } while (accept_punct(","));
    expect_punct(")");
  }

  void parse_module_declaration(AstModule &module) {
    int line = peek().line;
    bool is_extern = false;
    for (;;) {
      if (accept_word(".visible") || accept_word(".weak") || accept_word(".common"))
        continue;
      if (accept_word(".extern")) {
        is_extern = true;
        continue;
      }
      break;
    }
    const Token &t = expect_word("a declaration");
    if (t.text == ".entry" || t.text == ".func") {
      AstFunction f;
      f.line = t.line;
      f.is_entry = t.text == ".entry";
      if (!f.is_entry && is_punct("("))
        parse_param_list(f.returns);
      f.name = expect_word("a function name").text;
      if (is_punct("("))
        parse_param_list(f.params);
      // performance directives and attributes up to the body or ';'
      while (!is_punct("{") && !is_punct(";")) {
        const Token &d = next_or_fail();
        if (d.kind == TokenKind::Word && d.text == ".pragma") {
          while (!accept_punct(";"))
            next_or_fail();
        }
      }
      if (accept_punct(";")) {
        module.functions.push_back(std::move(f));
        return;
      }
      f.has_body = !is_extern;
      parse_body(f);
      module.functions.push_back(std::move(f));
      return;
    }
    AstSpace space;
    if (t.text == ".global") {
      space = AstSpace::Global;
    } else if (t.text == ".shared") {
      space = AstSpace::Shared;
    } else if (t.text == ".const") {
      space = AstSpace::Const;
    } else {
      fail(t.line, "unsupported directive '" + t.text + "' at module scope");
    }
    for (AstVariable &v : parse_variable(space, line, is_extern, true))
      module.globals.push_back(std::move(v));
    expect_punct(";");
  }

  void parse_body(AstFunction &f) {
    expect_punct("{");
    int depth = 1;
    while (depth > 0) {
      const Token &t = peek();
      if (t.kind == TokenKind::End)
        fail(t.line, "unexpected end of file inside function '" + f.name + "'");
      AstStatement st;
      st.line = t.line;
      if (is_punct("{")) {
        next();
        ++depth;
        st.kind = AstStatement::Kind::OpenScope;
        f.body.push_back(std::move(st));
        continue;
      }
      if (is_punct("}")) {
        next();
        --depth;
        if (depth > 0) {
          st.kind = AstStatement::Kind::CloseScope;
          f.body.push_back(std::move(st));
        }
        continue;
      }
      if (accept_punct(";"))
        continue;
      if (t.kind == TokenKind::Word && t.text[0] == '.') {
        const std::string d = t.text;
        if (d == ".loc" || d == ".file") {
          skip_line(t.line);
          continue;
        }
        next();
        if (d == ".pragma") {
          while (!accept_punct(";"))
            next_or_fail();
          continue;
        }
        AstSpace space;
        if (d == ".reg") {
          space = AstSpace::Reg;
        } else if (d == ".local") {
          space = AstSpace::Local;
        } else if (d == ".shared") {
          space = AstSpace::Shared;
        } else if (d == ".param") {
          space = AstSpace::Param;
        } else if (d == ".global") {
          space = AstSpace::Global;
        } else if (d == ".const") {
          space = AstSpace::Const;
        } else {
          fail(t.line, "unsupported directive '" + d + "' in function '" + f.name + "'");
        }
        for (AstVariable &v : parse_variable(space, t.line, false, space != AstSpace::Reg)) {
          AstStatement vs;
          vs.kind = AstStatement::Kind::Variable;
          vs.line = t.line;
          vs.variable = std::move(v);
          f.body.push_back(std::move(vs));
        }
        expect_punct(";");
        continue;
      }
      if (t.kind == TokenKind::Word && is_punct(":", 1)) {
        st.kind = AstStatement::Kind::Label;
        st.label = next().text;
        next();
        f.body.push_back(std::move(st));
        continue;
      }
      st.kind = AstStatement::Kind::Instruction;
      AstInstruction &in = st.instruction;
      in.line = t.line;
      if (accept_punct("@")) {
        in.guard_negated = accept_punct("!");
        in.guard = expect_word("a predicate register").text;
      }
      in.opcode = expect_word("an instruction").text;
      try {
        if (!is_punct(";")) {
          do {
            in.operands.push_back(parse_operand());
          } while (accept_punct(","));
        }
        expect_punct(";");
      } catch (const device::DeviceError &e) {
        // keep going: the decoder reports an unsupported opcode in preference to the syntax
        in.operand_error = e.what();
        while (!at_end() && !is_punct(";"))
          next();
        accept_punct(";");
      }
      f.body.push_back(std::move(st));
    }
  }
};

} // namespace

AstModule parse_ptx(std::string_view text, std::string_view source_name) {
  Parser parser(lex_ptx(text, source_name), source_name);
  return parser.parse_module();
}

} // namespace tcjit::emu
