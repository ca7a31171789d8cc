#pragma once

#include <string>

namespace gpusched {

// Sends gRPC's own log lines (by default only its errors, GRPC_VERBOSITY
// says otherwise) through spdlog's "grpc" logger, so that they read like the
// rest of the log. A TLS handshake that failed is logged only by gRPC; its
// line is a warning starting "TLS handshake failed:", with `handshake_note`
// after it when not empty (what a failure means for this process). Call once,
// early in main.
void RouteGrpcLogsToSpdlog(std::string handshake_note = "");

}  // namespace gpusched
