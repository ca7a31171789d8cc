#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/client_request.h"
#include "common/job_array_record.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::store {

// Everything one pass of the scheduler thread changed, written in one
// transaction: either all of it is durable or none of it is.
struct StoreBatch {
  std::vector<v1::Job> jobs;         // full rows, inserted or replaced (events are not read)
  std::vector<v1::JobEvent> events;  // appended
  // Job arrays' records, inserted or replaced; a done() one is deleted.
  std::vector<JobArrayRecord> arrays;
  std::vector<v1::Node> nodes;                   // inserted or replaced
  std::optional<v1::FairShareUsage> fair_share;  // replaces the one kept
  bool empty() const {
    return jobs.empty() && events.empty() && arrays.empty() && nodes.empty() && !fair_share.has_value();
  }
};

// What the daemon needs at start-up to carry on where it stopped.
struct RecoveredState {
  std::vector<v1::Job> unfinished_jobs;  // every job not in a terminal state, by id
  // Job arrays with tasks not yet made jobs (SchedulerCore::RestoreArrays).
  std::vector<JobArrayRecord> arrays;
  std::vector<v1::Node> nodes;
  uint64_t max_job_id = 0;
  std::vector<ClientRequest> client_requests;
  // How every finished job ended, for the dependencies of jobs to come.
  std::vector<std::pair<uint64_t, v1::JobState>> ended_jobs;
  std::optional<v1::FairShareUsage> fair_share;  // none kept yet: nullopt
  // The latest jobs that ended on their own (COMPLETED or FAILED) and had
  // started, oldest first, at most kRecentRuns: what the scheduler learns
  // run times from, so that a restart keeps its estimates.
  static constexpr int kRecentRuns = 4096;
  std::vector<v1::Job> recent_runs;
};

// The write side. Owned and called by the scheduler thread only.
class JobStore {
 public:
  virtual ~JobStore() = default;
  virtual absl::StatusOr<RecoveredState> Recover() = 0;
  // Durable when it returns OK (fsync'ed under synchronous=FULL).
  virtual absl::Status Commit(const StoreBatch& batch) = 0;
};

struct JobFilter {
  std::vector<v1::JobState> states;  // empty = any
  std::string user;                  // empty = any
  std::string queue;                 // empty = any
};

struct JobPage {
  std::vector<v1::Job> jobs;
  uint64_t last_id = 0;  // resume after this id; 0 when there is nothing more
};

// The read side: sees committed state only, so whatever it returns has been
// acknowledged. One reader per thread; readers do not block the writer (WAL).
class JobReader {
 public:
  virtual ~JobReader() = default;
  virtual absl::StatusOr<std::optional<v1::Job>> GetJob(uint64_t id, bool with_events) = 0;
  virtual absl::StatusOr<JobPage> ListJobs(const JobFilter& filter, int limit, uint64_t after_id) = 0;
};

}  // namespace gpusched::store
