#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "daemon/core/sharing/fragmentation.h"
#include "daemon/core/sharing/node_waste.h"
#include "daemon/core/sharing/pack_node.h"
#include "daemon/core/sharing/share_request.h"

namespace gpusched::core::sharing {

// How a task that shares GPUs (or takes whole ones beside tasks that do)
// picks its node and GPUs.
enum class PackingPolicy {
  kRandom,   // any node that fits, any GPU choice there: the floor
  kBestFit,  // the node left fullest (GPU share plus CPU, each over capacity)
  // The node left emptiest by the same measure, and on it the GPU left with
  // the most share free: load balancing, each share contending least, at
  // the cost of opening more GPUs to sharing.
  kSpread,
  // Fragmentation Gradient Descent (Weng et al., ATC '23) as its authors'
  // simulator scores it: the fall of ExpectedFragment, in GPUs, through a
  // sigmoid onto the Kubernetes scheduler's integer node score 0-100; equal
  // scores go to the lowest node. The rounding is part of the rule as
  // published: it lumps together placements within ~0.04 GPU of expected
  // fragment and then packs by node order (4.9% unallocated on the openb
  // default pod list against 5.7% compared exactly).
  kFgd,
  kFgdExact,  // FGD with the fragment growth compared exactly
  // FGD where it knows least. A task with GPUs first goes where it grows
  // least what its node will likely never give out (NodeWaste: what the
  // mix's common shares cannot fill of each GPU, and the share the node's
  // CPU or memory cannot feed) plus what it takes of a model that tasks
  // limited to some models need (ModelPressure); FGD among equals. A
  // CPU-only task goes by FGD, then to the node left with the most CPU
  // beyond what its free GPUs will need at kCpuMilliPerFreeGpu.
  kFillFgd,
};

// The CPU a free GPU is expected to need, for kFillFgd's CPU-only rule: a
// typical GPU server's cores per GPU.
inline constexpr int64_t kCpuMilliPerFreeGpu = 12000;

absl::string_view PackingPolicyName(PackingPolicy policy);
std::optional<PackingPolicy> ParsePackingPolicy(absl::string_view name);
// Every policy's name: random, best-fit, spread, fgd, fgd-exact, fill-fgd.
std::vector<std::string> AllPackingPolicyNames();
// The same joined by ", ", for help texts and errors.
std::string PackingPolicyNames();

struct SharePlacement {
  int node = -1;
  std::vector<int> gpus;  // positions on that node; gpu_milli of each
};

// Places tasks one at a time onto a fixed set of nodes, taking what each
// placement uses. Pure and deterministic for a given seed (only kRandom
// draws). A task goes to the best-scored node; on a node, to the best of its
// DistinctGpuChoices. Each node's best answer per distinct task is cached until the node
// changes, so a placement costs one scan of the nodes plus re-scoring the
// node changed last.
class SharePacker {
 public:
  SharePacker(std::vector<PackNode> nodes, TaskMix mix, PackingPolicy policy, uint64_t seed);

  // Chooses where the task goes and takes it there; nullopt when no node
  // fits (nothing changes then).
  std::optional<SharePlacement> Place(const ShareRequest& task);

  const std::vector<PackNode>& nodes() const { return nodes_; }

 private:
  struct Scored {
    double score = 0;      // lower is better
    double tie_break = 0;  // lower is better, among equal scores
    std::vector<int> gpus;
  };

  std::optional<Scored> BestOnNode(int node, const ShareRequest& task);
  std::optional<Scored> ScoreOnNode(int node, const ShareRequest& task) const;
  std::optional<SharePlacement> PlaceAtRandom(const ShareRequest& task);
  int64_t FragmentSumOf(int node);

  std::vector<PackNode> nodes_;
  TaskMix mix_;
  // kFillFgd's measures: the node's likely waste, and by model what tasks
  // limited to it press on it.
  std::optional<NodeWaste> waste_;
  std::vector<double> model_pressure_;
  PackingPolicy policy_;
  std::mt19937_64 rng_;
  // Per node: its FragmentSum and its best answer per task, both valid until
  // the node changes.
  std::vector<std::optional<int64_t>> fragment_sum_;
  std::vector<absl::flat_hash_map<ShareRequest, std::optional<Scored>>> best_;
};

}  // namespace gpusched::core::sharing
