#pragma once

#include <string>
#include <vector>

#include "google/protobuf/repeated_ptr_field.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// `gpusched nodes`: NAME STATE GPUS MODEL GPU-LINKS NVL-DOMAIN CPUS MEMORY
// JOBS LABELS REASON, with free/total for GPUs, CPUs and memory.
std::string RenderNodeTable(const google::protobuf::RepeatedPtrField<v1::Node>& nodes);

// The node's labels as key=value, sorted by key.
std::vector<std::string> SortedLabels(const v1::NodeInfo& info);

// The state, with "+DRAINED" when an operator drained the node.
std::string NodeStateText(const v1::Node& node);
// Why it is not up, and why it was drained, in one line ("" when neither).
std::string NodeReasonText(const v1::Node& node);

}  // namespace gpusched::cli
