#include "daemon/sim/pools_file.h"

#include "absl/strings/str_cat.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "common/io/config_file/settings_file.h"
#include "daemon/config/pool_settings.h"
#include "daemon/config/setting_values.h"
#include "daemon/core/scheduler_core.h"

namespace gpusched::sim {

absl::StatusOr<SimPools> ReadSimPoolsFile(const std::string& path) {
  auto doc = config::ReadTomlFile(path);
  if (!doc.ok()) return doc.status();
  config::TomlTableReader r(*doc, path, "");
  r.AllowOnly({"boot_delay", "boot_failure_rate", "suspend_delay", "static_cost_per_gpu_hour", "seed",
               "spot_interruptions_per_node_hour", "spot_notice", "pool"});
  SimPools out;
  if (auto v = daemon::ReadDuration(r, "boot_delay")) out.power.boot_delay = absl::Seconds(*v);
  if (auto v = daemon::ReadDuration(r, "suspend_delay")) out.power.suspend_delay = absl::Seconds(*v);
  if (auto v = daemon::ReadNumber(r, "boot_failure_rate", 1)) out.power.boot_failure_rate = *v;
  if (auto v = daemon::ReadNumber(r, "static_cost_per_gpu_hour", 1e6)) out.power.static_cost_per_gpu_hour = *v;
  if (auto v = r.Int("seed", 0, int64_t{1} << 62)) out.power.seed = static_cast<uint64_t>(*v);
  if (auto v = daemon::ReadNumber(r, "spot_interruptions_per_node_hour", 100)) {
    out.power.spot_interruptions_per_node_hour = *v;
  }
  if (auto v = daemon::ReadDuration(r, "spot_notice")) {
    if (*v > absl::ToInt64Seconds(core::SchedulerCore::kMaxInterruptNotice)) {
      r.Error(r.LineOf("spot_notice"), "spot_notice: at most an hour");
    }
    out.power.spot_notice = absl::Seconds(*v);
  }
  out.pools = daemon::ReadSimulatedPools(*doc, r);
  if (!r.ok()) return r.status();
  return out;
}

}  // namespace gpusched::sim
