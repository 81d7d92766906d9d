// PTX -> cubin with ptxas as a whole program (the cubin tcjit ships), its per-kernel resource
// report, and why it is not nvJitLink's relocatable code: a bar.warp.sync stays an instruction
// instead of a CALL to an sm_70 helper.
#include "../common/cubin_elf.h"
#include "runtime/device/device.h"
#include "runtime/jit/entry_resources.h"
#include "runtime/jit/ptx_compiler.h"
#include "runtime/jit/ptxas_compiler.h"
#include "test_ptx.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tcjit::jit {
namespace {

// A kernel with a warp barrier, and a second entry: two kernels in one module, as split-K has.
constexpr const char *kWarpSyncPtx = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry tcjit_warp_sync(.param .u64 tcjit_warp_sync_p)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;
	.shared .align 4 .b8 slab[512];
	ld.param.u64 	%rd1, [tcjit_warp_sync_p];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	shl.b32 	%r2, %r1, 2;
	mov.u32 	%r3, slab;
	add.s32 	%r3, %r3, %r2;
	st.shared.u32 	[%r3], %r1;
	bar.warp.sync 	-1;
	ld.shared.u32 	%r1, [%r3];
	mul.wide.u32 	%rd3, %r2, 1;
	add.s64 	%rd2, %rd2, %rd3;
	st.global.u32 	[%rd2], %r1;
	ret;
}

.visible .entry tcjit_second(.param .u64 tcjit_second_p)
{
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [tcjit_second_p];
	cvta.to.global.u64 	%rd2, %rd1;
	st.global.u32 	[%rd2], 7;
	ret;
}
)";

bool contains(const std::vector<char> &bytes, const std::string &text) {
  return std::string(bytes.begin(), bytes.end()).find(text) != std::string::npos;
}

int cubin_registers(const std::vector<char> &cubin, const std::string &kernel) {
  return testing::cubin_registers(std::string(cubin.begin(), cubin.end()), kernel);
}

TEST(PtxasCompiler, WholeProgramCubinKeepsWarpBarriersInline) {
  ASSERT_TRUE(ptxas_available()) << ptxas_executable();
  PtxCompileOptions options;
  options.sm_arch = 80;
  const CompiledPtx whole = compile_ptx_with_ptxas(kWarpSyncPtx, "warp_sync.ptx", options);
  EXPECT_EQ(whole.origin, CubinOrigin::Ptxas);
  ASSERT_GT(whole.cubin.size(), 64u);
  EXPECT_EQ(std::string(whole.cubin.begin(), whole.cubin.begin() + 4), "\x7f"
                                                                       "ELF");
  EXPECT_EQ(whole.options, "ptxas -arch=sm_80 -O3");
  EXPECT_FALSE(contains(whole.cubin, "__cuda_sm70_warpsync")) << "no call to the sm_70 helper";

  // nvJitLink's relocatable code calls the helper instead: the reason tcjit ships ptxas's.
  const NvJitLinkLibrary &library = nvjitlink_library();
  ASSERT_TRUE(library.loaded) << library.error;
  const CompiledPtx linked = compile_ptx(kWarpSyncPtx, "warp_sync.ptx", options, library);
  EXPECT_TRUE(contains(linked.cubin, "__cuda_sm70_warpsync"));
}

TEST(PtxasCompiler, ReportsEachKernelOfTheModuleAsTheCubinRecordsIt) {
  PtxCompileOptions options;
  options.sm_arch = 86;
  const CompiledPtx c = compile_ptx_with_ptxas(kWarpSyncPtx, "warp_sync.ptx", options);
  ASSERT_EQ(c.resources.size(), 2u) << c.info_log;
  const EntryResources *first = find_entry_resources(c.resources, "tcjit_warp_sync");
  const EntryResources *second = find_entry_resources(c.resources, "tcjit_second");
  ASSERT_TRUE(first && second) << c.info_log;
  EXPECT_EQ(first->static_shared_bytes, 512);
  EXPECT_EQ(second->static_shared_bytes, 0);
  EXPECT_EQ(first->spill_bytes(), 0);
  EXPECT_GT(first->constant_bytes, 0);
  for (const EntryResources *r : {first, second}) {
    EXPECT_GT(r->registers, 0);
    EXPECT_EQ(r->registers, cubin_registers(c.cubin, r->kernel)) << r->kernel;
  }
}

