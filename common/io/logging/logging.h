#pragma once

#include <memory>
#include <string>

#include "spdlog/logger.h"

namespace gpusched {

// One named logger per component ("daemon", "store", "agent/node-a", ...),
// all writing to stderr, created on first use.
std::shared_ptr<spdlog::logger> GetLogger(const std::string& component);

// "trace", "debug", "info", "warn", "error"; unknown names leave the level as is.
void SetLogLevel(const std::string& level);

}  // namespace gpusched
