#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runner/shim_protocol.h"

namespace gpusched::agent {

// The agent's hold on one job's shim (gpusched-shim): started by this agent,
// or found again after a restart. Signals go through a pidfd, so that they
// reach this shim and no process that took its pid later.
class JobShim {
 public:
  // Starts the shim, hands it the spec and returns once every rank runs.
  // The shim appends the ranks' exits to `exits_path` (created, emptied).
  // An error says why no rank runs: the shim's own message when a rank
  // could not start (a missing executable, a workdir), or why the shim
  // itself could not.
  //
  // A shim that has not answered after `reply_base` (and two minutes more
  // for each rank with a cleanup to run, before it and, on a failure, after
  // it) is given up, DeadlineExceeded: a rank's exec, working directory or
  // log file on a filesystem that hangs would otherwise hold this launch,
  // and every launch and stop behind it, for as long. The shim is not
  // killed: ranks it started are in sessions of their own, and it stops
  // them itself once it finds its agent gone. It goes to `abandoned`, a
  // shim of no known ranks whose owner reaps it (Exited) and knows that
  // until then ranks of it may run; with `abandoned` null, or no pidfd to
  // be had, a thread of its own reaps it.
  static absl::StatusOr<JobShim> Start(const std::string& shim_program, const ShimSpec& spec,
                                       const std::string& exits_path, absl::Duration reply_base = absl::Seconds(30),
                                       std::optional<JobShim>* abandoned = nullptr);
  // A shim an earlier agent started: NotFound unless the process `pid` is
  // still the one that started at `start_time` (ProcessStartTime).
  static absl::StatusOr<JobShim> Adopt(pid_t pid, uint64_t start_time, std::vector<pid_t> groups);

  // SIGKILLs the ranks' process groups the exits file names that still
  // run (each leader's start time checked): what a shim that died left.
  // Returns how many it hit.
  static int KillGroups(const ShimExits& shim);

  JobShim(JobShim&& other) noexcept;
  JobShim& operator=(JobShim&& other) noexcept;
  JobShim(const JobShim&) = delete;
  JobShim& operator=(const JobShim&) = delete;
  ~JobShim();  // closes the pidfd; the shim runs on

  pid_t pid() const { return pid_; }
  uint64_t start_time() const { return start_time_; }
  const std::vector<pid_t>& groups() const { return groups_; }  // the ranks' process groups, in rank order

  // False once the shim is gone.
  bool Signal(int sig) const;
  // Whether it has exited (reaped here when it is this agent's child).
  bool Exited();

 private:
  JobShim(pid_t pid, int pidfd, uint64_t start_time, std::vector<pid_t> groups);
  pid_t pid_ = 0;
  int pidfd_ = -1;
  uint64_t start_time_ = 0;
  std::vector<pid_t> groups_;
};

}  // namespace gpusched::agent
