// codegen_ptx_tool SPEC [ARCH] [CONFIG]: prints the PTX of a GEMM spec (FileCheck tests) and,
// with TCJIT_PTXAS_LOG=1, ptxas -v's summary on stderr.
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "ptxas_run.h"

#include <cstdlib>
#include <iostream>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: codegen_ptx_tool SPEC [ARCH] [CONFIG]\n";
    return 2;
  }
  tcjit::ParseResult r = tcjit::parse_spec(argv[1]);
  if (!r.ok()) {
    for (auto &d : r.errors)
      std::cerr << d.render();
    return 1;
  }
  tcjit::codegen::CompileOptions opt;
  if (argc > 2)
    opt.arch = argv[2];
  if (argc > 3) {
    tcjit::codegen::TileConfig c;
    std::string err;
    if (!tcjit::codegen::parse_tile_config(argv[3], c, err)) {
      std::cerr << err << "\n";
      return 2;
    }
    opt.config = c;
  }
  auto k = tcjit::codegen::compile_gemm(r.entries[0].spec, opt);
  if (!k.ok()) {
    for (auto &e : k.errors)
      std::cerr << e.field << ": " << e.message << "\n";
    return 1;
  }
  std::cout << k.ptx;
  if (std::getenv("TCJIT_PTXAS_LOG")) {
    const tcjit::codegen::PtxasRun p = tcjit::codegen::run_ptxas(k);
    std::cerr << "ptxas ok=" << p.ok << " regs=" << p.kernel.registers
              << " spill=" << p.kernel.spill_stores << "/" << p.kernel.spill_loads << "\n"
              << (p.ok ? "" : p.log);
  }
  std::cerr << "total " << k.total_ms() << " ms\n";
  return 0;
}
