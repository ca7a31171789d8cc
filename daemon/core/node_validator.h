#pragma once

#include <string>

#include "absl/status/status.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

inline constexpr size_t kMaxNodeNameBytes = 59;
inline constexpr size_t kMaxLabelBytes = 256;

// What an agent registers must make sense before the scheduler counts on it:
// a name (at most kMaxNodeNameBytes, no control characters), labels without
// control characters, non-negative CPU/memory/GPU-memory figures and a well-formed
// topology. InvalidArgument names the field. The calibration (node.probe) is
// checked apart: a bad one is dropped, not a reason to refuse the node.
absl::Status ValidateNodeInfo(const v1::NodeInfo& node);

// A link calibration of a node with `gpus` GPUs: at most one figure per pair,
// each finite and between 0 and 100 TB/s, and messages of at most 4 KiB.
// `field` prefixes the field named in the error ("probe_result").
absl::Status ValidateNodeProbe(const v1::NodeProbe& probe, int gpus, const std::string& field);

}  // namespace gpusched::core
