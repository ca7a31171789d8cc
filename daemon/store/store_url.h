#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::store {

// Where the daemon keeps its state, from the `store` setting:
//   sqlite:///var/lib/gpusched/gpusched.db   one SQLite file (the default)
//   postgresql://user@host:5432/gpusched     PostgreSQL (also postgres://),
//                                            any libpq URL
struct StoreUrl {
  enum class Engine { kSqlite, kPostgres };
  Engine engine = Engine::kSqlite;
  std::string sqlite_path;  // kSqlite: an absolute path
  std::string postgres;     // kPostgres: the URL as libpq takes it
  std::string shown;        // for messages and logs: the URL without its password
};

// Checks the URL's form (and, for PostgreSQL, that libpq can parse it);
// an error says what is wrong with it. Connects to nothing.
absl::StatusOr<StoreUrl> ParseStoreUrl(absl::string_view url);

// The SQLite file in a state directory: what `store` is when not set.
std::string SqliteFileIn(absl::string_view state_dir);
std::string SqliteUrlIn(absl::string_view state_dir);

}  // namespace gpusched::store
