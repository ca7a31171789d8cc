#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/core/sharing/share_packer.h"
#include "daemon/sim/openb_trace.h"

namespace gpusched::sim {

// The FGD paper's workload-inflation experiment (shared/traces/README.md):
// pods arrive one at a time and are placed at once or rejected for good;
// nothing finishes. The figure of merit is the share of the cluster's GPU
// capacity left unallocated once the arrived GPU request reaches
// measure_at of it.
struct InflationOptions {
  double inflate_to = 1.30;  // a sampled run stops once arrivals ask this share of capacity
  double measure_at = 1.00;
};

struct InflationArrival {
  int64_t seq = 0;        // 1-based, in arrival order
  std::string pod;        // unique in the run
  std::string source;     // the pod list entry whose request it carries
  int node = -1;          // -1: rejected
  std::vector<int> gpus;  // positions on the node
  int gpu_milli = 0;      // taken of each of them
};

struct InflationRun {
  core::sharing::PackingPolicy policy{};
  std::optional<uint64_t> seed;  // nullopt: the arrivals were given
  std::vector<InflationArrival> arrivals;
  // At the first arrival that brought the arrived request to measure_at of
  // capacity; nullopt when the arrivals never got there.
  std::optional<double> unallocated_at_measure;
  int64_t rejected_at_measure = 0;
  int64_t arrivals_at_measure = 0;
  double unallocated_at_end = 0;
  double arrived_at_end = 0;  // the arrived GPU request over capacity
};

class InflationExperiment {
 public:
  // InvalidArgument naming the pod (and its line) whose gpu_spec lists a
  // model no node has, or when the nodes have no GPU.
  static absl::StatusOr<InflationExperiment> Make(std::vector<OpenbNode> nodes, std::vector<OpenbPod> pods);

  // Draws pods with replacement, seeded, until their GPU request reaches
  // options.inflate_to of capacity; the task mix FGD expects is the pod list.
  InflationRun Sampled(core::sharing::PackingPolicy policy, uint64_t seed, const InflationOptions& options) const;

  // The given pods, in the given order, each once (same checks as Make).
  absl::StatusOr<InflationRun> Replayed(core::sharing::PackingPolicy policy, const std::vector<OpenbPod>& arrivals,
                                        const InflationOptions& options) const;

  const std::vector<OpenbNode>& nodes() const { return nodes_; }
  const std::vector<OpenbPod>& pods() const { return pods_; }
  int64_t gpu_capacity_milli() const { return capacity_milli_; }

 private:
  InflationExperiment() = default;
  struct Arrival {
    core::sharing::ShareRequest request;
    std::string pod;
    std::string source;
  };
  absl::StatusOr<core::sharing::ShareRequest> RequestOf(const OpenbPod& pod) const;
  InflationRun Run(core::sharing::PackingPolicy policy, uint64_t seed, const std::vector<Arrival>& arrivals,
                   const InflationOptions& options) const;

  std::vector<OpenbNode> nodes_;
  std::vector<OpenbPod> pods_;
  std::vector<std::string> models_;  // index = PackNode::model
  std::vector<core::sharing::PackNode> pack_nodes_;
  std::vector<core::sharing::ShareRequest> pod_requests_;
  core::sharing::TaskMix mix_;
  int64_t capacity_milli_ = 0;
};

}  // namespace gpusched::sim
