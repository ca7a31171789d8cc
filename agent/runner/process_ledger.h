#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpusched::agent {

// What runs for each job, on disk: one file per job in `dir`, naming the
// boot and each rank's process group with its start time. The processes
// outlive an agent that is killed (they are session leaders), and only the
// agent that started them can report them. So an agent that starts kills
// what a predecessor left: never an orphan nobody reports, never a second
// copy next to the one the daemon relaunches. Start times, not pids alone,
// say a process is still the one recorded: pids are reused.
class ProcessLedger {
 public:
  explicit ProcessLedger(std::string dir);  // created if missing

  // Best effort: a failure is logged by the caller, the job runs anyway.
  bool Record(uint64_t job_id, int attempt, const std::vector<pid_t>& process_groups);
  void Forget(uint64_t job_id);

  struct Leftover {
    uint64_t job_id = 0;
    int attempt = 0;
    int killed = 0;  // process groups that were still running, now SIGKILLed
  };
  // Kills every recorded process group still running from this boot and
  // removes the records.
  std::vector<Leftover> KillLeftovers();

 private:
  std::string PathOf(uint64_t job_id) const;
  const std::string dir_;
};

// Field 22 of /proc/PID/stat (clock ticks after boot), or 0 when it is gone.
uint64_t ProcessStartTime(pid_t pid);

}  // namespace gpusched::agent
