#include "cli/node_table.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "cli/sizes.h"
#include "cli/table.h"

namespace gpusched::cli {
namespace {

// More ids than this would make the row wrap; the count says the rest.
constexpr int kMaxJobIdsShown = 4;

std::string StateWord(v1::NodeState state) {
  switch (state) {
    case v1::NODE_STATE_UP: return "UP";
    case v1::NODE_STATE_DOWN: return "DOWN";
    case v1::NODE_STATE_NOT_RESPONDING: return "NOT_RESPONDING";
    default: return "UNKNOWN";
  }
}

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

std::string Jobs(const v1::Node& node) {
  const auto& ids = node.running_jobs();
  if (ids.size() <= kMaxJobIdsShown) return absl::StrJoin(ids, ",");
  std::vector<uint64_t> shown(ids.begin(), ids.begin() + kMaxJobIdsShown - 1);
  return absl::StrCat(absl::StrJoin(shown, ","), ",+", ids.size() - shown.size());
}

}  // namespace

std::string RenderNodeTable(const google::protobuf::RepeatedPtrField<v1::Node>& nodes) {
  Table table({"NAME", "STATE", "GPUS", "MODEL", "CPUS", "MEMORY", "JOBS", "REASON"});
  for (const v1::Node& node : nodes) {
    const v1::NodeInfo& info = node.info();
    table.AddRow({info.name(), StateWord(node.state()),
                  absl::StrCat(node.gpus_free(), "/", info.gpus_size()), Models(info),
                  absl::StrCat(node.cpus_free(), "/", info.cpus()),
                  absl::StrCat(FormatSizeMb(node.mem_free_mb()), "/", FormatSizeMb(info.memory_mb())),
                  Jobs(node), node.reason()});
  }
  return table.ToString();
}

}  // namespace gpusched::cli
