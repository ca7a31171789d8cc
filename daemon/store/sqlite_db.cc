#include "daemon/store/sqlite_db.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace gpusched::store {

absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  return absl::InternalError(absl::StrCat("sqlite error in ", what, ": ", sqlite3_errmsg(db)));
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, absl::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindBlob(int index, const std::string& bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  absl::Status error = SqliteError(db_, sqlite3_sql(stmt_));
  sqlite3_reset(stmt_);
  return error;
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row;
  do {
    row = Step();
  } while (row.ok() && *row);
  Reset();
  return row.status();
}

absl::Status Statement::ForEachRow(const std::function<absl::Status()>& row) {
  while (true) {
    absl::StatusOr<bool> more = Step();
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    if (absl::Status s = row(); !s.ok()) return s;
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const auto* text = sqlite3_column_text(stmt_, col);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

std::string Statement::ColumnBlob(int col) const {
  const void* data = sqlite3_column_blob(stmt_, col);
  int size = sqlite3_column_bytes(stmt_, col);
  return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
}

bool Statement::ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX;  // one connection per thread, by design
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    absl::Status error = absl::UnavailableError(
        absl::StrCat("cannot open state database ", path, ": ", db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return error;
  }
  // Readers may meet the writer mid-checkpoint; wait rather than fail.
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

absl::Status SqliteDb::Exec(absl::string_view sql) {
  std::string owned(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    absl::Status error = absl::InternalError(absl::StrCat("sqlite error in ", owned, ": ", message ? message : "?"));
    sqlite3_free(message);
    return error;
  }
  return absl::OkStatus();
}

absl::StatusOr<Statement> SqliteDb::Prepare(absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return SqliteError(db_, sql);
  }
  return Statement(db_, stmt);
}

}  // namespace gpusched::store
