#include "kernels_db/merge.h"

#include "kernels_db/binary_store.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/dispatch_store.h"
#include "kernels_db/error.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"
#include "kernels_db/transaction.h"

#include <system_error>

namespace tcjit::kernels_db {
namespace {

Connection open_other(const std::filesystem::path &other) {
  OpenOptions read_only;
  read_only.create_if_missing = false;
  read_only.read_only = true;
  {
    Connection probe = Connection::open(other, read_only);
    const int version = read_schema_version(probe);
    refuse_newer_schema(version, other.string());
    if (version == 0)
      throw DbError(DbErrorKind::invalid_argument, "not a tcjit kernel database", other.string(),
                    "pass a database written by tcjit (`tcjit db stats --db FILE` tells)");
    if (version < kSchemaVersion) {
      OpenOptions writable;
      writable.create_if_missing = false;
      Connection upgrade = Connection::open(other, writable);
      prepare_schema(upgrade);
    }
  }
  return Connection::open(other, read_only);
}

} // namespace

TransferCounts merge_database(Connection &connection, const std::filesystem::path &other_path) {
  std::error_code ec;
  if (std::filesystem::equivalent(connection.path(), other_path, ec))
    throw DbError(DbErrorKind::invalid_argument, "cannot merge a database into itself",
                  other_path.string(), "pass another database file");
  Connection other = open_other(other_path);
  ReadTransaction snapshot(other);
  WriteTransaction transaction(connection);
  TransferCounts counts;
  {
    Statement problems =
        other.prepare("SELECT " + std::string(kProblemColumns) + " FROM problems p ORDER BY p.id");
    while (problems.step()) {
      const ProblemRecord problem = read_problem(problems, 0);
      if (!find_problem_id(connection, problem.key_text)) {
        upsert_problem(connection, problem);
        ++counts.problems;
      }
    }
  }
  {
    Statement binaries = other.prepare(
        "SELECT p.key_text, b.config_json, b.arch, b.toolkit_version, b.compiler_version, b.ptx, "
        "b.cubin, b.cubin_sha256, b.resources_json, b.compile_options, b.compile_ms, "
        "b.created_ms FROM binaries b JOIN problems p ON p.id = b.problem_id ORDER BY b.id");
    while (binaries.step()) {
      BinaryRecord binary;
      binary.key = {binaries.column_text(0), binaries.column_text(1), binaries.column_text(2),
                    binaries.column_text(3), binaries.column_text(4)};
      binary.ptx = binaries.column_text(5);
      binary.cubin = binaries.column_blob(6);
      binary.cubin_sha256 = binaries.column_text(7);
      binary.resources_json = binaries.column_text(8);
      binary.compile_options = binaries.column_text(9);
      binary.compile_ms = binaries.column_double(10);
      binary.created_ms = binaries.column_int64(11);
      if (sha256_hex(binary.cubin) != binary.cubin_sha256) {
        ++counts.binaries_rejected;
        continue;
      }
      const auto ours = read_binary(connection, binary.key);
      if (ours && sha256_hex(ours->cubin) == ours->cubin_sha256)
        continue;
      upsert_binary(connection, binary);
      ++counts.binaries;
    }
  }
  {
    Statement keys = other.prepare("SELECT key_text FROM problems ORDER BY id");
    while (keys.step())
      for (const ResultRecord &result : ranked_results(other, keys.column_text(0))) {
        if (insert_result(connection, result))
          ++counts.results_added;
        else
          ++counts.results_already_present;
      }
  }
  for (const DispatchTable &table : all_dispatch_tables(other)) {
    try {
      validate_dispatch_table(table);
    } catch (const DbError &error) {
      if (error.kind() != DbErrorKind::invalid_argument)
        throw;
      ++counts.dispatch_tables_rejected;
      continue;
    }
    const auto ours =
        read_dispatch_table(connection, table.problem_key, table.arch, table.tuner_version);
    if (ours && ours->created_ms >= table.created_ms)
      continue;
    replace_dispatch_table(connection, table);
    ++counts.dispatch_tables;
  }
  transaction.commit();
  return counts;
}

} // namespace tcjit::kernels_db
