#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::topology {

// Largest CPU id accepted; far above any real node, it keeps a hostile
// "0-4000000000" from allocating gigabytes.
inline constexpr int kMaxCpuId = 65535;

// Parses a Linux CPU list such as "0-23,48-71" or "3" into sorted, unique
// ids. An empty string is an empty list. InvalidArgument quoting the text for
// anything else (reversed ranges, ids above kMaxCpuId, stray characters).
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// Sorted ids back to the compact form: {0,1,2,5} -> "0-2,5".
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace gpusched::topology
