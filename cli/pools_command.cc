#include "cli/pools_command.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cli/client.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "cli/table.h"

namespace gpusched::cli {
namespace {

std::string Money(double amount) { return absl::StrFormat("%.2f", amount); }

}  // namespace

absl::StatusOr<int> RunPools(const PoolsOptions& options, CommandContext& cmd) {
  auto pools = cmd.client.ListPools();
  if (!pools.ok()) return pools.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *pools); !s.ok()) return s;
    return kExitOk;
  }
  if (pools->pools().empty()) {
    cmd.out << "no elastic pools ([[pool]] in gpuschedd.toml)\n";
    return kExitOk;
  }
  Table table({"POOL", "CLASS", "NODES", "POWERED_DOWN", "POWERING_UP", "UP", "POWERING_DOWN", "OTHER", "GPUS-PAID",
               "GPUS-USED", "COST/H", "DEMAND", "HEADROOM"});
  for (const v1::PoolStatus& p : pools->pools()) {
    const int total =
        p.nodes_powered_down() + p.nodes_powering_up() + p.nodes_up() + p.nodes_powering_down() + p.nodes_other();
    table.AddRow({p.name(), p.elastic() ? p.pool_class() : absl::StrCat(p.pool_class(), ",static"), absl::StrCat(total),
                  absl::StrCat(p.nodes_powered_down()), absl::StrCat(p.nodes_powering_up()), absl::StrCat(p.nodes_up()),
                  absl::StrCat(p.nodes_powering_down()), absl::StrCat(p.nodes_other()), absl::StrCat(p.gpus_paid()),
                  absl::StrCat(p.gpus_used()), Money(p.cost_per_hour()),
                  absl::StrCat(p.demand_gpus(), "/", absl::FormatDuration(absl::Seconds(p.demand_window_s()))),
                  absl::StrCat(p.headroom_gpus())});
  }
  cmd.out << table.ToString();
  cmd.out << "COST/H: GPUs paid x cost_per_gpu_hour; DEMAND: the most GPUs jobs waited for more nodes for, over the "
             "window; HEADROOM: free GPUs kept on\n";
  return kExitOk;
}

}  // namespace gpusched::cli
