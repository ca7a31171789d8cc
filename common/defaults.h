#pragma once

namespace gpusched {

// The address `gpuschedd dev` listens on and the CLI dials when told nothing else.
inline constexpr const char* kDefaultDaemonAddress = "127.0.0.1:6870";
// Environment variable that overrides the CLI's and the agent's daemon address.
inline constexpr const char* kDaemonAddressEnv = "GPUSCHED_ADDR";
inline constexpr const char* kVersion = "0.1.0";

}  // namespace gpusched
