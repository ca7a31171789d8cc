#pragma once

#include <string>
#include <vector>

#include "agent/nccl/bandwidth_probe.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

struct PreflightOutcome {
  bool passed = false;
  double busbw_gbps = 0;  // measured; 0 when the probe failed
  std::string message;    // for the job's events: the figures, or what went wrong
};

// A job's preflight on this node: the all-reduce over `gpus` (CUDA ordinals,
// the job's GPUs here) against the daemon's minimum. A probe error fails it,
// since a node that cannot run an all-reduce cannot run the job either.
PreflightOutcome RunPreflight(BandwidthProbe& probe, const std::vector<int>& gpus, const v1::Preflight& preflight);

}  // namespace gpusched::agent
