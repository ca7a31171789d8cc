#include "daemon/core/ever_fits.h"

#include <algorithm>
#include <bit>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/share_mode_name.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core {
namespace {

// A job with a GPU share: some node of its queue must share GPUs, and, idle,
// give it that many of them with room for its memory limit.
absl::Status CheckSharesEverFit(const ClusterState& cluster, const GangRequest& req) {
  int64_t most_on_one_node = 0, largest_shared_gpu_mb = 0;
  bool any_shared = false;
  const policy::EligibleByKind eligible(cluster, req);
  for (const NodeScan& n : cluster.scan()) {
    const NodeSlot& slot = *n.slot;
    const uint64_t shared = slot.SharedMask(req.gpu_sharing);
    if (shared == 0 || !policy::QueueMayUse(slot, req)) continue;
    any_shared = true;
    const uint64_t usable = shared & eligible.Of(n);
    // A job's GPUs are all shared one way: count each way's apart.
    int64_t fitting = 0;
    for (v1::GpuShareMode how : {v1::GPU_SHARE_MODE_TIMESLICE, v1::GPU_SHARE_MODE_MPS}) {
      int64_t fitting_this_way = 0;
      for (uint64_t bits = shared & slot.SharedMask(how); bits != 0; bits &= bits - 1) {
        const int p = std::countr_zero(bits);
        const int64_t memory = slot.gpus.memory_mb[p];
        largest_shared_gpu_mb = std::max(largest_shared_gpu_mb, memory);
        if ((usable >> p & 1) != 0 && memory >= req.gpu_mem_limit_mb) ++fitting_this_way;
      }
      fitting = std::max(fitting, fitting_this_way);
    }
    if (slot.info.cpus() < req.CpusFor(req.total_gpus) || slot.info.memory_mb() < req.MemFor(req.total_gpus)) continue;
    most_on_one_node = std::max(most_on_one_node, fitting);
  }
  if (!any_shared && req.gpu_sharing != v1::GPU_SHARE_MODE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("resources.gpu_sharing: no node of this cluster shares its GPUs by ",
                                                   ShareModeName(req.gpu_sharing), " (agent gpu_share_mode)"));
  }
  if (!any_shared) {
    return absl::InvalidArgumentError(
        "resources.gpu_share_milli: no node of this cluster shares its GPUs (an operator sets gpu_share_mode in the "
        "agents' agent.toml)");
  }
  if (req.gpu_mem_limit_mb > largest_shared_gpu_mb) {
    return absl::InvalidArgumentError(absl::StrCat("resources.gpu_mem_limit_mb: ", req.gpu_mem_limit_mb,
                                                   " MB of one GPU, but the largest shared GPU has ",
                                                   largest_shared_gpu_mb, " MB"));
  }
  if (req.total_gpus > most_on_one_node) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources.gpus: ", req.total_gpus,
                     " GPUs with a share on one node (and its CPUs and memory), all shared "
                     "one way, but the most any node could give is ",
                     most_on_one_node));
  }
  return absl::OkStatus();
}

