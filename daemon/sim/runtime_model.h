#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::sim {

// How long a replayed job runs where it was placed.
//
// A trace's duration is taken as the job's run time at an ideal placement. A
// multi-GPU job is data-parallel training in the common case: each step is
// compute plus gradient all-reduce, and the all-reduce takes time inversely
// proportional to the bus bandwidth of the ring it runs on. With c the share
// of the ideal run time spent in communication that is not hidden behind
// compute,
//
//   runtime = duration x (1 + c x (ideal_bw / placed_bw - 1))
//
// where placed_bw is the allocation's est_bus_bandwidth_gbps (the one
// estimate every placement policy is annotated with, policy/gang_estimate.h)
// and ideal_bw what the topology policy estimates for the same request on the
// idle cluster. The ratio is never taken below 1: a placement better than the
// idle cluster's ideal is no faster than the trace says. 1-GPU jobs have no
// ring and never slow down.
//
// c defaults to 0.1. Source: for GPT and LLaMA training on 4 A100, H100,
// MI250 or MI210 GPUs, running the collectives after the compute instead of
// overlapped with it makes a step 10.2% slower on average and 26.6% at most
// (Characterizing Compute-Communication Overlap in GPU-Accelerated
// Distributed Deep Learning, arXiv:2507.03114): even with no overlap at all,
// communication is about a tenth of a step at NVLink speeds, so 0.1 is the
// measured average and an upper bound for jobs that do overlap. The trace
// does not say how much its jobs hid; sweep it with --comm-share (0.3 is a
// harsh setting, beyond the measured maximum); --no-slowdown is c = 0.
struct RuntimeModel {
  static constexpr double kDefaultCommShare = 0.1;
  double comm_share = kDefaultCommShare;
  bool slowdown = true;  // false: every job runs exactly its trace duration

  double Factor(int64_t gpus, double ideal_bw, double placed_bw) const;
};

// The bandwidth a request would get at its ideal placement: the topology
// policy's choice on an idle copy of the cluster, cached by request shape.
class IdealBandwidth {
 public:
  explicit IdealBandwidth(const std::vector<v1::NodeInfo>& nodes);
  // 0 when even the idle cluster cannot place the request.
  double For(core::GangRequest request);

 private:
  core::ClusterState idle_;
  std::unique_ptr<core::PlacementPolicy> topology_;
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string, int64_t>, double> cache_;
};

}  // namespace gpusched::sim
