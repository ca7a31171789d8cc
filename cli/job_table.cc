#include "cli/job_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "cli/format.h"
#include "cli/table.h"
#include "common/job_states.h"

namespace gpusched::cli {

std::string RenderJobTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, absl::Time now) {
  Table table({"ID", "NAME", "USER", "QUEUE", "STATE", "PRIORITY", "GPUS", "NODES", "TIME", "REASON"});
  for (const v1::Job& job : jobs) {
    const v1::JobSpec& spec = job.spec();
    // Pending jobs only: the rank the last scheduling pass gave them.
    const std::string priority = job.has_priority() ? absl::StrFormat("%.0f", job.priority().total()) : "";
    table.AddRow({absl::StrCat(job.id()), spec.name(), spec.user(), spec.queue(),
                  std::string(StateName(job.state())), priority, absl::StrCat(RequestedGpus(spec.resources())),
                  FormatPlacement(job.allocation()), FormatElapsed(JobElapsed(job, now)),
                  job.reason()});
  }
  return table.ToString();
}

}  // namespace gpusched::cli
