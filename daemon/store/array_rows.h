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

// One page of `limit` jobs: the rows read (by id, after `after_id`, up to
// limit + 1 of them, so that the page knows where to resume) merged by id
// with the tasks the records stand for that `filter` matches.
absl::StatusOr<JobPage> PageWithArrayTasks(std::vector<v1::Job> rows, const std::vector<JobArrayRecord>& records,
                                           const JobFilter& filter, uint64_t after_id, int limit);

}  // namespace gpusched::store
