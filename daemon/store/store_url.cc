#include "daemon/store/store_url.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "daemon/store/libpq.h"

namespace gpusched::store {
namespace {

constexpr absl::string_view kSqlite = "sqlite://";

// The URL with the password of its user info (postgresql://u:PASSWORD@h)
// and any password= parameter replaced, so that it can be logged.
std::string WithoutPassword(absl::string_view url) {
  std::string shown(url);
  const size_t scheme_end = shown.find("://");
  const size_t at = shown.find('@');
  if (scheme_end != std::string::npos && at != std::string::npos && at > scheme_end) {
    const size_t colon = shown.find(':', scheme_end + 3);
    if (colon != std::string::npos && colon < at) shown.replace(colon + 1, at - colon - 1, "***");
  }
  for (size_t p = shown.find("password="); p != std::string::npos; p = shown.find("password=", p + 1)) {
    const size_t end = shown.find('&', p);
    shown.replace(p + 9, (end == std::string::npos ? shown.size() : end) - p - 9, "***");
  }
  return shown;
}

}  // namespace

absl::StatusOr<StoreUrl> ParseStoreUrl(absl::string_view url) {
  StoreUrl parsed;
  if (absl::ConsumePrefix(&url, kSqlite)) {
    if (!absl::StartsWith(url, "/") || url.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("store: \"", kSqlite, url,
                                                     "\" must name an absolute path, with three slashes: ", kSqlite,
                                                     "/var/lib/gpusched/gpusched.db"));
    }
    parsed.engine = StoreUrl::Engine::kSqlite;
    parsed.sqlite_path = std::string(url);
    parsed.shown = absl::StrCat(kSqlite, url);
    return parsed;
  }
  if (absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://")) {
    parsed.engine = StoreUrl::Engine::kPostgres;
    parsed.postgres = std::string(url);
    parsed.shown = WithoutPassword(url);
    absl::StatusOr<const Libpq*> pq = LoadLibpq();
    if (!pq.ok()) return pq.status();
    char* error = nullptr;
    PQconninfoOption* options = (*pq)->PQconninfoParse(parsed.postgres.c_str(), &error);
    if (options == nullptr) {
      std::string why = error != nullptr ? std::string(absl::StripSuffix(error, "\n")) : "out of memory";
      (*pq)->PQfreemem(error);
      return absl::InvalidArgumentError(
          absl::StrCat("store: \"", parsed.shown, "\" is not a PostgreSQL URL libpq ", "accepts: ", why));
    }
    (*pq)->PQconninfoFree(options);
    return parsed;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "store: \"", WithoutPassword(url), "\" is neither sqlite:///PATH nor postgresql://[USER@]HOST[:PORT]/DB"));
}

std::string SqliteFileIn(absl::string_view state_dir) {
  return absl::StrCat(absl::StripSuffix(state_dir, "/"), "/gpusched.db");
}

std::string SqliteUrlIn(absl::string_view state_dir) { return absl::StrCat(kSqlite, SqliteFileIn(state_dir)); }

}  // namespace gpusched::store
