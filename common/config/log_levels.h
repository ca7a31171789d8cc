#pragma once

#include <string>
#include <vector>

namespace gpusched::config {

// The values of --log-level and of log_level in gpuschedd.toml and agent.toml
// (spdlog's level names).
inline std::vector<std::string> LogLevelNames() {
  return {"trace", "debug", "info", "warn", "error", "critical", "off"};
}

}  // namespace gpusched::config
