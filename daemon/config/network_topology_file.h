#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/net/network_topology_conf.h"

namespace gpusched::daemon {

// Reads a topology.conf-style network file (--network-topology, or
// network_topology in gpuschedd.toml). Errors name the file and line:
// "network topology file PATH: line N: ...".
absl::StatusOr<std::shared_ptr<const NetworkTopologyConf>> ReadNetworkTopologyFile(const std::string& path);

}  // namespace gpusched::daemon
