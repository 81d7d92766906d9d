// Differential test of the emulator's PTX checker against ptxas: a seeded corpus of mutants of
// the seed kernels (tests/emu/ptx_seeds: hand-written ones and PTX the tcjit code generator
// emits), each loaded by the emulator and assembled by ptxas -arch=sm_80 (-arch of the GPU a
// mutant's .target names when that is newer: the emulator checks a module for its own .target);
// the two must agree on every mutant. TCJIT_PTX_MUTANTS sets the corpus size (the default suite's
// binary a few hundred, the `long` one thousands).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "runtime/emu/emu_device.h"
#include "tests/emu/ptx_mutator.h"

#ifndef TCJIT_PTX_MUTANTS
#define TCJIT_PTX_MUTANTS 400
#endif
// ctest names tests by suite and name: the `long` binary's differential has its own suite
#if TCJIT_PTX_MUTANTS > 1000
#define TCJIT_PTX_DIFFERENTIAL_SUITE PtxCheckerDifferentialLong
#else
#define TCJIT_PTX_DIFFERENTIAL_SUITE PtxCheckerDifferential
#endif

namespace tcjit::emu::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path &p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Verdict {
  bool accepted = false;
  std::string message;
};

Verdict run_ptxas(const std::string &ptx, const fs::path &dir, size_t id,
                  const std::string &arch = "sm_80") {
  const fs::path src = dir / ("m" + std::to_string(id) + ".ptx");
  const fs::path err = dir / ("m" + std::to_string(id) + ".err");
  {
    std::ofstream f(src);
    f << ptx;
  }
  const std::string cmd = std::string(TCJIT_PTXAS) + " -arch=" + arch + " '" + src.string() +
                          "' -o /dev/null 2>'" + err.string() + "' >/dev/null";
  const int rc = std::system(cmd.c_str());
  Verdict v{rc == 0, read_file(err)};
  fs::remove(src);
  fs::remove(err);
  return v;
}

Verdict run_emulator(const std::string &ptx, size_t id) {
  EmuDevice dev;
  try {
    dev.load_module(ptx, "mutant" + std::to_string(id) + ".ptx");
    return {true, ""};
  } catch (const device::DeviceError &e) {
    return {false, e.what()};
  }
}

// The opcode's first part on an instruction line ("" for anything else).
std::string mutated_opcode(const std::string &line) {
  std::stringstream ss(line);
  std::string word;
  ss >> word;
  if (!word.empty() && word[0] == '@')
    ss >> word;
  if (word.empty() || word[0] == '.' || word[0] == '%')
    return "";
  return word.substr(0, word.find('.'));
}

std::vector<std::pair<std::string, std::string>> seeds() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &e : fs::directory_iterator(fs::path(TCJIT_SOURCE_DIR) / "tests/emu/ptx_seeds")) {
    if (e.path().extension() == ".ptx")
      out.push_back({e.path().filename().string(), read_file(e.path())});
  }
  std::sort(out.begin(), out.end());
  return out;
}

#if TCJIT_PTX_MUTANTS <= 1000
TEST(PtxCheckerDifferential, SeedsLoadAndAssemble) {
  const fs::path dir = fs::temp_directory_path() / ("tcjit_ptx_seed_" + std::to_string(getpid()));
  fs::create_directories(dir);
  size_t id = 0;
  auto all = seeds();
  ASSERT_GE(all.size(), 4u);
  for (const auto &[name, text] : all) {
    EXPECT_TRUE(run_ptxas(text, dir, id).accepted) << name;
    Verdict emu = run_emulator(text, id++);
    EXPECT_TRUE(emu.accepted) << name << ": " << emu.message;
  }
  fs::remove_all(dir);
}

#endif

