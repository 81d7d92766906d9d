#include "compiler/codegen/llvm/nvptx_emit.h"

#include "support/escape_controls.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/OptBisect.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace tcjit::codegen {

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";
// The kernel IR is built in SSA form (accumulators are PHIs), fully unrolled, with constant
// fragment indices: common-subexpression elimination of the address arithmetic, then hoisting
// what does not change across K-tiles out of the main loop (shared-memory fragment offsets,
// swizzles, bounds of M and N), is all it needs before ptxas, which does the machine
// optimisation: ptxas does not hoist them itself (f16 128x128x32: 146 integer instructions per
// K-tile without LICM, 83 with; main-loop instructions per HMMA 4.28 -> 3.28). (O3 costs ~3x the
// time for a worse loop; instcombine/simplifycfg add ~10 ms for nothing measurable.)
// Hoisting is not free: element-wise fragment loads of 8-bit operands (s8 with M/N-contiguous
// tiles, four byte loads per register) have so many distinct addresses that holding them all
// spills (40-96 B); those kernels keep the addresses in the loop (pipeline.cpp decides).
constexpr const char *kFastPipeline = "function(early-cse,loop-mssa(licm))";
constexpr const char *kFastPipelineNoHoist = "function(early-cse)";
// With libdevice linked: resolve __nvvm_reflect, inline, then clean up.
constexpr const char *kLibdevicePipeline =
    "function(nvvm-reflect),always-inline,cgscc(inline),globaldce,"
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm))";
constexpr const char *kLibdevicePipelineNoHoist =
    "function(nvvm-reflect),always-inline,cgscc(inline),globaldce,"
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg)";

void init_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

// NVPTX's own level. At 0 its fast register allocator leaves ~20 register copies per K-tile in an
// mma main loop (fragments and accumulators carried round the loop), which ptxas keeps; level 1
// removes them (f16: 3.28 -> 2.92 instructions per HMMA) for ~10-20 ms more. A SIMT FFMA loop
// gains nothing from it (1.34 at 0, 1.58 at 1) and takes 4x the time: 0 there.
llvm::CodeGenOptLevel codegen_opt_level(bool tensor_core, int llc_opt) {
  const int level = llc_opt >= 0 ? llc_opt : (tensor_core ? 1 : 0);
  switch (level) {
  case 0: return llvm::CodeGenOptLevel::None;
  case 1: return llvm::CodeGenOptLevel::Less;
  case 2: return llvm::CodeGenOptLevel::Default;
  }
  return llvm::CodeGenOptLevel::Aggressive;
}

// NVPTX numbers the "// callseq N" comments around calls with a process-wide counter (LLVM 19:
// a static std::atomic in NVPTXISelLowering.cpp, so concurrent compiles do not race on it, but
// they do take numbers from each other), so the same module printed twice differs. Renumber them
// from 0 in order of appearance (they do not nest) so that the PTX depends on the input only,
// whatever other threads compile meanwhile.
std::string renumber_call_sequences(const std::string &ptx) {
  static const std::string open = "{ // callseq ", close = "} // callseq ";
  std::string out;
  out.reserve(ptx.size());
  int next = 0;
  size_t pos = 0;
  while (pos < ptx.size()) {
    const size_t o = ptx.find(open, pos), c = ptx.find(close, pos);
    const size_t at = std::min(o, c);
    if (at == std::string::npos) {
      out.append(ptx, pos, std::string::npos);
      break;
    }
    const bool is_open = at == o;
    const size_t digits = at + (is_open ? open.size() : close.size());
    size_t end = digits;
    while (end < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[end])))
      ++end;
    out.append(ptx, pos, digits - pos);
    out += std::to_string(is_open ? next : next - 1);
    if (is_open)
      ++next;
    pos = end;
  }
  return out;
}

// Passes of NVPTX's code-generation pipeline (CodeGenOptLevel::Less) that change nothing in
// tcjit's kernels, skipped: the IR reaching them is already SSA (SROA), its shared and global
// accesses already vectors (the load/store vectorizer), its addresses already reassociated and
// common (NaryReassociate), with no branch worth speculating around and no large constant to
// hoist. 7-10% of emit_ptx (f16, bf16 + gelu, tf32, s8, conv: 0.90-0.93x, median of 9 paired
// runs). Over 18 kernels (every dtype, SIMT, f64 + libdevice, split-K, 2:4-sparse, s4, fprop,
// dgrad, wgrad, depthwise, the 7x7 stem) the PTX is byte-identical with and without them, but
// for a split-K GEMM where NaryReassociate folds two adds (its SASS is the same, 278
// instructions, 40 registers); tests/codegen/codegen_passes_test.cpp holds the identity.
// Matched by the name LLVM gives each pass (LLVM 19): a renamed pass simply runs again.
constexpr std::array<std::string_view, 5> kPassesWithoutEffect = {
    "SROA", "GPU Load and Store Vectorizer", "Nary reassociation",
    "Speculatively execute instructions", "Constant Hoisting"};

// LLVM's name of its loop strength reduction (CodegenPasses::loop_strength_reduction).
constexpr std::string_view kLoopStrengthReduction = "Loop Strength Reduction";

