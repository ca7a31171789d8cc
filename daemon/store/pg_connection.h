#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct pg_conn;
struct pg_result;

namespace gpusched::store {

struct Libpq;

// The parameters of one statement, sent in binary: integers as int8,
// bytes as bytea, text as text. $1 is the first added.
class PgParams {
 public:
  PgParams& Int(int64_t value);
  PgParams& Text(absl::string_view text);
  PgParams& Bytes(absl::string_view bytes);
  PgParams& Null();

 private:
  friend class PgConnection;
  std::vector<std::string> values_;
  std::vector<bool> null_;
  std::vector<unsigned int> types_;  // OIDs
  std::vector<int> formats_;
};

// The rows of one statement, in binary: read integers with Int (the
// column must be BIGINT), text and bytea with Bytes.
class PgRows {
 public:
  PgRows(const Libpq& pq, pg_result* result) : pq_(pq), result_(result) {}
  PgRows(PgRows&& other) noexcept : pq_(other.pq_), result_(other.result_) { other.result_ = nullptr; }
  PgRows& operator=(PgRows&&) = delete;
  ~PgRows();

  int size() const;
  bool IsNull(int row, int col) const;
  int64_t Int(int row, int col) const;
  std::string Bytes(int row, int col) const;

 private:
  const Libpq& pq_;
  pg_result* result_;
};

// One connection to PostgreSQL (libpq). Not thread-safe: each thread keeps
// its own. A connection that broke (the server restarted, the network
// dropped) is reopened; a statement outside a transaction is then run once
// more, one inside fails UNAVAILABLE (the transaction went with it).
//
// Every session commits durably: where the server, database or role sets
// synchronous_commit = off, the session sets it on (a COMMIT would else
// return before its WAL is on disk, and an acknowledged submit could be
// lost with the server). Other levels are the operator's choice and kept.
class PgConnection {
 public:
  // `url`: a postgresql:// URL or a libpq conninfo string. `shown`: the
  // same with any password left out, for messages and logs. The session's
  // application_name (pg_stat_activity) says what it is for; it is kept
  // when the connection is reopened.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& url, const std::string& shown,
                                                               const std::string& application_name = "gpuschedd");
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // The statement each session runs first, on connecting and reconnecting.
  static constexpr char kSessionSetup[] =
      "SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'";

  // One or more statements without parameters or rows (DDL, BEGIN, ...).
  absl::Status Exec(absl::string_view sql);
  // One statement; its rows, if any.
  absl::StatusOr<PgRows> Query(const std::string& sql, const PgParams& params = {});
  // The server process serving this connection (pg_backend_pid()).
  int backend_pid() const;
  const std::string& shown() const { return shown_; }

 private:
  PgConnection(const Libpq& pq, pg_conn* conn, std::string shown) : pq_(pq), conn_(conn), shown_(std::move(shown)) {}
  // Runs one statement (reopening a broken connection first); returns its result.
  // PQreset, then the session setup again.
  void Reopen();
  pg_result* Run(const std::function<pg_result*()>& statement);
  // UNAVAILABLE (and reset for the next call) when the connection broke,
  // else the server's error with its SQLSTATE.
  absl::Status Error(pg_result* result, absl::string_view sql);

  const Libpq& pq_;
  pg_conn* conn_;
  std::string shown_;
};

}  // namespace gpusched::store
