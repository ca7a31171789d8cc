#include "cli/address.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/config_file.h"
#include "cli/errors.h"
#include "common/defaults.h"

namespace gpusched::cli {

std::vector<std::string> CliConfigPaths(const LocalContext& ctx) {
  std::vector<std::string> paths;
  std::optional<std::string> xdg = ctx.getenv ? ctx.getenv("XDG_CONFIG_HOME") : std::nullopt;
  if (xdg && !xdg->empty()) {
    paths.push_back(absl::StrCat(*xdg, "/gpusched/cli.toml"));
  } else if (!ctx.home.empty()) {
    paths.push_back(absl::StrCat(ctx.home, "/.config/gpusched/cli.toml"));
  }
  paths.push_back(absl::StrCat(ctx.system_config_dir, "/cli.toml"));
  return paths;
}

bool IsValidDaemonAddress(const std::string& address) {
  if (absl::StrContains(address, ',')) {
    for (absl::string_view one : absl::StrSplit(address, ',')) {
      if (!IsValidDaemonAddress(std::string(absl::StripAsciiWhitespace(one)))) return false;
    }
    return true;
  }
  if (absl::StartsWith(address, "unix:") || absl::StrContains(address, "://")) {
    return address.find(':') + 1 < address.size();
  }
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string host = address.substr(0, colon);
  if (host.front() == '[' && host.back() != ']') return false;
  int port = 0;
  return absl::SimpleAtoi(address.substr(colon + 1), &port) && port > 0 && port < 65536 &&
         address.find_first_of(" \t") == std::string::npos;
}

absl::StatusOr<std::string> ResolveDaemonAddress(const std::optional<std::string>& flag, const LocalContext& ctx) {
  auto checked = [](const std::string& address, const std::string& source) -> absl::StatusOr<std::string> {
    if (IsValidDaemonAddress(address)) return address;
    return UsageError(absl::StrCat("invalid ", source, " \"", address,
                                   "\": expected HOST:PORT, or several, comma-separated (the replicas of a daemon)"));
  };
  if (flag.has_value()) return checked(*flag, "--addr");
  if (ctx.getenv) {
    if (auto env = ctx.getenv(kDaemonAddressEnv); env && !env->empty()) {
      return checked(*env, kDaemonAddressEnv);
    }
  }
  for (const std::string& path : CliConfigPaths(ctx)) {
    auto config = ReadCliConfig(path);
    if (!config.ok()) return UsageError(config.status().message());
    if (!config->has_value() || !(*config)->address.has_value()) continue;
    return *(*config)->address;
  }
  return std::string(kDefaultDaemonAddress);
}

}  // namespace gpusched::cli
