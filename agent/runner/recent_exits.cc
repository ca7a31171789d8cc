#include "agent/runner/recent_exits.h"

#include <algorithm>

namespace gpusched::agent {

RecentExits::RecentExits(size_t max_entries, absl::Duration max_age) : max_entries_(max_entries), max_age_(max_age) {}

void RecentExits::Add(const v1::JobUpdate& report, absl::Time now) {
  std::erase_if(entries_, [&](const Entry& e) { return e.report.job_id() == report.job_id(); });
  entries_.push_back(Entry{now, report});
  Prune(now);
}

std::optional<v1::JobUpdate> RecentExits::Find(uint64_t job_id, absl::Time now) {
  Prune(now);
  for (const Entry& e : entries_) {
    if (e.report.job_id() == job_id) return e.report;
  }
  return std::nullopt;
}

std::vector<v1::JobUpdate> RecentExits::All(absl::Time now) {
  Prune(now);
  std::vector<v1::JobUpdate> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.report);
  return out;
}

void RecentExits::Prune(absl::Time now) {
  while (!entries_.empty() && (entries_.size() > max_entries_ || now - entries_.front().added > max_age_)) {
    entries_.pop_front();
  }
}

}  // namespace gpusched::agent
