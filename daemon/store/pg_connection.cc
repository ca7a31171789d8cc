#include "daemon/store/pg_connection.h"

#include <endian.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/store/libpq.h"

namespace gpusched::store {
namespace {

// Type OIDs (pg_type.h is a server header).
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kByteaOid = 17;
constexpr int kBinary = 1;

std::string Trimmed(const char* message) {
  return std::string(absl::StripTrailingAsciiWhitespace(message == nullptr ? "" : message));
}

// What a statement was, for an error: its first words.
std::string Gist(absl::string_view sql) {
  std::string gist(absl::StripAsciiWhitespace(sql.substr(0, 60)));
  for (char& c : gist) {
    if (c == '\n') c = ' ';
  }
  return sql.size() > 60 ? absl::StrCat(gist, "...") : gist;
}

// libpq skips a password file that group or others may read, and then
// fails with "no password supplied": say what is wrong instead.
absl::Status CheckPasswordFile(const Libpq& pq, const std::string& url) {
  std::string path;
  char* error = nullptr;
  if (PQconninfoOption* options = pq.PQconninfoParse(url.c_str(), &error)) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (std::strcmp(o->keyword, "passfile") == 0 && o->val != nullptr) path = o->val;
    }
    pq.PQconninfoFree(options);
  }
  pq.PQfreemem(error);
  if (path.empty()) {
    if (const char* env = std::getenv("PGPASSFILE"); env != nullptr && *env != '\0') {
      path = env;
    } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
      path = absl::StrCat(home, "/.pgpass");
    }
  }
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) == 0) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "the PostgreSQL password file %s may be read by group or others (mode %04o), so libpq will not use it: "
      "chmod 0600 %s",
      path, st.st_mode & 07777, path));
}

}  // namespace

PgParams& PgParams::Int(int64_t value) {
  const uint64_t big = htobe64(static_cast<uint64_t>(value));
  values_.emplace_back(reinterpret_cast<const char*>(&big), sizeof big);
  null_.push_back(false);
  types_.push_back(kInt8Oid);
  formats_.push_back(kBinary);
  return *this;
}

PgParams& PgParams::Text(absl::string_view text) {
  values_.emplace_back(text);
  null_.push_back(false);
  types_.push_back(kTextOid);
  formats_.push_back(kBinary);  // text's binary form is its bytes
  return *this;
}

PgParams& PgParams::Bytes(absl::string_view bytes) {
  values_.emplace_back(bytes);
  null_.push_back(false);
  types_.push_back(kByteaOid);
  formats_.push_back(kBinary);
  return *this;
}

PgParams& PgParams::Null() {
  values_.emplace_back();
  null_.push_back(true);
  types_.push_back(0);  // the server infers it
  formats_.push_back(kBinary);
  return *this;
}

PgRows::~PgRows() {
  if (result_ != nullptr) pq_.PQclear(result_);
}

int PgRows::size() const { return pq_.PQntuples(result_); }

bool PgRows::IsNull(int row, int col) const { return pq_.PQgetisnull(result_, row, col) != 0; }

int64_t PgRows::Int(int row, int col) const {
  // Every integer column of the schema is BIGINT: eight bytes, big-endian.
  if (pq_.PQgetlength(result_, row, col) != sizeof(uint64_t)) return 0;
  uint64_t big = 0;
  std::memcpy(&big, pq_.PQgetvalue(result_, row, col), sizeof big);
  return static_cast<int64_t>(be64toh(big));
}

std::string PgRows::Bytes(int row, int col) const {
  return std::string(pq_.PQgetvalue(result_, row, col), static_cast<size_t>(pq_.PQgetlength(result_, row, col)));
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& url, const std::string& shown,
                                                                    const std::string& application_name) {
  absl::StatusOr<const Libpq*> loaded = LoadLibpq();
  if (!loaded.ok()) return loaded.status();
  const Libpq& pq = **loaded;
  if (absl::Status s = CheckPasswordFile(pq, url); !s.ok()) return s;
  // dbname is expanded (the URL's own parameters), and what follows wins.
  const char* keywords[] = {"dbname", "application_name", nullptr};
  const char* values[] = {url.c_str(), application_name.c_str(), nullptr};
  PGconn* conn = pq.PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq could not allocate a connection");
  if (pq.PQstatus(conn) != CONNECTION_OK) {
    std::string why = Trimmed(pq.PQerrorMessage(conn));
    pq.PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("cannot connect to PostgreSQL at ", shown, ": ", why));
  }
  // Notices (e.g. "relation already exists, skipping") are not errors; the
  // daemon's log is not the place for them.
  pq.PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  auto connection = std::unique_ptr<PgConnection>(new PgConnection(pq, conn, shown));
  if (absl::Status s = connection->Exec(kSessionSetup); !s.ok()) return s;
  return connection;
}

