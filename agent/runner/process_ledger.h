#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// What runs for each job, on disk: one file per job in `dir`, naming the
// boot and each rank's process group with its start time. The processes
// outlive an agent that is killed (they are session leaders), and only the
// agent that started them can report them. So an agent that starts kills
// what a predecessor left: never an orphan nobody reports, never a second
// copy next to the one the daemon relaunches. Start times, not pids alone,
// say a process is still the one recorded: pids are reused.
//
// Once the job has ended, its file holds the final report instead, for
// `max_report_age`: the protocol acknowledges no report, and an agent
// restarted before the daemon heard it must still be able to say how the
// job ended, or the daemon would take it for lost and run it again.
class ProcessLedger {
 public:
  explicit ProcessLedger(std::string dir, absl::Duration max_report_age = absl::Hours(1));  // dir created if missing

  // A job the agent is about to start is recorded with no process group
  // first: a ledger that cannot be written (a full disk) refuses the launch
  // before anything runs. ResourceExhausted names the file and the errno.
  absl::Status Record(uint64_t job_id, int attempt, const std::vector<pid_t>& process_groups);
  // The job ended: its processes give way to its final report.
  absl::Status Finished(const v1::JobUpdate& report, absl::Time now);

  struct Leftover {
    uint64_t job_id = 0;
    int attempt = 0;
    int killed = 0;  // process groups that were still running, now SIGKILLed
  };
  struct Loaded {
    std::vector<Leftover> killed;
    std::vector<v1::JobUpdate> reports;  // final reports younger than max_report_age
  };
  // At start: kills every recorded process group still running from this
  // boot (removing those records), and reads the final reports kept.
  Loaded Load();

 private:
  std::string PathOf(uint64_t job_id) const;
  // Removes reports older than max_report_age, at most every few minutes.
  void PruneReports(absl::Time now);
  const std::string dir_;
  const absl::Duration max_report_age_;
  absl::Time last_prune_ = absl::InfinitePast();
};

// Field 22 of /proc/PID/stat (clock ticks after boot), or 0 when it is gone.
uint64_t ProcessStartTime(pid_t pid);

}  // namespace gpusched::agent
