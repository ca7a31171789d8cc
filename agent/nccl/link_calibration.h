#pragma once

#include <atomic>
#include <string>

#include "absl/strings/string_view.h"
#include "agent/nccl/bandwidth_probe.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// Calibrates a node's links with the NCCL probe: an all-reduce over every
// pair of its GPUs, then over all of them, each next to the topology's
// estimate. A probe error ends it with NodeProbe.error naming the GPUs; a
// node with fewer than two GPUs gets NodeProbe.unavailable. `time` is left
// for the caller. Once `stop` reads true (checked between measurements) it
// returns what it has with `error` "stopped" and the caller drops it.
v1::NodeProbe CalibrateLinks(BandwidthProbe& probe, const topology::NodeTopology& topology,
                             const std::atomic<bool>* stop = nullptr);

// Probe messages go to the daemon and into drain reasons: a program that
// prints a novel on stderr must not make them unbounded.
std::string TruncatedProbeMessage(absl::string_view message);

}  // namespace gpusched::agent
