#include "kernels_db/transaction.h"

#include "kernels_db/error.h"

#include <sqlite3.h>

#include <random>
#include <thread>

namespace tcjit::kernels_db {
namespace {

bool is_busy(const DbError &error) {
  return error.kind() == DbErrorKind::busy;
}

// Runs `sql` until it does not fail with SQLITE_BUSY or the patience is spent.
void exec_with_retry(Connection &connection, const char *sql, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  std::minstd_rand random(std::random_device{}());
  int delay_ms = 1;
  for (;;) {
    try {
      connection.exec(sql);
      return;
    } catch (const DbError &error) {
      if (!is_busy(error) || std::chrono::steady_clock::now() >= deadline)
        throw;
    }
    std::uniform_int_distribution<int> jitter(0, delay_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms + jitter(random)));
    delay_ms = std::min(delay_ms * 2, 50);
  }
}

} // namespace

WriteTransaction::WriteTransaction(Connection &connection, std::chrono::milliseconds patience)
    : connection_(connection), patience_(patience) {
  exec_with_retry(connection_, "BEGIN IMMEDIATE", patience_);
  open_ = true;
}

WriteTransaction::~WriteTransaction() {
  if (open_ && sqlite3_get_autocommit(connection_.handle()) == 0) {
    try {
      connection_.exec("ROLLBACK");
    } catch (const DbError &) {
      // Nothing more can be done in a destructor; SQLite rolls back on close.
    }
  }
}

void WriteTransaction::commit() {
  exec_with_retry(connection_, "COMMIT", patience_);
  open_ = false;
}

ReadTransaction::ReadTransaction(Connection &connection) : connection_(connection) {
  connection_.exec("BEGIN DEFERRED");
}

ReadTransaction::~ReadTransaction() {
  if (sqlite3_get_autocommit(connection_.handle()) == 0) {
    try {
      connection_.exec("COMMIT");
    } catch (const DbError &) {
    }
  }
}

std::optional<std::string> run_record(Connection &connection, const std::function<void()> &body) {
  connection.exec("SAVEPOINT tcjit_record");
  try {
    body();
  } catch (const DbError &error) {
    if (error.kind() != DbErrorKind::invalid_argument && error.kind() != DbErrorKind::not_found)
      throw;
    connection.exec("ROLLBACK TO tcjit_record");
    connection.exec("RELEASE tcjit_record");
    return error.problem();
  }
  connection.exec("RELEASE tcjit_record");
  return std::nullopt;
}

} // namespace tcjit::kernels_db
