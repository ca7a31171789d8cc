#pragma once

#include "absl/strings/string_view.h"

namespace gpusched::config {

// HOST:PORT ("0.0.0.0:6870", "[::1]:6870", "head-node:6870") or a unix:PATH
// socket, as gRPC takes them to listen on or to dial. Port 0 ("pick a free
// one") only where `port_zero_ok`, that is for listening.
bool IsHostPort(absl::string_view address, bool port_zero_ok);

}  // namespace gpusched::config