#if TCJIT_PTX_MUTANTS <= 1000
// mma.sp lines, valid and not, each in a kernel of its own: ptxas and the emulator's loader agree
// on every one (both spellings, every shape and type, operand counts and kinds, selectors, types,
// PTX version and target).
TEST(PtxCheckerDifferential, SparseMmaLinesAgreeWithPtxas) {
  struct Line {
    const char *version, *target, *text;
  };
  const std::string F4 = "{%f0,%f1,%f2,%f3}", R2 = "{%r0,%r1}", R4 = "{%r0,%r1,%r2,%r3}",
                    S4 = "{%s0,%s1,%s2,%s3}", H2 = "{%r4,%r5}";
  auto sp = [](const std::string &spelling, const std::string &shape_types,
               const std::string &ops) {
    return "mma." + spelling + ".sync.aligned." + shape_types + " " + ops + ";";
  };
  std::vector<std::tuple<std::string, std::string, std::string>> lines; // version, target, line
  for (const std::string spelling : {"sp", "sp::ordered_metadata"}) {
    const auto add = [&](const std::string &st, const std::string &ops,
                         const std::string &target = "sm_80") {
      lines.emplace_back("8.5", target, sp(spelling, st, ops));
    };
    // valid: every shape and type
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 3");
    add("m16n8k16.row.col.f16.f16.f16.f16", H2 + ", " + R2 + ", " + R2 + ", " + H2 + ", %r8, 0");
    add("m16n8k32.row.col.f32.f16.f16.f32", F4 + ", " + R4 + ", " + R4 + ", " + F4 + ", %r8, 1");
    add("m16n8k32.row.col.f16.f16.f16.f16", H2 + ", " + R4 + ", " + R4 + ", " + H2 + ", %r8, 0");
    add("m16n8k16.row.col.f32.bf16.bf16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 2");
    add("m16n8k32.row.col.f32.bf16.bf16.f32", F4 + ", " + R4 + ", " + R4 + ", " + F4 + ", %r8, 1");
    add("m16n8k8.row.col.f32.tf32.tf32.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 3");
    add("m16n8k16.row.col.f32.tf32.tf32.f32", F4 + ", " + R4 + ", " + R4 + ", " + F4 + ", %r8, 1");
    add("m16n8k32.row.col.s32.s8.u8.s32", S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 1");
    add("m16n8k32.row.col.satfinite.s32.u8.u8.s32",
        S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 0");
    add("m16n8k64.row.col.s32.s8.s8.s32.satfinite",
        S4 + ", " + R4 + ", " + R4 + ", " + S4 + ", %r8, 0");
    add("m16n8k64.row.col.s32.u4.s4.s32", S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 1");
    add("m16n8k128.row.col.s32.s4.s4.s32", S4 + ", " + R4 + ", " + R4 + ", " + S4 + ", %r8, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %f8, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %p1, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", {%r8}, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0",
        "sm_90");
    // selectors: ptxas's range per shape (m16n8k32 .f16 takes 0..3 as mma.sp, 0..1 ordered)
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 4");
    add("m16n8k32.row.col.f32.f16.f16.f32", F4 + ", " + R4 + ", " + R4 + ", " + F4 + ", %r8, 3");
    add("m16n8k32.row.col.f32.bf16.bf16.f32", F4 + ", " + R4 + ", " + R4 + ", " + F4 + ", %r8, 2");
    add("m16n8k16.row.col.f32.tf32.tf32.f32", F4 + ", " + R4 + ", " + R4 + ", " + F4 + ", %r8, 2");
    add("m16n8k32.row.col.s32.s8.s8.s32", S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 2");
    add("m16n8k64.row.col.s32.s8.s8.s32", S4 + ", " + R4 + ", " + R4 + ", " + S4 + ", %r8, 1");
    add("m16n8k128.row.col.s32.u4.u4.s32", S4 + ", " + R4 + ", " + R4 + ", " + S4 + ", %r8, 1");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, -1");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, %r9");
    // operand counts and kinds
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4);
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R4 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k32.row.col.f32.f16.f16.f32", F4 + ", " + R4 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s8.s8.s32", S4 + ", " + R4 + ", " + R2 + ", " + S4 + ", %r8, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", 5, 0");
    for (const char *constant : {"0f00004E44", "{0f00004E44}", "0d3FF0000000000000", "1.0", "{5}"})
      add("m16n8k16.row.col.f32.f16.f16.f32",
          F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", " + constant + ", 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %d1, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %h1, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32",
        "{%r4,%r5}, " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s8.s8.s32", S4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    // register types of the fragments (looser than dense mma's for .f32, .bf16, .tf32)
    add("m16n8k16.row.col.f32.f16.f16.f32",
        S4 + ", " + R2 + ", " + R2 + ", {%u0,%u1,%u2,%u3}, %r8, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32",
        "{%p0,%p1,%p2,%p3}, " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k16.row.col.f32.bf16.bf16.f32", F4 + ", {%s0,%s1}, {%f0,%f1}, " + F4 + ", %r8, 0");
    add("m16n8k8.row.col.f32.tf32.tf32.f32", F4 + ", {%p0,%p1}, {%x0,%x1}, " + F4 + ", %r8, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", {%s0,%s1}, " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k16.row.col.f16.f16.f16.f16",
        "{%u0,%u1}, " + R2 + ", " + R2 + ", " + H2 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s8.s8.s32", S4 + ", {%f0,%f1}, {%p0,%p1}, " + S4 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s8.s8.s32",
        "{%p0,%p1,%p2,%p3}, " + R2 + ", " + R2 + ", " + S4 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s8.s8.s32", S4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k16.row.col.f32.f16.f16.f32",
        "{%f0,%s1,%f2,%f3}, " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    // types, shapes, layouts, modifiers
    add("m16n8k32.row.col.f32.f16.f16.f16", F4 + ", " + R4 + ", " + R4 + ", " + H2 + ", %r8, 0");
    add("m16n8k32.row.col.f16.bf16.bf16.f16", H2 + ", " + R4 + ", " + R4 + ", " + H2 + ", %r8, 0");
    add("m16n8k16.row.col.s32.s8.s8.s32", S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 0");
    add("m16n8k8.row.col.f32.f16.f16.f32", F4 + ", {%r0}, {%r1}, " + F4 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s4.s4.s32", S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 0");
    add("m16n8k32.row.col.s32.s8.s4.s32", S4 + ", " + R2 + ", " + R2 + ", " + S4 + ", %r8, 0");
    add("m16n8k16.row.col.satfinite.f32.f16.f16.f32",
        F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k16.col.row.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    add("m16n8k16.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0");
    // target too old
    add("m16n8k16.row.col.f32.f16.f16.f32", F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0",
        "sm_75");
  }
  // PTX ISA versions: mma.sp needs 7.1, ::ordered_metadata 8.5
  const std::string ops = F4 + ", " + R2 + ", " + R2 + ", " + F4 + ", %r8, 0";
  lines.emplace_back("7.0", "sm_80", sp("sp", "m16n8k16.row.col.f32.f16.f16.f32", ops));
  lines.emplace_back("7.1", "sm_80", sp("sp", "m16n8k16.row.col.f32.f16.f16.f32", ops));
  lines.emplace_back("8.4", "sm_80",
                     sp("sp::ordered_metadata", "m16n8k16.row.col.f32.f16.f16.f32", ops));
  lines.emplace_back("8.5", "sm_80",
                     sp("sp.sync", "aligned.m16n8k16.row.col.f32.f16.f16.f32", ops));

  const fs::path dir = fs::temp_directory_path() / ("tcjit_ptx_sparse_" + std::to_string(getpid()));
  fs::create_directories(dir);
  size_t id = 0, accepted = 0;
  for (const auto &[version, target, line] : lines) {
    const std::string ptx = ".version " + version + "\n.target " + target +
                            "\n.address_size 64\n.visible .entry k()\n{\n"
                            "  .reg .b32 %r<12>;\n  .reg .f32 %f<12>;\n  .reg .s32 %s<4>;\n"
                            "  .reg .b64 %d<2>;\n  .reg .b16 %h<2>;\n  .reg .pred %p<4>;\n"
                            "  .reg .u32 %u<4>;\n  .reg .f16x2 %x<2>;\n  " +
                            line + "\n  ret;\n}\n";
    const Verdict ptxas = run_ptxas(ptx, dir, id, target);
    const Verdict emu = run_emulator(ptx, id++);
    accepted += ptxas.accepted;
    EXPECT_EQ(ptxas.accepted, emu.accepted)
        << ".version " << version << " .target " << target << ": " << line
        << "\n  ptxas: " << (ptxas.accepted ? "accepted" : ptxas.message)
        << "\n  emulator: " << (emu.accepted ? "accepted" : emu.message);
  }
  fs::remove_all(dir);
  // both kinds are there
  EXPECT_GT(accepted, lines.size() / 4);
  EXPECT_LT(accepted, lines.size() * 3 / 4);
}
#endif

TEST(TCJIT_PTX_DIFFERENTIAL_SUITE, EmulatorAgreesWithPtxasOnEveryMutant) {
  const size_t kMutants = TCJIT_PTX_MUTANTS;
  std::vector<PtxMutator> mutators;
  for (const auto &[name, text] : seeds())
    mutators.emplace_back(name, text);
  ASSERT_FALSE(mutators.empty());
  // the corpus: deterministic for the seed, distinct mutants only
  // TCJIT_PTX_MUTANT_SEED draws another corpus (to explore; the suite's is fixed)
  const char *seed_env = std::getenv("TCJIT_PTX_MUTANT_SEED");
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261124);
  std::vector<Mutant> corpus;
  std::set<std::string> seen;
  for (size_t tries = 0; corpus.size() < kMutants && tries < kMutants * 50; ++tries) {
    const PtxMutator &m = mutators[tries % mutators.size()];
    std::optional<Mutant> mu = m.mutate(rng);
    if (mu && seen.insert(mu->seed + ":" + std::to_string(mu->line) + ":" + mu->after).second)
      corpus.push_back(std::move(*mu));
  }
  ASSERT_EQ(corpus.size(), kMutants);

  const fs::path dir =
      fs::temp_directory_path() / ("tcjit_ptx_mutants_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<Verdict> ptxas(corpus.size()), emu(corpus.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < corpus.size(); i = next++) {
      ptxas[i] = run_ptxas(corpus[i].text, dir, i, corpus[i].ptxas_arch);
      emu[i] = run_emulator(corpus[i].text, i);
    }
  };
  const unsigned threads = std::max(4u, std::thread::hardware_concurrency() * 2);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker);
  for (std::thread &t : pool)
    t.join();
  fs::remove_all(dir);

  size_t agree = 0, rejected = 0;
  std::map<std::string, std::pair<size_t, size_t>> per_operator; // mutants, rejected by ptxas
  // the tensor-core and async-copy instructions: mutants of their lines, rejected, agreements
  std::map<std::string, std::array<size_t, 3>> per_opcode;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const Mutant &m = corpus[i];
    auto &po = per_operator[m.operator_name];
    ++po.first;
    po.second += !ptxas[i].accepted;
    rejected += !ptxas[i].accepted;
    const std::string opcode = mutated_opcode(m.before);
    if (opcode == "mma" || opcode == "ldmatrix" || opcode == "cp") {
      auto &n = per_opcode[opcode];
      ++n[0];
      n[1] += !ptxas[i].accepted;
      n[2] += ptxas[i].accepted == emu[i].accepted;
    }
    if (ptxas[i].accepted == emu[i].accepted) {
      ++agree;
      continue;
    }
    ADD_FAILURE() << m.seed << ":" << m.line << " (" << m.operator_name
                  << ")\n  before: " << m.before << "\n  after:  " << m.after
                  << "\n  ptxas -arch=" << m.ptxas_arch << ": "
                  << (ptxas[i].accepted ? "accepted" : ptxas[i].message)
                  << "\n  emulator: " << (emu[i].accepted ? "accepted" : emu[i].message);
  }
  std::cout << "PTX checker differential: " << corpus.size() << " mutants, " << rejected
            << " rejected by ptxas, agreement " << agree << "/" << corpus.size() << "\n";
  for (const auto &[op, n] : per_operator)
    std::cout << "  " << op << ": " << n.first << " mutants, " << n.second << " rejected\n";
  for (const auto &[op, n] : per_opcode)
    std::cout << "  on " << op << " lines: " << n[0] << " mutants, " << n[1]
              << " rejected by ptxas, agreement " << n[2] << "/" << n[0] << "\n";
  EXPECT_EQ(agree, corpus.size());
  // the corpus exercises the checker: a good share of mutants are invalid PTX
  EXPECT_GT(rejected, corpus.size() / 4);
  EXPECT_LT(rejected, corpus.size());
}

} // namespace
} // namespace tcjit::emu::test
