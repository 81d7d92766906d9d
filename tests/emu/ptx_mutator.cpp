#include "tests/emu/ptx_mutator.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

namespace tcjit::emu::test {

namespace {

// Instructions whose operand rules the checker models (call, bra and the like are left alone).
const std::set<std::string> kMutableOpcodes = {
    "mov",  "add",  "sub", "mul",  "mad", "div", "rem",  "min",  "max", "abs",     "neg",
    "shl",  "shr",  "and", "or",   "xor", "not", "setp", "selp", "cvt", "cvta",    "ld",
    "st",   "fma",  "rcp", "sqrt", "ex2", "bfe", "prmt", "popc", "clz", "brev",    "lop3",
    "shfl", "vote", "bar", "atom", "red", "bfi", "shf",  "mma",  "cp",  "ldmatrix"};

const std::vector<std::string> kRegTypes = {"b16",  "b32", "b64",  "u16",  "u32", "u64",
                                            "s16",  "s32", "s64",  "f16",  "f32", "f64",
                                            "pred", "b8",  "bf16", "f16x2"};
const std::vector<std::string> kInstrTypes = {"b8",  "b16", "b32", "b64",  "u8",   "u16",
                                              "u32", "u64", "s8",  "s16",  "s32",  "s64",
                                              "f16", "f32", "f64", "pred", "f16x2"};
const std::vector<std::string> kSpaces = {"global", "shared", "local", "const", "param", ""};
// replacements of a source register: constants of each kind, and a special register
const std::vector<std::string> kImmediates = {
    "1", "-7", "0f3F800000", "1.5", "0d3FF0000000000000", "0x10", "%tid.x"};
const std::vector<std::string> kModifiers = {"rn",  "rz",  "lo",  "hi",  "wide", "approx",
                                             "ftz", "sat", "rni", "rzi", "uni",  "cc"};

std::string trim(const std::string &s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos)
    return "";
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool is_type_token(const std::string &t) {
  return std::find(kInstrTypes.begin(), kInstrTypes.end(), t) != kInstrTypes.end() || t == "bf16" ||
         t == "bf16x2" || t == "tf32";
}

std::vector<std::string> split_opcode(const std::string &op) {
  std::vector<std::string> parts;
  std::stringstream ss(op);
  std::string p;
  while (std::getline(ss, p, '.'))
    parts.push_back(p);
  return parts;
}

std::string join_opcode(const std::vector<std::string> &parts) {
  std::string s;
  for (const std::string &p : parts) {
    if (p.empty())
      continue;
    s += (s.empty() ? "" : ".") + p;
  }
  return s;
}

template <typename T> const T &pick(std::mt19937_64 &rng, const std::vector<T> &v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// The register names in an operand: "%r1", "[%rd2+4]", "{%f1, %f2}", "%p1|%p2".
std::vector<std::string> registers_in(const std::string &op) {
  static const std::regex kReg("%[A-Za-z_][A-Za-z0-9_]*(\\.[xyz])?");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(op.begin(), op.end(), kReg); it != std::sregex_iterator();
       ++it)
    out.push_back(it->str());
  return out;
}

} // namespace

std::vector<std::string> split_operands(const std::string &s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char ch : s) {
    if (ch == '[' || ch == '{' || ch == '(')
      ++depth;
    if (ch == ']' || ch == '}' || ch == ')')
      --depth;
    if (ch == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += ch;
  }
  if (!trim(cur).empty())
    out.push_back(trim(cur));
  return out;
}

const std::vector<std::string> &PtxMutator::operator_names() {
  static const std::vector<std::string> kNames = {
      "reg_type",      "swap_reg", "type_suffix", "vector_arity", "state_space", "imm_reg",
      "operand_count", "modifier", "guard",       "address",      "header",      "address_offset"};
  return kNames;
}

PtxMutator::PtxMutator(std::string seed_name, const std::string &text)
    : seed_(std::move(seed_name)) {
  std::stringstream ss(text);
  std::string l;
  // an instruction written over several lines (nvcc splits mma's operands) becomes one line
  bool continued = false;
  while (std::getline(ss, l)) {
    if (continued) {
      lines_.back() += " " + trim(l);
    } else {
      lines_.push_back(l);
      const std::string t = trim(l);
      continued = !t.empty() && (std::islower(static_cast<unsigned char>(t[0])) || t[0] == '@');
    }
    continued = continued && l.find(';') == std::string::npos && l.find("//") == std::string::npos;
  }
  static const std::regex kDecl(
      R"(^\s*\.reg\s+\.(\w+)\s+(%[A-Za-z_][A-Za-z0-9_]*)(<(\d+)>)?\s*;\s*$)");
  static const std::regex kInstr(
      R"(^(\s*)(@!?%[A-Za-z_][A-Za-z0-9_]*\s+)?([a-z][a-z0-9_.:]*)\s*(.*?)\s*;\s*(//.*)?$)");
  int function = 0;
  std::vector<Instr> all;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const std::string &line = lines_[i];
    if (line.find(".entry") != std::string::npos || line.find(".func") != std::string::npos)
      ++function;
    const std::string first_word = trim(line).substr(0, trim(line).find_first_of(" \t"));
    if (first_word == ".version" && version_line_ == std::string::npos)
      version_line_ = i;
    else if (first_word == ".target" && target_line_ == std::string::npos)
      target_line_ = i;
    else if (first_word == ".address_size" && address_size_line_ == std::string::npos)
      address_size_line_ = i;
    else if (first_declaration_ == std::string::npos &&
             (first_word == ".visible" || first_word == ".entry" || first_word == ".func" ||
              first_word == ".global" || first_word == ".shared" || first_word == ".const" ||
              first_word == ".extern" || first_word == ".weak"))
      first_declaration_ = i;
    std::smatch m;
    if (std::regex_match(line, m, kDecl)) {
      Decl d;
      d.line = i;
      d.type = m[1];
      d.prefix = m[2];
      d.ranged = m[3].matched;
      d.count = d.ranged ? std::stoull(m[4]) : 1;
      d.function = function;
      decls_.push_back(d);
      continue;
    }
    static const std::regex kVariable(
        R"(^\s*(\.extern\s+)?\.(param|shared|global|const|local)\s.*\s([A-Za-z_$][A-Za-z0-9_$]*)\s*(\[\d*\])?\s*(=.*)?[;,]?\s*$)");
    if (line.find(".entry") == std::string::npos && std::regex_match(line, m, kVariable))
      variables_.push_back(m[3]);
    if (trim(line).empty() || trim(line)[0] == '.' || trim(line)[0] == '/' ||
        trim(line)[0] == '$' || trim(line)[0] == '{' || trim(line)[0] == '}' ||
        trim(line)[0] == '(' || trim(line)[0] == ')')
      continue;
    if (!std::regex_match(line, m, kInstr))
      continue;
    Instr in;
    in.line = i;
    in.function = function;
    in.indent = m[1];
    in.guard = m[2];
    in.opcode = m[3];
    in.operands = split_operands(m[4]);
    all.push_back(in);
  }
  // a register family may change type only when every instruction using it is mutable
  for (const Instr &in : all) {
    const bool mutable_op = kMutableOpcodes.count(split_opcode(in.opcode)[0]) > 0;
    std::vector<std::string> regs;
    for (const std::string &o : in.operands) {
      for (const std::string &r : registers_in(o))
        regs.push_back(r);
    }
    if (!in.guard.empty())
      regs.push_back(trim(in.guard).substr(trim(in.guard)[1] == '!' ? 2 : 1));
    for (const std::string &r : regs) {
      for (Decl &d : decls_) {
        if (d.function == in.function && r.rfind(d.prefix, 0) == 0 &&
            (d.ranged ? r.size() > d.prefix.size() &&
                            std::all_of(r.begin() + d.prefix.size(), r.end(), ::isdigit)
                      : r == d.prefix))
          d.all_uses_mutable &= mutable_op && in.guard.find(r) == std::string::npos;
      }
    }
    if (mutable_op)
      instrs_.push_back(in);
    if (!in.guard.empty())
      guarded_.push_back(in);
  }
}

