#include "daemon/core/job_table.h"

#include <utility>

namespace gpusched::core {

ActiveJob& JobTable::Add(ActiveJob a) {
  const uint64_t id = a.job.id();
  ActiveJob& stored = active_.emplace(id, std::move(a)).first->second;
  if (stored.job.state() == v1::JOB_STATE_PENDING) {
    pending_.emplace(QueueKey::Of(stored.job), &stored);
    queue_changes_.push_back(id);
  } else {
    placed_.insert(id);
  }
  return stored;
}

ActiveJob* JobTable::Find(uint64_t id) {
  auto it = active_.find(id);
  return it == active_.end() ? nullptr : &it->second;
}

const ActiveJob* JobTable::Find(uint64_t id) const {
  auto it = active_.find(id);
  return it == active_.end() ? nullptr : &it->second;
}

void JobTable::Place(ActiveJob& a) {
  pending_.erase(QueueKey::Of(a.job));
  placed_.insert(a.job.id());
  queue_changes_.push_back(a.job.id());
}

void JobTable::Requeue(ActiveJob& a) {
  placed_.erase(a.job.id());
  pending_.emplace(QueueKey::Of(a.job), &a);
  queue_changes_.push_back(a.job.id());
}

void JobTable::SetHeld(ActiveJob& a, bool held) {
  a.job.set_held(held);
  queue_changes_.push_back(a.job.id());
}

void JobTable::End(uint64_t id, v1::JobState state) {
  // A placed job is not in the queue: only a pending one is looked for there.
  auto it = active_.find(id);
  if (placed_.erase(id) == 0 && it != active_.end()) {
    pending_.erase(QueueKey::Of(it->second.job));
    queue_changes_.push_back(id);
  }
  ended_[id] = state;
  active_.erase(id);
}

std::optional<v1::JobState> JobTable::StateOf(uint64_t id) const {
  if (const ActiveJob* a = Find(id)) return a->job.state();
  return EndedAs(id);
}

std::optional<v1::JobState> JobTable::EndedAs(uint64_t id) const {
  auto it = ended_.find(id);
  if (it == ended_.end()) return std::nullopt;
  return it->second;
}

void JobTable::RememberRequest(const std::string& user, const std::string& request_id, uint64_t id) {
  if (!request_id.empty()) request_ids_[{user, request_id}] = id;
}

std::optional<uint64_t> JobTable::RequestedAs(const std::string& user, const std::string& request_id) const {
  if (request_id.empty()) return std::nullopt;
  auto it = request_ids_.find(std::pair{user, request_id});
  if (it == request_ids_.end()) return std::nullopt;
  return it->second;
}

int32_t JobTable::TasksOf(uint64_t array_id) const {
  auto it = array_sizes_.find(array_id);
  return it == array_sizes_.end() ? 1 : it->second;
}

std::vector<uint64_t> JobTable::ActiveTasks(uint64_t array_id, uint64_t max_tasks) const {
  std::vector<uint64_t> tasks;
  const uint64_t end = array_id + max_tasks;
  for (auto it = active_.lower_bound(array_id); it != active_.end() && it->first < end; ++it) {
    if (it->second.job.has_array() && it->second.job.array().array_id() == array_id) tasks.push_back(it->first);
  }
  return tasks;
}

}  // namespace gpusched::core
