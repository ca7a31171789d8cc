#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/runner/shim_protocol.h"
#include "common/threads/mutex.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// What runs for each job, on disk in `dir`: a journal of lines appended as
// jobs start and end, and per job the exits file of its shim
// (gpusched-shim, the parent of its ranks), which names the shim and each
// rank's process group with their start times and says how each rank ended.
// The shim outlives an agent that restarts or crashes, so the next agent
// adopts the jobs whose shim still runs and learns how the others ended.
// Start times, not pids alone, say a process is still the one recorded: pids
// are reused.
//
// Once the job has ended, the journal holds its final report instead, for
// `max_report_age`: the protocol acknowledges no report, and an agent
// restarted before the daemon heard it must still be able to say how the
// job ended, or the daemon would take it for lost and run it again.
//
// One journal rather than a file per job: a line appended to an open file
// costs one write, where a file written and renamed into place costs an
// inode, a directory entry and (ext4 flushes a file renamed over another)
// a write-back, twice per job. The journal is rewritten with what it still
// says when it has doubled since it was last rewritten, and at Load.
//
// Journal lines, each written whole by one write(2) (a failed one is cut
// off again), so that only a crash of the machine can leave a torn last
// line, which Load drops:
//   start <job> <attempt> <boot id>
//   report <job> <unix seconds written> <base64 of the JobUpdate>
//   forget <job>
class ProcessLedger {
 public:
  explicit ProcessLedger(std::string dir, absl::Duration max_report_age = absl::Hours(1));  // dir created if missing
  ~ProcessLedger();
  ProcessLedger(const ProcessLedger&) = delete;
  ProcessLedger& operator=(const ProcessLedger&) = delete;

  // A job is recorded before its shim starts: a ledger that cannot be
  // written (a full disk) refuses the launch before anything runs.
  // ResourceExhausted names the file and the errno.
  absl::Status Record(uint64_t job_id, int attempt);
  // The job ended: its record and exits file give way to its final report,
  // kept until `now` (the kernel's clock) is max_report_age past.
  absl::Status Finished(const v1::JobUpdate& report, absl::Time now);
  // Where the job's shim writes how its ranks ended.
  std::string ExitsPathOf(uint64_t job_id) const;
  // The journal's path.
  std::string JournalPath() const;

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
  // At start: what a previous agent left, in the journal and in the
  // per-job files of agents from before it. The journal is rewritten with
  // just that (reports that aged out, torn lines and the older agents' files
  // go), which changes nothing it says.
  Loaded Load();
  // Forgets a job that left no report (its record and its exits file).
  void Forget(uint64_t job_id);

 private:
  // What the journal says of one job: its record, or its final report.
  struct Entry {
    int attempt = 0;                               // a record's
    std::string boot_id;                           // a record's
    absl::Time reported = absl::InfiniteFuture();  // a report's time; InfiniteFuture for a record
    std::string report;                            // a report's JobUpdate, serialized and base64-encoded
    bool is_report() const { return reported != absl::InfiniteFuture(); }
    static Entry Record(int attempt, std::string boot_id);
    static Entry Report(absl::Time reported, std::string report);
  };
  // The journal line that says `entry` of the job, with its newline: the one
  // place lines are written, whether appended or rewritten.
  static std::string LineOf(uint64_t job_id, const Entry& entry);
  std::string LegacyPathOf(uint64_t job_id) const;
  absl::Status Append(const std::string& line) ABSL_LOCKS_EXCLUDED(mu_);
  // The journal anew from `live` (job id -> entry), in place by rename.
  absl::Status RewriteLocked(const std::vector<std::pair<uint64_t, Entry>>& live) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the journal says now, reports older than max_report_age left out.
  // nullopt when the journal is there but cannot be read (EMFILE, EIO): it
  // must then not be rewritten, as if it were empty.
  std::optional<std::vector<std::pair<uint64_t, Entry>>> LiveLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status OpenLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const absl::Duration max_report_age_;
  const std::string boot_id_;
  Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t rewrite_at_ ABSL_GUARDED_BY(mu_) = 0;  // size past which Append rewrites the journal
};

}  // namespace gpusched::agent
