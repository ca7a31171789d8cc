#include "cli/job_table.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/format.h"
#include "cli/table.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

// Pending tasks of one array that wait for the same reason share a row, as
// in squeue: a sweep of a thousand tasks is one line until its tasks start.
bool SameWaitingGroup(const v1::Job& a, const v1::Job& b) {
  return a.has_array() && b.has_array() && a.array().array_id() == b.array().array_id() &&
         a.state() == v1::JOB_STATE_PENDING && b.state() == v1::JOB_STATE_PENDING && a.reason() == b.reason() &&
         a.held() == b.held();
}

// "17_[4-99%8]" for a group of waiting tasks, "17_3" for one task.
std::string GroupLabel(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, int first, int last) {
  const v1::Job& head = jobs.Get(first);
  if (first == last) return ArrayTaskLabel(head);
  std::vector<int32_t> indices;
  for (int i = first; i <= last; ++i) indices.push_back(jobs.Get(i).array().index());
  const int32_t limit = head.array().max_running();
  return absl::StrCat(head.array().array_id(), "_[", FormatIndexList(std::move(indices)),
                      limit > 0 ? absl::StrCat("%", limit) : "", "]");
}

}  // namespace

std::string RenderJobTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, absl::Time now) {
  Table table({"ID", "NAME", "USER", "QUEUE", "STATE", "PRIORITY", "GPUS", "NODES", "TIME", "REASON"});
  for (int first = 0; first < jobs.size();) {
    int last = first;
    while (last + 1 < jobs.size() && SameWaitingGroup(jobs.Get(first), jobs.Get(last + 1))) ++last;
    const v1::Job& job = jobs.Get(first);
    const v1::JobSpec& spec = job.spec();
    // Pending jobs only: the rank the last scheduling pass gave them.
    const std::string priority = job.has_priority() ? absl::StrFormat("%.0f", job.priority().total()) : "";
    table.AddRow(
        {GroupLabel(jobs, first, last), spec.name(), spec.user(), spec.queue(), std::string(StateName(job.state())),
         priority, GpusLabel(spec.resources()), FormatPlacement(job.allocation()), FormatElapsed(JobElapsed(job, now)),
         // A stopping job's reason is why it stops; its row says that it does.
         job.stopping_as() == v1::JOB_STATE_UNSPECIFIED ? job.reason() : absl::StrCat("stopping: ", job.reason())});
    first = last + 1;
  }
  return table.ToString();
}

}  // namespace gpusched::cli
