#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/runner/shim_protocol.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// What runs for each job, on disk: one file per job in `dir`, recorded
// before the job starts (the boot, the attempt), and next to it the exits
// file of the job's shim (gpusched-shim, the parent of its ranks), which
// names the shim and each rank's process group with their start times and
// says how each rank ended. The shim outlives an agent that restarts or
// crashes, so the next agent adopts the jobs whose shim still runs and
// learns how the others ended. Start times, not pids alone, say a process
// is still the one recorded: pids are reused.
//
// Once the job has ended, its file holds the final report instead, for
// `max_report_age`: the protocol acknowledges no report, and an agent
// restarted before the daemon heard it must still be able to say how the
// job ended, or the daemon would take it for lost and run it again.
class ProcessLedger {
 public:
  explicit ProcessLedger(std::string dir, absl::Duration max_report_age = absl::Hours(1));  // dir created if missing

  // A job is recorded before its shim starts: a ledger that cannot be
  // written (a full disk) refuses the launch before anything runs.
  // ResourceExhausted names the file and the errno.
  absl::Status Record(uint64_t job_id, int attempt);
  // The job ended: its record and exits file give way to its final report.
  absl::Status Finished(const v1::JobUpdate& report, absl::Time now);
  // Where the job's shim writes how its ranks ended.
  std::string ExitsPathOf(uint64_t job_id) const;

  struct Recorded {
    uint64_t job_id = 0;
    int attempt = 0;
    bool this_boot = false;  // after a reboot nothing recorded runs
    ShimExits shim;          // its exits file: empty when no shim started
  };
  struct Loaded {
    std::vector<Recorded> recorded;      // jobs a previous agent started
    std::vector<v1::JobUpdate> reports;  // final reports younger than max_report_age
  };
  // At start: what a previous agent left. Changes nothing but leftovers of
  // writes that never finished.
  Loaded Load();
  // Forgets a job that left no report (its record and its exits file).
  void Forget(uint64_t job_id);

 private:
  std::string PathOf(uint64_t job_id) const;
  // Removes reports older than max_report_age, at most every few minutes.
  void PruneReports(absl::Time now);
  const std::string dir_;
  const absl::Duration max_report_age_;
  absl::Time last_prune_ = absl::InfinitePast();
};

}  // namespace gpusched::agent