std::string PtxMutator::render(const Instr &in) const {
  std::string s = in.indent + in.guard + in.opcode;
  for (size_t i = 0; i < in.operands.size(); ++i)
    s += (i ? ", " : " ") + in.operands[i];
  return s + ";";
}

Mutant PtxMutator::make(const std::string &op, size_t line, const std::string &new_line) const {
  Mutant m;
  m.seed = seed_;
  m.operator_name = op;
  m.line = static_cast<int>(line + 1);
  m.before = lines_[line];
  m.after = new_line;
  for (size_t i = 0; i < lines_.size(); ++i)
    m.text += (i == line ? new_line : lines_[i]) + "\n";
  return m;
}

Mutant PtxMutator::make_edits(const std::string &op,
                              const std::vector<std::pair<size_t, std::string>> &edits,
                              const std::string &what) const {
  Mutant m;
  m.seed = seed_;
  m.operator_name = op;
  m.line = static_cast<int>(edits.front().first + 1);
  m.before = lines_[edits.front().first];
  m.after = what;
  for (size_t i = 0; i < lines_.size(); ++i) {
    auto e = std::find_if(edits.begin(), edits.end(), [&](const auto &x) { return x.first == i; });
    if (e == edits.end())
      m.text += lines_[i] + "\n";
    else if (!e->second.empty())
      m.text += e->second + "\n";
  }
  return m;
}

