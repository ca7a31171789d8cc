#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_array_record.h"
#include "daemon/store/job_store.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::store {

// What both engines' readers show of job arrays' records: each task a
// record still stands for, as the pending job it will be.

// Task `job_id`, when one of `records` stands for it; nullopt otherwise.
absl::StatusOr<std::optional<v1::Job>> ArrayRecordTaskById(const std::vector<JobArrayRecord>& records, uint64_t job_id);

// The tasks the records (by array id) stand for that `filter` matches,
// with ids above `after_id`, by id: at most `limit`.
absl::StatusOr<std::vector<v1::Job>> ArrayRecordTasksAfter(const std::vector<JobArrayRecord>& records,
                                                           const JobFilter& filter, uint64_t after_id, size_t limit);

// One page of `limit` jobs from the rows read (up to limit + 1 of them,
// by id) and the tasks records stand for (the same), merged by id.
JobPage MergeJobPage(std::vector<v1::Job> rows, std::vector<v1::Job> tasks, int limit);

}  // namespace gpusched::store
