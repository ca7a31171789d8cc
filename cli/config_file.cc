#include "cli/config_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "cli/address.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "common/io/tls/tls_config_keys.h"

namespace gpusched::cli {

absl::StatusOr<CliConfig> ParseCliConfig(absl::string_view text, absl::string_view path) {
  auto doc = config::ParseToml(text, path);
  if (!doc.ok()) return doc.status();
  config::TomlTableReader reader(*doc, std::string(path), "");
  reader.AllowOnly({"address", tls::kClientTlsKeys.ca, tls::kClientTlsKeys.cert, tls::kClientTlsKeys.key});
  CliConfig cli;
  cli.address = reader.String("address");
  if (cli.address && !IsValidDaemonAddress(*cli.address)) {
    reader.Error(reader.LineOf("address"),
                 absl::StrCat("address \"", *cli.address, "\" is not HOST:PORT, nor several of them comma-separated"));
  }
  const tls::TlsFiles tls = tls::ReadTlsKeys(reader, tls::kClientTlsKeys, /*complete=*/false);
  auto set = [](const std::string& file) { return file.empty() ? std::nullopt : std::optional<std::string>(file); };
  cli.tls_ca = set(tls.ca);
  cli.tls_cert = set(tls.cert);
  cli.tls_key = set(tls.key);
  if (!reader.ok()) return reader.status();
  return cli;
}

absl::StatusOr<std::optional<CliConfig>> ReadCliConfig(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return std::optional<CliConfig>();
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ParseCliConfig(text.str(), path);
  if (!config.ok()) return config.status();
  return std::optional<CliConfig>(*std::move(config));
}

}  // namespace gpusched::cli
