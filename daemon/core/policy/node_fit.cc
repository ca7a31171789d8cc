#include "daemon/core/policy/node_fit.h"

#include <algorithm>
#include <bit>

#include "absl/strings/ascii.h"

namespace gpusched::core::policy {

namespace {

// Whether `text_lower` (already lower case) contains `needle` in any case,
// without building a lower-case copy of the needle on every node.
bool ContainsIgnoringCase(absl::string_view text_lower, absl::string_view needle) {
  if (needle.size() > text_lower.size()) return false;
  for (size_t start = 0; start + needle.size() <= text_lower.size(); ++start) {
    size_t i = 0;
    while (i < needle.size() && text_lower[start + i] == absl::ascii_tolower(static_cast<unsigned char>(needle[i])))
      ++i;
    if (i == needle.size()) return true;
  }
  return false;
}

}  // namespace

uint64_t EligibleOfKind(const GpuKind& kind, const GangRequest& req) {
  const int n = std::min(kind.gpu_count, 64);
  uint64_t mask = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  if (!req.gpu_model.empty()) {
    uint64_t models = 0;
    for (const GpuKind::ModelGpus& m : kind.by_model) {
      if (ContainsIgnoringCase(m.model_lower, req.gpu_model)) models |= m.mask;
    }
    mask &= models;
  }
  if (req.gpu_memory_mb > 0) {
    for (uint64_t rest = mask; rest != 0; rest &= rest - 1) {
      const int p = std::countr_zero(rest);
      if (kind.memory_mb[p] < req.gpu_memory_mb) mask &= ~(uint64_t{1} << p);
    }
  }
  return mask;
}

uint64_t EligibleGpus(const NodeSlot& slot, const GangRequest& req) {
  return QueueMayUse(slot, req) ? EligibleOfKind(slot.gpus, req) : 0;
}

EligibleByKind::EligibleByKind(const ClusterState& cluster, const GangRequest& req) {
  masks_.reserve(cluster.gpu_kinds().size());
  for (const GpuKind& kind : cluster.gpu_kinds()) masks_.push_back(EligibleOfKind(kind, req));
}

uint64_t CandidateMask(const NodeSlot& slot, const GangRequest& req, bool idle) {
  uint64_t eligible = EligibleGpus(slot, req);
  // MIG GPUs are never free as a whole, idle or not.
  return idle ? eligible & ~slot.mig_mask : eligible & slot.FreeMask();
}

int64_t UsableGpus(const NodeSlot& slot, const GangRequest& req, bool idle) {
  return UsableOf(CandidateMask(slot, req, idle), idle ? slot.cpus_total : slot.FreeCpus(),
                  idle ? slot.mem_total_mb : slot.FreeMemMb(), req);
}

void ScoreGpuCandidates(const ClusterState& cluster, const GangRequest& req, bool idle, int64_t min_usable,
                        std::vector<GpuCandidate>& out) {
  out.clear();
  const EligibleByKind eligible(cluster, req);
  GpuCandidate c;
  for (const NodeScan& n : cluster.scan()) {
    if (ScoreGpuCandidate(n, req, eligible, idle, min_usable, c)) out.push_back(c);
  }
}

std::vector<GpuCandidate> ScoreGpuCandidates(const ClusterState& cluster, const GangRequest& req, bool idle,
                                             int64_t min_usable) {
  std::vector<GpuCandidate> out;
  ScoreGpuCandidates(cluster, req, idle, min_usable, out);
  return out;
}

bool CpuJobFits(const NodeSlot& slot, const GangRequest& req) {
  return slot.accepts_jobs() && QueueMayUse(slot, req) && slot.FreeCpus() >= req.cpus && slot.FreeMemMb() >= req.mem_mb;
}

v1::NodeAllocation MakePart(const NodeSlot& slot, const GangRequest& req, const std::vector<int>& positions,
                            int node_rank) {
  v1::NodeAllocation part;
  part.set_node(slot.info.name());
  part.set_address(slot.info.address());
  part.set_node_rank(node_rank);
  for (int p : positions) part.add_gpu_indices(slot.info.gpus(p).index());
  const int64_t gpus = static_cast<int64_t>(positions.size());
  part.set_cpus(req.CpusFor(gpus));
  part.set_mem_mb(req.MemFor(gpus));
  return part;
}

std::vector<int> LowestPositions(uint64_t mask, int64_t count) {
  std::vector<int> out;
  for (int p = 0; p < 64 && static_cast<int64_t>(out.size()) < count; ++p) {
    if (mask & (uint64_t{1} << p)) out.push_back(p);
  }
  return out;
}

}  // namespace gpusched::core::policy
