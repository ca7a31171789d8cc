#pragma once

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "common/config/toml_table_reader.h"

namespace gpusched::daemon {

// Typed values of settings keys beyond TomlTableReader's own.

// A duration key in Slurm's time-limit notation ("7-00:00:00", "10:00",
// "90" = 90 minutes), in seconds; std::nullopt when absent or wrong (a
// wrong one is recorded on `reader` at its line).
std::optional<int64_t> ReadDuration(config::TomlTableReader& reader, absl::string_view key);

// A number key (an integer or a float) from 0 to `max`: costs, rates.
std::optional<double> ReadNumber(config::TomlTableReader& reader, absl::string_view key, double max);

}  // namespace gpusched::daemon
