#include "daemon/store/array_rows.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace gpusched::store {

absl::StatusOr<std::optional<v1::Job>> ArrayRecordTaskById(const std::vector<JobArrayRecord>& records,
                                                           uint64_t job_id) {
  for (const JobArrayRecord& record : records) {
    if (!record.Covers(job_id)) continue;
    absl::StatusOr<std::vector<int32_t>> indices = ArrayRecordIndices(record);
    if (!indices.ok()) return indices.status();
    const auto position = static_cast<int32_t>(job_id - record.array_id());
    return std::optional<v1::Job>(ArrayRecordTask(record, position, (*indices)[position]));
  }
  return std::optional<v1::Job>();
}

namespace {

// The tasks the records (by array id) stand for that `filter` matches, with
// ids above `after_id`, by id: at most `limit`.
absl::StatusOr<std::vector<v1::Job>> ArrayRecordTasksAfter(const std::vector<JobArrayRecord>& records,
                                                           const JobFilter& filter, uint64_t after_id, size_t limit) {
  std::vector<v1::Job> tasks;
  for (const JobArrayRecord& record : records) {
    if (tasks.size() >= limit) break;
    const v1::Job& prototype = record.prototype;
    const uint64_t end = record.array_id() + static_cast<uint64_t>(record.count());
    if (record.done() || end <= after_id + 1) continue;
    if (!filter.states.empty() &&
        std::find(filter.states.begin(), filter.states.end(), prototype.state()) == filter.states.end()) {
      continue;
    }
    if (!filter.user.empty() && prototype.spec().user() != filter.user) continue;
    if (!filter.queue.empty() && prototype.spec().queue() != filter.queue) continue;
    absl::StatusOr<std::vector<int32_t>> indices = ArrayRecordIndices(record);
    if (!indices.ok()) return indices.status();
    const uint64_t first = std::max(after_id + 1, record.array_id() + static_cast<uint64_t>(record.materialized));
    for (uint64_t id = first; id < end && tasks.size() < limit; ++id) {
      const auto position = static_cast<int32_t>(id - record.array_id());
      tasks.push_back(ArrayRecordTask(record, position, (*indices)[position]));
    }
  }
  return tasks;
}

// One page of `limit` jobs from rows and tasks (each by id), merged by id.
JobPage MergeJobPage(std::vector<v1::Job> rows, std::vector<v1::Job> tasks, int limit) {
  JobPage page;
  if (tasks.empty()) {
    page.jobs = std::move(rows);
  } else {
    page.jobs.reserve(rows.size() + tasks.size());
    std::merge(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()),
               std::make_move_iterator(tasks.begin()), std::make_move_iterator(tasks.end()),
               std::back_inserter(page.jobs), [](const v1::Job& a, const v1::Job& b) { return a.id() < b.id(); });
  }
  if (limit > 0 && static_cast<int>(page.jobs.size()) > limit) {
    page.jobs.resize(limit);
    page.last_id = page.jobs.back().id();
  }
  return page;
}

}  // namespace

absl::StatusOr<JobPage> PageWithArrayTasks(std::vector<v1::Job> rows, const std::vector<JobArrayRecord>& records,
                                           const JobFilter& filter, uint64_t after_id, int limit) {
  auto tasks = ArrayRecordTasksAfter(records, filter, after_id, static_cast<size_t>(limit) + 1);
  if (!tasks.ok()) return tasks.status();
  return MergeJobPage(std::move(rows), *std::move(tasks), limit);
}

}  // namespace gpusched::store
