#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config/settings_table.h"
#include "common/defaults.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/core/policy/share_packing.h"
#include "daemon/core/queue/queue_policy.h"

namespace gpusched::daemon {

inline constexpr char kDefaultStateDir[] = "/var/lib/gpusched";

// The settings of `gpuschedd serve`, at their defaults. Each is a key of
// gpuschedd.toml and a flag (ServeSettingsTable); [[queue]], [priority] and
// [[pool]] are tables of the file only.
struct ServeSettings {
  std::string listen = kDefaultDaemonAddress;
  std::string state_dir = kDefaultStateDir;
  std::string store;              // "": the SQLite file in state_dir
  std::string advertise_address;  // "": listen, with this host's name for a wildcard
  int64_t leader_lease_ms = 5'000;
  std::string log_level = "info";
  std::string placement_policy = core::kDefaultPlacementPolicy;
  std::string share_packing = core::kDefaultSharePacking;
  std::string default_topology = "prefer";
  std::string metrics_listen;  // "": none
  std::string socket;          // "": none
  std::vector<std::string> admins;
  bool allow_unauthenticated_tcp = false;
  bool allow_root_jobs = false;
  std::string network_topology;  // "": none
  int64_t tick_ms = 200;
  int64_t kill_grace_ms = 10'000;
  int64_t node_not_responding_ms = 30'000;
  int64_t node_down_ms = 120'000;
  int64_t head_blocks_after_h = core::kDefaultHeadBlocksAfterHours;
  int64_t priority_refresh_s = 30;
  // In percent of the topology's estimate; see the table's help.
  int64_t probe_drain_below_percent = 50;
  int64_t preflight_min_percent = 50;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
};

// One row per setting: key, flag, help, type and range, and its member. It
// makes the flags, reads the file, decides which wins and describes the file
// for check-config; packaging/config/gpuschedd.toml documents each key (a
// test holds it to that).
const config::SettingsTable<ServeSettings>& ServeSettingsTable();

}  // namespace gpusched::daemon
