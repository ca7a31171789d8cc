#include "daemon/sim/simulate_flags.h"

#include "absl/strings/str_split.h"

namespace gpusched::sim {

SimulateFlags::SimulateFlags(CLI::App& app) {
  command_ = app.add_subcommand(
      "simulate", "replay a job trace through the scheduling core on a virtual clock and compare placement policies");
  command_->footer(SimulateHelpFooter());
  command_
      ->add_option("--trace", options_.trace_path,
                   "job trace: shared/traces CSV, sacct --parsable2 export, or the Alibaba openb pod list")
      ->required()
      ->check(CLI::ExistingFile);
  command_
      ->add_option("--cluster", options_.cluster_path,
                   "cluster spec (TOML), e.g. daemon/sim/clusters/dgx-h100-64.toml, or the Alibaba openb node "
                   "list (CSV, e.g. openb_node_list_gpu_node.csv: every GPU shared by time-slicing)")
      ->required()
      ->check(CLI::ExistingFile);
  command_->add_option("--policy", policies_, "placement policies to compare, comma-separated")->capture_default_str();
  command_->add_option("--queue", options_.queue, "replay only this queue (CSV queue column, sacct Partition)");
  command_->add_option("--format", format_, "trace format")
      ->check(CLI::IsMember({"auto", "csv", "sacct", "openb"}))
      ->capture_default_str();
  command_
      ->add_option("--comm-share", options_.model.comm_share,
                   "share of a multi-GPU job's ideal run time spent in communication")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command_->add_flag("--no-slowdown", no_slowdown_, "every job runs its trace duration wherever it is placed");
  command_
      ->add_option("--order", order_,
                   "how the queue is ranked: multifactor (the daemon's default priority: fair share over the "
                   "trace's users, short work first by run times learned as the replay goes, age, size) or fifo "
                   "(submission order, the baseline)")
      ->check(CLI::IsMember({"multifactor", "fifo"}))
      ->capture_default_str();
  command_
      ->add_option("--topology", topology_,
                   "what every job asks of its placement, as gpusched submit --topology: prefer (the best free "
                   "now), strict (wait for the idle cluster's best) or any")
      ->check(CLI::IsMember({"prefer", "strict", "any"}))
      ->capture_default_str();
  command_
      ->add_option("--topology-wait-s", options_.topology_wait_s,
                   "with --topology strict: after this long, take the best free placement (0 = wait forever)")
      ->check(CLI::Range(int64_t{0}, int64_t{366} * 86400))
      ->capture_default_str();
  command_
      ->add_option("--time-limit-factor", options_.time_limit_factor,
                   "give each job a time limit of this many times its trace duration (0 = none); backfill "
                   "plans with limits, and a job slowed past its limit ends TIMEOUT")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  command_
      ->add_option("--queue-depth", options_.queue_depth,
                   "pending jobs one scheduling pass looks at (as serve); without time limits the outcome does "
                   "not depend on it, and 1 replays faster")
      ->check(CLI::Range(size_t{1}, size_t{1000000}))
      ->capture_default_str();
  command_
      ->add_option("--head-blocks-after-h", options_.head_blocks_after_h,
                   "hours a job that cannot start, nor be given a reservation, lets smaller jobs pass it before "
                   "it holds them back (as serve's head_blocks_after; 0 = strict queue order; default: the "
                   "daemon's)")
      ->check(CLI::Range(0.0, 100000.0));
  CLI::Option* demote_after =
      command_
          ->add_option("--demote-after-h", options_.demote_after_h,
                       "least attained service first, as a queue's demote_after: a job that has run this many hours "
                       "times its GPUs (see --demote-flat) ranks after the jobs that have not, and those preempt it "
                       "when they cannot be placed (0 = off); with --checkpoint-restore-s, as its jobs would "
                       "checkpoint")
          ->check(CLI::Range(0.0, 100000.0))
          ->capture_default_str();
  command_
      ->add_flag("--demote-flat", options_.demote_flat,
                 "with --demote-after-h: every job is demoted after that many hours, as a queue's "
                 "demote_after_per_gpu = false (default: per GPU, a job of 4 GPUs after 4x as long)")
      ->needs(demote_after);
  command_
      ->add_option("--checkpoint-restore-s", options_.checkpoint_restore_s,
                   "requeued jobs (preempted, or their spot node taken back) resume where they were stopped, as "
                   "jobs that checkpoint on SIGTERM, after this many seconds restoring (default: they start over)")
      ->check(CLI::Range(0.0, 1e6));
  command_
      ->add_option("--arrival-speedup", options_.arrival_speedup,
                   "jobs arrive this many times as fast (submit times divided by it), each running as long as in "
                   "the trace: the offered load grows as much (e.g. the openb pods, which hold 1% of their cluster "
                   "at their peak)")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  command_->add_option("--limit", options_.limit, "replay only the first N jobs (0 = all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  command_->add_option("--pools", options_.pools_path,
                       "elastic node pools over the cluster's nodes, and how their boots behave (TOML: [[pool]] "
                       "tables as in gpuschedd.toml, boot_delay, boot_failure_rate, suspend_delay, "
                       "static_cost_per_gpu_hour, spot_interruptions_per_node_hour, spot_notice); adds GPU-hours paid "
                       "and used, waste and cost to the table");
  command_
      ->add_option("--share-packing", share_packing_,
                   "how a share of a GPU picks its GPU, as serve's share_packing: best-fit, spread (the GPU with the "
                   "most share free), fgd (the fragmentation gradient over the shares the cluster holds and waits "
                   "for) or fill-fgd (each node's GPUs kept fillable by the shares' common sizes and its free CPUs "
                   "and memory, then fgd)")
      ->check(CLI::IsMember(core::SharePackingNames()))
      ->capture_default_str();
  command_->add_option("--out", options_.out_dir, "write CSV files (and PNGs if gnuplot is installed) to this folder");
}

SimulateOptions SimulateFlags::Options() const {
  SimulateOptions o = options_;
  o.policies = absl::StrSplit(policies_, ',', absl::SkipEmpty());
  o.format = format_ == "csv"     ? TraceFormat::kCsv
             : format_ == "sacct" ? TraceFormat::kSacct
             : format_ == "openb" ? TraceFormat::kOpenb
                                  : TraceFormat::kAuto;
  o.share_packing = *core::ParseSharePacking(share_packing_);
  o.model.slowdown = !no_slowdown_;
  o.multifactor = order_ == "multifactor";
  o.topology_mode = topology_ == "strict" ? v1::TOPOLOGY_MODE_STRICT
                    : topology_ == "any"  ? v1::TOPOLOGY_MODE_ANY
                                          : v1::TOPOLOGY_MODE_PREFER;
  return o;
}

}  // namespace gpusched::sim