PgConnection::~PgConnection() { pq_.PQfinish(conn_); }

int PgConnection::backend_pid() const { return pq_.PQbackendPID(conn_); }

void PgConnection::Reopen() {
  pq_.PQreset(conn_);
  // The SELECT fails only with the connection, and the statement after it
  // then fails too.
  if (pq_.PQstatus(conn_) == CONNECTION_OK) pq_.PQclear(pq_.PQexec(conn_, kSessionSetup));
}

PGresult* PgConnection::Run(const std::function<PGresult*()>& statement) {
  if (pq_.PQstatus(conn_) == CONNECTION_BAD) Reopen();
  // Outside a transaction a statement that found the connection closed (the
  // server restarted since the last one) ran nowhere, or ran whole and is
  // safe to run again: reopen and try it once more. Inside one, the
  // transaction went with the connection, and the caller must start over.
  const bool outside_transaction = pq_.PQtransactionStatus(conn_) == PQTRANS_IDLE;
  PGresult* result = statement();
  if (outside_transaction && pq_.PQstatus(conn_) == CONNECTION_BAD) {
    pq_.PQclear(result);
    Reopen();
    result = statement();
  }
  return result;
}

absl::Status PgConnection::Exec(absl::string_view sql) {
  const std::string text(sql);
  PGresult* result = Run([&] { return pq_.PQexec(conn_, text.c_str()); });
  const ExecStatusType status = pq_.PQresultStatus(result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    pq_.PQclear(result);
    return absl::OkStatus();
  }
  absl::Status error = Error(result, sql);
  pq_.PQclear(result);
  return error;
}

absl::StatusOr<PgRows> PgConnection::Query(const std::string& sql, const PgParams& params) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  values.reserve(params.values_.size());
  for (size_t i = 0; i < params.values_.size(); ++i) {
    values.push_back(params.null_[i] ? nullptr : params.values_[i].data());
    lengths.push_back(static_cast<int>(params.values_[i].size()));
  }
  PGresult* result = Run([&] {
    return pq_.PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), params.types_.data(), values.data(),
                            lengths.data(), params.formats_.data(), kBinary);
  });
  const ExecStatusType status = pq_.PQresultStatus(result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return PgRows(pq_, result);
  absl::Status error = Error(result, sql);
  pq_.PQclear(result);
  return error;
}

absl::Status PgConnection::Error(PGresult* result, absl::string_view sql) {
  if (pq_.PQstatus(conn_) == CONNECTION_BAD) {
    return absl::UnavailableError(absl::StrCat("lost the connection to PostgreSQL at ", shown_, " (", Gist(sql),
                                               "): ", Trimmed(pq_.PQerrorMessage(conn_))));
  }
  const char* state = result != nullptr ? pq_.PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  const std::string message =
      absl::StrCat("PostgreSQL at ", shown_, " refused ", Gist(sql), ": ",
                   Trimmed(result != nullptr ? pq_.PQresultErrorMessage(result) : pq_.PQerrorMessage(conn_)),
                   sqlstate.empty() ? "" : absl::StrCat(" (SQLSTATE ", sqlstate, ")"));
  if (absl::StartsWith(sqlstate, "08") || sqlstate == "57P01" || sqlstate == "57P03") {
    return absl::UnavailableError(message);  // connection trouble, the server shutting down or starting
  }
  if (absl::StartsWith(sqlstate, "53")) return absl::ResourceExhaustedError(message);  // disk full, out of memory
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::AbortedError(message);  // serialization, deadlock
  return absl::InternalError(message);
}

}  // namespace gpusched::store
