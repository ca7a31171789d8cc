#include "cli/pools_command.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/client.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "cli/table.h"

namespace gpusched::cli {
namespace {

struct PoolRow {
  int powered_down = 0, powering_up = 0, up = 0, powering_down = 0, other = 0;
  int64_t gpus_paid = 0, gpus_used = 0;
};

}  // namespace

absl::StatusOr<int> RunPools(const PoolsOptions& options, CommandContext& cmd) {
  auto nodes = ListAllNodes(cmd.client);
  if (!nodes.ok()) return nodes.status();
  v1::ListNodesResponse pooled;
  std::map<std::string, PoolRow> pools;
  for (const v1::Node& node : nodes->nodes()) {
    if (node.pool().empty()) continue;
    *pooled.add_nodes() = node;
    PoolRow& row = pools[node.pool()];
    const int64_t gpus = node.info().gpus_size();
    switch (node.state()) {
      case v1::NODE_STATE_POWERED_DOWN: ++row.powered_down; break;
      case v1::NODE_STATE_POWERING_UP: ++row.powering_up; break;
      case v1::NODE_STATE_UP: ++row.up; break;
      case v1::NODE_STATE_POWERING_DOWN: ++row.powering_down; break;
      default: ++row.other; break;
    }
    if (node.state() != v1::NODE_STATE_POWERED_DOWN) row.gpus_paid += gpus;
    row.gpus_used += gpus - std::clamp<int64_t>(node.gpus_free(), 0, gpus);
  }
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, pooled); !s.ok()) return s;
    return kExitOk;
  }
  if (pools.empty()) {
    cmd.out << "no elastic pools ([[pool]] in gpuschedd.toml)\n";
    return kExitOk;
  }
  Table table({"POOL", "NODES", "POWERED_DOWN", "POWERING_UP", "UP", "POWERING_DOWN", "OTHER", "GPUS-PAID",
               "GPUS-USED"});
  for (const auto& [name, r] : pools) {
    const int total = r.powered_down + r.powering_up + r.up + r.powering_down + r.other;
    table.AddRow({name, absl::StrCat(total), absl::StrCat(r.powered_down), absl::StrCat(r.powering_up),
                  absl::StrCat(r.up), absl::StrCat(r.powering_down), absl::StrCat(r.other),
                  absl::StrCat(r.gpus_paid), absl::StrCat(r.gpus_used)});
  }
  cmd.out << table.ToString();
  return kExitOk;
}

}  // namespace gpusched::cli
