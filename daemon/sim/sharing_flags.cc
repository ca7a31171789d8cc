#include "daemon/sim/sharing_flags.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "daemon/core/sharing/share_packer.h"

namespace gpusched::sim {

SimulateSharingFlags::SimulateSharingFlags(CLI::App& app) {
  command_ = app.add_subcommand(
      "simulate-sharing",
      "pack GPU-sharing pods onto a cluster as the FGD paper's workload-inflation experiment and compare policies");
  command_->footer(
      "Pods are drawn with replacement (seeded) from --pods until their GPU request reaches --inflate-to-percent "
      "of the cluster's GPUs; each is placed at once or rejected for good, and nothing finishes. The figure of "
      "merit is the share of GPU capacity left unallocated when the arrived request reaches --measure-at-percent, "
      "averaged over the seeds. Both files are in the Alibaba openb format (shared/traces/README.md).");
  command_->add_option("--nodes", options_.nodes_path, "node list, e.g. openb_node_list_gpu_node.csv")
      ->required()
      ->check(CLI::ExistingFile);
  command_
      ->add_option("--pods", options_.pods_path,
                   "pod list to draw from, e.g. openb_pod_list_default.csv (also the task mix FGD expects)")
      ->required()
      ->check(CLI::ExistingFile);
  command_
      ->add_option("--arrivals", options_.arrivals_path,
                   "replay this pod list once, in its order, instead of drawing (a run others can check)")
      ->check(CLI::ExistingFile);
  policies_ = absl::StrJoin(options_.policies, ",");
  command_
      ->add_option("--policy", policies_,
                   "packing policies to compare, comma-separated: " + core::sharing::PackingPolicyNames())
      ->capture_default_str();
  command_->add_option("--seeds", options_.seeds, "seeds to draw with: A-B or A,B,C")->capture_default_str();
  command_
      ->add_option("--inflate-to-percent", inflate_to_percent_,
                   "stop drawing once the arrived GPU request reaches this share of capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  command_
      ->add_option("--measure-at-percent", measure_at_percent_,
                   "report the unallocated share when the arrived request reaches this share of capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  command_->add_option("--out", options_.out_dir, "write summary.csv and the placement logs to this folder");
}

SimulateSharingOptions SimulateSharingFlags::Options() const {
  SimulateSharingOptions o = options_;
  o.policies = absl::StrSplit(policies_, ',', absl::SkipEmpty());
  o.inflation.inflate_to = inflate_to_percent_ / 100;
  o.inflation.measure_at = measure_at_percent_ / 100;
  return o;
}

}  // namespace gpusched::sim
