#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::agent {

// The address of this host on the route toward `daemon` (HOST:PORT,
// "[v6]:PORT" or unix:PATH): what other nodes of the cluster can reach it
// at, and so the default MASTER_ADDR of a gang whose rank 0 runs here. The
// kernel picks it (a connected UDP socket sends nothing); a daemon on a
// Unix socket or on loopback gives 127.0.0.1.
absl::StatusOr<std::string> LocalAddressToward(absl::string_view daemon);

}  // namespace gpusched::agent
