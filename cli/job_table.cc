#include "cli/job_table.h"

#include "absl/strings/str_cat.h"

#include "cli/format.h"
#include "cli/table.h"
#include "common/job_states.h"

namespace gpusched::cli {

std::string RenderJobTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, absl::Time now) {
  Table table({"ID", "NAME", "USER", "QUEUE", "STATE", "GPUS", "NODES", "TIME", "REASON"});
  for (const v1::Job& job : jobs) {
    const v1::JobSpec& spec = job.spec();
    table.AddRow({absl::StrCat(job.id()), spec.name(), spec.user(), spec.queue(),
                  std::string(StateName(job.state())), absl::StrCat(RequestedGpus(spec.resources())),
                  FormatPlacement(job.allocation()), FormatElapsed(JobElapsed(job, now)),
                  job.reason()});
  }
  return table.ToString();
}

}  // namespace gpusched::cli