const PtxMutator::Decl *PtxMutator::decl_of(const std::string &reg, int function) const {
  for (const Decl &d : decls_) {
    if (d.function != function || reg.rfind(d.prefix, 0) != 0)
      continue;
    if (d.ranged ? reg.size() > d.prefix.size() &&
                       std::all_of(reg.begin() + d.prefix.size(), reg.end(), ::isdigit)
                 : reg == d.prefix)
      return &d;
  }
  return nullptr;
}

std::optional<std::string> PtxMutator::random_register(std::mt19937_64 &rng, int function,
                                                       const std::string &not_type) const {
  std::vector<const Decl *> c;
  for (const Decl &d : decls_) {
    if (d.function == function && d.type != not_type)
      c.push_back(&d);
  }
  if (c.empty())
    return std::nullopt;
  const Decl *d = pick(rng, c);
  if (!d->ranged)
    return d->prefix;
  return d->prefix + std::to_string(std::uniform_int_distribution<uint64_t>(0, d->count - 1)(rng));
}

std::optional<Mutant> PtxMutator::reg_type(std::mt19937_64 &rng) const {
  std::vector<const Decl *> c;
  for (const Decl &d : decls_) {
    if (d.all_uses_mutable)
      c.push_back(&d);
  }
  if (c.empty())
    return std::nullopt;
  const Decl *d = pick(rng, c);
  std::string t = pick(rng, kRegTypes);
  if (t == d->type)
    return std::nullopt;
  std::string line = lines_[d->line];
  size_t at = line.find("." + d->type);
  line.replace(at, d->type.size() + 1, "." + t);
  return make("reg_type", d->line, line);
}

std::optional<Mutant> PtxMutator::swap_reg(std::mt19937_64 &rng) const {
  if (instrs_.empty())
    return std::nullopt;
  Instr in = pick(rng, instrs_);
  std::vector<std::pair<size_t, std::string>> regs;
  for (size_t i = 0; i < in.operands.size(); ++i) {
    for (const std::string &r : registers_in(in.operands[i])) {
      if (r.find('.') == std::string::npos && decl_of(r, in.function))
        regs.push_back({i, r});
    }
  }
  if (regs.empty())
    return std::nullopt;
  auto [i, r] = pick(rng, regs);
  auto repl = random_register(rng, in.function, decl_of(r, in.function)->type);
  if (!repl)
    return std::nullopt;
  std::string &o = in.operands[i];
  o.replace(o.find(r), r.size(), *repl);
  return make("swap_reg", in.line, render(in));
}

std::optional<Mutant> PtxMutator::type_suffix(std::mt19937_64 &rng) const {
  if (instrs_.empty())
    return std::nullopt;
  Instr in = pick(rng, instrs_);
  auto parts = split_opcode(in.opcode);
  std::vector<size_t> at;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (is_type_token(parts[i]))
      at.push_back(i);
  }
  if (at.empty())
    return std::nullopt;
  const std::string t = pick(rng, kInstrTypes);
  size_t i = pick(rng, at);
  if (parts[i] == t)
    return std::nullopt;
  parts[i] = t;
  in.opcode = join_opcode(parts);
  return make("type_suffix", in.line, render(in));
}

