// Seeded mutation of PTX text for the checker's differential test (ptxas vs the emulator's
// loader): one small change per mutant, applied only to instructions whose rules the checker
// models (see kMutableOpcodes), so that "the emulator agrees with ptxas" is meaningful.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tcjit::emu::test {

struct Mutant {
  std::string seed;          // the seed's name
  std::string operator_name; // "reg_type", "swap_reg", "type_suffix", ...
  int line = 0;              // 1-based line of the change
  std::string before;        // the line before and after the change
  std::string after;
  std::string text;                 // the whole mutated PTX
  std::string ptxas_arch = "sm_80"; // ptxas -arch: the .target's own when a mutant names a newer
                                    // GPU (the emulator checks a module for its .target)
};

class PtxMutator {
public:
  PtxMutator(std::string seed_name, const std::string &text);

  // One mutant, or nullopt when the drawn operator found nothing to change (draw again).
  std::optional<Mutant> mutate(std::mt19937_64 &rng) const;

  // The operators, in the order mutate() draws them from.
  static const std::vector<std::string> &operator_names();

private:
  struct Decl {
    size_t line;        // index into lines_
    std::string type;   // "b32"
    std::string prefix; // "%r" for %r<12>, the name itself without a range
    bool ranged = false;
    uint64_t count = 1;
    int function = 0;
    bool all_uses_mutable = true;
  };
  struct Instr {
    size_t line;
    int function = 0;
    std::string indent, guard, opcode; // guard with its trailing space, "" when none
    std::vector<std::string> operands;
  };

  std::string seed_;
  std::vector<std::string> lines_;
  std::vector<Decl> decls_;
  std::vector<Instr> instrs_;          // only instructions with a mutable opcode
  std::vector<Instr> guarded_;         // every instruction with a guard
  std::vector<std::string> variables_; // .shared/.global/.const/.local/.param names
  // the header's lines (index into lines_; npos when absent) and the first declaration's
  size_t version_line_ = std::string::npos, target_line_ = std::string::npos,
         address_size_line_ = std::string::npos, first_declaration_ = std::string::npos;

  std::string render(const Instr &in) const;
  Mutant make(const std::string &op, size_t line, const std::string &new_line) const;
  // several lines replaced at once (a line may become several, or none)
  Mutant make_edits(const std::string &op, const std::vector<std::pair<size_t, std::string>> &edits,
                    const std::string &what) const;
  std::optional<std::string> random_register(std::mt19937_64 &rng, int function,
                                             const std::string &not_type) const;
  const Decl *decl_of(const std::string &reg, int function) const;

  std::optional<Mutant> reg_type(std::mt19937_64 &rng) const;
  std::optional<Mutant> swap_reg(std::mt19937_64 &rng) const;
  std::optional<Mutant> type_suffix(std::mt19937_64 &rng) const;
  std::optional<Mutant> vector_arity(std::mt19937_64 &rng) const;
  std::optional<Mutant> state_space(std::mt19937_64 &rng) const;
  std::optional<Mutant> imm_reg(std::mt19937_64 &rng) const;
  std::optional<Mutant> operand_count(std::mt19937_64 &rng) const;
  std::optional<Mutant> modifier(std::mt19937_64 &rng) const;
  std::optional<Mutant> guard(std::mt19937_64 &rng) const;
  std::optional<Mutant> address(std::mt19937_64 &rng) const;
  std::optional<Mutant> header(std::mt19937_64 &rng) const;
  std::optional<Mutant> address_offset(std::mt19937_64 &rng) const;
};

// Splits "a, [b+4], {c, d}" at top-level commas.
std::vector<std::string> split_operands(const std::string &s);

} // namespace tcjit::emu::test
