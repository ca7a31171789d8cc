#include "agent/gpu/nic_link_speed.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace gpusched::agent {
namespace {

std::optional<std::string> FirstWord(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  std::vector<absl::string_view> words = absl::StrSplit(absl::StripAsciiWhitespace(line), ' ', absl::SkipEmpty());
  if (words.empty()) return std::nullopt;
  return std::string(words[0]);
}

}  // namespace

int RdmaLinkSpeedGbps(const std::string& sysfs_root, const std::string& device) {
  std::error_code ec;
  const std::filesystem::path ports = std::filesystem::path(sysfs_root) / "class/infiniband" / device / "ports";
  double best = 0;
  for (const auto& port : std::filesystem::directory_iterator(ports, ec)) {
    double gbps = 0;
    auto word = FirstWord(port.path() / "rate");
    if (word.has_value() && absl::SimpleAtod(*word, &gbps) && std::isfinite(gbps)) best = std::max(best, gbps);
  }
  // 2.5 Gb/s SDR x1 is the only fractional rate; round it rather than drop it.
  return static_cast<int>(std::lround(std::min(best, 1e6)));
}

int NetLinkSpeedGbps(const std::string& sysfs_root, const std::string& ifname) {
  int mbps = 0;
  auto word = FirstWord(std::filesystem::path(sysfs_root) / "class/net" / ifname / "speed");
  if (!word.has_value() || !absl::SimpleAtoi(*word, &mbps) || mbps <= 0) return 0;
  return static_cast<int>(std::lround(mbps / 1000.0));
}

}  // namespace gpusched::agent
