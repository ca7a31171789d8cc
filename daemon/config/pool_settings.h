#pragma once

#include <string>
#include <vector>

#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "daemon/core/power/pool_spec.h"

namespace gpusched::daemon {

// The [[pool]] tables of gpuschedd.toml: elastic node pools
// (packaging/config/gpuschedd.toml documents each key). Problems are
// recorded on `top` at their lines: a hostlist that does not parse, a node
// in two pools, min_nodes above max_nodes, a negative cost, a program that
// does not exist or is not executable, a suspend program without a resume
// program or on a reserved pool, an elastic pool without the shape of its
// nodes. Empty when the file has none.
std::vector<core::PoolSpec> ReadPoolSettings(const config::TomlValue& root, config::TomlTableReader& top);

// The same for `gpuschedd simulate --pools`: no programs and no shapes (the
// nodes are the cluster spec's); every pool but a reserved one is elastic.
std::vector<core::PoolSpec> ReadSimulatedPools(const config::TomlValue& root, config::TomlTableReader& top);

// "2 pools (burst on-demand 0-16 nodes, base reserved static)" for check-config.
std::string DescribePools(const std::vector<core::PoolSpec>& pools);

}  // namespace gpusched::daemon
