#include "daemon/sim/inflation.h"

#include <algorithm>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace gpusched::sim {

using core::sharing::PackingPolicy;
using core::sharing::PackNode;
using core::sharing::ShareRequest;

absl::StatusOr<InflationExperiment> InflationExperiment::Make(std::vector<OpenbNode> nodes,
                                                              std::vector<OpenbPod> pods) {
  InflationExperiment e;
  for (const OpenbNode& n : nodes) {
    if (n.gpus == 0) continue;
    auto at = std::find(e.models_.begin(), e.models_.end(), n.model);
    if (at == e.models_.end()) {
      if (e.models_.size() == 64) {
        return absl::InvalidArgumentError(absl::StrCat("line ", n.line, ": more than 64 GPU models"));
      }
      at = e.models_.insert(e.models_.end(), n.model);
    }
    PackNode p;
    p.model = static_cast<int>(at - e.models_.begin());
    p.cpu_capacity_milli = p.cpu_free_milli = n.cpu_milli;
    p.memory_free_mib = n.memory_mib;
    p.gpu_free_milli.assign(n.gpus, core::sharing::kWholeGpuMilli);
    e.capacity_milli_ += p.GpuCapacityMilli();
    e.pack_nodes_.push_back(std::move(p));
    e.nodes_.push_back(n);
  }
  if (e.capacity_milli_ == 0) return absl::InvalidArgumentError("no node has a GPU");
  for (const OpenbPod& pod : pods) {
    auto request = e.RequestOf(pod);
    if (!request.ok()) return request.status();
    e.pod_requests_.push_back(*request);
  }
  e.pods_ = std::move(pods);
  e.mix_ = core::sharing::TaskMix::Of(e.pod_requests_);
  return e;
}

absl::StatusOr<ShareRequest> InflationExperiment::RequestOf(const OpenbPod& pod) const {
  ShareRequest r;
  r.cpu_milli = pod.cpu_milli;
  r.memory_mib = pod.memory_mib;
  r.num_gpus = pod.num_gpu;
  r.gpu_milli = pod.gpu_milli;
  if (!pod.gpu_spec.empty()) {
    r.allowed_models = 0;
    for (const std::string& model : pod.gpu_spec) {
      auto at = std::find(models_.begin(), models_.end(), model);
      if (at == models_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("line ", pod.line, ": pod ", pod.name, ": gpu_spec model \"",
                                                       model, "\" is on no node of the node list"));
      }
      r.allowed_models |= uint64_t{1} << (at - models_.begin());
    }
  }
  return r;
}

InflationRun InflationExperiment::Sampled(PackingPolicy policy, uint64_t seed, const InflationOptions& options) const {
  // Which pods arrive does not depend on where they go: draw them first.
  std::mt19937_64 draw(seed);
  absl::flat_hash_map<size_t, int> copies;
  std::vector<Arrival> arrivals;
  const double stop = options.inflate_to * static_cast<double>(capacity_milli_);
  int64_t arrived = 0;
  while (static_cast<double>(arrived) < stop) {
    const size_t i = draw() % pods_.size();
    arrived += pod_requests_[i].total_gpu_milli();
    arrivals.push_back({pod_requests_[i], absl::StrCat(pods_[i].name, "#", ++copies[i]), pods_[i].name});
    // A pod list of CPU-only pods never gets there.
    if (arrivals.size() > 100 * pods_.size() + 1000000) break;
  }
  return Run(policy, seed, arrivals, options);
}

absl::StatusOr<InflationRun> InflationExperiment::Replayed(PackingPolicy policy, const std::vector<OpenbPod>& given,
                                                           const InflationOptions& options) const {
  std::vector<Arrival> arrivals;
  for (const OpenbPod& pod : given) {
    auto request = RequestOf(pod);
    if (!request.ok()) return request.status();
    arrivals.push_back({*request, pod.name, pod.name});
  }
  InflationRun run = Run(policy, 0, arrivals, options);
  run.seed.reset();
  return run;
}

InflationRun InflationExperiment::Run(PackingPolicy policy, uint64_t seed, const std::vector<Arrival>& arrivals,
                                      const InflationOptions& options) const {
  core::sharing::SharePacker packer(pack_nodes_, mix_, policy, seed);
  InflationRun run;
  run.policy = policy;
  run.seed = seed;
  const double capacity = static_cast<double>(capacity_milli_);
  int64_t arrived = 0, allocated = 0, rejected = 0;
  for (const Arrival& a : arrivals) {
    InflationArrival& logged = run.arrivals.emplace_back();
    logged.seq = static_cast<int64_t>(run.arrivals.size());
    logged.pod = a.pod;
    logged.source = a.source;
    if (auto placed = packer.Place(a.request)) {
      logged.node = placed->node;
      logged.gpus = std::move(placed->gpus);
      logged.gpu_milli = a.request.gpu_milli;
      allocated += a.request.total_gpu_milli();
    } else {
      ++rejected;
    }
    arrived += a.request.total_gpu_milli();
    if (!run.unallocated_at_measure && static_cast<double>(arrived) >= options.measure_at * capacity) {
      run.unallocated_at_measure = 1 - static_cast<double>(allocated) / capacity;
      run.rejected_at_measure = rejected;
      run.arrivals_at_measure = logged.seq;
    }
  }
  run.unallocated_at_end = 1 - static_cast<double>(allocated) / capacity;
  run.arrived_at_end = static_cast<double>(arrived) / capacity;
  return run;
}

}  // namespace gpusched::sim