std::optional<Mutant> PtxMutator::vector_arity(std::mt19937_64 &rng) const {
  std::vector<const Instr *> c;
  for (const Instr &in : instrs_) {
    const std::string base = split_opcode(in.opcode)[0];
    if (base == "ld" || base == "st" || base == "mov" || base == "mma" || base == "ldmatrix")
      c.push_back(&in);
  }
  if (c.empty())
    return std::nullopt;
  Instr in = *pick(rng, c);
  auto parts = split_opcode(in.opcode);
  const int what = std::uniform_int_distribution<int>(0, 2)(rng);
  if (what == 0) { // the opcode's .vN
    auto v = std::find_if(parts.begin(), parts.end(),
                          [](const std::string &p) { return p == "v2" || p == "v4"; });
    if (v != parts.end()) {
      const int to = std::uniform_int_distribution<int>(0, 1)(rng);
      *v = to == 0 ? (*v == "v2" ? "v4" : "v2") : "";
    } else {
      if (parts.size() < 2)
        return std::nullopt;
      parts.insert(parts.end() - 1, std::uniform_int_distribution<int>(0, 1)(rng) ? "v2" : "v4");
    }
    in.opcode = join_opcode(parts);
    return make("vector_arity", in.line, render(in));
  }
  // a {..} operand: drop or duplicate an element
  for (std::string &o : in.operands) {
    if (o.empty() || o[0] != '{')
      continue;
    auto elems = split_operands(o.substr(1, o.size() - 2));
    if (what == 1 && elems.size() > 1)
      elems.pop_back();
    else
      elems.push_back(elems.back());
    o = "{";
    for (size_t k = 0; k < elems.size(); ++k)
      o += (k ? ", " : "") + elems[k];
    o += "}";
    return make("vector_arity", in.line, render(in));
  }
  return std::nullopt;
}

std::optional<Mutant> PtxMutator::state_space(std::mt19937_64 &rng) const {
  std::vector<const Instr *> c;
  for (const Instr &in : instrs_) {
    const std::string base = split_opcode(in.opcode)[0];
    // not ldmatrix: without .shared it reads through a generic address, which ptxas takes and
    // the emulator does not support
    if (base == "ld" || base == "st" || base == "cvta" || base == "atom" || base == "red" ||
        base == "cp")
      c.push_back(&in);
  }
  if (c.empty())
    return std::nullopt;
  Instr in = *pick(rng, c);
  auto parts = split_opcode(in.opcode);
  const std::string to = pick(rng, kSpaces);
  auto sp = std::find_if(parts.begin(), parts.end(), [](const std::string &p) {
    return std::find(kSpaces.begin(), kSpaces.end(), p) != kSpaces.end() || p == "shared::cta";
  });
  if (sp != parts.end()) {
    if (*sp == to)
      return std::nullopt;
    *sp = to;
  } else {
    if (to.empty())
      return std::nullopt;
    parts.insert(
        parts.begin() + (parts[0] == "cvta" && parts.size() > 1 && parts[1] == "to" ? 2 : 1), to);
  }
  in.opcode = join_opcode(parts);
  return make("state_space", in.line, render(in));
}

std::optional<Mutant> PtxMutator::imm_reg(std::mt19937_64 &rng) const {
  if (instrs_.empty())
    return std::nullopt;
  Instr in = pick(rng, instrs_);
  const std::string base = split_opcode(in.opcode)[0];
  if (in.operands.size() < 2)
    return std::nullopt;
  // sources: every operand but a destination (st and red have none)
  const size_t first = base == "st" || base == "red" || base == "bar" || base == "cp" ? 0 : 1;
  if (first >= in.operands.size())
    return std::nullopt;
  const size_t i = std::uniform_int_distribution<size_t>(first, in.operands.size() - 1)(rng);
  std::string &o = in.operands[i];
  if (o.empty() || o[0] == '[')
    return std::nullopt;
  if (o[0] == '%') {
    o = pick(rng, kImmediates);
  } else if (o[0] == '{') {
    return std::nullopt;
  } else {
    auto r = random_register(rng, in.function, "");
    if (!r)
      return std::nullopt;
    o = *r;
  }
  return make("imm_reg", in.line, render(in));
}

std::optional<Mutant> PtxMutator::operand_count(std::mt19937_64 &rng) const {
  if (instrs_.empty())
    return std::nullopt;
  Instr in = pick(rng, instrs_);
  if (in.operands.empty())
    return std::nullopt;
  const size_t i = std::uniform_int_distribution<size_t>(0, in.operands.size() - 1)(rng);
  if (std::uniform_int_distribution<int>(0, 1)(rng))
    in.operands.erase(in.operands.begin() + static_cast<long>(i));
  else
    in.operands.insert(in.operands.begin() + static_cast<long>(i), in.operands[i]);
  return make("operand_count", in.line, render(in));
}

