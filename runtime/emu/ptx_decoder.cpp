// Decodes an AstModule into a Program: lays out parameters, shared/local/global variables,
// resolves names to registers, symbols to addresses and labels to instruction indices, checks each
// instruction against the instruction table (ptx_checker.h) and hands it to the decode hook the
// table names for its opcode (instruction_decode.h), which turns the opcode's modifiers and the
// operands into an Instr. Everything unsupported fails here, at load time.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"
#include "runtime/emu/memory_layout.h"
#include "runtime/emu/ptx_checker.h"
#include "runtime/emu/ptx_error.h"
#include "runtime/emu/ptx_instruction_table.h"
#include "runtime/emu/ptx_parser.h"
#include "runtime/emu/register_compaction.h"

namespace tcjit::emu {

namespace {

std::optional<DType> parse_dtype(std::string_view m) {
  return dtype_from_name(m);
}

DType parse_decl_type(const std::string &t) {
  auto d = parse_dtype(std::string_view(t).substr(1));
  return d ? *d : DType::None;
}

uint64_t align_up(uint64_t v, uint64_t a) {
  return a <= 1 ? v : (v + a - 1) / a * a;
}

struct Symbol {
  Space space = Space::Global;
  uint64_t address = 0;
  uint64_t size = 0;
};

struct NameEntry {
  bool is_reg = false;
  uint32_t reg = 0;
  DType reg_type = DType::None;
  Symbol symbol;
};

// Saturates at UINT64_MAX (the limit checks then reject it).
uint64_t variable_bytes(const AstVariable &v) {
  uint64_t elem = uint64_t{dtype_bytes(parse_decl_type(v.type))} * v.vector;
  if (v.type == ".pred")
    elem = 1;
  uint64_t bytes = elem;
  if (v.is_array && __builtin_mul_overflow(elem, v.array_count, &bytes))
    return UINT64_MAX;
  return bytes;
}

std::string kib_text(uint64_t bytes) {
  return std::to_string(bytes) + " bytes" +
         (bytes % 1024 == 0 ? " (" + std::to_string(bytes / 1024) + " KiB)" : "");
}

// Every name an instruction's operands mention (registers, symbols, labels, callees).
void collect_names(const AstOperand &op, std::set<std::string> &out) {
  if (!op.name.empty())
    out.insert(op.name);
  for (const AstOperand &e : op.elements)
    collect_names(e, out);
}

uint32_t variable_align(const AstVariable &v) {
  if (v.align)
    return v.align;
  uint32_t a = dtype_bytes(parse_decl_type(v.type)) * v.vector;
  return a ? a : 1;
}

// Encodes an initializer element as the bits of the element type.
uint64_t init_bits(const AstOperand &op, DType t) {
  if (op.kind == AstOperand::Kind::Integer) {
    if (t == DType::F32) {
      float f = static_cast<float>(static_cast<int64_t>(op.int_value));
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    if (t == DType::F64) {
      double d = static_cast<double>(static_cast<int64_t>(op.int_value));
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    return op.int_value;
  }
  double value = op.float_value;
  if (op.float_is_f32_bits) {
    if (t != DType::F64)
      return op.float_bits;
    uint32_t b = static_cast<uint32_t>(op.float_bits);
    float f;
    std::memcpy(&f, &b, 4);
    value = f;
  } else if (op.float_is_f64_bits) {
    if (t == DType::F64 || dtype_bytes(t) == 8)
      return op.float_bits;
    std::memcpy(&value, &op.float_bits, 8);
  }
  if (t == DType::F64) {
    uint64_t b;
    std::memcpy(&b, &value, 8);
    return b;
  }
  float f = static_cast<float>(value);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct SpecialName {
  const char *name;
  bool dynamic;
  uint32_t value; // SpecialReg or DynamicSpecial
};

const SpecialName kSpecialNames[] = {
    {"%tid.x", false, uint32_t(SpecialReg::TidX)},
    {"%tid.y", false, uint32_t(SpecialReg::TidY)},
    {"%tid.z", false, uint32_t(SpecialReg::TidZ)},
    {"%ntid.x", false, uint32_t(SpecialReg::NtidX)},
    {"%ntid.y", false, uint32_t(SpecialReg::NtidY)},
    {"%ntid.z", false, uint32_t(SpecialReg::NtidZ)},
    {"%ctaid.x", false, uint32_t(SpecialReg::CtaidX)},
    {"%ctaid.y", false, uint32_t(SpecialReg::CtaidY)},
    {"%ctaid.z", false, uint32_t(SpecialReg::CtaidZ)},
    {"%nctaid.x", false, uint32_t(SpecialReg::NctaidX)},
    {"%nctaid.y", false, uint32_t(SpecialReg::NctaidY)},
    {"%nctaid.z", false, uint32_t(SpecialReg::NctaidZ)},
    {"%laneid", false, uint32_t(SpecialReg::LaneId)},
    {"%warpid", false, uint32_t(SpecialReg::WarpId)},
    {"%nwarpid", false, uint32_t(SpecialReg::NwarpId)},
    {"%smid", false, uint32_t(SpecialReg::SmId)},
    {"%nsmid", false, uint32_t(SpecialReg::NsmId)},
    {"%gridid", false, uint32_t(SpecialReg::GridId)},
    {"%lanemask_eq", false, uint32_t(SpecialReg::LanemaskEq)},
    {"%lanemask_lt", false, uint32_t(SpecialReg::LanemaskLt)},
    {"%lanemask_le", false, uint32_t(SpecialReg::LanemaskLe)},
    {"%lanemask_gt", false, uint32_t(SpecialReg::LanemaskGt)},
    {"%lanemask_ge", false, uint32_t(SpecialReg::LanemaskGe)},
    {"%dynamic_smem_size", false, uint32_t(SpecialReg::DynamicSmemSize)},
    {"%total_smem_size", false, uint32_t(SpecialReg::TotalSmemSize)},
    {"%clock", true, uint32_t(DynamicSpecial::Clock)},
    {"%clock64", true, uint32_t(DynamicSpecial::Clock64)},
    {"%globaltimer", true, uint32_t(DynamicSpecial::GlobalTimer)},
};

// The special register named `name`, or null: one hash lookup (names of every operand pass here).
const SpecialName *find_special(std::string_view name) {
  static const std::unordered_map<std::string_view, const SpecialName *> by_name = [] {
    std::unordered_map<std::string_view, const SpecialName *> m;
    for (const SpecialName &sp : kSpecialNames)
      m.emplace(sp.name, &sp);
    return m;
  }();
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

} // namespace

class Decoder {
public:
  Decoder(const AstModule &ast, const GlobalAllocator &alloc) : ast_(ast), alloc_(alloc) {}

  std::unique_ptr<Program> run() {
    prog_ = std::make_unique<Program>();
    prog_->source_name = ast_.source_name;
    scopes_.emplace_back(); // module scope
    max_shared_ = max_shared_bytes_for_target(ast_.target);
    layout_shared_variables();
    layout_module_variables();
    for (size_t i = 0; i < ast_.functions.size(); ++i) {
      const AstFunction &f = ast_.functions[i];
      auto it = prog_->function_index.find(f.name);
      if (it != prog_->function_index.end()) {
        // a prototype followed by the definition: keep one entry
        if (f.has_body)
          ast_index_[it->second] = i;
        continue;
      }
      Function fn;
      fn.name = f.name;
      fn.is_entry = f.is_entry;
      prog_->function_index[f.name] = static_cast<uint32_t>(prog_->functions.size());
      ast_index_.push_back(i);
      prog_->functions.push_back(std::move(fn));
    }
    for (uint32_t fi = 0; fi < prog_->functions.size(); ++fi)
      decode_function(fi, ast_.functions[ast_index_[fi]]);
    for (const CallFixup &c : call_fixups_) {
      const Function &callee = prog_->functions[prog_->code[c.pc].callee];
      if (callee.entry_pc == callee.end_pc && !ast_.functions[ast_index_[c.callee]].has_body)
        fail(c.line, "call to '" + callee.name +
                         "', which has no body in this module "
                         "(external functions such as vprintf are not supported)");
      prog_->code[c.pc].target = callee.entry_pc;
    }
    prog_->local_bytes = static_cast<uint32_t>(align_up(local_total_, 16));
    prog_->param_scratch_bytes = static_cast<uint32_t>(align_up(scratch_total_, 16));
    for (Function &fn : prog_->functions) {
      if (fn.is_entry) {
        fn.shared = kernel_shared_.at(fn.name);
        fn.info.static_shared_bytes = fn.shared.static_bytes;
        fn.info.local_bytes_per_thread = prog_->local_bytes;
        fn.info.registers_per_thread = prog_->num_regs;
      }
    }
    return std::move(prog_);
  }

private:
  struct CallFixup {
    uint32_t pc;
    uint32_t callee;
    int line;
  };

  const AstModule &ast_;
  const GlobalAllocator &alloc_;
  std::unique_ptr<Program> prog_;
  std::vector<size_t> ast_index_;
  std::vector<std::unordered_map<std::string, NameEntry>> scopes_;
  std::unordered_map<const AstVariable *, uint64_t> shared_offsets_;
  std::unordered_map<std::string, SharedLayout> kernel_shared_; // per entry name
  uint32_t max_shared_ = 0;                                     // the .target's limit
  // registers declared per register type in the function being decoded
  std::unordered_map<std::string, uint64_t> regs_per_type_;
  std::vector<DType> reg_types_ = std::vector<DType>(kReservedRegs, DType::U32);
  std::vector<CallFixup> call_fixups_;
  uint64_t local_total_ = 0;
  uint64_t scratch_total_ = 0;
  uint32_t current_function_ = 0;
  const AstFunction *current_ast_ = nullptr;

  [[noreturn]] void fail(int line, const std::string &what) {
    throw_load_error(ast_.source_name, line, what);
  }

  void define(const std::string &name, NameEntry e, int line) {
    auto &scope = scopes_.back();
    if (scope.count(name))
      fail(line, "'" + name + "' is declared twice in the same scope");
    scope[name] = e;
  }

  const NameEntry *lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return &f->second;
    }
    return nullptr;
  }

  bool is_dynamic_shared(const AstVariable &v) const {
    return v.is_extern || (v.is_array && v.array_count == 0);
  }

  // Gives each kernel only the .shared variables it uses: its own, those of the functions it
  // calls (transitively), and the module-scope ones any of these reference. A variable has one
  // offset in the module (the code of a .func is shared by the kernels that call it): variables
  // are placed in declaration order, each after the current end of every kernel that uses it, so
  // kernels with disjoint (or equal) variables get dense layouts from offset 0. Checks the
  // .target's shared-memory limit per variable and per kernel.
  void layout_shared_variables() {
    std::unordered_map<std::string, const AstVariable *> module_shared;
    std::vector<const AstVariable *> shared_vars; // declaration order
    for (const AstVariable &v : ast_.globals) {
      if (v.space == AstSpace::Shared) {
        module_shared[v.name] = &v;
        shared_vars.push_back(&v);
      }
    }
    std::set<std::string> function_names;
    for (const AstFunction &f : ast_.functions)
      function_names.insert(f.name);
    // per function name: the shared variables it declares or references, and its callees
    std::unordered_map<std::string, std::set<const AstVariable *>> direct;
    std::unordered_map<std::string, std::set<std::string>> callees;
    for (const AstFunction &f : ast_.functions) {
      auto &vars = direct[f.name];
      auto &calls = callees[f.name];
      for (const AstStatement &st : f.body) {
        if (st.kind == AstStatement::Kind::Variable && st.variable.space == AstSpace::Shared) {
          vars.insert(&st.variable);
          shared_vars.push_back(&st.variable);
          continue;
        }
        if (st.kind != AstStatement::Kind::Instruction)
          continue;
        std::set<std::string> names;
        for (const AstOperand &op : st.instruction.operands)
          collect_names(op, names);
        for (const std::string &n : names) {
          if (auto it = module_shared.find(n); it != module_shared.end())
            vars.insert(it->second);
          if (function_names.count(n) && n != f.name)
            calls.insert(n);
        }
      }
    }
    for (const AstVariable *v : shared_vars) {
      if (!is_dynamic_shared(*v) && variable_bytes(*v) > max_shared_)
        fail(v->line, ".shared variable '" + v->name + "' is " + kib_text(variable_bytes(*v)) +
                          "; " + target_text() + " allows at most " + kib_text(max_shared_) +
                          " of shared memory per block");
    }
    // per kernel: every variable reachable through its calls
    std::vector<const AstFunction *> kernels;
    std::unordered_map<std::string, std::set<const AstVariable *>> uses;
    for (const AstFunction &f : ast_.functions) {
      if (!f.is_entry || uses.count(f.name))
        continue;
      kernels.push_back(&f);
      std::set<std::string> seen{f.name};
      std::vector<std::string> unvisited{f.name};
      auto &set = uses[f.name];
      while (!unvisited.empty()) {
        std::string n = unvisited.back();
        unvisited.pop_back();
        set.insert(direct[n].begin(), direct[n].end());
        for (const std::string &c : callees[n]) {
          if (seen.insert(c).second)
            unvisited.push_back(c);
        }
      }
    }
    std::unordered_map<std::string, uint64_t> end;
    uint32_t dyn_align = 16;
    for (const AstVariable *v : shared_vars) {
      if (is_dynamic_shared(*v)) {
        dyn_align = std::max(dyn_align, variable_align(*v));
        continue;
      }
      uint64_t offset = 0;
      for (const AstFunction *k : kernels) {
        if (uses[k->name].count(v))
          offset = std::max(offset, align_up(end[k->name], variable_align(*v)));
      }
      shared_offsets_[v] = offset;
      for (const AstFunction *k : kernels) {
        if (!uses[k->name].count(v))
          continue;
        end[k->name] = offset + variable_bytes(*v);
        if (end[k->name] > max_shared_)
          fail(v->line, "kernel '" + k->name + "' needs " + kib_text(end[k->name]) +
                            " of static shared memory with '" + v->name + "'; " + target_text() +
                            " allows at most " + kib_text(max_shared_) + " per block");
      }
    }
    // extern shared memory: one offset for every extern variable, after the static variables of
    // every kernel that uses one
    uint64_t dyn_base = 0;
    for (const AstFunction *k : kernels) {
      for (const AstVariable *v : uses[k->name]) {
        if (is_dynamic_shared(*v))
          dyn_base = std::max(dyn_base, align_up(end[k->name], dyn_align));
      }
    }
    for (const AstVariable *v : shared_vars) {
      if (is_dynamic_shared(*v))
        shared_offsets_[v] = dyn_base;
    }
    for (const AstFunction *k : kernels) {
      SharedLayout l;
      l.static_bytes = static_cast<uint32_t>(end[k->name]);
      l.dynamic_align = dyn_align;
      bool dynamic = false;
      for (const AstVariable *v : uses[k->name])
        dynamic |= is_dynamic_shared(*v);
      l.dynamic_base = static_cast<uint32_t>(dynamic ? dyn_base : align_up(end[k->name], 16));
      kernel_shared_[k->name] = l;
    }
  }

  bool version_at_least(int major, int minor) const {
    int ma = 0, mi = 0;
    if (std::sscanf(ast_.version.c_str(), "%d.%d", &ma, &mi) != 2)
      return true; // not reached: the parser requires a known .version
    return ma > major || (ma == major && mi >= minor);
  }

  // 75 for .version 7.5; 0 without a readable .version
  int ptx_version() const {
    int ma = 0, mi = 0;
    if (std::sscanf(ast_.version.c_str(), "%d.%d", &ma, &mi) != 2 || ma < 0 || ma > 99 || mi < 0 ||
        mi > 9)
      return 0;
    return ma * 10 + mi;
  }

  std::string target_text() const {
    return ast_.target.empty() ? std::string("the emulator (no .target)") : ast_.target;
  }

  void layout_module_variables() {
    for (const AstVariable &v : ast_.globals) {
      NameEntry e;
      if (v.space == AstSpace::Shared) {
        e.symbol = {Space::Shared, shared_offsets_[&v], variable_bytes(v)};
      } else {
        if (v.is_extern)
          fail(v.line, "extern variable '" + v.name + "' is not defined in this module");
        GlobalVariable g;
        g.name = v.name;
        g.space = v.space == AstSpace::Const ? Space::Const : Space::Global;
        g.size = std::max<uint64_t>(variable_bytes(v), 1);
        g.align = variable_align(v);
        g.init.assign(g.size, 0);
        DType et = parse_decl_type(v.type);
        uint32_t eb = dtype_bytes(et);
        if (eb == 0)
          fail(v.line, "unsupported variable type '" + v.type + "'");
        if (v.init.size() * eb > g.size)
          fail(v.line, "initializer of '" + v.name + "' has too many elements");
        for (size_t i = 0; i < v.init.size(); ++i) {
          uint64_t bits = init_bits(v.init[i], et);
          std::memcpy(g.init.data() + i * eb, &bits, eb);
        }
        g.address = alloc_(g.size, g.align);
        e.symbol = {g.space, g.address, g.size};
        prog_->globals.push_back(std::move(g));
      }
      define(v.name, e, v.line);
    }
  }

  uint32_t new_reg(DType t) {
    reg_types_.push_back(t);
    return prog_->num_regs++;
  }

  void declare_variable(const AstVariable &v, Function &fn, bool is_formal_param) {
    NameEntry e;
    switch (v.space) {
    case AstSpace::Reg: {
      DType t = parse_decl_type(v.type);
      if (t == DType::None)
        fail(v.line, "unsupported register type '" + v.type + "'");
      // ptxas: registers are .b/.u/.s 8-64, .f16 .f16x2 .f32 .f64 or .pred (bf16 data lives in
      // .b16/.b32 registers); .b128 needs PTX ISA 8.3
      if (t == DType::BF16 || t == DType::BF16x2 || t == DType::TF32 || t == DType::S4 ||
          t == DType::U4 || t == DType::E4M3 || t == DType::E5M2 || t == DType::B1)
        fail(v.line, "'" + v.type + "' is not a register type (ptxas: syntax error); declare " +
                         (dtype_bytes(t) == 4 ? std::string(".b32") : std::string(".b16")) +
                         " registers for it");
      if (t == DType::B128 && !version_at_least(8, 3))
        fail(v.line, "Feature 'Type .b128' requires PTX ISA .version 8.3 or later (this module "
                     "is .version " +
                         ast_.version + ")");
      if (v.vector != 1)
        fail(v.line, "vector registers are not supported");
      const uint64_t count = v.has_range ? v.range : 1;
      const std::string decl =
          v.name + (v.has_range ? "<" + std::to_string(v.range) + ">" : std::string());
      uint64_t &of_type = regs_per_type_[v.type];
      if (count > kMaxRegistersPerType - of_type)
        fail(v.line, "too many " + v.type + " registers: '" + decl + "' brings function '" +
                         fn.name + "' to " +
                         std::to_string(of_type + std::min<uint64_t>(count, UINT64_MAX / 2)) +
                         "; the emulator allows at most " + std::to_string(kMaxRegistersPerType) +
                         " registers of one type per function");
      if (count >
          kMaxRegistersPerModule - std::min<uint64_t>(prog_->num_regs, kMaxRegistersPerModule))
        fail(v.line, "too many registers: '" + decl + "' brings the module to " +
                         std::to_string(prog_->num_regs + count) +
                         "; the emulator allows at most " + std::to_string(kMaxRegistersPerModule) +
                         " registers per module (all functions together)");
      of_type += count;
      if (v.has_range) {
        for (uint64_t i = 0; i < v.range; ++i) {
          NameEntry r;
          r.is_reg = true;
          r.reg_type = t;
          r.reg = new_reg(t);
          define(v.name + std::to_string(i), r, v.line);
        }
        return;
      }
      e.is_reg = true;
      e.reg_type = t;
      e.reg = new_reg(t);
      define(v.name, e, v.line);
      return;
    }
    case AstSpace::Shared:
      e.symbol = {Space::Shared, shared_offsets_.at(&v), variable_bytes(v)};
      define(v.name, e, v.line);
      return;
    case AstSpace::Local: {
      uint64_t off = align_up(fn.local_bytes, variable_align(v));
      if (variable_bytes(v) > kMaxLocalBytesPerThread ||
          off + variable_bytes(v) > kMaxLocalBytesPerThread ||
          fn.local_base + off + variable_bytes(v) > kMaxLocalBytesPerThread)
        fail(v.line,
             ".local variable '" + v.name + "' is " + kib_text(variable_bytes(v)) +
                 (off || fn.local_base ? " (at offset " + std::to_string(fn.local_base + off) +
                                             " of the thread's local memory)"
                                       : std::string()) +
                 "; the limit is " + kib_text(kMaxLocalBytesPerThread) +
                 " of local memory per thread");
      fn.local_bytes = static_cast<uint32_t>(off + variable_bytes(v));
      e.symbol = {Space::Local, fn.local_base + off, variable_bytes(v)};
      local_total_ = std::max<uint64_t>(local_total_, fn.local_base + fn.local_bytes);
      define(v.name, e, v.line);
      return;
    }
    case AstSpace::Param: {
      uint64_t size = variable_bytes(v);
      if (size > kMaxLocalBytesPerThread ||
          (fn.is_entry && is_formal_param && fn.info.param_bytes + size > 32764))
        fail(v.line, ".param '" + v.name + "' is " + kib_text(size) + "; " +
                         (fn.is_entry && is_formal_param
                              ? std::string("a kernel's parameters are limited to 32764 bytes")
                              : "the limit is " + kib_text(kMaxLocalBytesPerThread)));
      if (!(fn.is_entry && is_formal_param) && scratch_total_ + size > kMaxLocalBytesPerThread)
        fail(v.line, ".param '" + v.name + "' brings the per-thread parameter space to " +
                         std::to_string(scratch_total_ + size) + " bytes; the limit is " +
                         kib_text(kMaxLocalBytesPerThread));
      if (fn.is_entry && is_formal_param) {
        uint32_t off = static_cast<uint32_t>(align_up(fn.info.param_bytes, variable_align(v)));
        fn.info.params.push_back({v.name, off, static_cast<uint32_t>(size), variable_align(v)});
        fn.info.param_bytes = off + static_cast<uint32_t>(size);
        e.symbol = {Space::ParamKernel, off, size};
      } else {
        uint64_t off = align_up(scratch_total_, std::max<uint32_t>(variable_align(v), 8));
        scratch_total_ = off + size;
        e.symbol = {Space::ParamThread, off, size};
      }
      define(v.name, e, v.line);
      return;
    }
    case AstSpace::Global:
    case AstSpace::Const:
      fail(v.line, "global/const variables inside a function are not supported");
    }
  }

  void decode_function(uint32_t fi, const AstFunction &f) {
    Function &fn = prog_->functions[fi];
    current_function_ = fi;
    current_ast_ = &f;
    fn.entry_pc = static_cast<uint32_t>(prog_->code.size());
    fn.local_base = static_cast<uint32_t>(align_up(local_total_, 16));
    fn.info.name = f.name;
    regs_per_type_.clear();
    scopes_.emplace_back();
    for (const AstVariable &p : f.params) {
      declare_variable(p, fn, true);
      if (!fn.is_entry) {
        const NameEntry *e = lookup(p.name);
        fn.param_offsets.push_back(static_cast<uint32_t>(e->symbol.address));
        fn.param_sizes.push_back(static_cast<uint32_t>(e->symbol.size));
      }
    }
    for (const AstVariable &r : f.returns) {
      declare_variable(r, fn, false);
      const NameEntry *e = lookup(r.name);
      fn.return_offsets.push_back(static_cast<uint32_t>(e->symbol.address));
      fn.return_sizes.push_back(static_cast<uint32_t>(e->symbol.size));
    }
    std::unordered_map<std::string, uint32_t> labels;
    std::vector<std::pair<uint32_t, std::pair<std::string, int>>> branch_fixups;
    // labels may be used before they are defined: collect them first
    {
      uint32_t pc = fn.entry_pc;
      for (const AstStatement &st : f.body) {
        if (st.kind == AstStatement::Kind::Label) {
          if (labels.count(st.label))
            fail(st.line, "label '" + st.label + "' is defined twice");
          labels[st.label] = pc;
        } else if (st.kind == AstStatement::Kind::Instruction) {
          ++pc;
        }
      }
    }
    int depth = 0;
    for (const AstStatement &st : f.body) {
      switch (st.kind) {
      case AstStatement::Kind::OpenScope:
        scopes_.emplace_back();
        ++depth;
        break;
      case AstStatement::Kind::CloseScope:
        scopes_.pop_back();
        --depth;
        break;
      case AstStatement::Kind::Label: break;
      case AstStatement::Kind::Variable: declare_variable(st.variable, fn, false); break;
      case AstStatement::Kind::Instruction: decode_instruction(st.instruction, labels); break;
      }
    }
    while (depth-- > 0)
      scopes_.pop_back();
    scopes_.pop_back();
    fn.end_pc = static_cast<uint32_t>(prog_->code.size());
    if (f.has_body) {
      // falling off the end of a function behaves as ret (PTX requires an explicit ret/exit;
      // be lenient and add one)
      Instr ret;
      ret.op = Op::Ret;
      ret.cls = InstrClass::Control;
      ret.is_control = true;
      ret.line = static_cast<uint32_t>(f.line);
      ret.function = fi;
      prog_->code.push_back(ret);
      prog_->opcode_text.push_back("ret");
      fn.end_pc = static_cast<uint32_t>(prog_->code.size());
    }
  }

  // ---- services of the decode hooks (instruction_decode.h) -----------------------------------

public:
  [[noreturn]] void fail_at(int line, const std::string &what) { fail(line, what); }

  bool decoding_kernel() const { return prog_->functions[current_function_].is_entry; }

  uint32_t label_target(const AstOperand &a, int line) const {
    if (a.kind != AstOperand::Kind::Name)
      throw_load_error(ast_.source_name, line, "expected a label");
    auto it = labels_->find(a.name);
    if (it == labels_->end())
      throw_load_error(ast_.source_name, line, "unknown label '" + a.name + "'");
    return it->second;
  }

  void decode_call_operands(Instr &in, const AstInstruction &ai);

  void decode_instruction(const AstInstruction &ai,
                          const std::unordered_map<std::string, uint32_t> &labels);

  // ---- operands -------------------------------------------------------------------------

  Operand reg_operand(uint32_t reg) {
    Operand o;
    o.kind = OperandKind::Reg;
    o.reg = reg;
    return o;
  }

  std::optional<Operand> special_operand(const std::string &name) {
    if (const SpecialName *s = find_special(name)) {
      if (s->dynamic) {
        Operand o;
        o.kind = OperandKind::Special;
        o.special = static_cast<DynamicSpecial>(s->value);
        return o;
      }
      return reg_operand(s->value);
    }
    return std::nullopt;
  }

  uint64_t symbol_value(const Symbol &s, Space context) {
    // a symbol used where a generic address is expected gets its generic address
    if (context == Space::Generic)
      return to_generic_address(s.space, s.address);
    return s.address;
  }

  Operand value_operand(const AstOperand &a, DType type, int line, Space symbol_context) {
    switch (a.kind) {
    case AstOperand::Kind::Name: {
      if (auto sp = special_operand(a.name))
        return *sp;
      const NameEntry *e = lookup(a.name);
      if (!e)
        fail(line, "unknown name '" + a.name + "'");
      if (e->is_reg) {
        Operand o = reg_operand(e->reg);
        o.negated = a.negated;
        return o;
      }
      // mov/cvta of a variable: its address in its own state space (cvta makes it generic)
      (void)symbol_context;
      return immediate_operand(e->symbol.address + a.int_value);
    }
    case AstOperand::Kind::Integer: {
      if (type == DType::F32 || type == DType::F64) {
        AstOperand f = a;
        return immediate_operand(init_bits(f, type));
      }
      return immediate_operand(a.int_value);
    }
    case AstOperand::Kind::Float: {
      // 0d and decimal literals are f64 values: a .b64/.u64 operand takes their bits
      if (type == DType::F64 || (dtype_bytes(type) == 8 && !a.float_is_f32_bits)) {
        return immediate_operand(init_bits(a, DType::F64));
      }
      if (type == DType::F32 || dtype_bytes(type) == 4)
        return immediate_operand(init_bits(a, DType::F32));
      if (a.float_is_f32_bits || a.float_is_f64_bits)
        return immediate_operand(a.float_bits);
      fail(line,
           "a floating-point literal is not valid for type ." + std::string(dtype_name(type)));
    }
    case AstOperand::Kind::Vector: {
      Operand o;
      o.kind = OperandKind::Vector;
      o.reg = static_cast<uint32_t>(prog_->vector_regs.size());
      o.count = static_cast<uint8_t>(a.elements.size());
      for (const AstOperand &e : a.elements) {
        if (e.kind == AstOperand::Kind::Sink) {
          prog_->vector_regs.push_back(kSinkReg);
          continue;
        }
        Operand r = value_operand(e, type, line, symbol_context);
        if (r.kind == OperandKind::Imm) {
          // an immediate inside a vector: a register preset to the value when a CTA starts
          uint32_t reg = new_reg(type);
          prog_->constant_regs.push_back({reg, r.imm});
          r = reg_operand(reg);
        }
        if (r.kind != OperandKind::Reg)
          fail(line, "vector elements must be registers or immediates");
        prog_->vector_regs.push_back(r.reg);
      }
      return o;
    }
    case AstOperand::Kind::Sink: return reg_operand(kSinkReg);
    case AstOperand::Kind::Address:
    case AstOperand::Kind::Pair:
    case AstOperand::Kind::List: break;
    }
    fail(line, "unexpected operand form");
  }

  // Destination register (or vector / sink).
  Operand dest_operand(const AstOperand &a, DType type, int line) {
    if (a.kind == AstOperand::Kind::Name) {
      const NameEntry *e = lookup(a.name);
      if (!e && !special_operand(a.name))
        fail(line, "unknown name '" + a.name + "'");
      if (!e || !e->is_reg) {
        if (special_operand(a.name))
          fail(line, "special register '" + a.name + "' is read-only");
        fail(line, "'" + a.name + "' is not a register");
      }
      return reg_operand(e->reg);
    }
    if (a.kind == AstOperand::Kind::Vector || a.kind == AstOperand::Kind::Sink)
      return value_operand(a, type, line, Space::Generic);
    fail(line, "expected a destination register");
  }

  // [reg+off], [symbol+off], [imm]. Sets `space` for param symbols.
  Operand address_operand(const AstOperand &a, Space &space, int line) {
    if (a.kind != AstOperand::Kind::Address) {
      // cp.async etc. always use [..]; some instructions accept a bare symbol
      if (a.kind == AstOperand::Kind::Name) {
        AstOperand wrapped = a;
        wrapped.kind = AstOperand::Kind::Address;
        return address_operand(wrapped, space, line);
      }
      fail(line, "expected an address operand [..]");
    }
    Operand o;
    if (a.name.empty()) {
      o = immediate_operand(a.int_value);
      if (space == Space::ParamKernel && current_is_func())
        space = Space::ParamThread;
      return o;
    }
    if (auto sp = special_operand(a.name))
      fail(line, "special register '" + a.name + "' cannot be an address");
    const NameEntry *e = lookup(a.name);
    if (!e)
      fail(line, "unknown name '" + a.name + "'");
    if (e->is_reg) {
      o = reg_operand(e->reg);
      o.offset = static_cast<int64_t>(a.int_value);
      if (space == Space::ParamKernel && current_is_func())
        space = Space::ParamThread;
      return o;
    }
    const Symbol &s = e->symbol;
    if (space == Space::ParamKernel) {
      if (s.space != Space::ParamKernel && s.space != Space::ParamThread)
        fail(line, "'" + a.name + "' is not a parameter");
      space = s.space;
      return immediate_operand(s.address + a.int_value);
    }
    if (space != Space::Generic && s.space != space &&
        !(space == Space::Global && s.space == Space::Const) &&
        !(space == Space::Const && s.space == Space::Global))
      fail(line, "'" + a.name + "' is in the ." + space_name(s.space) + " state space, not ." +
                     space_name(space));
    return immediate_operand(symbol_value(s, space) + a.int_value);
  }

  bool current_is_func() const { return !prog_->functions[current_function_].is_entry; }

  // A name as the checker sees it.
  CheckedName checked_name(const std::string &name) const {
    CheckedName c;
    if (find_special(name)) {
      c.kind = CheckedName::Kind::Special;
      const bool wide = name == "%clock64" || name == "%globaltimer" || name == "%gridid";
      c.type = wide ? DType::U64 : DType::U32;
      return c;
    }
    const NameEntry *e = lookup(name);
    if (!e)
      return c;
    if (e->is_reg) {
      c.kind = CheckedName::Kind::Register;
      c.type = e->reg_type;
      return c;
    }
    c.kind = CheckedName::Kind::Variable;
    c.space = e->symbol.space == Space::ParamThread ? Space::ParamKernel : e->symbol.space;
    return c;
  }

  DType reg_type(const Operand &o) const {
    return o.kind == OperandKind::Reg ? reg_types_[o.reg] : DType::None;
  }

private:
  const std::unordered_map<std::string, uint32_t> *labels_ = nullptr; // the current function's
};

// ---- modifiers ----------------------------------------------------------------------------

bool Modifiers::take(std::string_view m) {
  auto it = std::find(list.begin(), list.end(), m);
  if (it == list.end())
    return false;
  list.erase(it);
  return true;
}

std::vector<DType> Modifiers::take_types() {
  std::vector<DType> out;
  for (auto it = list.begin(); it != list.end();) {
    if (auto t = parse_dtype(*it)) {
      out.push_back(*t);
      it = list.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Round take_rounding(Modifiers &m) {
  static const std::pair<const char *, Round> kR[] = {
      {"rn", Round::Rn},   {"rz", Round::Rz},   {"rm", Round::Rm},
      {"rp", Round::Rp},   {"rna", Round::Rna}, {"rni", Round::Rni},
      {"rzi", Round::Rzi}, {"rmi", Round::Rmi}, {"rpi", Round::Rpi}};
  for (const auto &[n, r] : kR) {
    if (m.take(n))
      return r;
  }
  return Round::None;
}

CmpOp take_comparison(Modifiers &m) {
  static const std::pair<const char *, CmpOp> kC[] = {
      {"eq", CmpOp::Eq},   {"ne", CmpOp::Ne},   {"lt", CmpOp::Lt},   {"le", CmpOp::Le},
      {"gt", CmpOp::Gt},   {"ge", CmpOp::Ge},   {"lo", CmpOp::Lo},   {"ls", CmpOp::Ls},
      {"hi", CmpOp::Hi},   {"hs", CmpOp::Hs},   {"equ", CmpOp::Equ}, {"neu", CmpOp::Neu},
      {"ltu", CmpOp::Ltu}, {"leu", CmpOp::Leu}, {"gtu", CmpOp::Gtu}, {"geu", CmpOp::Geu},
      {"num", CmpOp::Num}, {"nan", CmpOp::Nan}};
  for (const auto &[n, c] : kC) {
    if (m.take(n))
      return c;
  }
  return CmpOp::None;
}

Space take_space(Modifiers &m) {
  if (m.take("global"))
    return Space::Global;
  if (m.take("shared") || m.take("shared::cta"))
    return Space::Shared;
  if (m.take("local"))
    return Space::Local;
  if (m.take("const"))
    return Space::Const;
  if (m.take("param") || m.take("param::entry") || m.take("param::func"))
    return Space::ParamKernel;
  return Space::Generic;
}

void drop_memory_hints(Modifiers &m) {
  for (auto it = m.list.begin(); it != m.list.end();) {
    const std::string &s = *it;
    bool hint = s == "ca" || s == "cg" || s == "cs" || s == "lu" || s == "cv" || s == "wb" ||
                s == "wt" || s == "nc" || s == "volatile" || s == "weak" || s == "relaxed" ||
                s == "acquire" || s == "release" || s == "acq_rel" || s == "sc" || s == "mmio" ||
                s == "cta" || s == "gpu" || s == "sys" || s == "cluster" ||
                s.rfind("L1::", 0) == 0 || s.rfind("L2::", 0) == 0;
    it = hint ? m.list.erase(it) : it + 1;
  }
}

// ---- services of the decode hooks -----------------------------------------------------------

void decode_fail(const DecodeState &s, const std::string &what) {
  s.decoder.fail_at(s.ai.line, what);
}

void decode_unsupported(const DecodeState &s) {
  decode_fail(s, "unsupported instruction '" + s.ai.opcode + "'");
}

void expect_operands(const DecodeState &s, size_t lo, size_t hi) {
  const size_t n = s.ai.operands.size();
  if (n < lo || n > hi)
    decode_fail(
        s, "'" + s.ai.opcode + "' expects " +
               (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
               " operands, got " + std::to_string(n));
}

DType take_one_type(DecodeState &s) {
  auto ts = s.mods.take_types();
  if (ts.size() != 1)
    decode_fail(s, "'" + s.ai.opcode + "' needs exactly one type");
  return ts[0];
}

void expect_no_modifiers_left(const DecodeState &s) {
  if (!s.mods.list.empty())
    decode_fail(s, "unsupported modifier '." + s.mods.list.front() + "' in '" + s.ai.opcode + "'");
}

Operand source_operand(DecodeState &s, size_t i, DType t) {
  return s.decoder.value_operand(s.ai.operands[i], t, s.ai.line, Space::Generic);
}

Operand value_operand(DecodeState &s, const AstOperand &a, DType t, Space symbol_context) {
  return s.decoder.value_operand(a, t, s.ai.line, symbol_context);
}

Operand dest_operand(DecodeState &s, const AstOperand &a, DType t) {
  return s.decoder.dest_operand(a, t, s.ai.line);
}

Operand address_operand(DecodeState &s, const AstOperand &a, Space &space) {
  return s.decoder.address_operand(a, space, s.ai.line);
}

uint32_t label_target(DecodeState &s, const AstOperand &a) {
  return s.decoder.label_target(a, s.ai.line);
}

DType register_type(const DecodeState &s, const Operand &o) {
  return s.decoder.reg_type(o);
}

bool decoding_kernel(const DecodeState &s) {
  return s.decoder.decoding_kernel();
}

void decode_call_operands(DecodeState &s) {
  s.decoder.decode_call_operands(s.in, s.ai);
}

Operand immediate_operand(uint64_t v) {
  Operand o;
  o.kind = OperandKind::Imm;
  o.imm = v;
  return o;
}

// ---- instructions ---------------------------------------------------------------------------

// call (ret), fn, (args);  call fn, (args);  call fn;
void Decoder::decode_call_operands(Instr &in, const AstInstruction &ai) {
  const int line = ai.line;
  const auto &ops = ai.operands;
  size_t i = 0;
  std::vector<uint32_t> rets, args;
  auto param_offsets = [&](const AstOperand &list, std::vector<uint32_t> &out) {
    for (const AstOperand &e : list.elements) {
      const NameEntry *p = e.kind == AstOperand::Kind::Name ? lookup(e.name) : nullptr;
      if (!p || p->is_reg || p->symbol.space != Space::ParamThread)
        fail(line, "call arguments must be .param variables declared before the call");
      out.push_back(static_cast<uint32_t>(p->symbol.address));
    }
  };
  if (i < ops.size() && ops[i].kind == AstOperand::Kind::List)
    param_offsets(ops[i++], rets);
  if (i >= ops.size() || ops[i].kind != AstOperand::Kind::Name)
    fail(line, "call needs a function name");
  auto fit = prog_->function_index.find(ops[i].name);
  if (fit == prog_->function_index.end()) {
    const NameEntry *e = lookup(ops[i].name);
    if (e && e->is_reg)
      fail(line, "indirect calls (through a register) are not supported");
    fail(line, "call to unknown function '" + ops[i].name + "'");
  }
  ++i;
  if (i < ops.size() && ops[i].kind == AstOperand::Kind::List)
    param_offsets(ops[i++], args);
  if (i != ops.size())
    fail(line, "unsupported call form (prototypes / indirect calls)");
  in.callee = fit->second;
  if (in.callee == current_function_)
    fail(line, "recursive calls are not supported");
  const AstFunction &callee_ast = ast_.functions[ast_index_[in.callee]];
  if (callee_ast.params.size() != args.size() || callee_ast.returns.size() != rets.size())
    fail(line, "call to '" + ops[i - (args.empty() ? 1 : 2)].name +
                   "' passes a different number of arguments or results than it declares");
  in.src[0].kind = OperandKind::Vector;
  in.src[0].reg = static_cast<uint32_t>(prog_->vector_regs.size());
  in.src[0].count = static_cast<uint8_t>(args.size());
  prog_->vector_regs.insert(prog_->vector_regs.end(), args.begin(), args.end());
  in.dst.kind = OperandKind::Vector;
  in.dst.reg = static_cast<uint32_t>(prog_->vector_regs.size());
  in.dst.count = static_cast<uint8_t>(rets.size());
  prog_->vector_regs.insert(prog_->vector_regs.end(), rets.begin(), rets.end());
  call_fixups_.push_back({static_cast<uint32_t>(prog_->code.size()), in.callee, line});
}

void Decoder::decode_instruction(const AstInstruction &ai,
                                 const std::unordered_map<std::string, uint32_t> &labels) {
  const int line = ai.line;
  Instr in;
  in.line = static_cast<uint32_t>(line);
  in.function = current_function_;
  std::vector<std::string> parts;
  {
    size_t start = 0;
    const std::string &op = ai.opcode;
    while (start <= op.size()) {
      size_t dot = op.find('.', start);
      if (dot == std::string::npos)
        dot = op.size();
      parts.push_back(op.substr(start, dot - start));
      start = dot + 1;
    }
  }
  const std::string &base = parts[0];
  const UncheckedInstruction *unchecked = unchecked_instruction(base);
  if (!ai.operand_error.empty()) {
    if (instruction_forms(base).empty() && !unchecked)
      fail(line, "unsupported instruction '" + ai.opcode + "'");
    throw device::DeviceError(device::ErrorKind::ModuleLoad, ai.operand_error);
  }
  CheckContext check;
  check.source_name = ast_.source_name;
  check.sm_version = sm_version_of(ast_.target);
  check.ptx_version = ptx_version();
  check.lookup = [this](const std::string &name) { return checked_name(name); };
  const InstructionForm *form = check_instruction(ai, check);
  if (!ai.guard.empty()) {
    const NameEntry *g = lookup(ai.guard);
    if (!g || !g->is_reg)
      fail(line, "unknown guard predicate '" + ai.guard + "'");
    in.has_guard = true;
    in.guard = g->reg;
    in.guard_negated = ai.guard_negated;
  }
  const DecodeFn decode = form ? form->decode : unchecked ? unchecked->decode : nullptr;
  if (!decode)
    fail(line, "unsupported instruction '" + ai.opcode + "'");
  labels_ = &labels;
  DecodeState state{*this, ai, base, Modifiers{{parts.begin() + 1, parts.end()}}, form, in};
  decode(state);
  if (in.exec == nullptr && !in.is_control)
    in.exec = exec_nop;
  in.is_collective = in.op == Op::BarSync || in.op == Op::BarArrive || in.op == Op::BarWarpSync ||
                     in.op == Op::Shfl || in.op == Op::Vote || in.op == Op::Redux ||
                     in.op == Op::MatchAny || in.op == Op::MatchAll || in.op == Op::Mma ||
                     in.op == Op::Ldmatrix;
  prog_->code.push_back(in);
  prog_->opcode_text.push_back(ai.opcode);
}

std::unique_ptr<Program> load_program(std::string_view ptx, std::string_view source_name,
                                      const GlobalAllocator &allocate_global) {
  // the parser has checked the header: ast.target is a known "sm_<N>[a|f]", ast.version known
  AstModule ast = parse_ptx(ptx, source_name);
  Decoder d(ast, allocate_global);
  std::unique_ptr<Program> prog = d.run();
  compact_registers(*prog);
  return prog;
}

} // namespace tcjit::emu
