#pragma once

// The two engines behind the store interface, made the same way for tests
// that hold both to one behaviour (TEMPLATE_TEST_CASE over the engines).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/store/job_store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"

namespace gpusched::testing {

// A fresh SQLite file.
class SqliteEngine {
 public:
  SqliteEngine();
  const std::string& skipped() const { return skipped_; }
  absl::StatusOr<std::unique_ptr<store::JobStore>> OpenStore();
  absl::StatusOr<std::unique_ptr<store::JobReader>> OpenReader();

 private:
  TempDir dir_;
  std::string path_;
  std::string skipped_;
};

// A fresh database on a PostgreSQL server of this test process (started
// at first use, stopped at exit). `skipped` says why when the server's
// programs are not installed.
class PostgresEngine {
 public:
  PostgresEngine();
  const std::string& skipped() const { return skipped_; }
  absl::StatusOr<std::unique_ptr<store::JobStore>> OpenStore();
  absl::StatusOr<std::unique_ptr<store::JobReader>> OpenReader();
  const std::string& url() const { return url_; }
  static PostgresServer* server();  // null when skipped

 private:
  std::string url_;
  std::string skipped_;
};

}  // namespace gpusched::testing
