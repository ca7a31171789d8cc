#include "daemon/config/serve_settings.h"

#include "common/config/log_levels.h"

namespace gpusched::daemon {

const config::SettingsTable<ServeSettings>& ServeSettingsTable() {
  using config::BoolSetting, config::ChoiceSetting, config::IntSetting, config::ListSetting, config::TextSetting;
  using config::SettingType;
  using S = ServeSettings;
  static const config::SettingsTable<ServeSettings> table = {
      {TextSetting("listen", SettingType::kListenAddress, "address to serve gRPC on"), &S::listen},
      {TextSetting("state_dir", SettingType::kPath, "directory of the SQLite state file"), &S::state_dir},
      {TextSetting("store", SettingType::kString,
                   "where the state is kept: sqlite:///PATH (default: gpusched.db in state_dir) or "
                   "postgresql://USER@HOST:PORT/DB, where several gpuschedd share one database, one of them active"),
       &S::store},
      {TextSetting("advertise_address", SettingType::kHostPort,
                   "with a PostgreSQL store: the HOST:PORT clients reach this replica at, told to them by the "
                   "others (default: listen, with this host's name in place of 0.0.0.0)"),
       &S::advertise_address},
      {IntSetting("leader_lease_ms", 500, 600'000,
                  "with a PostgreSQL store: how long the active replica's lease lasts unrenewed before a standby "
                  "takes over (at once when its process dies)"),
       &S::leader_lease_ms},
      {config::ProgramWide(
           ChoiceSetting("log_level", config::LogLevelNames(), "trace, debug, info, warn, error, critical or off")),
       &S::log_level},
      {ChoiceSetting("placement_policy", core::PlacementPolicyNames(),
                     "where gangs go: topology (NCCL-aware), best-fit, first-fit or spread"),
       &S::placement_policy},
      {ChoiceSetting("share_packing", core::SharePackingNames(),
                     "where shares of GPUs go: best-fit (the tightest fit, idle nodes kept whole), spread (the GPU "
                     "with the most share free, on the node with the most whole GPUs free), fgd (least "
                     "growth of the fragmentation expected for the cluster's jobs) or fill-fgd (each node's GPUs "
                     "kept fillable by the shares' common sizes and its free CPUs and memory, then fgd)"),
       &S::share_packing},
      {ChoiceSetting("default_topology", {"prefer", "strict", "any"},
                     "placement a job gets when it does not choose: prefer (best free now), strict (wait for the "
                     "idle cluster's best) or any"),
       &S::default_topology},
      {TextSetting("metrics_listen", SettingType::kListenAddress,
                   "serve Prometheus metrics at http://ADDR:PORT/metrics (e.g. 0.0.0.0:6871); off when not given"),
       &S::metrics_listen},
      {TextSetting("socket", SettingType::kPath,
                   "also serve the CLI on this Unix socket, telling users apart by uid (e.g. "
                   "/run/gpusched/gpuschedd.sock)"),
       &S::socket},
      {ListSetting("admins", "--admin",
                   "a user who may act on anyone's jobs and the nodes (repeatable; root always may)"),
       &S::admins},
      {BoolSetting("allow_unauthenticated_tcp",
                   "single-user setups only: TCP callers without a client certificate act as the daemon's user (an "
                   "admin), and any agent may register"),
       &S::allow_unauthenticated_tcp},
      {BoolSetting("allow_root_jobs", "jobs may run as root"), &S::allow_root_jobs},
      {TextSetting("network_topology", SettingType::kExistingFile,
                   "the cluster network in Slurm topology.conf terms: SwitchName=leaf01 Nodes=gpu[001-032], "
                   "SwitchName=spine01 Switches=leaf[01-02], BlockName=nvl01 Nodes=gb[001-018]; where it names a "
                   "node it wins over the node's labels"),
       &S::network_topology},
      {IntSetting("tick_ms", 10, 60'000, "period of time-limit checks"), &S::tick_ms},
      {IntSetting("kill_grace_ms", 0, 3'600'000, "SIGTERM to SIGKILL on cancel and time limit"), &S::kill_grace_ms},
      {IntSetting("node_not_responding_ms", 100, 86'400'000, "silence before a node takes no new jobs"),
       &S::node_not_responding_ms},
      {IntSetting("node_down_ms", 100, 86'400'000, "silence before a node is DOWN and its gangs end NODE_FAIL"),
       &S::node_down_ms},
      {IntSetting("head_blocks_after_h", 0, 8760,
                  "hours a job that can start neither now nor by a reservation (the jobs it waits for have no time "
                  "limits) lets smaller jobs pass it before it holds them back until it starts; 0 = strict queue "
                  "order"),
       &S::head_blocks_after_h},
      {IntSetting("priority_refresh_s", 1, 86'400,
                  "seconds the pending jobs' priorities hold before all are scored again (age and usage move with "
                  "the clock); a job that joins the queue is scored at once, and an ended job, a new node or a new "
                  "user scores all again at the next pass"),
       &S::priority_refresh_s},
      // NCCL reaches 70-90% of a link's rate on healthy hardware, so half is "far below".
      {IntSetting("probe_drain_below_percent", 0, 100,
                  "drain a node whose NCCL link calibration measures a GPU pair below this share of its link's "
                  "estimate (0: never)"),
       &S::probe_drain_below_percent},
      {IntSetting("preflight_min_percent", 0, 100,
                  "a job's NCCL preflight fails below this share of its GPUs' estimated ring bandwidth: the job is "
                  "requeued and the node drained (0: only a probe error fails)"),
       &S::preflight_min_percent},
      {TextSetting("tls_cert", SettingType::kPath,
                   "PEM certificate (then its chain) to serve gRPC over TLS with; with --tls-key"),
       &S::tls_cert},
      {TextSetting("tls_key", SettingType::kPath, "PEM private key of --tls-cert, unencrypted"), &S::tls_key},
      {TextSetting("tls_client_ca", SettingType::kPath,
                   "PEM CA certificates: every client (agents, CLI) must present a certificate signed by one "
                   "(mutual TLS); without it, clients are not asked for one"),
       &S::tls_client_ca},
  };
  return table;
}

}  // namespace gpusched::daemon
