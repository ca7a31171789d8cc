#pragma once

#include <libpq-fe.h>

#include "absl/status/statusor.h"

namespace gpusched::store {

// libpq as the PostgreSQL store uses it, loaded (dlopen of libpq.so.5) the
// first time a postgresql:// store is named instead of linked into
// gpuschedd: the embedded SQLite default then maps none of libpq and of the
// twenty libraries it brings (Kerberos, LDAP, SASL, GnuTLS), which made a
// quarter of an idle daemon's memory and of its start. Each member is the
// libpq function of the same name.
struct Libpq {
  decltype(&::PQconninfoParse) PQconninfoParse;
  decltype(&::PQconninfoFree) PQconninfoFree;
  decltype(&::PQfreemem) PQfreemem;
  decltype(&::PQconnectdbParams) PQconnectdbParams;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQreset) PQreset;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQbackendPID) PQbackendPID;
  decltype(&::PQtransactionStatus) PQtransactionStatus;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQclear) PQclear;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQgetvalue) PQgetvalue;
};

// The library, loaded once and kept; FailedPrecondition naming libpq.so.5,
// what the loader said and the package to install when it cannot be.
absl::StatusOr<const Libpq*> LoadLibpq();

}  // namespace gpusched::store
