#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// What happens to a queue's running jobs when a job of a higher tier needs
// their GPUs.
enum class PreemptMode {
  kOff,      // never preempted
  kRequeue,  // stopped (SIGTERM, grace, SIGKILL) and put back in the queue
  kCancel,   // stopped and ended PREEMPTED
};
absl::string_view PreemptModeName(PreemptMode mode);

// One queue (a Slurm partition): which nodes its jobs may use, how much of
// them, for how long, and how it ranks against the others.
struct QueueSpec {
  std::string name;
  // Higher tiers are ordered first and may preempt lower tiers' jobs.
  int64_t tier = 0;
  // Nodes it may use: a hostlist expression ("gpu[001-064]"); "" = every node.
  std::string nodes;
  // And only nodes with all of these labels (key = value).
  std::map<std::string, std::string> node_labels;
  int64_t max_gpus = 0;              // GPUs its running jobs may hold in all; 0 = no limit
  int64_t max_gpus_per_user = 0;     // GPUs one user's running jobs in it may hold; 0 = no limit
  int64_t default_time_limit_s = 0;  // for jobs that set none; 0 = max_time_limit_s
  int64_t max_time_limit_s = 0;      // 0 = no limit of its own
  PreemptMode preempt_mode = PreemptMode::kRequeue;
  // For jobs that do not say (JobSpec.requeue): requeue when a node fails.
  bool requeue_on_node_fail = true;
  // Every job of the queue runs the NCCL preflight (JobSpec.preflight).
  bool preflight = false;
  // Its jobs may run on spot nodes (false: every job of it as with --no-spot).
  bool spot = true;
  // Least attained service first (0 = off). A job that has run this long,
  // its attempts together (times its GPUs: demote_after_per_gpu; DemoteAfter
  // in attained_service.h), is demoted: it ranks after every job that is not,
  // and a job of the queue not yet demoted that cannot be placed preempts
  // demoted jobs of queues of its tier that demote too (requeued, whole
  // gangs, as a higher tier would; these requeues are not counted toward
  // max_requeues). Short jobs then finish soon without anyone knowing their
  // run times. For queues whose jobs checkpoint on SIGTERM and resume
  // (GPUSCHED_RESTART_COUNT): each preemption costs a demoted job its restart.
  int64_t demote_after_s = 0;
  // demote_after is per GPU of the job: a job of 4 GPUs is demoted after 4x
  // demote_after (false: one threshold for every size). Why: a gang once
  // stopped must find all its GPUs free at once, on one node where it fits
  // one, behind every fresh job; a whole-node job demoted as early as a
  // 1-GPU job gives its node to 1-GPU jobs and waits for a whole node again.
  // Scaled, whole-node jobs mostly run out their time, and a fresh one gets
  // its node by stopping small jobs that have run long. On ITP cluster07 the
  // 8-GPU jobs' mean JCT is 70 h instead of 109 h (README, Queues).
  bool demote_after_per_gpu = true;

  // The expanded `nodes`, filled by QueuePolicy::Compile.
  absl::flat_hash_set<std::string> node_names;

  static QueueSpec Named(std::string name, int64_t tier = 0) {
    QueueSpec q;
    q.name = std::move(name);
    q.tier = tier;
    return q;
  }
};

// The weights of the multifactor priority (PriorityFactors in types.proto).
// Defaults: tier dominates, then fair share, then age and size; a job's own
// priority adds as it is.
// The starvation bound's default, in hours (CoreOptions::head_blocks_after,
// gpuschedd.toml head_blocks_after_h): the bound of a gang of four nodes and
// of a job that fits a node (a gang's grows with its size, StarvationBound
// in end_forecast.h). 38: on the ITP trace's busiest cluster it keeps the
// multi-node gangs' mean wait under 30 h and the mean JCT under 50,000 s
// (36 and 37 give a JCT over it, 40 a wait at the edge); README, Queues.
inline constexpr int64_t kDefaultHeadBlocksAfterHours = 38;

struct PriorityWeights {
  double tier = 100'000;
  double fair_share = 10'000;
  double age = 1'000;
  double size = 1'000;
  // Short work first: what most shortens the mean wait of a busy cluster.
  // As strong as fair share, so that it orders the jobs of one share; the
  // starvation bound (CoreOptions::head_blocks_after) keeps the longest
  // gangs from waiting without end behind it.
  double short_work = 10'000;
  absl::Duration age_max = absl::Hours(7 * 24);               // age factor 1 from here on
  absl::Duration fair_share_half_life = absl::Hours(7 * 24);  // usage decays by half in this long

  // Every weight 0: plain priority-then-submission order (a baseline).
  static PriorityWeights None() {
    PriorityWeights w;
    w.tier = w.fair_share = w.age = w.size = w.short_work = 0;
    return w;
  }
  // All weights 0: the queue is in plain priority-then-submission order.
  bool all_zero() const { return tier == 0 && fair_share == 0 && age == 0 && size == 0 && short_work == 0; }
};

// The queue settings of the daemon ([[queue]] and [priority] in gpuschedd.toml).
struct QueuePolicy {
  // The first queue takes jobs that name none. Never empty after Compile.
  std::vector<QueueSpec> queues;
  PriorityWeights weights;
  // A job goes back to the queue at most this often (preemption or node
  // failure); the next time it ends as it would without requeueing.
  int64_t max_requeues = 5;

  // One queue "default": every node, no limits, preemptible by requeue.
  static QueuePolicy Default();

  // Checks the settings and expands the hostlists: unique names, at most
  // kMaxQueues queues, non-negative limits, default <= max time limit.
  // InvalidArgument names the queue and field.
  absl::Status Compile();

  const QueueSpec* Find(absl::string_view name) const;
  // Position of `name` in `queues`, or -1: the queue's bit in node masks.
  int IndexOf(absl::string_view name) const;
  int64_t MaxTier() const;
  std::string Names() const;  // "a, b, c"
  // Bit q set when queue q may put jobs on a node like `info`.
  uint64_t NodeMask(const v1::NodeInfo& info) const;
  // Fills in the queue (empty: the first), its time limits, and checks them;
  // errors name the field ("spec.queue: unknown queue ...").
  absl::Status Apply(v1::JobSpec& spec) const;
  // Whether a job of `spec` is requeued when a node of its gang fails.
  bool RequeuesOnNodeFail(const v1::JobSpec& spec) const;
};

inline constexpr size_t kMaxQueues = 64;

}  // namespace gpusched::core
