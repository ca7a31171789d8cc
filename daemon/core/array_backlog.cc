#include "daemon/core/array_backlog.h"

#include <utility>

namespace gpusched::core {

void ArrayBacklog::Add(Entry entry) {
  const uint64_t id = entry.record.array_id();
  entries_.insert_or_assign(id, std::move(entry));
}

ArrayBacklog::Entry* ArrayBacklog::Find(uint64_t array_id) {
  auto it = entries_.find(array_id);
  return it == entries_.end() ? nullptr : &it->second;
}

const ArrayBacklog::Entry* ArrayBacklog::Find(uint64_t array_id) const {
  return const_cast<ArrayBacklog*>(this)->Find(array_id);
}

ArrayBacklog::Entry* ArrayBacklog::Covering(uint64_t job_id) {
  // Arrays take disjoint id ranges: only the last one starting at or
  // before the id can hold it.
  auto it = entries_.upper_bound(job_id);
  if (it == entries_.begin()) return nullptr;
  --it;
  return it->second.record.Covers(job_id) ? &it->second : nullptr;
}

const ArrayBacklog::Entry* ArrayBacklog::Covering(uint64_t job_id) const {
  return const_cast<ArrayBacklog*>(this)->Covering(job_id);
}

}  // namespace gpusched::core
