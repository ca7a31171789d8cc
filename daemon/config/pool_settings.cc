#include "daemon/config/pool_settings.h"

#include <unistd.h>

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/net/hostlist.h"
#include "daemon/config/setting_values.h"

namespace gpusched::daemon {
namespace {

using config::TomlTableReader;
using config::TomlValue;

constexpr int64_t kMaxGpusPerNode = 64;  // NodeSlot's masks
constexpr int64_t kMaxPerMinute = 1'000'000;

std::optional<core::PoolClass> ReadClass(TomlTableReader& r) {
  std::optional<std::string> name = r.OneOf("class", {"reserved", "on-demand", "spot"});
  if (!name) return std::nullopt;
  if (*name == "reserved") return core::PoolClass::kReserved;
  if (*name == "spot") return core::PoolClass::kSpot;
  return core::PoolClass::kOnDemand;
}

std::string ReadProgram(TomlTableReader& r, absl::string_view key) {
  std::optional<std::string> path = r.Path(key);
  if (!path) return "";
  if (access(path->c_str(), X_OK) != 0) {
    r.Error(r.LineOf(key),
            absl::StrCat(key, " ", *path, access(path->c_str(), F_OK) != 0 ? " does not exist" : " is not executable"));
  }
  return *path;
}

// What a never-registered node of the pool is: enough to place jobs on it.
v1::NodeInfo ReadShape(TomlTableReader& r, bool needed) {
  v1::NodeInfo shape;
  const auto gpus = r.Int("gpus", 0, kMaxGpusPerNode);
  const auto cpus = r.Int("cpus", 1, 1'000'000);
  const auto memory = r.Int("memory_mb", 1, int64_t{1} << 40);
  const auto gpu_memory = r.Int("gpu_memory_mb", 0, int64_t{1} << 30);
  const auto model = r.String("gpu_model");
  if (needed) {
    for (absl::string_view key : {"gpus", "cpus", "memory_mb"}) {
      if (r.Find(key) == nullptr) {
        r.Error(r.LineOf(key), absl::StrCat(r.what(), " with a resume_program needs ", key,
                                            " = ...: the shape of its nodes, placed before they first boot"));
      }
    }
  }
  shape.set_cpus(cpus.value_or(0));
  shape.set_memory_mb(memory.value_or(0));
  for (int64_t i = 0; i < gpus.value_or(0); ++i) {
    v1::GpuInfo& gpu = *shape.add_gpus();
    gpu.set_model(model.value_or(""));
    gpu.set_memory_mb(gpu_memory.value_or(0));
  }
  if (auto labels = r.StringTable("labels")) {
    for (const auto& [key, value] : *labels) (*shape.mutable_labels())[key] = value;
  }
  return shape;
}

// A simulated pool's programs: the replay plays them.
constexpr char kSimulatedProgram[] = "(simulated)";

core::PoolSpec ReadPool(const TomlValue& table, const std::string& source, TomlTableReader& top, bool simulated) {
  TomlTableReader r(table, source, "[[pool]]");
  std::vector<absl::string_view> keys = {"name",
                                         "nodes",
                                         "class",
                                         "cost_per_gpu_hour",
                                         "min_nodes",
                                         "max_nodes",
                                         "resume_timeout",
                                         "suspend_timeout",
                                         "idle_before_suspend",
                                         "resumes_per_minute",
                                         "suspends_per_minute",
                                         "headroom",
                                         "target_utilization",
                                         "demand_window"};
  if (!simulated) {
    keys.insert(keys.end(), {"resume_program", "suspend_program", "gpus", "gpu_model", "gpu_memory_mb", "cpus",
                             "memory_mb", "labels"});
  }
  r.AllowOnly(keys);
  core::PoolSpec pool;
  pool.name = r.RequiredString("name");
  const std::string hostlist = r.RequiredString("nodes");
  if (!hostlist.empty()) {
    auto names = ExpandHostlist(hostlist);
    if (!names.ok()) {
      r.Error(r.LineOf("nodes"), absl::StrCat("nodes: ", names.status().message()));
    } else if (names->empty()) {
      r.Error(r.LineOf("nodes"), "nodes names no node");
    } else {
      pool.nodes = *std::move(names);
      std::set<std::string> seen;
      for (const std::string& name : pool.nodes) {
        if (!seen.insert(name).second) r.Error(r.LineOf("nodes"), absl::StrCat("nodes names ", name, " twice"));
      }
    }
  }
  pool.pool_class = ReadClass(r).value_or(core::PoolClass::kOnDemand);
  pool.cost_per_gpu_hour = ReadNumber(r, "cost_per_gpu_hour", 1e6).value_or(0);
  const int64_t count = static_cast<int64_t>(pool.nodes.size());
  pool.min_nodes = static_cast<int>(r.Int("min_nodes", 0, 1'000'000).value_or(0));
  pool.max_nodes = static_cast<int>(r.Int("max_nodes", 0, 1'000'000).value_or(count));
  if (pool.min_nodes > pool.max_nodes) {
    r.Error(r.LineOf("min_nodes"), absl::StrCat("min_nodes ", pool.min_nodes, " is above max_nodes ", pool.max_nodes));
  }
  if (count > 0 && pool.max_nodes > count) {
    r.Error(r.LineOf("max_nodes"),
            absl::StrCat("max_nodes ", pool.max_nodes, " is above the ", count, " node(s) that nodes names"));
  }
  if (simulated) {
    pool.resume_program = pool.pool_class == core::PoolClass::kReserved ? "" : kSimulatedProgram;
    pool.suspend_program = pool.resume_program;
  } else {
    pool.resume_program = ReadProgram(r, "resume_program");
    pool.suspend_program = ReadProgram(r, "suspend_program");
  }
  if (!pool.suspend_program.empty() && pool.resume_program.empty()) {
    r.Error(r.LineOf("suspend_program"),
            "suspend_program without resume_program: its nodes could be powered down but never up again");
  }
  if (!pool.suspend_program.empty() && pool.pool_class == core::PoolClass::kReserved) {
    r.Error(r.LineOf("suspend_program"), "suspend_program on a reserved pool: reserved nodes never power down");
  }
  if (auto v = ReadDuration(r, "resume_timeout"); v && *v > 0) pool.resume_timeout = absl::Seconds(*v);
  if (auto v = ReadDuration(r, "suspend_timeout"); v && *v > 0) pool.suspend_timeout = absl::Seconds(*v);
  if (auto v = ReadDuration(r, "idle_before_suspend"); v && *v > 0) pool.idle_before_suspend = absl::Seconds(*v);
  pool.resumes_per_minute = static_cast<int>(r.Int("resumes_per_minute", 0, kMaxPerMinute).value_or(0));
  pool.suspends_per_minute = static_cast<int>(r.Int("suspends_per_minute", 0, kMaxPerMinute).value_or(0));
  pool.headroom = ReadNumber(r, "headroom", 10).value_or(0);
  if (auto u = ReadNumber(r, "target_utilization", 1)) {
    if (*u > 0 && *u < 0.05) {
      r.Error(r.LineOf("target_utilization"),
              absl::StrCat("target_utilization ", *u, " is below 0.05: it would keep 20 times the GPUs in use on"));
    }
    pool.target_utilization = *u;
  }
  if (auto v = ReadDuration(r, "demand_window"); v && *v > 0) pool.demand_window = absl::Seconds(*v);
  if (!simulated) pool.shape = ReadShape(r, r.Find("resume_program") != nullptr);
  top.Absorb(r);
  return pool;
}

std::vector<core::PoolSpec> ReadPools(const TomlValue& root, TomlTableReader& top, bool simulated) {
  std::vector<core::PoolSpec> pools;
  const TomlValue* tables = root.Find("pool");
  if (tables == nullptr) return pools;
  if (!tables->is_array_of_tables()) {
    top.Error(top.LineOf("pool"), "pool must be [[pool]] tables, one per pool");
    return pools;
  }
  std::set<std::string> names;
  std::map<std::string, std::string> pool_of_node;
  for (const TomlValue& table : tables->items) {
    core::PoolSpec pool = ReadPool(table, top.source(), top, simulated);
    if (!pool.name.empty() && !names.insert(pool.name).second) {
      top.Error(table.line, absl::StrCat("[[pool]] \"", pool.name, "\" is defined twice"));
    }
    for (const std::string& node : pool.nodes) {
      auto [it, fresh] = pool_of_node.emplace(node, pool.name);
      if (!fresh) {
        const TomlValue* nodes = table.Find("nodes");
        top.Error(nodes != nullptr ? nodes->line : table.line,
                  absl::StrCat("[[pool]] \"", pool.name, "\" names ", node, ", which is in pool \"", it->second,
                               "\" already"));
        break;
      }
    }
    pools.push_back(std::move(pool));
  }
  return pools;
}

}  // namespace

std::vector<core::PoolSpec> ReadPoolSettings(const TomlValue& root, TomlTableReader& top) {
  return ReadPools(root, top, /*simulated=*/false);
}

std::vector<core::PoolSpec> ReadSimulatedPools(const TomlValue& root, TomlTableReader& top) {
  return ReadPools(root, top, /*simulated=*/true);
}

std::string DescribePools(const std::vector<core::PoolSpec>& pools) {
  return absl::StrCat(pools.size(), pools.size() == 1 ? " pool (" : " pools (",
                      absl::StrJoin(pools, ", ",
                                    [](std::string* out, const core::PoolSpec& p) {
                                      absl::StrAppend(out, p.name, " ", core::PoolClassName(p.pool_class), " ",
                                                      p.elastic() ? absl::StrCat(p.min_nodes, "-", p.max_nodes, " of ",
                                                                                 p.nodes.size(), " nodes")
                                                                  : "static");
                                    }),
                      ")");
}

}  // namespace gpusched::daemon
