#include "common/io/logging/logging.h"

#include <mutex>

#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace gpusched {

std::shared_ptr<spdlog::logger> GetLogger(const std::string& component) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = spdlog::stderr_color_mt(component);
  logger->set_level(spdlog::get_level());
  return logger;
}

void SetLogLevel(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return;
  spdlog::set_level(parsed);
  spdlog::apply_all([parsed](std::shared_ptr<spdlog::logger> l) { l->set_level(parsed); });
}

}  // namespace gpusched
