#pragma once

#include <optional>
#include <string>

#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "daemon/core/queue/queue_policy.h"

namespace gpusched::daemon {

// The queue settings of gpuschedd.toml: [[queue]] tables and [priority]
// (packaging/config/gpuschedd.toml documents each key). Problems are
// recorded on `top`, the top-level reader, at their lines. std::nullopt when
// the file has neither (the core's default: one queue "default").
std::optional<core::QueuePolicy> ReadQueueSettings(const config::TomlValue& root, config::TomlTableReader& top);

// "2 queues (gpu tier 0, urgent tier 1)" for check-config.
std::string DescribeQueuePolicy(const core::QueuePolicy& policy);

}  // namespace gpusched::daemon
