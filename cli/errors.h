#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpusched::cli {

// Exit codes are part of the CLI's contract: scripts branch on them.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,       // the daemon refused, or the request or the job failed
  kExitUsage = 2,        // the command line (or the CLI's config) is wrong; nothing was sent
  kExitUnreachable = 3,  // no daemon answered at the resolved address
};

// The absl code alone cannot tell a local usage mistake from the daemon
// rejecting a request (both are INVALID_ARGUMENT), so the origin travels as a
// status payload.
absl::Status UsageError(absl::string_view message);
// `why`, when known (a refused TLS handshake), replaces the "is it running?" advice.
absl::Status UnreachableError(absl::string_view address, absl::string_view why = "");

bool IsUsageError(const absl::Status& status);
bool IsUnreachableError(const absl::Status& status);

int ExitCodeFor(const absl::Status& status);

// The one line printed to stderr: "gpusched: <message>".
std::string ErrorLine(const absl::Status& status);

}  // namespace gpusched::cli
