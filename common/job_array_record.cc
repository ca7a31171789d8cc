#include "common/job_array_record.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/job_array.h"

namespace gpusched {

absl::StatusOr<std::vector<int32_t>> ArrayRecordIndices(const JobArrayRecord& record) {
  // No task limit: one lowered since the submit does not undo the array.
  absl::StatusOr<JobArraySpec> spec = ParseJobArraySpec(record.indices, std::numeric_limits<int32_t>::max());
  if (!spec.ok() || static_cast<int32_t>(spec->indices.size()) != record.count()) {
    return absl::DataLossError(absl::StrCat("job array ", record.array_id(), "'s record is corrupt: indices \"",
                                            record.indices, "\" do not give its ", record.count(), " tasks"));
  }
  return std::move(spec->indices);
}

v1::Job ArrayRecordTask(const JobArrayRecord& record, int32_t position, int32_t index) {
  v1::Job task = record.prototype;
  task.set_id(record.array_id() + static_cast<uint64_t>(position));
  task.mutable_array()->set_index(index);
  if (position != 0) task.clear_client_request_id();
  return task;
}

}  // namespace gpusched
