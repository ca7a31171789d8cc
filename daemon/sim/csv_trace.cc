#include "daemon/sim/csv_trace.h"

#include <array>
#include <string>
#include <vector>

#include "daemon/sim/csv_table.h"

namespace gpusched::sim {
namespace {

constexpr std::array<absl::string_view, 7> kColumns = {"job_id", "submit_time_s", "num_gpus", "duration_s",
                                                       "user",   "queue",         "status"};
enum Column { kJobId, kSubmit, kGpus, kDuration, kUser, kQueue, kStatus };

}  // namespace

absl::StatusOr<Trace> ParseCsvTrace(absl::string_view text, const TraceOptions& options) {
  Trace trace;
  absl::Status read = ForEachCsvRow(text, kColumns, [&](const CsvRow& row) -> absl::Status {
    const int line_no = row.line();
    ++trace.rows;
    TraceJob job;
    job.line = line_no;
    job.id = row[kJobId];
    if (job.id.empty()) return CsvFieldError(line_no, "job_id", "is empty");
    auto submit = CsvWholeNumber(row[kSubmit], line_no, "submit_time_s");
    if (!submit.ok()) return submit.status();
    auto gpus = CsvWholeNumber(row[kGpus], line_no, "num_gpus");
    if (!gpus.ok()) return gpus.status();
    job.submit_s = *submit;
    job.gpus = *gpus;
    job.user = row[kUser];
    job.queue = row[kQueue];
    if (!row[kDuration].empty()) {
      auto duration = CsvWholeNumber(row[kDuration], line_no, "duration_s");
      if (!duration.ok()) return duration.status();
      job.duration_s = *duration;
    }
    // Every row is validated before it is filtered, so that a broken file
    // fails the same whichever queue is replayed.
    trace.queues.insert(job.queue);
    if (!options.queue.empty() && job.queue != options.queue) {
      ++trace.skipped_other_queue;
    } else if (row[kDuration].empty()) {
      ++trace.skipped_unknown_duration;
    } else if (job.gpus == 0) {
      ++trace.skipped_no_gpus;
    } else {
      trace.jobs.push_back(std::move(job));
    }
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  FinishTrace(trace);
  return trace;
}

}  // namespace gpusched::sim
