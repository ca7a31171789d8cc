#pragma once

#include <string>

#include "absl/status/status.h"

namespace gpusched::dev {

// Submits a small 2-GPU job through the public gRPC API, as any client would,
// waits for it to end and prints where it ran, how it ended and its output.
// Fails if it does not complete.
absl::Status RunDemoJob(const std::string& daemon_address);

}  // namespace gpusched::dev
