#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/job_array_record.h"

namespace gpusched::core {

// The tasks of job arrays that are not jobs yet. An array is stored as one
// record at submit (common/job_array_record.h), and SchedulerCore makes its
// tasks jobs, from the first, as a pass could get to them: a submit of
// 10,000 tasks costs about what one job costs, and a held array, or the
// part of an array beyond what a pass looks at, costs no row, no place in
// the ranking and no memory per task.
class ArrayBacklog {
 public:
  struct Entry {
    JobArrayRecord record;
    std::vector<int32_t> indices;  // every task's, in id order (ArrayRecordIndices)

    uint64_t next_id() const { return record.array_id() + static_cast<uint64_t>(record.materialized); }
    int32_t remaining() const { return record.count() - record.materialized; }
  };

  // An array with tasks still to make; one already here is replaced.
  void Add(Entry entry);
  // The entry of `array_id`, or nullptr.
  Entry* Find(uint64_t array_id);
  const Entry* Find(uint64_t array_id) const;
  // The entry one of whose tasks still to make has id `job_id`, or nullptr.
  Entry* Covering(uint64_t job_id);
  const Entry* Covering(uint64_t job_id) const;
  // Every task made: the entry goes.
  void Erase(uint64_t array_id) { entries_.erase(array_id); }

  // By array id.
  const std::map<uint64_t, Entry>& entries() const { return entries_; }

 private:
  std::map<uint64_t, Entry> entries_;
};

}  // namespace gpusched::core
