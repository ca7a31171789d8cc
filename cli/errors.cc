#include "cli/errors.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace gpusched::cli {
namespace {

constexpr char kOriginUrl[] = "gpusched.cli/origin";
constexpr char kUsage[] = "usage";
constexpr char kUnreachable[] = "unreachable";

absl::Status WithOrigin(absl::Status status, const char* origin) {
  status.SetPayload(kOriginUrl, absl::Cord(origin));
  return status;
}

bool HasOrigin(const absl::Status& status, const char* origin) {
  auto payload = status.GetPayload(kOriginUrl);
  return payload.has_value() && *payload == origin;
}

}  // namespace

absl::Status UsageError(absl::string_view message) { return WithOrigin(absl::InvalidArgumentError(message), kUsage); }

absl::Status UnreachableError(absl::string_view address, absl::string_view why) {
  return WithOrigin(
      absl::UnavailableError(why.empty() ? absl::StrCat("cannot reach gpuschedd at ", address,
                                                        " (is it running? set --addr or GPUSCHED_ADDR)")
                                         : absl::StrCat("cannot reach gpuschedd at ", address, ": ", why)),
      kUnreachable);
}

bool IsUsageError(const absl::Status& status) { return HasOrigin(status, kUsage); }

bool IsUnreachableError(const absl::Status& status) { return HasOrigin(status, kUnreachable); }

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (IsUsageError(status)) return kExitUsage;
  if (IsUnreachableError(status)) return kExitUnreachable;
  return kExitFailed;
}

std::string ErrorLine(const absl::Status& status) {
  std::string message(status.message());
  if (message.empty()) message = absl::StatusCodeToString(status.code());
  // Scripts capture stderr line by line; a multi-line daemon message must not split.
  absl::StrReplaceAll({{"\r\n", "; "}, {"\n", "; "}}, &message);
  return absl::StrCat("gpusched: ", message);
}

}  // namespace gpusched::cli
