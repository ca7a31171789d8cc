// JobRunner: what launches wait for before their processes start: the
// container image on this node, and the NCCL preflight of those that ask.
#include "absl/strings/str_cat.h"
#include "agent/runner/container_launch.h"
#include "agent/runner/job_runner.h"
#include "common/io/logging/logging.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {

void JobRunner::PreflightLoop() {
  while (true) {
    v1::LaunchJob launch;
    bool skip = false;
    {
      MutexLock lock(&mu_);
      while (preflights_.empty() && !monitor_stop_) cv_.Wait(&mu_);
      if (preflights_.empty()) return;
      launch = std::move(preflights_.front());
      preflights_.pop_front();
      skip = shutting_down_ || kills_before_start_.contains(launch.job_id());
    }
    const uint64_t id = launch.job_id();

    PreflightOutcome outcome;
    absl::Status image = absl::OkStatus();
    if (!skip && launch.spec().has_container() && options_.containers.enabled()) {
      log_->info("job {}: making sure image {} is here", id, launch.spec().container().image());
      image = EnsureImage(options_.containers, launch.spec().container().image());
    }
    if (skip || !image.ok()) {
      // Answered below, without measuring.
    } else if (!launch.has_preflight()) {
      outcome.passed = true;
    } else if (options_.probe == nullptr) {
      outcome.passed = true;
      outcome.message = "preflight skipped: this agent has no NCCL probe (gpusched-nccl-probe)";
    } else {
      std::vector<int> gpus(launch.gpu_indices().begin(), launch.gpu_indices().end());
      outcome = RunPreflight(*options_.probe, gpus, launch.preflight());
    }
    if (!skip && !outcome.message.empty()) log_->info("job {}: {}", id, outcome.message);

    bool stopping = false, killed = false, fenced = false;
    {
      MutexLock lock(&mu_);
      stopping = shutting_down_;
      auto kill = kills_before_start_.find(id);
      killed = kill != kills_before_start_.end();
      fenced = killed && kill->second.fence;
    }
    if (killed) {
      v1::JobUpdate ended =
          MakeUpdate(id, launch.attempt(), v1::JobUpdate::KIND_EXITED, 0,
                     absl::StrCat("killed during its preflight on ", options_.node_name, "; nothing ran"), "");
      // Nothing ran, but nothing finished either: the daemon must not count
      // a fenced job as done.
      ended.set_fenced(fenced);
      EndAdmitted(ended);
    } else if (stopping) {
      // Nothing ran and nothing failed: when this node registers again the
      // daemon sends the launch anew, or gives the node up after its grace.
      {
        MutexLock guard(&mu_);
        launching_.erase(id);
      }
      cv_.SignalAll();
    } else if (!image.ok()) {
      log_->warn("job {}: launch failed: {}", id, std::string(image.message()));
      EndAdmitted(
          MakeUpdate(id, launch.attempt(), v1::JobUpdate::KIND_LAUNCH_FAILED, 0, std::string(image.message()), ""));
    } else if (!outcome.passed) {
      v1::JobUpdate failed =
          MakeUpdate(id, launch.attempt(), v1::JobUpdate::KIND_PREFLIGHT_FAILED, 0, outcome.message, "");
      failed.set_preflight_busbw_gbps(outcome.busbw_gbps);
      EndAdmitted(failed);
    } else {
      StartAdmitted(launch, launch.has_preflight() ? &outcome : nullptr);
    }
  }
}

}  // namespace gpusched::agent