std::optional<Mutant> PtxMutator::modifier(std::mt19937_64 &rng) const {
  if (instrs_.empty())
    return std::nullopt;
  Instr in = pick(rng, instrs_);
  auto parts = split_opcode(in.opcode);
  std::vector<size_t> droppable;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (std::find(kModifiers.begin(), kModifiers.end(), parts[i]) != kModifiers.end())
      droppable.push_back(i);
  }
  if (!droppable.empty() && std::uniform_int_distribution<int>(0, 1)(rng)) {
    parts.erase(parts.begin() + static_cast<long>(pick(rng, droppable)));
  } else {
    const std::string m = pick(rng, kModifiers);
    if (std::find(parts.begin(), parts.end(), m) != parts.end())
      return std::nullopt;
    // f64 mma.rz is valid PTX that the emulator does not run (its fma chain rounds to nearest)
    if (parts[0] == "mma" && m == "rz")
      return std::nullopt;
    parts.insert(parts.begin() + 1, m);
  }
  in.opcode = join_opcode(parts);
  return make("modifier", in.line, render(in));
}

std::optional<Mutant> PtxMutator::guard(std::mt19937_64 &rng) const {
  if (guarded_.empty())
    return std::nullopt;
  Instr in = pick(rng, guarded_);
  auto r = random_register(rng, in.function, "");
  if (!r)
    return std::nullopt;
  in.guard = (std::uniform_int_distribution<int>(0, 1)(rng) ? "@!" : "@") + *r + " ";
  return make("guard", in.line, render(in));
}

std::optional<Mutant> PtxMutator::address(std::mt19937_64 &rng) const {
  std::vector<std::pair<const Instr *, size_t>> c;
  for (const Instr &in : instrs_) {
    for (size_t i = 0; i < in.operands.size(); ++i) {
      if (!in.operands[i].empty() && in.operands[i][0] == '[')
        c.push_back({&in, i});
    }
  }
  if (c.empty())
    return std::nullopt;
  auto [ip, i] = pick(rng, c);
  Instr in = *ip;
  std::string &o = in.operands[i];
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
  case 0: o = "[8]"; break;
  case 1: {
    auto r = random_register(rng, in.function, "");
    if (!r)
      return std::nullopt;
    o = "[" + *r + "]";
    break;
  }
  case 2:
    if (variables_.empty())
      return std::nullopt;
    o = "[" + pick(rng, variables_) + "]";
    break;
  default: o = o.substr(0, o.size() - 1) + "+4]"; break;
  }
  return make("address", in.line, render(in));
}

namespace {

// .target values: known architectures the emulator models (a newer GPU: ptxas is run with its
// -arch), ones ptxas does not know, a version too old for them, and target options. Not the
// architectures older than sm_80: the emulator refuses them (their feature limits are not
// modelled) while ptxas may take the module.
struct TargetChoice {
  const char *text;
  const char *ptxas_arch;
};
const std::vector<TargetChoice> kTargets = {
    {"compute_80", "sm_80"},
    {"sm_080", "sm_80"},
    {"sm_80, texmode_unified", "sm_80"},
    {"sm_80, texmode_unified, texmode_independent", "sm_80"},
    {"sm_80, debug", "sm_80"},
    {"sm_80, map_f64_to_f32", "sm_80"},
    {"sm_80, foo", "sm_80"},
    {"sm_80 sm_75", "sm_80"},
    {"sm_75, sm_80", "sm_80"},
    {"sm_90, sm_80", "sm_80"},
    {"sm_80, sm_90", "sm_90"}, // the last architecture named counts
    {"texmode_unified, sm_80", "sm_80"},
    {"sm_86", "sm_86"},
    {"sm_89", "sm_89"},
    {"sm_90", "sm_90"},
    {"sm_90a", "sm_90a"},
    {"sm_100", "sm_100"},
    {"sm_120", "sm_120"},
    {"sm_82", "sm_80"},
    {"sm_81", "sm_80"},
    {"sm_79", "sm_80"},
    {"sm_8", "sm_80"},
    {"sm_80a", "sm_80"},
    {"sm_999999999999999", "sm_80"},
    {"SM_80", "sm_80"},
    {"foo", "sm_80"},
};
const std::vector<std::string> kVersions = {"1.0",  "6.5", "7.0",  "7.1",  "7.8", "8.0",
                                            "8.3",  "8.8", "9.0",  "9.1",  "7.9", "99.9",
                                            "10.0", "8",   "08.0", "8.0.1"};
const std::vector<std::string> kAddressSizes = {"32", "16", "0x40", "128", "0", "64"};

} // namespace

