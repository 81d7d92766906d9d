// The --where expression parser and the ls filters, including injection attempts.
#include "db_test_util.h"

#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/where_expr.h"

#include <gtest/gtest.h>

namespace tcjit::kernels_db {
namespace {

using testing::filter;
using testing::sample_problem;
using testing::TempDir;

TEST(WhereExpr, ParsesComparisonsJoinedByAnd) {
  EXPECT_TRUE(parse_where("").terms.empty());
  EXPECT_TRUE(parse_where("   ").terms.empty());
  const WhereExpr expr = parse_where(" m>=1024 and n < 64 and  k==-3 and batch!=2 and c=1");
  ASSERT_EQ(expr.terms.size(), 5u);
  EXPECT_EQ(expr.terms[0].field, "m");
  EXPECT_EQ(expr.terms[0].comparison, Comparison::greater_equal);
  EXPECT_EQ(expr.terms[0].value, 1024);
  EXPECT_EQ(expr.terms[1].comparison, Comparison::less);
  EXPECT_EQ(expr.terms[2].comparison, Comparison::equal);
  EXPECT_EQ(expr.terms[2].value, -3);
  EXPECT_EQ(expr.terms[3].field, "batch");
  EXPECT_EQ(expr.terms[3].comparison, Comparison::not_equal);
  EXPECT_EQ(expr.terms[4].comparison, Comparison::equal);
  EXPECT_EQ(sql_operator(Comparison::not_equal), "<>");
  EXPECT_EQ(parse_where("m>=1 AND k>2").terms.size(), 2u);
}

TEST(WhereExpr, RejectsAnythingElseWithAClearError) {
  const char *rejected[] = {
      "m>=1024; DROP TABLE problems",
      "m>=1024 or 1=1",
      "m>=1 OR m<1",
      "1=1",
      "m>='1024'",
      "m>=1024) --",
      "m>=1024 -- comment",
      "m >= 1 and",
      "and m>1",
      "m",
      "m>=",
      "m=>1",
      "m>=1.5",
      "m>=0x10",
      "m>=99999999999999999999",
      "json_extract(shape_json,'$.m')>1",
      "m>=1 and k",
      "m>=1 andk>2",
      "m>1 union select * from binaries",
      "\"m\">=1",
      "m>=1\nand k>1",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa>1", // 33 characters
  };
  for (const char *text : rejected) {
    try {
      parse_where(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const DbError &error) {
      EXPECT_EQ(error.kind(), DbErrorKind::invalid_argument) << text;
      const std::string what = error.what();
      EXPECT_NE(what.find("invalid --where expression"), std::string::npos) << what;
      EXPECT_NE(what.find("at column"), std::string::npos) << what;
      EXPECT_NE(what.find("m>=1024 and k<=4096"), std::string::npos) << what; // example
    }
  }
}

TEST(WhereExpr, ErrorPointsAtTheOffendingColumn) {
  try {
    parse_where("m>=1024; DROP TABLE problems");
    FAIL();
  } catch (const DbError &error) {
    EXPECT_NE(std::string(error.what()).find("column 8"), std::string::npos) << error.what();
  }
}

class KernelsDbList : public ::testing::Test {
protected:
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("kernels.db"));

  void SetUp() override {
    db.put_problem(sample_problem(0, "gemm", 256));
    db.put_problem(sample_problem(1, "gemm", 1024));
    db.put_problem(sample_problem(2, "gemm", 4096));
    ProblemRecord conv = sample_problem(3, "conv2d", 2048);
    conv.dtype = "bf16";
    conv.arch = "sm_86";
    db.put_problem(conv);
  }

  size_t count(ListFilter filter) { return db.list(filter).size(); }
};

TEST_F(KernelsDbList, FiltersByOpDtypeArchAndShape) {
  EXPECT_EQ(count(filter({}, {}, {})), 4u);
  EXPECT_EQ(count(filter("gemm", {}, {}, "", 0)), 3u);
  EXPECT_EQ(count(filter("conv2d", {}, {}, "", 0)), 1u);
  EXPECT_EQ(count(filter({}, "bf16", {}, "", 0)), 1u);
  EXPECT_EQ(count(filter({}, {}, "sm_80", "", 0)), 3u);
  EXPECT_EQ(count(filter({}, {}, {}, "m>=1024", 0)), 3u);
  EXPECT_EQ(count(filter("gemm", {}, {}, "m>=1024", 0)), 2u);
  EXPECT_EQ(count(filter({}, {}, {}, "m>=1024 and m<4096", 0)), 2u);
  EXPECT_EQ(count(filter({}, {}, {}, "m=256 and n=512 and k=64", 0)), 1u);
  EXPECT_EQ(count(filter({}, {}, {}, "m!=256", 0)), 3u);
  EXPECT_EQ(count(filter({}, {}, {}, "nosuchfield>0", 0)), 0u);
  EXPECT_EQ(count(filter({}, {}, {}, "nosuchfield!=0", 0)), 0u); // a missing field never matches
  EXPECT_EQ(count(filter({}, {}, {}, "", 2)), 2u);
  const auto summaries = db.list(filter({}, {}, {}, "m>=4096", 0));
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].problem.key_hash, 0xF000000000000002ull);
}

TEST_F(KernelsDbList, InjectionAttemptsChangeNothing) {
  for (const char *text : {"m>=0; DROP TABLE problems", "m>=0 or 1=1", "m>=0' OR '1'='1",
                           "m>=0); DELETE FROM problems"})
    EXPECT_THROW(db.list(filter({}, {}, {}, text, 0)), DbError) << text;
  // Values in the exact-match filters are bound parameters, never SQL.
  EXPECT_EQ(count(filter("gemm' OR '1'='1", {}, {}, "", 0)), 0u);
  EXPECT_EQ(count(filter({}, {}, "sm_80'; DROP TABLE problems; --", "", 0)), 0u);
  EXPECT_EQ(count(filter({}, {}, {})), 4u);
}

} // namespace
} // namespace tcjit::kernels_db