// A job that asks for MIG instances: some node of its queue must have that
// many of the profile, on GPUs within its constraints.
absl::Status CheckMigEverFits(const ClusterState& cluster, const GangRequest& req) {
  int64_t most_on_one_node = 0;
  std::set<std::string> profiles;
  const policy::EligibleByKind eligible(cluster, req);
  for (const NodeScan& n : cluster.scan()) {
    const NodeSlot& slot = *n.slot;
    if (slot.mig_mask == 0 || !policy::QueueMayUse(slot, req)) continue;
    int64_t here = 0;
    for (uint64_t bits = slot.mig_mask & eligible.Of(n); bits != 0; bits &= bits - 1) {
      for (const v1::MigInstance& mig : slot.info.gpus(std::countr_zero(bits)).mig_instances()) {
        profiles.insert(absl::AsciiStrToLower(mig.profile()));
        if (absl::EqualsIgnoreCase(mig.profile(), req.mig_profile)) ++here;
      }
    }
    if (slot.info.cpus() < req.CpusFor(req.total_gpus) || slot.info.memory_mb() < req.MemFor(req.total_gpus)) continue;
    most_on_one_node = std::max(most_on_one_node, here);
  }
  if (!profiles.contains(req.mig_profile)) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources.mig_profile: no node of this cluster has MIG instances of ", req.mig_profile,
                     " (it has: ", profiles.empty() ? "no MIG instances" : absl::StrJoin(profiles, ", "), ")"));
  }
  if (req.total_gpus > most_on_one_node) {
    return absl::InvalidArgumentError(absl::StrCat("resources.gpus: ", req.total_gpus, " MIG instances of ",
                                                   req.mig_profile,
                                                   " on one node (and its CPUs and memory), but the "
                                                   "most any node has is ",
                                                   most_on_one_node));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckEverFits(const ClusterState& cluster, const GangRequest& req) {
  if (cluster.nodes().empty()) return absl::OkStatus();
  int64_t largest_gpus = 0, largest_cpus = 0, largest_mem = 0, usable_total = 0, nodes_that_fit = 0;
  size_t known = 0;
  for (const auto& [name, slot] : cluster.nodes()) {
    if (!policy::QueueMayUse(slot, req)) continue;
    ++known;
    // A MIG GPU counts for MIG instances only.
    const uint64_t whole = req.wants_mig() ? ~uint64_t{0} : ~slot.mig_mask;
    largest_gpus = std::max<int64_t>(largest_gpus, std::popcount(policy::EligibleGpus(slot, req) & whole));
    largest_cpus = std::max(largest_cpus, slot.info.cpus());
    largest_mem = std::max(largest_mem, slot.info.memory_mb());
    int64_t usable = policy::UsableGpus(slot, req, /*idle=*/true);
    usable_total += usable;
    if (req.nodes > 0 && usable >= req.gpus_per_node) ++nodes_that_fit;
  }
  // Its queue's nodes have not registered yet: they may be anything.
  if (known == 0) return absl::OkStatus();
  if (req.total_gpus > 0 && (!req.gpu_model.empty() || req.gpu_memory_mb > 0) && largest_gpus == 0) {
    std::set<std::string> models;
    for (const auto& [name, slot] : cluster.nodes()) {
      for (const v1::GpuInfo& gpu : slot.info.gpus())
        models.insert(absl::StrCat(gpu.model(), " ", gpu.memory_mb(), " MB"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("resources.gpu_model: no node has GPUs",
                     req.gpu_model.empty() ? "" : absl::StrCat(" matching \"", req.gpu_model, "\""),
                     req.gpu_memory_mb > 0 ? absl::StrCat(" with >= ", req.gpu_memory_mb, " MB") : "",
                     " (this cluster has: ", models.empty() ? "no GPUs" : absl::StrJoin(models, ", "), ")"));
  }
  if (req.shares_gpus()) return CheckSharesEverFit(cluster, req);
  if (req.wants_mig()) return CheckMigEverFits(cluster, req);
  if (req.total_gpus == 0) {
    if (req.cpus > largest_cpus) {
      return absl::InvalidArgumentError(
          absl::StrCat("resources.cpus: ", req.cpus, " CPUs on one node, but the largest node has ", largest_cpus));
    }
    if (req.mem_mb > largest_mem) {
      return absl::InvalidArgumentError(
          absl::StrCat("resources.mem_mb: ", req.mem_mb, " MB on one node, but the largest node has ", largest_mem));
    }
    return absl::OkStatus();
  }
  if (req.nodes > 0) {
    if (req.gpus_per_node > largest_gpus) {
      return absl::InvalidArgumentError(absl::StrCat("resources.gpus_per_node: ", req.gpus_per_node,
                                                     " GPUs per node, but the largest node has ", largest_gpus));
    }
    if (nodes_that_fit < req.nodes) {
      return absl::InvalidArgumentError(absl::StrCat("resources.nodes: ", req.nodes, " nodes with ", req.gpus_per_node,
                                                     " GPUs each (and their CPUs and memory), but only ",
                                                     nodes_that_fit, " of ", known, " nodes could hold that"));
    }
    return absl::OkStatus();
  }
  if (req.total_gpus > usable_total) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources.gpus: ", req.total_gpus, " GPUs (with their CPUs and memory), but ",
                     known == cluster.nodes().size() ? "the whole cluster of " : "the ", known,
                     known == cluster.nodes().size() ? "" : " nodes of its queue",
                     known == cluster.nodes().size() ? " nodes" : "", " could give only ", usable_total));
  }
  return absl::OkStatus();
}

absl::Status EverFitsCache::Check(const ClusterState& cluster, const GangRequest& request) {
  if (epoch_ != cluster.fit_epoch() || answers_.size() >= kMaxAnswers) {
    answers_.clear();
    epoch_ = cluster.fit_epoch();
  }
  auto [it, fresh] = answers_.try_emplace(request);
  if (fresh) it->second = CheckEverFits(cluster, request);
  return it->second;
}

}  // namespace gpusched::core