class SkipPasses final : public llvm::OptPassGate {
public:
  explicit SkipPasses(CodegenPasses passes) : passes_(passes) {}
  bool shouldRunPass(const llvm::StringRef name, llvm::StringRef) override {
    const std::string_view pass(name.data(), name.size());
    if (pass == kLoopStrengthReduction)
      return passes_.loop_strength_reduction;
    return passes_.every_pass || std::find(kPassesWithoutEffect.begin(), kPassesWithoutEffect.end(),
                                           pass) == kPassesWithoutEffect.end();
  }
  bool isEnabled() const override { return true; }

private:
  CodegenPasses passes_;
};

// Installs `gate` on the context for one scope (the context is the compile's own: pipeline.h,
// "Thread safety"), then puts back the gate it had.
class ScopedPassGate {
public:
  ScopedPassGate(llvm::LLVMContext &ctx, llvm::OptPassGate &gate)
      : ctx_(ctx), previous_(ctx.getOptPassGate()) {
    ctx_.setOptPassGate(gate);
  }
  ScopedPassGate(const ScopedPassGate &) = delete;
  ScopedPassGate &operator=(const ScopedPassGate &) = delete;
  ~ScopedPassGate() { ctx_.setOptPassGate(previous_); }

private:
  llvm::LLVMContext &ctx_;
  llvm::OptPassGate &previous_;
};

} // namespace

std::unique_ptr<llvm::TargetMachine> make_nvptx_target(int sm, int ptx_version, bool tensor_core,
                                                       int llc_opt) {
  init_nvptx();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target)
    throw std::runtime_error("LLVM has no NVPTX target: " + error);
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      kTriple, "sm_" + std::to_string(sm), "+ptx" + std::to_string(ptx_version), options,
      std::nullopt, std::nullopt, codegen_opt_level(tensor_core, llc_opt)));
}

std::string libdevice_path(const std::string &given) {
  if (!given.empty())
    return given;
  if (const char *env = std::getenv("TCJIT_LIBDEVICE"); env && *env)
    return env;
  return TCJIT_LIBDEVICE;
}

bool link_libdevice(llvm::Module &m, const std::string &given) {
  bool needed = false;
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_"))
      needed = true;
  if (!needed)
    return false;
  // Read and parsed per call, into this module's context: no libdevice module or buffer is shared
  // between compiles (a shared one would tie every compile to one LLVMContext).
  const std::string path = libdevice_path(given);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    throw std::runtime_error("cannot read libdevice at " + path + ": " +
                             buffer.getError().message() +
                             " (set TCJIT_CUDA_HOME to the CUDA toolkit's folder, or "
                             "TCJIT_LIBDEVICE to its nvvm/libdevice/libdevice.10.bc)");
  auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buffer), m.getContext());
  if (!lib) {
    std::string msg = llvm::toString(lib.takeError());
    throw std::runtime_error("cannot parse libdevice at " + path + ": " + msg);
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw std::runtime_error("linking libdevice from " + path + " failed");
  // Only f64 epilogues call libdevice (f32 ones use the approximate hardware forms inline,
  // epilogue.cpp), with at most 32 accumulators per thread: inlined, so that no kernel calls a
  // function (a call costs a stack frame and ptxas keeps it in every kernel).
  for (llvm::Function &f : m) {
    if (f.isDeclaration() || !f.getName().starts_with("__nv_"))
      continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  return true;
}

void optimize_module(llvm::Module &m, llvm::TargetMachine &tm, bool hoist_invariants,
                     const std::string &pipeline_override) {
  bool has_libdevice = false;
  for (const llvm::Function &f : m)
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      has_libdevice = true;
  m.setDataLayout(tm.createDataLayout());
  if (!m.getModuleFlag("nvvm-reflect-ftz"))
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  std::string pipeline = !pipeline_override.empty() ? pipeline_override
                         : has_libdevice
                             ? (hoist_invariants ? kLibdevicePipeline : kLibdevicePipelineNoHoist)
                             : (hoist_invariants ? kFastPipeline : kFastPipelineNoHoist);
  llvm::ModulePassManager mpm;
  if (pipeline == "O3") {
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  } else if (auto err = pb.parsePassPipeline(mpm, pipeline)) {
    if (!pipeline_override.empty()) // the user's: an error naming where it came from
      throw std::runtime_error(     // LLVM's message quotes the text too: both escaped
          "TCJIT_LLVM_PIPELINE='" + support::escape_controls(pipeline) +
          "' in the environment is not a pass pipeline LLVM can run (" +
          support::escape_controls(llvm::toString(std::move(err))) +
          "); give one, or O3, or unset it");
    throw std::logic_error("optimize_module: bad pass pipeline '" + pipeline +
                           "': " + llvm::toString(std::move(err)));
  }
  mpm.run(m, mam);
}

std::string emit_ptx_text(llvm::Module &m, llvm::TargetMachine &tm, CodegenPasses passes) {
  m.setDataLayout(tm.createDataLayout());
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw std::logic_error("emit_ptx_text: the NVPTX target cannot emit assembly");
  SkipPasses skip(passes);
  std::optional<ScopedPassGate> gate;
  if (!passes.every_pass || !passes.loop_strength_reduction)
    gate.emplace(m.getContext(), skip);
  pm.run(m);
  return renumber_call_sequences(std::string(out.str()));
}

} // namespace tcjit::codegen