TEST(PtxasCompiler, RejectedPtxCarriesPtxasLog) {
  try {
    compile_ptx_with_ptxas(test::kBrokenPtx, "broken.ptx", PtxCompileOptions{});
    FAIL() << "ptxas accepted broken PTX";
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::ModuleLoad);
    const std::string what = e.what();
    EXPECT_NE(what.find("broken.ptx: ptxas could not compile the PTX for sm_80"), std::string::npos)
        << what;
    EXPECT_NE(what.find("undeclared_register"), std::string::npos) << what;
  }
}

TEST(PtxasCompiler, MissingPtxasIsNamedWithTheVariableToSet) {
  ::setenv("TCJIT_PTXAS", "/nonexistent/bin/ptxas", 1);
  EXPECT_FALSE(ptxas_available());
  try {
    compile_ptx_with_ptxas(test::kAxpyPtx, "axpy.ptx", PtxCompileOptions{});
    FAIL() << "compiled without ptxas";
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("cannot run ptxas at '/nonexistent/bin/ptxas' (set "
                                         "TCJIT_PTXAS"),
              std::string::npos)
        << e.what();
  }
  ::setenv("TCJIT_PTXAS", "/tmp", 1); // a directory is no program
  EXPECT_FALSE(ptxas_available());
  ::unsetenv("TCJIT_PTXAS");
  EXPECT_TRUE(ptxas_available());
}

TEST(PtxasCompiler, BadOptionsAreRefusedBeforeRunningAnything) {
  PtxCompileOptions options;
  options.optimization_level = 7;
  EXPECT_THROW(compile_ptx_with_ptxas(test::kAxpyPtx, "axpy.ptx", options), device::DeviceError);
  options = {};
  options.sm_arch = 7;
  EXPECT_THROW(compile_ptx_with_ptxas(test::kAxpyPtx, "axpy.ptx", options), device::DeviceError);
}

TEST(EntryResources, ParsesEveryEntryOfALogAndSkipsCallees) {
  // A split-K module with a libdevice callee, as ptxas -v prints it.
  const char *log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k_splitk_reduce' for 'sm_80'
ptxas info    : Function properties for k_splitk_reduce
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, used 0 barriers, 472 bytes cmem[0]
ptxas info    : Compile time = 11.026 ms
ptxas info    : Function properties for __nv_erfcf
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'k' for 'sm_80'
ptxas info    : Function properties for k
    8 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 8 bytes cumulative stack size, 1024 bytes smem, 464 bytes cmem[0]
)";
  const std::vector<EntryResources> r = parse_ptxas_resources(log);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].kernel, "k_splitk_reduce");
  EXPECT_EQ(r[0].registers, 20);
  EXPECT_EQ(r[0].constant_bytes, 472);
  EXPECT_EQ(r[0].stack_frame, 0) << "the callee's stack is not the reduce kernel's";
  EXPECT_EQ(r[1].kernel, "k");
  EXPECT_EQ(r[1].registers, 255);
  EXPECT_EQ(r[1].barriers, 1);
  EXPECT_EQ(r[1].stack_frame, 8);
  EXPECT_EQ(r[1].spill_stores, 8);
  EXPECT_EQ(r[1].spill_loads, 12);
  EXPECT_EQ(r[1].spill_bytes(), 20);
  EXPECT_EQ(r[1].static_shared_bytes, 1024);
  EXPECT_EQ(find_entry_resources(r, "k"), &r[1]);
  EXPECT_EQ(find_entry_resources(r, "nope"), nullptr);
  EXPECT_TRUE(parse_ptxas_resources("").empty());
  EXPECT_TRUE(parse_ptxas_resources("garbage\nUsed registers\n").empty());
}

} // namespace
} // namespace tcjit::jit
