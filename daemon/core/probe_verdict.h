#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "common/probe_drains.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/agent.pb.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// What the NCCL probe's figures are held against, as fractions of the
// topology's estimate (common/topology/link_bandwidth.h). 0 turns the
// comparison off; errors of the probe itself still count.
struct ProbeOptions {
  // Link calibration: a GPU pair measured below this drains the node.
  double drain_below = 0.5;
  // Gang preflight: the all-reduce over a node's GPUs of the job below this
  // share of their ring estimate fails it.
  double preflight_min = 0.5;
};

// Drains set by a calibration start with kProbeDrainPrefix, by a failed job
// preflight with kPreflightDrainPrefix (common/probe_drains.h). A new
// calibration that passes lifts either; an operator's own drain outlives any
// measurement.

// Why a node's link calibration says it should take no work, e.g. "GPUs 2-3
// (NV12) measured 41.2 GB/s, below 50% of the 300.0 GB/s estimate"; "" when
// it passes or measured nothing (`unavailable`). Expectations come from
// `topology` (the node as the daemon knows it), not from the agent's figures.
std::string CalibrationFailure(const topology::NodeTopology& topology, const v1::NodeProbe& probe, double drain_below);

// The preflight a node's share of a gang must pass: the ring estimate of its
// GPUs in ring order (the part's gpu_indices) and the minimum. nullopt for
// fewer than two GPUs, where no all-reduce between GPUs can be measured.
std::optional<v1::Preflight> PreflightFor(const topology::NodeTopology& topology, const v1::NodeAllocation& part,
                                          double preflight_min);

}  // namespace gpusched::core
