#include "cli/node_table.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "cli/sizes.h"
#include "cli/table.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

// More ids than this would make the row wrap; the count says the rest.
constexpr int kMaxJobIdsShown = 4;

}  // namespace

std::vector<std::string> SortedLabels(const v1::NodeInfo& info) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : info.labels()) parts.push_back(absl::StrCat(key, "=", value));
  std::sort(parts.begin(), parts.end());
  return parts;
}

std::string NodeStateText(const v1::Node& node) {
  const std::string word(NodeStateName(node.state()));
  return node.drain_reason().empty() ? word : absl::StrCat(word, "+DRAINED");
}

std::string NodeReasonText(const v1::Node& node) {
  if (node.drain_reason().empty()) return node.reason();
  const std::string drained = absl::StrCat("drained: ", node.drain_reason());
  return node.reason().empty() ? drained : absl::StrCat(node.reason(), "; ", drained);
}

namespace {

// Nodes are normally homogeneous; a mixed node lists each model once.
std::string Models(const v1::NodeInfo& info) {
  std::vector<std::string> models;
  for (const v1::GpuInfo& gpu : info.gpus()) {
    if (std::find(models.begin(), models.end(), gpu.model()) == models.end()) {
      models.push_back(gpu.model());
    }
  }
  return absl::StrJoin(models, ",");
}

// How the GPUs talk to each other, in one word: "NV18/NVSwitch" for an
// NVSwitch board, "NV1-NV2" for point-to-point NVLink, "PCIe" when no pair has
// NVLink, "-" for fewer than two GPUs.
std::string GpuLinks(const v1::NodeInfo& info) {
  if (info.gpus_size() < 2) return "";
  int low = 0;
  int high = 0;
  for (const v1::Link& link : info.topology().gpu_links()) {
    if (link.kind() != v1::LINK_KIND_NVLINK) continue;
    low = low == 0 ? link.nvlinks() : std::min(low, link.nvlinks());
    high = std::max(high, link.nvlinks());
  }
  if (high == 0) return "PCIe";
  std::string range = low == high ? absl::StrCat("NV", high) : absl::StrCat("NV", low, "-NV", high);
  return info.topology().nvswitch() ? absl::StrCat(range, "/NVSwitch") : range;
}

std::string Jobs(const v1::Node& node) {
  const auto& ids = node.running_jobs();
  if (ids.size() <= kMaxJobIdsShown) return absl::StrJoin(ids, ",");
  std::vector<uint64_t> shown(ids.begin(), ids.begin() + kMaxJobIdsShown - 1);
  return absl::StrCat(absl::StrJoin(shown, ","), ",+", ids.size() - shown.size());
}

}  // namespace

std::string RenderNodeTable(const google::protobuf::RepeatedPtrField<v1::Node>& nodes) {
  Table table(
      {"NAME", "STATE", "GPUS", "MODEL", "GPU-LINKS", "NVL-DOMAIN", "CPUS", "MEMORY", "JOBS", "LABELS", "REASON"});
  for (const v1::Node& node : nodes) {
    const v1::NodeInfo& info = node.info();
    // One word per cell keeps the table awk-friendly: "NVIDIA H100 80GB HBM3"
    // shows as H100-80GB-HBM3.
    std::string model = absl::StrReplaceAll(Models(info), {{"NVIDIA ", ""}, {" ", "-"}});
    table.AddRow({info.name(), NodeStateText(node), absl::StrCat(node.gpus_free(), "/", info.gpus_size()), model,
                  GpuLinks(info), info.topology().network().nvlink_domain(),
                  absl::StrCat(node.cpus_free(), "/", info.cpus()),
                  absl::StrCat(FormatSizeMb(node.mem_free_mb()), "/", FormatSizeMb(info.memory_mb())), Jobs(node),
                  absl::StrJoin(SortedLabels(info), ","), NodeReasonText(node)});
  }
  return table.ToString();
}

}  // namespace gpusched::cli
