#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// A job's resources in the one shape the placer works with, after validation
// has settled how nodes, gpus and gpus_per_node relate.
struct GangRequest {
  int64_t total_gpus = 0;
  int64_t nodes = 0;          // 0: the placer chooses how many
  int64_t gpus_per_node = 0;  // set when nodes > 0
  int64_t cpus_per_gpu = 0;
  int64_t mem_per_gpu_mb = 0;
  int64_t cpus = 1;           // CPU-only jobs
  int64_t mem_mb = 0;         // CPU-only jobs
  std::string gpu_model;      // substring of the GPU model, any case; "" = any
  int64_t gpu_memory_mb = 0;  // per GPU, at least
  // A share of each of total_gpus distinct GPUs of one node, in thousandths
  // (v1::Resources.gpu_share_milli); 0 = whole GPUs.
  int gpu_share_milli = 0;
  int64_t gpu_mem_limit_mb = 0;  // per GPU; 0 = gpu_share_milli of its memory
  // With a share: the mechanism the job requires (UNSPECIFIED = either), and
  // its user, since an MPS GPU serves one user's jobs at a time.
  v1::GpuShareMode gpu_sharing = v1::GPU_SHARE_MODE_UNSPECIFIED;
  std::string user;
  // PREFER, STRICT or ANY as the job asked; the core turns a STRICT whose
  // wait is over into PREFER before placing.
  v1::TopologyMode topology = v1::TOPOLOGY_MODE_PREFER;
  // The job's queue as its bit in NodeSlot::queue_mask: only nodes with it
  // set are used. All ones: any node.
  uint64_t queue_bit = ~uint64_t{0};
  // The job runs in a container image: only nodes whose agent runs
  // containers (NodeSlot::runs_containers).
  bool in_container = false;
  // Never on spot nodes (NodeSlot::spot): the job's own no_spot, or its queue's.
  bool no_spot = false;

  // MIG instances of this profile (lower case) instead of GPUs: total_gpus
  // of them on one node (v1::Resources.mig_profile).
  std::string mig_profile;

  bool shares_gpus() const { return gpu_share_milli > 0; }
  bool wants_mig() const { return !mig_profile.empty(); }
  int64_t CpusFor(int64_t gpus_on_node) const { return total_gpus == 0 ? cpus : gpus_on_node * cpus_per_gpu; }
  int64_t MemFor(int64_t gpus_on_node) const { return total_gpus == 0 ? mem_mb : gpus_on_node * mem_per_gpu_mb; }

  friend bool operator==(const GangRequest&, const GangRequest&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const GangRequest& r) {
    return H::combine(std::move(h), r.total_gpus, r.nodes, r.gpus_per_node, r.cpus_per_gpu, r.mem_per_gpu_mb, r.cpus,
                      r.mem_mb, r.gpu_model, r.gpu_memory_mb, r.gpu_share_milli, r.gpu_mem_limit_mb, r.gpu_sharing,
                      r.user, r.topology, r.queue_bit, r.in_container, r.no_spot, r.mig_profile);
  }
};

// Assumes `spec` passed ValidateAndNormalize.
GangRequest ToGangRequest(const v1::JobSpec& spec);

}  // namespace gpusched::core
