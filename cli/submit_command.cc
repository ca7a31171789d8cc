#include "cli/submit_command.h"

#include "absl/strings/str_cat.h"

#include "cli/errors.h"
#include "cli/json_output.h"
#include "cli/submit_request.h"
#include "cli/wait_for_job.h"
#include "common/job_states.h"

namespace gpusched::cli {

std::string FinalStateLine(const v1::Job& job) {
  std::string line = absl::StrCat("Job ", job.id(), " ", StateName(job.state()));
  if (job.state() != v1::JOB_STATE_COMPLETED && job.exit_code() != 0) {
    absl::StrAppend(&line, " (exit code ", job.exit_code(), ")");
  }
  if (job.state() != v1::JOB_STATE_COMPLETED && !job.reason().empty()) {
    absl::StrAppend(&line, ": ", job.reason());
  }
  return line;
}

absl::StatusOr<int> RunSubmit(const SubmitOptions& options, CommandContext& cmd) {
  auto request = BuildSubmitRequest(options, cmd.local);
  if (!request.ok()) return request.status();
  auto response = cmd.client.SubmitJob(*request);
  if (!response.ok()) return response.status();

  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *response); !s.ok()) return s;
  } else {
    cmd.out << "Submitted job " << response->job().id() << '\n';
  }
  if (!options.wait) return kExitOk;
  cmd.out.flush();  // the id must be visible while we block

  auto job = WaitForJob(cmd.client, response->job().id(), cmd.local);
  if (!job.ok()) return job.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *job); !s.ok()) return s;
  } else {
    cmd.out << FinalStateLine(*job) << '\n';
  }
  return job->state() == v1::JOB_STATE_COMPLETED ? kExitOk : kExitFailed;
}

}  // namespace gpusched::cli
