#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/core/policy/share_packing.h"
#include "daemon/core/power/pool_spec.h"
#include "daemon/sim/runtime_model.h"
#include "daemon/sim/sim_cluster.h"
#include "daemon/sim/trace.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::sim {

// How the simulated pool programs behave (`simulate --pools FILE`).
struct SimPower {
  absl::Duration boot_delay = absl::Minutes(5);     // resume called to agent registered
  double boot_failure_rate = 0;                     // share of resume calls that fail
  absl::Duration suspend_delay = absl::Minutes(1);  // suspend program's run
  double static_cost_per_gpu_hour = 0;              // nodes in no pool
  uint64_t seed = 1;                                // which resume calls fail, when spot nodes are taken
  // Spot nodes (pools of class spot) are taken back at this rate per node
  // and hour that they are up, at random (exponential), with this notice
  // (SchedulerCore::InterruptNode). Their jobs start again from the
  // beginning unless SimOptions::checkpoint_restore says they resume.
  double spot_interruptions_per_node_hour = 0;
  absl::Duration spot_notice = absl::Minutes(2);
};

struct SimOptions {
  std::string policy = "topology";  // a core placement policy name
  RuntimeModel model;
  size_t queue_depth = 500;  // CoreOptions::queue_depth, the daemon's default
  // What every replayed job asks for, as `gpusched submit --topology` would:
  // the trace does not say.
  v1::TopologyMode topology_mode = v1::TOPOLOGY_MODE_PREFER;
  int64_t topology_wait_s = 0;
  // Each job's time limit as a multiple of its trace duration (0: none).
  // Limits are what backfill plans with; a job slowed down past its limit
  // is stopped by the core and ends TIMEOUT, as it would on a real cluster.
  double time_limit_factor = 0;
  // Rank the queue by the daemon's default multifactor priority (fair share
  // over the trace's users, age, size) instead of submission order. Off by
  // default: placement policies compare on the same order, and ranking the
  // whole queue on every pass makes a replay about 10x slower.
  bool multifactor = false;
  // CoreOptions::head_blocks_after; negative: the daemon's default.
  absl::Duration head_blocks_after = -absl::InfiniteDuration();
  // Elastic pools over the cluster's nodes (their shapes are the nodes'
  // own); the replay plays their programs as `power` says.
  std::vector<core::PoolSpec> pools;
  SimPower power;
  core::SharePacking share_packing = core::SharePacking::kBestFit;  // CoreOptions::share_packing
  // Least attained service: the queue's QueueSpec::demote_after_s (0: off)
  // and demote_after_per_gpu.
  absl::Duration demote_after = absl::ZeroDuration();
  bool demote_after_per_gpu = true;
  // A requeued job resumes where it was stopped (it checkpointed in its kill
  // grace), after this long restoring; negative: it starts over, since a
  // trace says nothing of checkpoints.
  absl::Duration checkpoint_restore = -absl::InfiniteDuration();
};

// What became of one trace job. Times are virtual seconds after the first
// submission, as the core stamped them on the job.
struct JobOutcome {
  std::string trace_id;  // the job's id in the trace
  uint64_t job_id = 0;   // 0 when the core refused the submission
  int64_t gpus = 0;
  int gpu_milli = 1000;  // of each GPU (TraceJob::gpu_milli)
  double submit_s = 0;
  double start_s = -1;  // -1: never started
  double end_s = -1;    // -1: never ended
  double trace_duration_s = 0;
  double slowdown = 1;   // the runtime model's factor
  double placed_bw = 0;  // est_bus_bandwidth_gbps of the allocation
  double ideal_bw = 0;   // the same request on the idle cluster
  int nodes = 0;
  std::string placement;   // "n01:0+1+2+3 n02:0+1": each node and its GPU ids
  std::string span;        // "node", "nvlink-domain D", "leaf L", "spine S", "cluster"
  std::string worst_link;  // "NV18", "SYS", "NET", "none"
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  std::string reason;  // why it was refused, or why it ended
};

// The cluster between two scheduling passes: from `t_s` until the next
// sample, `busy_gpus` were allocated (shares count as their fraction) and
// `pending_jobs` waited.
struct UsageSample {
  double t_s = 0;
  double busy_gpus = 0;
  int64_t pending_jobs = 0;
  int64_t paid_gpus = 0;     // on nodes that are not powered down
  double cost_per_hour = 0;  // those GPUs at their pools' prices
};

struct SimResult {
  std::string policy;
  int64_t total_gpus = 0;
  std::vector<JobOutcome> jobs;  // by trace position
  std::vector<UsageSample> usage;
  int64_t passes = 0;  // Tick + Schedule rounds run
  int64_t spot_interruptions = 0;
  int64_t requeues = 0;  // job runs that went back to the queue
};

// Replays `trace` through a SchedulerCore on a virtual clock, playing every
// node's agent: a LaunchJob is answered at once with "started" (one pass
// later, at the same virtual time, as a real agent's report would arrive in
// a later batch), and "exited 0" follows after the trace duration times the
// runtime model's factor; a KillJob is answered with "exited 143" at once.
// A requeued job runs again from the beginning, or with
// SimOptions::checkpoint_restore from where it was stopped.
// A job with a time limit also gets a wake-up at start + limit, so that the
// core's Tick sees the limit pass at the second the daemon's periodic tick
// would (to within its period).
// Event-driven: the clock jumps from one event to the next; all events at
// one time form one batch, followed by Tick and Schedule, as the daemon's
// scheduler thread runs them. Nodes never go silent (liveness timeouts are
// off). Deterministic: no wall clock, no randomness, ties broken by event
// order.
absl::StatusOr<SimResult> Simulate(const Trace& trace, const SimCluster& cluster, const SimOptions& options);

}  // namespace gpusched::sim
