// The runtime API (tcjit::Runtime::prepare, Operation::launch) launches only kernels this user's
// tcjit built or rebuilt: a stored kernel whose PTX was edited, or one that does not load, is
// compiled again and the launch matches the CPU reference.
#include "tcjit/tcjit.hpp"

#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/trust_key.h"

#include "db_runtime_test_base.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr const char *kGemm = "gemm m=32 n=32 k=32 a=f16:row b=f16:col c=f16:row acc=f32";

class RuntimeTrust : public tcjit::testing::DbRuntimeTest {
protected:
  RuntimeTrust() : DbRuntimeTest("tcjit_api_trust_") {}
};

// Launches `op` on random inputs and compares with the CPU reference.
void expect_launch_matches(tcjit::Runtime &rt, const tcjit::Operation &op) {
  const tcjit::OpSpec &spec = op.spec();
  const tcjit::GemmGeometry geo = tcjit::gemm_geometry(spec);
  auto random_bytes = [](tcjit::DType t, int64_t count, uint64_t seed) {
    std::vector<std::byte> v(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8));
    tcjit::fill_random(t, v.data(), count, seed);
    return v;
  };
  const auto a = random_bytes(geo.a.dtype, geo.batch * geo.a.batch_stride, 11);
  const auto b = random_bytes(geo.b.dtype, geo.batch * geo.b.batch_stride, 12);
  const auto c = random_bytes(geo.c.dtype, geo.batch * geo.c.batch_stride, 13);
  std::vector<std::byte> expected = c;
  const tcjit::MathMode math =
      tcjit::resolve_math(spec.math, tcjit::tf32_disabled_by_environment());
  const tcjit::ReferenceResult ref =
      tcjit::reference_gemm(spec, {a.data(), b.data(), expected.data(), nullptr}, math);
  auto upload = [&](const std::vector<std::byte> &host) {
    const tcjit::DeviceAddress p = rt.allocate(host.size());
    rt.copy_to_device(p, host.data(), host.size());
    return p;
  };
  const tcjit::DeviceAddress da = upload(a), db = upload(b), dc = upload(c);
  tcjit::GemmArgs args{da, db, dc, dc, 0};
  args.m = geo.m;
  args.n = geo.n;
  args.k = geo.k;
  args.batch = geo.batch;
  op.launch(args);
  std::vector<std::byte> out(c.size());
  rt.copy_to_host(out.data(), dc, out.size());
  for (tcjit::DeviceAddress p : {da, db, dc})
    rt.free(p);
  const tcjit::CompareReport report = tcjit::compare_with_reference(spec, math, out.data(), ref);
  EXPECT_TRUE(report.ok()) << report.summary();
}

TEST_F(RuntimeTrust, AnEditedStoredKernelIsCompiledAgain) {
  {
    tcjit::Runtime first(options());
    EXPECT_EQ(first.prepare(kGemm).origin(), tcjit::Origin::compiled_now);
  }
  sql("UPDATE binaries SET ptx = replace(ptx, '%rd1,', '%rd9999,')");
  tcjit::Runtime second(options());
  const tcjit::Operation op = second.prepare(kGemm);
  EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  expect_launch_matches(second, op);
  tcjit::Runtime third(options()); // the kernel stored in its place is this user's
  EXPECT_EQ(third.prepare(kGemm).origin(), tcjit::Origin::database);
}

TEST_F(RuntimeTrust, AStoredKernelThatDoesNotLoadIsSetAside) {
  {
    tcjit::Runtime first(options());
    first.prepare(kGemm);
  }
  // Damage the PTX and sign it with this user's key: only loading it can tell.
  tcjit::kernels_db::BinaryRecord binary;
  {
    tcjit::kernels_db::KernelsDb db = tcjit::kernels_db::KernelsDb::open(dir_ / "kernels.db");
    const auto problems = db.list({});
    ASSERT_EQ(problems.size(), 1u);
    const auto details = db.show(problems[0].problem.key_text);
    ASSERT_EQ(details.size(), 1u);
    ASSERT_EQ(details[0].binaries.size(), 1u);
    const tcjit::kernels_db::BinaryKey &key = details[0].binaries[0].key;
    const auto found = db.find_binary(
        {key.problem_key, key.config_json, key.arch, key.toolkit_version, key.compiler_version});
    ASSERT_TRUE(found.binary);
    ASSERT_TRUE(found.binary->trusted);
    binary = *found.binary;
  }
  const size_t at = binary.ptx.find("%rd1,");
  ASSERT_NE(at, std::string::npos);
  binary.ptx.replace(at, 5, "%rd9999,");
  std::ifstream key_file(dir_ / "user.key", std::ios::binary);
  std::ostringstream key;
  key << key_file.rdbuf();
  std::string quoted;
  for (const char c : binary.ptx)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  sql("UPDATE binaries SET ptx = '" + quoted + "', mac = '" +
      tcjit::kernels_db::binary_mac(key.str(), binary) + "'");

  tcjit::Runtime second(options());
  const tcjit::Operation op = second.prepare(kGemm);
  EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  expect_launch_matches(second, op);
  tcjit::Runtime third(options());
  const tcjit::Operation again = third.prepare(kGemm);
  EXPECT_EQ(again.origin(), tcjit::Origin::database);
  expect_launch_matches(third, again);
}

} // namespace
