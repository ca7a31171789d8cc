#include "daemon/config/network_topology_file.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/config/toml_document.h"
#include "common/io/config_file/settings_file.h"

namespace gpusched::daemon {

absl::StatusOr<std::shared_ptr<const NetworkTopologyConf>> ReadNetworkTopologyFile(const std::string& path) {
  auto text = config::ReadConfigText(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(), absl::StrCat("network topology file: ", text.status().message()));
  }
  auto conf = ParseNetworkTopologyConf(*text);
  if (!conf.ok()) {
    absl::string_view why = conf.status().message();
    absl::ConsumePrefix(&why, "network topology: ");  // said once, with the path
    return absl::InvalidArgumentError(absl::StrCat("network topology file ", path, ": ", why));
  }
  return std::make_shared<const NetworkTopologyConf>(*std::move(conf));
}

}  // namespace gpusched::daemon
