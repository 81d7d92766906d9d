// DbError: the one exception type of kernels_db. It says what went wrong, where (database path,
// operation) and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace tcjit::kernels_db {

enum class DbErrorKind {
  sqlite,           // an SQLite call failed (see sqlite_code)
  io,               // a file or directory cannot be created, opened or read
  busy,             // the database stayed locked by other processes for too long
  corrupt,          // the file is damaged or not a database
  newer_schema,     // the database was created by a newer tcjit
  invalid_argument, // bad input: malformed JSON, bad --where expression, unknown value
  not_found,        // the requested row does not exist
};

class DbError : public std::runtime_error {
public:
  DbError(DbErrorKind kind, std::string problem, std::string where, std::string how_to_fix,
          int sqlite_code = 0);

  DbErrorKind kind() const { return kind_; }
  // The bare description, without location and advice.
  const std::string &problem() const { return problem_; }
  const std::string &where() const { return where_; }
  const std::string &how_to_fix() const { return how_to_fix_; }
  int sqlite_code() const { return sqlite_code_; }

private:
  DbErrorKind kind_;
  std::string problem_, where_, how_to_fix_;
  int sqlite_code_;
};

} // namespace tcjit::kernels_db
