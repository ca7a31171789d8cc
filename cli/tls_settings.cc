#include "cli/tls_settings.h"

#include <vector>

#include "cli/address.h"
#include "cli/config_file.h"
#include "cli/errors.h"

namespace gpusched::cli {

absl::StatusOr<std::optional<tls::TlsMaterial>> ResolveTls(const TlsFlags& flags, const LocalContext& ctx) {
  tls::TlsFiles files;
  struct Setting {
    const std::optional<std::string>& flag;
    const char* env;
    std::optional<std::string> CliConfig::*key;
    std::string* path;
  };
  const std::vector<Setting> settings = {
      {flags.ca, kTlsCaEnv, &CliConfig::tls_ca, &files.ca},
      {flags.cert, kTlsCertEnv, &CliConfig::tls_cert, &files.cert},
      {flags.key, kTlsKeyEnv, &CliConfig::tls_key, &files.key},
  };
  std::vector<const Setting*> left_to_files;
  for (const Setting& setting : settings) {
    std::optional<std::string> value = setting.flag;
    // An empty variable counts as unset (as GPUSCHED_ADDR); an empty flag
    // says "none", whatever the files say.
    if (!value && ctx.getenv) {
      value = ctx.getenv(setting.env);
      if (value && value->empty()) value.reset();
    }
    if (!value) {
      left_to_files.push_back(&setting);
    } else if (!value->empty()) {
      *setting.path = AbsolutePath(ctx, *value);
    }
  }
  if (!left_to_files.empty()) {
    for (const std::string& path : CliConfigPaths(ctx)) {
      auto config = ReadCliConfig(path);
      if (!config.ok()) return UsageError(config.status().message());
      if (!config->has_value()) continue;
      for (const Setting* setting : left_to_files) {
        const std::optional<std::string>& from_file = (**config).*(setting->key);
        if (setting->path->empty() && from_file) *setting->path = *from_file;
      }
    }
  }
  auto material = tls::LoadTls(files, tls::kClientTlsKeys);
  if (!material.ok()) return UsageError(material.status().message());
  return material;
}

}  // namespace gpusched::cli
