#pragma once

#include "absl/strings/string_view.h"

namespace gpusched::config {

// HOST:PORT ("0.0.0.0:6870", "[::1]:6870", "head-node:6870") or a unix:PATH
// socket, as gRPC takes them to listen on or to dial. Port 0 ("pick a free
// one") only where `port_zero_ok`, that is for listening.
bool IsHostPort(absl::string_view address, bool port_zero_ok);

// Whether only this machine can reach `address` (a HOST:PORT or unix:PATH):
// a unix socket, localhost, 127.0.0.0/8 or [::1]. By name, without
// resolving: "localhost" is taken at its word, any other name is not.
bool IsLoopbackAddress(absl::string_view address);

}  // namespace gpusched::config
