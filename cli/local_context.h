#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace gpusched::cli {

// Everything the CLI takes from the machine and process it runs in, gathered
// in one value so that tests can run the whole CLI against a made-up one.
struct LocalContext {
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::string user;  // the invoking user's login name (a cancel says "by USER")
  std::string cwd;   // default workdir; base of relative paths
  std::string home;
  std::string system_config_dir = "/etc/gpusched";
  std::function<absl::Time()> now;
  std::function<void(absl::Duration)> sleep;
  absl::TimeZone time_zone;

  // The real process: environ, getpwuid(geteuid()), getcwd, the wall clock.
  static LocalContext FromProcess();
};

// Makes a relative path absolute against ctx.cwd; the daemon and agents never
// see the submitting shell's directory.
std::string AbsolutePath(const LocalContext& ctx, const std::string& path);

}  // namespace gpusched::cli
