#include "cli/local_context.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/time/clock.h"

namespace gpusched::cli {
namespace {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

LocalContext LocalContext::FromProcess() {
  LocalContext ctx;
  ctx.getenv = ProcessEnv;
  // The account the process runs as, not $USER, which anyone can set.
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr) {
    ctx.user = pw->pw_name;
    ctx.home = pw->pw_dir;
  } else {
    ctx.user = ProcessEnv("USER").value_or("");
  }
  if (auto home = ProcessEnv("HOME"); home && !home->empty()) ctx.home = *home;
  std::error_code ec;
  ctx.cwd = std::filesystem::current_path(ec).string();
  ctx.now = [] { return absl::Now(); };
  ctx.sleep = [](absl::Duration d) { absl::SleepFor(d); };
  ctx.time_zone = absl::LocalTimeZone();
  return ctx;
}

std::string AbsolutePath(const LocalContext& ctx, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || ctx.cwd.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(ctx.cwd) / p).lexically_normal().string();
}

}  // namespace gpusched::cli
