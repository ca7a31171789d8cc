#include "daemon/sim/pools_file.h"

#include "absl/strings/str_cat.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "daemon/config/duration_setting.h"
#include "daemon/config/pool_settings.h"

namespace gpusched::sim {
namespace {

using config::TomlTableReader;
using config::TomlType;

std::optional<double> Number(TomlTableReader& r, absl::string_view key, double max) {
  const config::TomlValue* value = r.Find(key);
  if (value == nullptr) return std::nullopt;
  double v = 0;
  if (value->type == TomlType::kFloat) {
    v = value->number;
  } else if (value->type == TomlType::kInteger) {
    v = static_cast<double>(value->integer);
  } else {
    r.Error(r.LineOf(key), absl::StrCat(key, " must be a number, got ", config::TomlTypeName(value->type)));
    return std::nullopt;
  }
  if (!(v >= 0) || v > max) {
    r.Error(r.LineOf(key), absl::StrCat(key, " ", v, " is not between 0 and ", max));
    return std::nullopt;
  }
  return v;
}

}  // namespace

absl::StatusOr<SimPools> ReadSimPoolsFile(const std::string& path) {
  auto doc = config::ReadTomlFile(path);
  if (!doc.ok()) return doc.status();
  TomlTableReader r(*doc, path, "");
  r.AllowOnly({"boot_delay", "boot_failure_rate", "suspend_delay", "static_cost_per_gpu_hour", "seed", "pool"});
  SimPools out;
  if (auto v = daemon::ReadDuration(r, "boot_delay")) out.power.boot_delay = absl::Seconds(*v);
  if (auto v = daemon::ReadDuration(r, "suspend_delay")) out.power.suspend_delay = absl::Seconds(*v);
  if (auto v = Number(r, "boot_failure_rate", 1)) out.power.boot_failure_rate = *v;
  if (auto v = Number(r, "static_cost_per_gpu_hour", 1e6)) out.power.static_cost_per_gpu_hour = *v;
  if (auto v = r.Int("seed", 0, int64_t{1} << 62)) out.power.seed = static_cast<uint64_t>(*v);
  out.pools = daemon::ReadSimulatedPools(*doc, r);
  if (!r.ok()) return r.status();
  return out;
}

}  // namespace gpusched::sim
