// Transactions. Every write runs in a WriteTransaction (BEGIN IMMEDIATE, retried while other
// processes hold the write lock); multi-statement reads use a ReadTransaction for one snapshot.
#pragma once

#include "kernels_db/connection.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace tcjit::kernels_db {

class WriteTransaction {
public:
  // Retries BEGIN IMMEDIATE (and COMMIT) on SQLITE_BUSY with jittered back-off until `patience`
  // has passed, then throws DbError(busy).
  explicit WriteTransaction(Connection &connection,
                            std::chrono::milliseconds patience = std::chrono::seconds(60));
  WriteTransaction(const WriteTransaction &) = delete;
  WriteTransaction &operator=(const WriteTransaction &) = delete;
  ~WriteTransaction(); // rolls back unless committed

  void commit();

private:
  Connection &connection_;
  std::chrono::milliseconds patience_;
  bool open_ = false;
};

class ReadTransaction {
public:
  explicit ReadTransaction(Connection &connection);
  ReadTransaction(const ReadTransaction &) = delete;
  ReadTransaction &operator=(const ReadTransaction &) = delete;
  ~ReadTransaction();

private:
  Connection &connection_;
};

// Runs `body` (one record of an import or merge) inside a SAVEPOINT of the caller's transaction.
// A DbError(invalid_argument or not_found) from it rolls back what it wrote and is returned as its
// problem text; other errors propagate (and the caller's transaction rolls back).
std::optional<std::string> run_record(Connection &connection, const std::function<void()> &body);

} // namespace tcjit::kernels_db