std::optional<Mutant> PtxMutator::header(std::mt19937_64 &rng) const {
  if (version_line_ == std::string::npos || target_line_ == std::string::npos ||
      first_declaration_ == std::string::npos)
    return std::nullopt;
  struct Directive {
    const char *name;
    size_t line;
  };
  std::vector<Directive> present = {{"version", version_line_}, {"target", target_line_}};
  if (address_size_line_ != std::string::npos)
    present.push_back({"address_size", address_size_line_});
  const Directive d = pick(rng, present);
  const std::string text = trim(lines_[d.line]);
  const std::string name = d.name;
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
  case 0: return make_edits("header", {{d.line, ""}}, "(drop ." + name + ")");
  case 1: return make_edits("header", {{d.line, text + "\n" + text}}, "(duplicate ." + name + ")");
  case 2: // to just before the first declaration
    return make_edits(
        "header", {{d.line, ""}, {first_declaration_, text + "\n" + lines_[first_declaration_]}},
        "(move ." + name + " after the header)");
  case 3: { // swap with the next header directive
    const Directive *other = nullptr;
    for (const Directive &o : present) {
      if (o.line > d.line && (!other || o.line < other->line))
        other = &o;
    }
    if (!other)
      return std::nullopt;
    return make_edits("header", {{d.line, lines_[other->line]}, {other->line, lines_[d.line]}},
                      "(swap ." + name + " and ." + other->name + ")");
  }
  default: {
    if (name == "version") {
      const std::string v = pick(rng, kVersions);
      return make("header", d.line, ".version " + v);
    }
    if (name == "address_size")
      return make("header", d.line, ".address_size " + pick(rng, kAddressSizes));
    const TargetChoice &t = pick(rng, kTargets);
    Mutant m = make("header", d.line, std::string(".target ") + t.text);
    m.ptxas_arch = t.ptxas_arch;
    return m;
  }
  }
}

// An address's offset in another sign or form: [%rd1+-8], [%rd1-8], [%rd1+ -8], [%rd1+0x10],
// [%rd1++8], [%rd1+4-8], a register added ([%rd1+%rd2], not PTX), a huge constant.
std::optional<Mutant> PtxMutator::address_offset(std::mt19937_64 &rng) const {
  static const std::regex kAddress(R"(^\[\s*([%A-Za-z_$][A-Za-z0-9_$.]*)\s*(\+\s*(-?\w+))?\s*\]$)");
  std::vector<std::pair<const Instr *, size_t>> c;
  for (const Instr &in : instrs_) {
    for (size_t i = 0; i < in.operands.size(); ++i) {
      if (std::regex_match(in.operands[i], kAddress))
        c.push_back({&in, i});
    }
  }
  if (c.empty())
    return std::nullopt;
  auto [ip, i] = pick(rng, c);
  Instr in = *ip;
  std::string &o = in.operands[i];
  std::smatch m;
  std::regex_match(o, m, kAddress);
  const std::string base = m[1];
  std::string n = m[3].matched ? std::string(m[3]) : "4";
  if (n[0] == '-')
    n = n.substr(1);
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
  case 0: o = "[" + base + "+-" + n + "]"; break;
  case 1: o = "[" + base + "-" + n + "]"; break;
  case 2: o = "[" + base + "+ -" + n + "]"; break;
  case 3: o = "[" + base + "+0x10]"; break;
  case 4: {
    auto r = random_register(rng, in.function, "");
    if (!r)
      return std::nullopt;
    o = "[" + base + "+" + *r + "]";
    break;
  }
  case 5: o = "[" + base + "+99999999999999999999]"; break;
  case 6: o = "[" + base + "+18446744073709551615]"; break;
  case 7: o = "[" + base + "++" + n + "]"; break;
  case 8: o = "[" + base + "+" + n + "-8]"; break;
  default: o = "[" + base + "+0x80000000000000000]"; break;
  }
  return make("address_offset", in.line, render(in));
}

std::optional<Mutant> PtxMutator::mutate(std::mt19937_64 &rng) const {
  switch (std::uniform_int_distribution<int>(0, 11)(rng)) {
  case 0: return reg_type(rng);
  case 1: return swap_reg(rng);
  case 2: return type_suffix(rng);
  case 3: return vector_arity(rng);
  case 4: return state_space(rng);
  case 5: return imm_reg(rng);
  case 6: return operand_count(rng);
  case 7: return modifier(rng);
  case 8: return guard(rng);
  case 9: return address(rng);
  case 10: return header(rng);
  default: return address_offset(rng);
  }
}

} // namespace tcjit::emu::test
