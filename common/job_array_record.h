#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched {

// A job array as one record: what a submit of thousands of tasks stores
// (one row, not one per task). Its tasks become jobs of their own, with
// rows of their own, from the first, as the scheduler gets to them
// (SchedulerCore's array backlog); until then, the record stands for them,
// and readers show each as the pending job it will be.
struct JobArrayRecord {
  // What every task shares, as a pending job: spec, submit time, held,
  // reason, array (array_id, count, max_running). Its id is the array's; the
  // client request id belongs to the first task only.
  v1::Job prototype;
  // The array as submitted ("0-99%8"): its tasks' indices, in id order.
  std::string indices;
  // Tasks made jobs, from the first: ids array_id .. array_id + materialized - 1.
  int32_t materialized = 0;

  uint64_t array_id() const { return prototype.array().array_id(); }
  int32_t count() const { return prototype.array().count(); }
  // Every task is a job: the record has nothing left to stand for.
  bool done() const { return materialized >= count(); }
  // Whether `job_id` is a task the record still stands for.
  bool Covers(uint64_t job_id) const {
    return job_id >= array_id() + static_cast<uint64_t>(materialized) &&
           job_id < array_id() + static_cast<uint64_t>(count());
  }
};

// The record's task indices, in id order. DATA_LOSS naming the array when
// they do not read back (a record is only written from a valid array).
absl::StatusOr<std::vector<int32_t>> ArrayRecordIndices(const JobArrayRecord& record);

// The task at `position` (0 = the array's first, id array_id) as a pending
// job, `index` being its index (ArrayRecordIndices()[position]).
v1::Job ArrayRecordTask(const JobArrayRecord& record, int32_t position, int32_t index);

}  // namespace gpusched
