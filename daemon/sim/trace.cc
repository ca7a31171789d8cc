#include "daemon/sim/trace.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace gpusched::sim {
namespace {

void WarnOfOddRows(Trace& trace) {
  absl::flat_hash_map<std::string, int> first_line;  // by job id
  int64_t repeated = 0, unordered = 0;
  const TraceJob* latest = nullptr;  // the latest submission so far, in file order
  for (const TraceJob& job : trace.jobs) {
    auto [it, fresh] = first_line.try_emplace(job.id, job.line);
    if (!fresh && ++repeated == 1) {
      trace.warnings.push_back(absl::StrCat("line ", job.line, ": job id ", job.id, " is also on line ", it->second,
                                            " (both are replayed, as separate jobs)"));
    }
    if (latest != nullptr && job.submit_s < latest->submit_s && ++unordered == 1) {
      trace.warnings.push_back(absl::StrCat("line ", job.line, ": submitted before line ", latest->line,
                                            " (the rows are not in submission order; they are replayed sorted)"));
    }
    if (latest == nullptr || job.submit_s >= latest->submit_s) latest = &job;
  }
  if (repeated > 1) trace.warnings.push_back(absl::StrCat(repeated, " rows repeat an earlier row's job id"));
  if (unordered > 1) trace.warnings.push_back(absl::StrCat(unordered, " rows are out of submission order"));
}

}  // namespace

void FinishTrace(Trace& trace) {
  WarnOfOddRows(trace);
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  if (trace.jobs.empty()) return;
  // Times count from the first replayed job, so that a queue that starts
  // late in a merged file does not open with weeks of idle cluster.
  const int64_t first = trace.jobs.front().submit_s;
  for (TraceJob& job : trace.jobs) job.submit_s -= first;
}

}  // namespace gpusched::sim
