#include "daemon/server/job_privacy.h"

namespace gpusched::server {

void HideDetailsUnlessOwner(const Caller& viewer, v1::Job& job) {
  if (viewer.MayActOnJobOf(job.spec().user())) return;
  v1::JobSpec& spec = *job.mutable_spec();
  spec.clear_argv();
  spec.clear_script();
  spec.clear_env();
  spec.clear_workdir();
  spec.clear_output();  // paths that tell of the workdir
  spec.clear_error();
  // Where each option came from, with its value: a script's --env and
  // --workdir as much as the command line's.
  spec.clear_option_sources();
  // The owner's retry key: nobody else's business.
  job.clear_client_request_id();
  job.set_details_hidden(true);
}

}  // namespace gpusched::server
