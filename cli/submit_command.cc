#include "cli/submit_command.h"

#include "absl/strings/str_cat.h"
#include "cli/errors.h"
#include "cli/format.h"
#include "cli/json_output.h"
#include "cli/submit_request.h"
#include "cli/wait_for_job.h"
#include "common/job_states.h"

namespace gpusched::cli {

std::string FinalStateLine(const v1::Job& job) {
  std::string line = absl::StrCat("Job ", ArrayTaskLabel(job), " ", StateName(job.state()));
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

  const v1::Job& first = response->job();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *response); !s.ok()) return s;
  } else if (first.has_array()) {
    const v1::ArrayTask& array = first.array();
    cmd.out << "Submitted job array " << array.array_id() << ": " << array.count() << " tasks, jobs "
            << array.array_id() << "-" << array.array_id() + array.count() - 1
            << (array.max_running() > 0 ? absl::StrCat(", at most ", array.max_running(), " at once") : "") << '\n';
  } else {
    cmd.out << "Submitted job " << first.id() << '\n';
  }
  if (!options.wait) return kExitOk;
  cmd.out.flush();  // the id must be visible while we block

  // An array's tasks are its consecutive ids; waiting for each in turn ends
  // when the last has ended, whatever order they run in.
  const uint64_t count = first.has_array() ? first.array().count() : 1;
  int exit_code = kExitOk;
  for (uint64_t id = first.id(); id < first.id() + count; ++id) {
    auto job = WaitForJob(cmd.client, id, cmd.local);
    if (!job.ok()) return job.status();
    if (options.json) {
      if (absl::Status s = PrintJsonLine(cmd.out, *job); !s.ok()) return s;
    } else {
      cmd.out << FinalStateLine(*job) << '\n';
    }
    if (job->state() != v1::JOB_STATE_COMPLETED) exit_code = kExitFailed;
  }
  return exit_code;
}

}  // namespace gpusched::cli
