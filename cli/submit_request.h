#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/local_context.h"
#include "cli/submit_options.h"
#include "gpusched/v1/scheduler.pb.h"

namespace gpusched::cli {

// Turns the typed options into the request. Only what the CLI alone can know
// is checked here — unparsable values, negative counts, command vs script; the
// daemon validates the rest against the cluster. Errors are UsageErrors that
// name the flag.
absl::StatusOr<v1::SubmitJobRequest> BuildSubmitRequest(const SubmitOptions& options, const LocalContext& ctx);

// 128 random bits as hex: a fresh idempotency key per invocation, so that the
// client may retry a submit whose answer was lost.
std::string NewRequestId();

// The text of a --script file; a usage error naming it when unreadable.
absl::StatusOr<std::string> ReadScript(const std::string& path);

// "30%" or "30" into thousandths of a GPU (300); a usage error naming
// --gpu-share when it is not above 0 and at most 100.
absl::StatusOr<int32_t> ParseGpuShare(absl::string_view text);

}  // namespace gpusched::cli
