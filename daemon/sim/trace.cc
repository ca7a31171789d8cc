#include "daemon/sim/trace.h"

#include <algorithm>

namespace gpusched::sim {

void FinishTrace(Trace& trace) {
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  if (trace.jobs.empty()) return;
  // Times count from the first replayed job, so that a queue that starts
  // late in a merged file does not open with weeks of idle cluster.
  const int64_t first = trace.jobs.front().submit_s;
  for (TraceJob& job : trace.jobs) job.submit_s -= first;
}

}  // namespace gpusched::sim
