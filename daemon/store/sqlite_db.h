#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gpusched::store {

// A prepared statement; reset and rebound for each use.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, absl::string_view text);
  Statement& BindBlob(int index, const std::string& bytes);
  Statement& BindNull(int index);
  // true: a row is ready; false: done. Errors come back as a Status.
  absl::StatusOr<bool> Step();
  absl::Status Run();  // steps to completion, then resets
  // Calls `row` for each result row until it returns an error or rows run out.
  absl::Status ForEachRow(const std::function<absl::Status()>& row);
  void Reset();

  int64_t ColumnInt(int col) const;
  std::string ColumnText(int col) const;
  std::string ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// One SQLite connection. Not thread-safe: each thread opens its own.
class SqliteDb {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool read_only);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  absl::Status Exec(absl::string_view sql);
  absl::StatusOr<Statement> Prepare(absl::string_view sql);
  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// "sqlite error in <what>: <message>" as an Internal status.
absl::Status SqliteError(sqlite3* db, absl::string_view what);

}  // namespace gpusched::store
