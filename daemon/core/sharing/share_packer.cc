#include "daemon/core/sharing/share_packer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_join.h"
#include "daemon/core/sharing/model_pressure.h"

namespace gpusched::core::sharing {
namespace {

struct PolicyName {
  PackingPolicy policy;
  absl::string_view name;
};
constexpr PolicyName kPolicyNames[] = {
    {PackingPolicy::kRandom, "random"}, {PackingPolicy::kBestFit, "best-fit"},   {PackingPolicy::kSpread, "spread"},
    {PackingPolicy::kFgd, "fgd"},       {PackingPolicy::kFgdExact, "fgd-exact"}, {PackingPolicy::kFillFgd, "fill-fgd"},
};

bool UsesFragment(PackingPolicy policy) {
  return policy == PackingPolicy::kFgd || policy == PackingPolicy::kFgdExact || policy == PackingPolicy::kFillFgd;
}

bool Better(double score, double tie_break, double best_score, double best_tie_break) {
  if (score != best_score) return score < best_score;
  return tie_break < best_tie_break;
}

double Ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// The node score FGD's authors give a placement, negated so that lower is
// better: floor(100 * sigmoid(fall of expected fragment in whole GPUs)).
double KubernetesFgdScore(int64_t fragment_sum_growth, int64_t mix_total) {
  const double fall_gpus =
      -static_cast<double>(fragment_sum_growth) / static_cast<double>(mix_total) / static_cast<double>(kWholeGpuMilli);
  return -std::floor(100.0 / (1.0 + std::exp(-fall_gpus)));
}

}  // namespace

absl::string_view PackingPolicyName(PackingPolicy policy) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.policy == policy) return p.name;
  }
  return "unknown";
}

std::optional<PackingPolicy> ParsePackingPolicy(absl::string_view name) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.name == name) return p.policy;
  }
  return std::nullopt;
}

std::vector<std::string> AllPackingPolicyNames() {
  std::vector<std::string> names;
  for (const PolicyName& p : kPolicyNames) names.emplace_back(p.name);
  return names;
}

std::string PackingPolicyNames() { return absl::StrJoin(AllPackingPolicyNames(), ", "); }

SharePacker::SharePacker(std::vector<PackNode> nodes, TaskMix mix, PackingPolicy policy, uint64_t seed)
    : nodes_(std::move(nodes)),
      mix_(std::move(mix)),
      policy_(policy),
      rng_(seed),
      fragment_sum_(nodes_.size()),
      best_(nodes_.size()) {
  if (policy_ == PackingPolicy::kFillFgd) {
    waste_.emplace(mix_);
    model_pressure_ = ModelPressure(nodes_, mix_);
  }
}

int64_t SharePacker::FragmentSumOf(int node) {
  std::optional<int64_t>& cached = fragment_sum_[node];
  if (!cached) cached = FragmentSum(nodes_[node], mix_);
  return *cached;
}

std::optional<SharePacker::Scored> SharePacker::ScoreOnNode(int node, const ShareRequest& task) const {
  const PackNode& before = nodes_[node];
  const double waste_before = waste_ ? waste_->Of(before) : 0;
  std::optional<Scored> best;
  for (std::vector<int>& gpus : DistinctGpuChoices(before, task)) {
    PackNode after = before;
    Take(after, task, gpus);
    Scored s;
    switch (policy_) {
      case PackingPolicy::kRandom: break;
      case PackingPolicy::kBestFit:
      case PackingPolicy::kSpread: {
        // Best fit takes the least of both, spread the most.
        const double free_after = Ratio(after.FreeGpuMilli(), after.GpuCapacityMilli()) +
                                  Ratio(after.cpu_free_milli, after.cpu_capacity_milli);
        int left_on_gpus = 0;
        for (int g : gpus) left_on_gpus += after.gpu_free_milli[g];
        const double sign = policy_ == PackingPolicy::kBestFit ? 1 : -1;
        s.score = sign * free_after;
        s.tie_break = sign * left_on_gpus;
        break;
      }
      case PackingPolicy::kFgd:
      case PackingPolicy::kFgdExact: {
        // fragment_sum_[node] is filled by BestOnNode before this runs.
        const int64_t growth = FragmentSum(after, mix_) - *fragment_sum_[node];
        s.score = policy_ == PackingPolicy::kFgd ? KubernetesFgdScore(growth, mix_.total) : static_cast<double>(growth);
        break;
      }
      case PackingPolicy::kFillFgd: {
        const double fgd = KubernetesFgdScore(FragmentSum(after, mix_) - *fragment_sum_[node], mix_.total);
        if (task.num_gpus > 0) {
          s.score = static_cast<double>(NodeWaste::Growth(waste_before, waste_->Of(after))) +
                    model_pressure_[before.model] * static_cast<double>(task.total_gpu_milli());
          s.tie_break = fgd;
        } else {
          // FGD sees no cost in a CPU-only task until the CPU is gone; it
          // should go where CPU is left over once the free GPUs are fed.
          s.score = fgd;
          // In whole CPU thousandths: what is left below one does not matter.
          const int64_t cpu_milli_for_free_gpus = kCpuMilliPerFreeGpu * after.FreeGpuMilli() / kWholeGpuMilli;
          s.tie_break = -static_cast<double>(after.cpu_free_milli - cpu_milli_for_free_gpus);
        }
        break;
      }
    }
    s.gpus = std::move(gpus);
    if (!best || Better(s.score, s.tie_break, best->score, best->tie_break)) best = std::move(s);
  }
  return best;
}

std::optional<SharePacker::Scored> SharePacker::BestOnNode(int node, const ShareRequest& task) {
  auto it = best_[node].find(task);
  if (it != best_[node].end()) return it->second;
  if (UsesFragment(policy_)) FragmentSumOf(node);
  std::optional<Scored> scored = ScoreOnNode(node, task);
  best_[node].emplace(task, scored);
  return scored;
}

std::optional<SharePlacement> SharePacker::PlaceAtRandom(const ShareRequest& task) {
  std::vector<int> fitting;
  for (int n = 0; n < static_cast<int>(nodes_.size()); ++n) {
    if (Fits(nodes_[n], task)) fitting.push_back(n);
  }
  if (fitting.empty()) return std::nullopt;
  const int node = fitting[rng_() % fitting.size()];
  std::vector<std::vector<int>> choices = DistinctGpuChoices(nodes_[node], task);
  SharePlacement placement{node, std::move(choices[rng_() % choices.size()])};
  Take(nodes_[node], task, placement.gpus);
  return placement;
}

std::optional<SharePlacement> SharePacker::Place(const ShareRequest& task) {
  if (policy_ == PackingPolicy::kRandom) return PlaceAtRandom(task);
  int best_node = -1;
  std::optional<Scored> best;
  for (int n = 0; n < static_cast<int>(nodes_.size()); ++n) {
    std::optional<Scored> s = BestOnNode(n, task);
    if (s && (!best || Better(s->score, s->tie_break, best->score, best->tie_break))) {
      best = std::move(s);
      best_node = n;
    }
  }
  if (!best) return std::nullopt;
  Take(nodes_[best_node], task, best->gpus);
  fragment_sum_[best_node].reset();
  best_[best_node].clear();
  return SharePlacement{best_node, std::move(best->gpus)};
}

}  // namespace gpusched::core::sharing
