#include "daemon/store/libpq.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "common/io/shared_library/shared_library.h"

namespace gpusched::store {
namespace {

constexpr char kLibrary[] = "libpq.so.5";

absl::StatusOr<Libpq> Open() {
  auto handle = io::OpenSharedLibrary(kLibrary, "the PostgreSQL store", "libpq5");
  if (!handle.ok()) return handle.status();
  Libpq pq{};
  std::string missing;
#define GPUSCHED_RESOLVE(name) io::ResolveFunction(*handle, #name, &pq.name, &missing)
  GPUSCHED_RESOLVE(PQconninfoParse);
  GPUSCHED_RESOLVE(PQconninfoFree);
  GPUSCHED_RESOLVE(PQfreemem);
  GPUSCHED_RESOLVE(PQconnectdbParams);
  GPUSCHED_RESOLVE(PQstatus);
  GPUSCHED_RESOLVE(PQerrorMessage);
  GPUSCHED_RESOLVE(PQfinish);
  GPUSCHED_RESOLVE(PQreset);
  GPUSCHED_RESOLVE(PQsetNoticeProcessor);
  GPUSCHED_RESOLVE(PQbackendPID);
  GPUSCHED_RESOLVE(PQtransactionStatus);
  GPUSCHED_RESOLVE(PQexec);
  GPUSCHED_RESOLVE(PQexecParams);
  GPUSCHED_RESOLVE(PQresultStatus);
  GPUSCHED_RESOLVE(PQresultErrorField);
  GPUSCHED_RESOLVE(PQresultErrorMessage);
  GPUSCHED_RESOLVE(PQclear);
  GPUSCHED_RESOLVE(PQntuples);
  GPUSCHED_RESOLVE(PQgetisnull);
  GPUSCHED_RESOLVE(PQgetlength);
  GPUSCHED_RESOLVE(PQgetvalue);
#undef GPUSCHED_RESOLVE
  if (!missing.empty()) {
    dlclose(*handle);
    return absl::FailedPreconditionError(
        absl::StrCat("the PostgreSQL store needs ", kLibrary, " with ", missing, ", which the one found lacks"));
  }
  return pq;  // the handle stays open for the life of the process
}

}  // namespace

absl::StatusOr<const Libpq*> LoadLibpq() {
  static const absl::StatusOr<Libpq>* const loaded = new absl::StatusOr<Libpq>(Open());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace gpusched::store
