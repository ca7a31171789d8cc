#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "daemon/core/job_order.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// How far one node's part of a placed job got.
struct NodeProgress {
  bool started = false;
  bool exited = false;
};

// A job that has not ended: pending, starting or running.
struct ActiveJob {
  v1::Job job;
  std::map<std::string, NodeProgress> progress;  // by node, placed jobs only
};

// The scheduler's jobs: every active one, the pending ones in queue order,
// the placed ones (starting or running), and what is kept of the jobs that
// ended: how they ended (for dependencies), the request ids clients retry
// with, and the size of each job array (a dependency on an array waits for
// all of its tasks). Decides nothing; SchedulerCore says when a job moves.
class JobTable {
 public:
  // The id the next job gets, and taking it.
  uint64_t next_id() const { return next_id_; }
  uint64_t TakeId() { return next_id_++; }
  // Sets `count` ids aside from the next one on (a job array's tasks).
  uint64_t TakeIds(uint64_t count) { return std::exchange(next_id_, next_id_ + count); }
  // After a restart: ids go on from the largest one the store has seen.
  void ContinueAfter(uint64_t max_job_id) { next_id_ = std::max(next_id_, max_job_id + 1); }

  // Adds a job that is not yet here: a pending one joins the queue, any
  // other is placed. Entries never move: the reference stays valid until
  // the job ends.
  ActiveJob& Add(ActiveJob a);
  ActiveJob* Find(uint64_t id);
  const ActiveJob* Find(uint64_t id) const;
  // A job known to be active.
  ActiveJob& at(uint64_t id) { return active_.at(id); }
  const ActiveJob& at(uint64_t id) const { return active_.at(id); }

  // The pending job leaves the queue and is placed.
  void Place(ActiveJob& a);
  // The placed job goes back to the queue, at the place its QueueKey gives
  // it (it keeps its submit time).
  void Requeue(ActiveJob& a);
  // The job ended as `state`: forgotten but for that.
  void End(uint64_t id, v1::JobState state);
  // A pending job held (it waits until released) or released.
  void SetHeld(ActiveJob& a, bool held);
  // The jobs that joined or left the queue, or were held or released, since
  // the last call (an id may be named more than once, an ended one too): so
  // that the ranking follows the queue without walking it.
  std::vector<uint64_t> TakeQueueChanges() { return std::exchange(queue_changes_, {}); }
  // After a restart: how jobs that ended before it ended.
  void RestoreEnded(uint64_t id, v1::JobState state) { ended_[id] = state; }

  // An active job's state, or how an ended one ended; nullopt: not a job
  // this table knows.
  std::optional<v1::JobState> StateOf(uint64_t id) const;
  // How an ended job ended; nullopt when it has not ended or is unknown.
  std::optional<v1::JobState> EndedAs(uint64_t id) const;

  // Every active job, by id.
  const std::map<uint64_t, ActiveJob>& active() const { return active_; }
  // The pending jobs in queue order (QueueKey); the pointers are into active().
  const std::map<QueueKey, ActiveJob*>& pending() const { return pending_; }
  // The placed jobs' ids.
  const std::set<uint64_t>& placed() const { return placed_; }
  bool IsPlaced(uint64_t id) const { return placed_.contains(id); }

  // The job a user's client request id submitted, for a retry of that
  // request. Each user's ids are their own (common/client_request.h).
  void RememberRequest(const std::string& user, const std::string& request_id, uint64_t id);
  std::optional<uint64_t> RequestedAs(const std::string& user, const std::string& request_id) const;

  // A job array of `count` tasks, numbered from `array_id`.
  void NoteArray(uint64_t array_id, int32_t count) { array_sizes_[array_id] = count; }
  // How many tasks the array `array_id` names has; 1 for an id that names
  // no array (a job on its own).
  int32_t TasksOf(uint64_t array_id) const;
  // The active tasks of array `array_id`, in id order. Tasks have
  // consecutive ids from the array's: no array has more than `max_tasks`.
  std::vector<uint64_t> ActiveTasks(uint64_t array_id, uint64_t max_tasks) const;

 private:
  uint64_t next_id_ = 1;
  std::map<uint64_t, ActiveJob> active_;
  std::map<QueueKey, ActiveJob*> pending_;  // into active_, whose nodes do not move
  std::set<uint64_t> placed_;
  std::vector<uint64_t> queue_changes_;
  absl::flat_hash_map<std::pair<std::string, std::string>, uint64_t> request_ids_;  // (user, request id) -> job
  absl::flat_hash_map<uint64_t, int32_t> array_sizes_;
  absl::flat_hash_map<uint64_t, v1::JobState> ended_;
};

}  // namespace gpusched::core
